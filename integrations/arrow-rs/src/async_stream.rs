//! The async device stream as arrow-rs record batches: [`AsyncBatchStream`] polls an
//! [`AsyncConsumer`] and hands each validated struct array to arrow-rs zero-copy, as a
//! `RecordBatch` with the stream's schema (a `futures_core::Stream` with feature
//! `futures-core`).

use core::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef as ArrowRsSchema;

use crate::import::{batch_of, check_typed_reads, field_of, hand_over};
use crate::stream::{batch_schema, into_arrow_rs};
use crate::ArrowRsError;
use dlpack_abi::arrow::{AsyncConsumer, DeviceArray};

/// An [`AsyncConsumer`] whose items are arrow-rs record batches. The stream's schema must be a
/// struct (one column per child); each array must be host-readable with no pending event
/// ([`ReadError::NotHostAccessible`](dlpack_abi::arrow::ReadError::NotHostAccessible) otherwise).
/// Errors (the producer's, with its code and message, or a refusal) come as arrow-rs errors
/// wrapping dlpack-abi's (`ArrowError::ExternalError`); the stream ends after one.
///
/// ```
/// use std::sync::Arc;
/// use std::task::{Context, Poll, Wake, Waker};
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch};
/// use dlpack_abi::arrow::{AsyncConsumer, AsyncProducer, DeviceArray, ProducerError, SchemaDef};
/// use dlpack_abi_arrow_rs::AsyncBatchStream;
/// use dlpack_abi::raw::ARROW_DEVICE_CPU;
///
/// struct Noop;
/// impl Wake for Noop {
///     fn wake(self: Arc<Self>) {}
/// }
/// let waker = Waker::from(Arc::new(Noop));
/// let mut cx = Context::from_waker(&waker);
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let (schema, array) = dlpack_abi_arrow_rs::export_record_batch(&batch)?;
/// let items = [Ok::<_, ProducerError>(DeviceArray::from_cpu(array))];
/// let (consumer, handler) = AsyncConsumer::new();
/// // SAFETY: our handler follows the interface and lives until the producer releases it.
/// let mut producer = unsafe { AsyncProducer::start(handler.into_raw(), ARROW_DEVICE_CPU, &SchemaDef::copy_of(schema.view()), items.into_iter()) };
/// let mut batches = AsyncBatchStream::new(consumer);
/// assert!(batches.poll_next(&mut cx).is_pending());
/// producer.drive();
/// let Poll::Ready(Some(Ok(back))) = batches.poll_next(&mut cx) else { panic!() };
/// assert_eq!(back, batch);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AsyncBatchStream {
    consumer: AsyncConsumer,
    /// The batches' schema, once the stream's has arrived.
    schema: Option<ArrowRsSchema>,
    /// `None` or an error was yielded.
    done: bool,
}

impl AsyncBatchStream {
    /// Record batches from `consumer`'s device arrays.
    ///
    /// ```
    /// use dlpack_abi::arrow::AsyncConsumer;
    /// use dlpack_abi_arrow_rs::AsyncBatchStream;
    ///
    /// let (consumer, _handler) = AsyncConsumer::new();
    /// let _batches = AsyncBatchStream::new(consumer);
    /// ```
    pub fn new(consumer: AsyncConsumer) -> Self {
        Self {
            consumer,
            schema: None,
            done: false,
        }
    }

