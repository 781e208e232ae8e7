//! Arrow imports in the registry: every host buffer an imported array reaches (its children's
//! and dictionary's too, each sized by [`ArrayView::buffer_len`]) is one shared borrow, held
//! by the array itself until its `release` runs, so that a `ReadwriteTensor` of any of those
//! bytes is refused while Rust may read them. An imported stream is wrapped so that every batch
//! it hands out is registered the same way before its consumer sees it.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::ffi::CString;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, c_void};
use core::fmt;

use bytemuck::Zeroable;
use pyo3::prelude::*;

use super::table::{api, SharedApi};
use super::{Borrow, BorrowError};
use crate::arrow::arrow_error;
use dlpack_abi::arrow::{
    errno, Array, ArrayView, DeviceArray, Schema, SchemaRef, Stream, StreamStruct, ValidationError,
};
use dlpack_abi::dlpack::MemoryExtent;
use dlpack_abi::raw::{
    ArrowArray, ArrowArrayStream, ArrowDeviceArray, ArrowDeviceArrayStream, ArrowSchema,
};

/// The bytes of every buffer of `view`'s node and below, as byte ranges. A buffer whose size
/// cannot be known (a negative offset) reaches, as far as anyone can tell, to the end of
/// memory.
fn extents(view: ArrayView<'_>, out: &mut Vec<MemoryExtent>) {
    for index in 0..view.n_buffers() {
        let Some(start) = view.buffer(index).map(|buffer| buffer as usize) else {
            continue;
        };
        if start == 0 {
            continue;
        }
        let end = view
            .buffer_len(index)
            .map_or(usize::MAX, |len| start.saturating_add(len));
        out.push(MemoryExtent {
            start,
            end,
            first: start,
            stride_gcd: 0,
            element_bytes: 0, // a byte range: compared by range alone
        });
    }
    view.children().for_each(|child| extents(child, out));
    if let Some(dictionary) = view.dictionary() {
        extents(dictionary, out);
    }
}

/// What a registered array's `release` finds in `private_data`: the producer's own, and the
/// borrow, removed once the producer's `release` has run.
struct Registered {
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
    _borrow: Borrow,
}

/// The `release` of a registered array: puts the producer's back, calls it, then ends the
/// borrow.
///
/// # Safety
/// Called once, by the array's owner, with the array (C Data Interface).
unsafe extern "C" fn release_registered(array: *mut ArrowArray) {
    // SAFETY: the owner passes its live array, which no one else touches during `release`.
    let array = unsafe { &mut *array };
    // SAFETY: `private_data` is the box `register_raw` leaked, taken back once (here).
    let registered = unsafe { Box::from_raw(array.private_data.cast::<Registered>()) };
    array.release = registered.release;
    array.private_data = registered.private_data;
    if let Some(release) = array.release {
        // SAFETY: the producer's array, as it made it: its `release`, called once.
        unsafe { release(array) };
    }
    drop(registered);
}

/// Makes `raw`'s `release` end `borrow` after the producer's.
fn register_raw(raw: &mut ArrowArray, borrow: Borrow) {
    let registered = Box::new(Registered {
        release: raw.release,
        private_data: raw.private_data,
        _borrow: borrow,
    });
    raw.private_data = Box::into_raw(registered).cast();
    raw.release = Some(release_registered);
}

/// Why an import could not be registered (it is released).
enum Refused {
    /// A live `ReadwriteTensor` may write a byte of it.
    Borrowed(BorrowError),
    /// It fails validation when taken back after its `release` was wrapped.
    Invalid(ValidationError),
}

impl From<Refused> for PyErr {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Borrowed(error) => error.into(),
            Refused::Invalid(error) => arrow_error(error),
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Borrowed(error) => error.fmt(f),
            Self::Invalid(error) => error.fmt(f),
        }
    }
}

/// Registers `reached` as one shared borrow that `raw`'s `release` ends.
fn register_in(
    api: &'static SharedApi,
    raw: &mut ArrowArray,
    reached: Vec<MemoryExtent>,
) -> Result<(), Refused> {
    if let Some(borrow) = Borrow::in_table(api, reached, false).map_err(Refused::Borrowed)? {
        register_raw(raw, borrow);
    }
    Ok(())
}

/// A CPU array, registered (see [`register_array`]).
fn host(api: &'static SharedApi, schema: SchemaRef<'_>, array: Array) -> Result<Array, Refused> {
    let mut reached = Vec::new();
    extents(array.view(schema).map_err(Refused::Invalid)?, &mut reached);
    let mut raw = array.into_raw();
    register_in(api, &mut raw, reached)?;
    // SAFETY: the array we owned, unchanged but for a `release` that calls its own.
    unsafe { Array::from_raw(&mut raw, schema) }.map_err(Refused::Invalid)
}

