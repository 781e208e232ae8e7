//! `AsyncBatchStream` against dlpack-abi's `AsyncProducer` on another thread: record batches
//! arrive in order, a producer's error comes wrapped with its code and message, and a stream of
//! anything but structs is refused.

use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use dlpack_abi::arrow::{
    errno, AsyncConsumer, AsyncProducer, AsyncState, AsyncStreamError, DeviceArray, ProducerError,
    SchemaDef,
};
use dlpack_abi::raw::ARROW_DEVICE_CPU;
use dlpack_abi_arrow_rs::{export_record_batch, AsyncBatchStream};

// ---- a minimal executor: park until woken ----

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

fn waker() -> Waker {
    Waker::from(Arc::new(Unpark(thread::current())))
}

fn next_batch(
    stream: &mut AsyncBatchStream,
) -> Option<Result<RecordBatch, arrow_schema::ArrowError>> {
    let waker = waker();
    let mut cx = Context::from_waker(&waker);
    loop {
        match stream.poll_next(&mut cx) {
            Poll::Ready(item) => return item,
            Poll::Pending => thread::park(),
        }
    }
}

fn batch_of(n: i64) -> RecordBatch {
    let numbers: ArrayRef = Arc::new(Int64Array::from(vec![n, n + 1]));
    let names: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None]));
    RecordBatch::try_from_iter([("n", numbers), ("s", names)]).unwrap()
}

#[test]
fn record_batches_arrive_in_order_with_errors_wrapped() {
    let batches: Vec<RecordBatch> = (0..3).map(|i| batch_of(i * 10)).collect();
    let (schema, _) = export_record_batch(&batches[0]).unwrap();
    let layout = SchemaDef::copy_of(schema.view());
    let mut items: Vec<Result<DeviceArray, ProducerError>> = batches
        .iter()
        .map(|batch| Ok(DeviceArray::from_cpu(export_record_batch(batch).unwrap().1)))
        .collect();
    items.push(Err(ProducerError::new(
        errno::EIO,
        Some("source went away"),
    )));
    let (consumer, handler) = AsyncConsumer::new();
    let thread = thread::spawn(move || {
        // SAFETY: our handler follows the interface and lives until the producer releases it.
        let mut producer = unsafe {
            AsyncProducer::start(
                handler.into_raw(),
                ARROW_DEVICE_CPU,
                &layout,
                items.into_iter(),
            )
        };
        while producer.drive() == AsyncState::Waiting {
            thread::yield_now();
        }
    });
    let mut stream = AsyncBatchStream::new(consumer);
    for expected in &batches {
        assert_eq!(&next_batch(&mut stream).unwrap().unwrap(), expected);
    }
    let error = next_batch(&mut stream).unwrap().unwrap_err();
    let arrow_schema::ArrowError::ExternalError(inner) = error else {
        panic!("{error}")
    };
    let inner = inner.downcast_ref::<AsyncStreamError>().unwrap();
    let AsyncStreamError::Producer(error) = inner else {
        panic!("{inner}")
    };
    assert_eq!(
        (error.code(), error.message()),
        (errno::EIO, Some("source went away"))
    );
    assert!(next_batch(&mut stream).is_none());
    thread.join().unwrap();
}

#[test]
fn a_stream_of_non_structs_is_refused() {
    let (consumer, handler) = AsyncConsumer::new();
    let items = std::iter::empty::<Result<DeviceArray, ProducerError>>();
    // SAFETY: as above.
    let _producer = unsafe {
        AsyncProducer::start(
            handler.into_raw(),
            ARROW_DEVICE_CPU,
            &SchemaDef::new("l").unwrap(),
            items,
        )
    };
    let mut stream = AsyncBatchStream::new(consumer);
    let error = next_batch(&mut stream).unwrap().unwrap_err();
    assert!(
        error
            .to_string()
            .contains("record batches is a struct, not"),
        "{error}"
    );
    assert!(next_batch(&mut stream).is_none());
}
