//! Producing streams from Rust iterators: [`ArrayStream::from_iter`] and
//! [`DeviceArrayStream::from_iter`].
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::ffi::CString;
use core::ffi::{c_char, c_int};
use core::iter::Fuse;
use core::ptr;

use super::consume::{Item, RawItem, RawStream};
use super::error::c_message;
use crate::arrow::owned::{release_produced, Owned};
use crate::arrow::{
    errno, Array, ArrayStream, DeviceArray, DeviceArrayStream, ProducerError, ValidationError,
};
use crate::arrow::{Schema, SchemaDef, Stream};
use crate::raw::{ArrowDeviceType, ArrowSchema};

/// What a produced stream owns.
struct Producer<I: Iterator> {
    schema_def: SchemaDef,
    schema: Schema,
    device_type: ArrowDeviceType,
    items: Fuse<I>,
    /// The first error: returned again by every later call, its message by `get_last_error`.
    error: Option<(c_int, Option<CString>)>,
}

impl<I: Iterator> Producer<I> {
    /// Checks an item before it is handed out: the stream's device type, then its schema.
    fn check<T: Item>(&self, item: &T) -> Result<(), ValidationError> {
        crate::arrow::device::check_stream_device(self.device_type, item.device())?;
        item.check(self.schema.view())
    }
}

impl<S: RawStream> Stream<S> {
    fn produce<I>(
        schema: SchemaDef,
        device_type: ArrowDeviceType,
        items: I,
    ) -> Result<Self, ValidationError>
    where
        I: Iterator<Item = Result<S::Item, ProducerError>> + Send + 'static,
    {
        let private = Box::new(Producer {
            schema: schema.export()?,
            schema_def: schema,
            device_type,
            items: items.fuse(),
            error: None,
        });
        let raw = S::assemble(
            device_type,
            get_schema::<S, I>,
            get_next::<S, I>,
            get_last_error::<S, I>,
            release_produced::<S, Producer<I>>,
            Box::into_raw(private).cast(),
        );
        Ok(Self::from_owned(Owned::new(raw)))
    }
}

impl ArrayStream {
    /// A stream that yields `arrays`, each checked against `schema` first (a mismatch ends the
    /// stream with `EINVAL` and the validation message). An `Err` item ends it with that code
    /// and message, which every later call returns again. `get_schema` exports a fresh schema
    /// each time.
    ///
    /// The iterator runs inside the `extern "C"` callbacks: a panic there aborts the process.
    ///
    /// # Errors
    /// [`ValidationError`] when `schema` does not export (see [`SchemaDef::export`]); the items
    /// are dropped unread then.
    ///
    /// ```
    /// use dlpack_abi::arrow::{errno, Array, ArrayStream, ProducerError, SchemaDef, StreamError};
    ///
    /// let batches = vec![
    ///     Array::from_vec(vec![1i32, 2]),
    ///     Array::from_vec(vec![3i32]),
    /// ];
    /// let items = batches.into_iter().map(|a| a.map_err(|_| ProducerError::code_only(errno::EINVAL)))
    ///     .chain([Err(ProducerError::new(errno::EIO, Some("source went away")))]);
    /// let mut stream = ArrayStream::from_iter(SchemaDef::new("i")?, items)?;
    /// let first = stream.next().unwrap().unwrap();
    /// // Arrays are read with the stream's schema, the one they were checked against.
    /// let schema = stream.schema().unwrap();
    /// assert_eq!(first.view(schema)?.values::<i32>()?, &[1, 2]);
    /// assert!(stream.next().unwrap().is_ok());
    /// let Some(Err(StreamError::Producer(error))) = stream.next() else { panic!() };
    /// assert_eq!((error.code(), error.message()), (errno::EIO, Some("source went away")));
    /// assert!(stream.next().is_none());
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn from_iter<I>(schema: SchemaDef, arrays: I) -> Result<Self, ValidationError>
    where
        I: IntoIterator<Item = Result<Array, ProducerError>>,
        I::IntoIter: Send + 'static,
    {
        Self::produce(schema, crate::raw::ARROW_DEVICE_CPU, arrays.into_iter())
    }
}