    /// The batches' arrow-rs schema: `Pending` until the stream's schema arrives.
    ///
    /// # Errors
    /// The stream's error before its schema ([`AsyncStreamError`](dlpack_abi::arrow::AsyncStreamError),
    /// wrapped), or arrow-rs's refusal of the schema (a stream of anything but structs, say).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Wake, Waker};
    /// use dlpack_abi::arrow::{AsyncConsumer, AsyncProducer, DeviceArray, ProducerError, SchemaDef};
    /// use dlpack_abi_arrow_rs::AsyncBatchStream;
    /// use dlpack_abi::raw::ARROW_DEVICE_CPU;
    ///
    /// struct Noop;
    /// impl Wake for Noop {
    ///     fn wake(self: Arc<Self>) {}
    /// }
    /// let waker = Waker::from(Arc::new(Noop));
    /// let (consumer, handler) = AsyncConsumer::new();
    /// let schema = SchemaDef::new("+s")?.with_child(SchemaDef::new("l")?.with_name("n"));
    /// let items = core::iter::empty::<Result<DeviceArray, ProducerError>>();
    /// // SAFETY: our handler follows the interface and lives until the producer releases it.
    /// let _producer = unsafe { AsyncProducer::start(handler.into_raw(), ARROW_DEVICE_CPU, &schema, items) };
    /// let mut batches = AsyncBatchStream::new(consumer);
    /// let Poll::Ready(Ok(schema)) = batches.poll_schema(&mut Context::from_waker(&waker)) else { panic!() };
    /// assert_eq!(schema.field(0).name(), "n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn poll_schema(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<ArrowRsSchema, arrow_schema::ArrowError>> {
        if let Some(schema) = &self.schema {
            return Poll::Ready(Ok(schema.clone()));
        }
        let schema = match self.consumer.poll_schema(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(error)) => return Poll::Ready(Err(external(error))),
            Poll::Ready(Ok(schema)) => batch_schema(schema).map_err(into_arrow_rs),
        };
        if let Ok(schema) = &schema {
            self.schema = Some(schema.clone());
        }
        Poll::Ready(schema)
    }

    /// The next record batch, `None` at the end, or the error that ends the stream; `Pending`
    /// while waiting (see [`AsyncConsumer::poll_next`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Wake, Waker};
    /// use dlpack_abi::arrow::{errno, AsyncConsumer, AsyncProducer, DeviceArray, ProducerError, SchemaDef};
    /// use dlpack_abi_arrow_rs::AsyncBatchStream;
    /// use dlpack_abi::raw::ARROW_DEVICE_CPU;
    ///
    /// struct Noop;
    /// impl Wake for Noop {
    ///     fn wake(self: Arc<Self>) {}
    /// }
    /// let waker = Waker::from(Arc::new(Noop));
    /// let mut cx = Context::from_waker(&waker);
    /// let (consumer, handler) = AsyncConsumer::new();
    /// let schema = SchemaDef::new("+s")?.with_child(SchemaDef::new("l")?.with_name("n"));
    /// let items = [Err::<DeviceArray, _>(ProducerError::new(errno::EIO, Some("disk gone")))];
    /// // SAFETY: our handler follows the interface and lives until the producer releases it.
    /// let mut producer = unsafe { AsyncProducer::start(handler.into_raw(), ARROW_DEVICE_CPU, &schema, items.into_iter()) };
    /// let mut batches = AsyncBatchStream::new(consumer);
    /// assert!(batches.poll_next(&mut cx).is_pending());
    /// producer.drive();
    /// let Poll::Ready(Some(Err(error))) = batches.poll_next(&mut cx) else { panic!() };
    /// assert!(error.to_string().contains("disk gone"));
    /// assert!(matches!(batches.poll_next(&mut cx), Poll::Ready(None)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn poll_next(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<RecordBatch, arrow_schema::ArrowError>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let item = match self.poll_schema(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(error)) => Some(Err(error)),
            Poll::Ready(Ok(schema)) => match self.consumer.poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => None,
                Poll::Ready(Some(Err(error))) => Some(Err(external(error))),
                Poll::Ready(Some(Ok(array))) => {
                    Some(self.batch(array, schema).map_err(into_arrow_rs))
                }
            },
        };
        self.done = !matches!(item, Some(Ok(_)));
        Poll::Ready(item)
    }

    /// One device array as a record batch (zero-copy).
    fn batch(
        &self,
        array: DeviceArray,
        arrow_rs_schema: ArrowRsSchema,
    ) -> Result<RecordBatch, ArrowRsError> {
        let schema = self
            .consumer
            .schema()
            .ok_or(dlpack_abi::arrow::ValidationError::SchemaMismatch)?;
        check_typed_reads(array.view(schema)?)?;
        array.check_host_readable(false)?;
        let field = field_of(schema)?;
        let array = hand_over(array.into_raw().array, field)?;
        Ok(batch_of(array.as_ref())?.with_schema(arrow_rs_schema)?)
    }
}

/// With feature `futures-core`: the batches as a `futures_core::Stream`.
///
/// ```
/// use std::pin::Pin;
/// use std::sync::Arc;
/// use std::task::{Context, Poll, Wake, Waker};
/// use futures_core::Stream;
/// use dlpack_abi::arrow::AsyncConsumer;
/// use dlpack_abi_arrow_rs::AsyncBatchStream;
///
/// struct Noop;
/// impl Wake for Noop {
///     fn wake(self: Arc<Self>) {}
/// }
/// let waker = Waker::from(Arc::new(Noop));
/// let (consumer, handler) = AsyncConsumer::new();
/// drop(handler); // never given to a producer: the stream fails
/// let mut batches = AsyncBatchStream::new(consumer);
/// let item = Pin::new(&mut batches).poll_next(&mut Context::from_waker(&waker));
/// assert!(matches!(item, Poll::Ready(Some(Err(_)))));
/// ```
#[cfg(feature = "futures-core")]
#[cfg_attr(docsrs, doc(cfg(feature = "futures-core")))]
impl futures_core::Stream for AsyncBatchStream {
    type Item = Result<RecordBatch, arrow_schema::ArrowError>;

    fn poll_next(
        self: core::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Self::Item>> {
        AsyncBatchStream::poll_next(self.get_mut(), cx)
    }
}

/// dlpack-abi's stream error as arrow-rs's external error (message and source kept).
fn external(error: dlpack_abi::arrow::AsyncStreamError) -> arrow_schema::ArrowError {
    arrow_schema::ArrowError::ExternalError(alloc::boxed::Box::new(error))
}