/// A device array, registered when the host can read its memory (see
/// [`register_device_array`]).
fn device(
    api: &'static SharedApi,
    schema: SchemaRef<'_>,
    array: DeviceArray,
) -> Result<DeviceArray, Refused> {
    // Registered whether or not its `sync_event` is waited on yet: the host may read it once it
    // is. Sizes stored in memory not ready yet are not read (the device view cannot read them):
    // those buffers count as reaching the end of memory.
    if array.check_host_readable(true).is_err() {
        return Ok(array);
    }
    let mut reached = Vec::new();
    extents(array.view(schema).map_err(Refused::Invalid)?, &mut reached);
    let mut raw = array.into_raw();
    register_in(api, &mut raw.array, reached)?;
    // SAFETY: the device array we owned, unchanged but for a `release` that calls its own.
    unsafe { DeviceArray::from_raw(&mut raw, schema) }.map_err(Refused::Invalid)
}

/// Registers a CPU import's buffers as a shared borrow until it is released.
///
/// # Errors
/// [`BorrowError::BorrowedMutably`](super::BorrowError) while a `ReadwriteTensor` may write a
/// byte of them (the array is released).
pub(crate) fn register_array(
    py: Python<'_>,
    schema: SchemaRef<'_>,
    array: Array,
) -> PyResult<Array> {
    Ok(host(api(py)?, schema, array)?)
}

/// Registers a device import's buffers as a shared borrow until it is released, when the host
/// can read them (now or once its `sync_event` is waited on).
///
/// # Errors
/// As [`register_array`].
pub(crate) fn register_device_array(
    py: Python<'_>,
    schema: SchemaRef<'_>,
    array: DeviceArray,
) -> PyResult<DeviceArray> {
    Ok(device(api(py)?, schema, array)?)
}

/// What a registered stream's callbacks find in `private_data`: the producer's stream, the
/// schema its batches are read with, the registry's table, and the last refusal's message.
pub(crate) struct Wrapped<S> {
    inner: S,
    schema: Schema,
    api: &'static SharedApi,
    error: Option<CString>,
}

/// The two stream structs, wrapped alike: their batches are registered as they are handed out.
pub(crate) trait RegisteredStream: Sized {
    /// A stream handing out `wrapped.inner`'s batches registered (the producer's stream kept
    /// in the wrapper, released with it).
    fn wrapped(wrapped: Box<Wrapped<Self>>) -> Self;
    /// The producer's `get_schema`, called on `self`.
    fn schema_of(&mut self) -> Option<Schema>;
}

macro_rules! registered_stream {
    ($stream:ty, $item:ty, $import:expr, $export:expr, $copy:expr) => {
        impl RegisteredStream for $stream {
            fn wrapped(wrapped: Box<Wrapped<Self>>) -> Self {
                let mut outer = Self::zeroed();
                $copy(&mut outer, &wrapped.inner);
                outer.private_data = Box::into_raw(wrapped).cast();
                outer.get_schema = Some(wrapped_get_schema);
                outer.get_next = Some(wrapped_get_next);
                outer.get_last_error = Some(wrapped_get_last_error);
                outer.release = Some(wrapped_release);
                return outer;

                /// The wrapper of a stream made by `wrapped`.
                ///
                /// # Safety
                /// `stream` is live and was made by `wrapped`; its consumer calls one callback at
                /// a time (C Stream Interface), so the wrapper is reached by one at a time.
                unsafe fn wrapper<'a>(stream: *mut $stream) -> &'a mut Wrapped<$stream> {
                    // SAFETY: live (the caller's).
                    let private = unsafe { (*stream).private_data };
                    // SAFETY: its `Wrapped`, reached by one callback at a time (the caller's).
                    unsafe { &mut *private.cast::<Wrapped<$stream>>() }
                }

                /// # Safety
                /// The C Stream Interface's: a live, wrapped stream.
                unsafe extern "C" fn wrapped_get_schema(
                    stream: *mut $stream,
                    out: *mut ArrowSchema,
                ) -> c_int {
                    // SAFETY: the callback's contract: a live, wrapped stream.
                    let wrapped = unsafe { wrapper(stream) };
                    wrapped.error = None;
                    match wrapped.inner.get_schema {
                        // SAFETY: the producer's stream and callback; `out` is the caller's.
                        Some(get_schema) => unsafe { get_schema(&mut wrapped.inner, out) },
                        None => errno::EINVAL,
                    }
                }

                /// # Safety
                /// The C Stream Interface's: a live, wrapped stream; `out` writable.
                unsafe extern "C" fn wrapped_get_next(
                    stream: *mut $stream,
                    out: *mut $item,
                ) -> c_int {
                    // SAFETY: the callback's contract: a live, wrapped stream.
                    let wrapped = unsafe { wrapper(stream) };
                    wrapped.error = None;
                    let Some(get_next) = wrapped.inner.get_next else {
                        return errno::EINVAL;
                    };
                    // SAFETY: the producer's stream and callback; `out` is the caller's.
                    let code = unsafe { get_next(&mut wrapped.inner, out) };
                    // SAFETY: `out` was written by the producer (C Stream Interface).
                    if code != 0 || unsafe { $export(&*out) } {
                        return code; // an error, or the end of the stream
                    }
                    // A live batch the producer handed to us, moved out and back.
                    match $import(wrapped, out) {
                        Ok(()) => 0,
                        Err(message) => {
                            wrapped.error = CString::new(message).ok();
                            errno::EINVAL
                        }
                    }
                }

                /// # Safety
                /// The C Stream Interface's: a live, wrapped stream.
                unsafe extern "C" fn wrapped_get_last_error(stream: *mut $stream) -> *const c_char {
                    // SAFETY: the callback's contract: a live, wrapped stream.
                    let wrapped = unsafe { wrapper(stream) };
                    if let Some(error) = &wrapped.error {
                        return error.as_ptr();
                    }
                    match wrapped.inner.get_last_error {
                        // SAFETY: the producer's stream and callback.
                        Some(get_last_error) => unsafe { get_last_error(&mut wrapped.inner) },
                        None => core::ptr::null(),
                    }
                }

                /// # Safety
                /// The C Stream Interface's: called once, on a live, wrapped stream.
                unsafe extern "C" fn wrapped_release(stream: *mut $stream) {
                    // SAFETY: the callback's contract: a live stream.
                    let private = unsafe { (*stream).private_data };
                    // SAFETY: the `Wrapped` that `wrapped` leaked, taken back once (here).
                    let mut wrapped = unsafe { Box::from_raw(private.cast::<Wrapped<$stream>>()) };
                    if let Some(release) = wrapped.inner.release {
                        // SAFETY: the producer's stream, released once.
                        unsafe { release(&mut wrapped.inner) };
                    }
                    // SAFETY: the caller's stream: released is a NULL `release`.
                    unsafe { (*stream).release = None };
                }
            }

            fn schema_of(&mut self) -> Option<Schema> {
                let get_schema = self.get_schema?;
                let mut out = ArrowSchema::zeroed();
                // SAFETY: the producer's stream and callback; `out` is ours.
                if unsafe { get_schema(self, &mut out) } != 0 {
                    return None;
                }
                // SAFETY: a schema the producer wrote for us; `from_raw` moves it out.
                unsafe { Schema::from_raw(&mut out) }.ok()
            }
        }
    };
}