impl DeviceArrayStream {
    /// A device stream of `device_type` that yields `arrays`, as [`ArrayStream::from_iter`]
    /// does; an array on another device type ends the stream with `EINVAL`.
    ///
    /// # Errors
    /// As [`ArrayStream::from_iter`].
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, DeviceArray, DeviceArrayStream, ProducerError, SchemaDef};
    /// use dlpack_abi::raw::ARROW_DEVICE_CPU;
    ///
    /// let arrays: Vec<Result<DeviceArray, ProducerError>> = vec![
    ///     Ok(DeviceArray::from_cpu(Array::from_vec(vec![1.0f64, 2.0])?)),
    /// ];
    /// let mut stream = DeviceArrayStream::from_iter(SchemaDef::new("g")?, ARROW_DEVICE_CPU, arrays)?;
    /// let array = stream.next().unwrap()?;
    /// assert_eq!(array.view(stream.schema()?)?.values::<f64>()?, [1.0, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_iter<I>(
        schema: SchemaDef,
        device_type: ArrowDeviceType,
        arrays: I,
    ) -> Result<Self, ValidationError>
    where
        I: IntoIterator<Item = Result<DeviceArray, ProducerError>>,
        I::IntoIter: Send + 'static,
    {
        Self::produce(schema, device_type, arrays.into_iter())
    }
}

/// The producer state of `stream`, or `None` for NULL or a released stream.
///
/// # Safety
/// `stream` is NULL or a stream made by `produce::<S, I>` (wherever it was moved to).
unsafe fn state<'a, S: RawStream, I: Iterator>(stream: *mut S) -> Option<&'a mut Producer<I>> {
    // SAFETY: see the contract; the private data is only ever reached through the stream, and
    // stream calls are serialised (C Stream Interface), so this is the only reference.
    let stream = unsafe { stream.as_mut() }?;
    if stream.is_released() {
        return None;
    }
    // SAFETY: as above; `private_data` is the `Producer<I>` box.
    unsafe { stream.private_data().cast::<Producer<I>>().as_mut() }
}

/// `get_schema` of produced streams: a fresh export of the schema.
///
/// # Safety
/// `stream` is NULL or a stream made by `produce::<S, I>` (C Stream Interface: calls are
/// serialised); `out` is NULL or writable.
unsafe extern "C" fn get_schema<S: RawStream, I: Iterator>(
    stream: *mut S,
    out: *mut ArrowSchema,
) -> c_int {
    // SAFETY: C calls us with the stream we made (or NULL).
    let Some(state) = (unsafe { state::<S, I>(stream) }) else {
        return errno::EINVAL;
    };
    if out.is_null() {
        return errno::EINVAL;
    }
    match state.schema_def.export() {
        // SAFETY: `out` is the consumer's writable struct (C Stream Interface).
        Ok(schema) => unsafe { schema.export_to(out) },
        Err(_) => return errno::ENOMEM,
    }
    0
}

/// `get_next` of produced streams: the next item checked and moved out, the end of the stream
/// (a released struct), or the first error again.
///
/// # Safety
/// As for [`get_schema`].
unsafe extern "C" fn get_next<S: RawStream, I>(stream: *mut S, out: *mut RawItem<S>) -> c_int
where
    I: Iterator<Item = Result<S::Item, ProducerError>>,
{
    // SAFETY: C calls us with the stream we made (or NULL).
    let Some(state) = (unsafe { state::<S, I>(stream) }) else {
        return errno::EINVAL;
    };
    if out.is_null() {
        return errno::EINVAL;
    }
    if let Some((code, _)) = &state.error {
        return *code;
    }
    let failure = match state.items.next() {
        None => {
            // SAFETY: `out` is writable; a zeroed struct is a released one: end of stream.
            unsafe { out.write(bytemuck::Zeroable::zeroed()) };
            return 0;
        }
        Some(Ok(item)) => match state.check(&item) {
            Ok(()) => {
                // SAFETY: `out` is the consumer's writable struct.
                unsafe { item.export(out) };
                return 0;
            }
            Err(error) => (errno::EINVAL, c_message(&alloc::format!("{error}"))),
        },
        Some(Err(error)) => (error.code(), error.message().and_then(c_message)),
    };
    let code = failure.0;
    state.error = Some(failure);
    code
}

/// `get_last_error` of produced streams: the first error's message, valid until the stream is
/// released, or NULL.
///
/// # Safety
/// `stream` is NULL or a stream made by `produce::<S, I>`.
unsafe extern "C" fn get_last_error<S: RawStream, I: Iterator>(stream: *mut S) -> *const c_char {
    // SAFETY: C calls us with the stream we made (or NULL).
    match unsafe { state::<S, I>(stream) } {
        Some(Producer {
            error: Some((_, Some(message))),
            ..
        }) => message.as_ptr(),
        _ => ptr::null(),
    }
}
