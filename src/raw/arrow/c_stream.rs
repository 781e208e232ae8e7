//! The C Stream Interface (`ARROW_C_STREAM_INTERFACE`): `ArrowArrayStream`.

use core::ffi::{c_char, c_int, c_void};

use super::{ArrowArray, ArrowSchema};

/// A pull-style stream of arrays sharing one schema. Not thread-safe: calls must be serialised.
/// Released iff `release` is NULL; releasing it leaves arrays already pulled alive.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Array, ArrayStream, SchemaDef};
/// use dlpack_abi::raw::arrow::{ArrowArray, ArrowArrayStream};
///
/// let mut stream: ArrowArrayStream =
///     ArrayStream::from_iter(SchemaDef::new("i")?, [Array::from_vec(vec![1i32, 2])]
///         .into_iter().map(|array| array.map_err(|_| unreachable!())))?.into_raw();
/// // Pull one array through the C callbacks, as a C consumer would.
/// let mut array = core::mem::MaybeUninit::<ArrowArray>::uninit();
/// // SAFETY: the stream is live and `array` is valid for writes.
/// assert_eq!(unsafe { stream.get_next.unwrap()(&mut stream, array.as_mut_ptr()) }, 0);
/// // SAFETY: `get_next` returned 0, so it wrote an array (or a released one at the end).
/// let mut array = unsafe { array.assume_init() };
/// assert_eq!(array.length, 2);
/// // SAFETY: both are live and owned here; each is released exactly once.
/// unsafe { array.release.unwrap()(&mut array) };
/// unsafe { stream.release.unwrap()(&mut stream) };
/// # }
/// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArrayStream {
    /// Writes the stream's schema to `out`, which the caller then owns. Returns 0 or an errno.
    pub get_schema:
        Option<unsafe extern "C" fn(*mut ArrowArrayStream, out: *mut ArrowSchema) -> c_int>,
    /// Writes the next array to `out` (released, i.e. `out.release == NULL`, at end of stream).
    /// Returns 0 or an errno.
    pub get_next:
        Option<unsafe extern "C" fn(*mut ArrowArrayStream, out: *mut ArrowArray) -> c_int>,
    /// After a non-zero return: a UTF-8 message or NULL, valid until the next call on the stream.
    pub get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    /// Releases the stream and sets itself to NULL.
    pub release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    /// Producer's bookkeeping; consumers never touch it.
    pub private_data: *mut c_void,
}
