//! The C Stream Interface (`ARROW_C_STREAM_INTERFACE`): `ArrowArrayStream`.

use core::ffi::{c_char, c_int, c_void};

use super::{ArrowArray, ArrowSchema};

/// A pull-style stream of arrays sharing one schema. Not thread-safe: calls must be serialised.
/// Released iff `release` is NULL; releasing it leaves arrays already pulled alive.
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