registered_stream!(
    ArrowArrayStream,
    ArrowArray,
    |wrapped: &mut Wrapped<ArrowArrayStream>, out: *mut ArrowArray| -> Result<(), String> {
        let schema = wrapped.schema.view();
        // SAFETY: a live batch (the caller's); `from_raw` moves it out.
        let array = unsafe { Array::from_raw(out, schema) }.map_err(|e| e.to_string())?;
        let array = host(wrapped.api, schema, array).map_err(|e| e.to_string())?;
        // SAFETY: `out` is writable and was moved out: it takes the batch back.
        unsafe { out.write(array.into_raw()) };
        Ok(())
    },
    |out: &ArrowArray| out.release.is_none(),
    |_: &mut ArrowArrayStream, _: &ArrowArrayStream| ()
);

registered_stream!(
    ArrowDeviceArrayStream,
    ArrowDeviceArray,
    |wrapped: &mut Wrapped<ArrowDeviceArrayStream>,
     out: *mut ArrowDeviceArray|
     -> Result<(), String> {
        let schema = wrapped.schema.view();
        // SAFETY: a live batch (the caller's); `from_raw` moves it out.
        let array = unsafe { DeviceArray::from_raw(out, schema) }.map_err(|e| e.to_string())?;
        let array = device(wrapped.api, schema, array).map_err(|e| e.to_string())?;
        // SAFETY: `out` is writable and was moved out: it takes the batch back.
        unsafe { out.write(array.into_raw()) };
        Ok(())
    },
    |out: &ArrowDeviceArray| out.array.release.is_none(),
    |outer: &mut ArrowDeviceArrayStream, inner: &ArrowDeviceArrayStream| {
        outer.device_type = inner.device_type;
    }
);

/// Makes an imported stream register every batch it hands out (as [`register_array`] does),
/// until it is released.
///
/// # Errors
/// Those of finding the registry's table; `ValueError` for a stream whose schema cannot be
/// read (its batches could not be sized: it is released), or that fails validation once
/// wrapped.
pub(crate) fn register_stream<S: StreamStruct + RegisteredStream>(
    py: Python<'_>,
    stream: Stream<S>,
) -> PyResult<Stream<S>> {
    let api = api(py)?;
    let mut inner = stream.into_raw();
    let Some(schema) = inner.schema_of() else {
        // SAFETY: the stream we owned, released once by its drop.
        drop(unsafe { Stream::<S>::from_raw(&mut inner) });
        return Err(pyo3::exceptions::PyValueError::new_err(
            "the Arrow stream's producer could not give its schema, so its batches cannot be \
             registered as borrows; the stream is refused",
        ));
    };
    let mut raw = S::wrapped(Box::new(Wrapped {
        inner,
        schema,
        api,
        error: None,
    }));
    // SAFETY: the stream we owned, or one whose callbacks call it (the wrapper owns it).
    unsafe { Stream::<S>::from_raw(&mut raw) }.map_err(arrow_error)
}
