//! The C Device Stream Interface (`ARROW_C_DEVICE_STREAM_INTERFACE`): `ArrowDeviceArrayStream`.

use core::ffi::{c_char, c_int, c_void};

use super::{ArrowDeviceArray, ArrowDeviceType, ArrowSchema};

/// A pull-style stream of device arrays, all on devices of one type. Not thread-safe.
/// Released iff `release` is NULL.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Array, DeviceArray, DeviceArrayStream, SchemaDef};
/// use dlpack_abi::raw::arrow::{ArrowDeviceArrayStream, ARROW_DEVICE_CPU};
///
/// let arrays = [Array::from_vec(vec![1.0f32]).map(DeviceArray::from_cpu).map_err(|_| unreachable!())];
/// let stream = DeviceArrayStream::from_iter(SchemaDef::new("f")?, ARROW_DEVICE_CPU, arrays)?;
/// let mut raw: ArrowDeviceArrayStream = stream.into_raw();
/// assert_eq!(raw.device_type, ARROW_DEVICE_CPU);
/// // SAFETY: the stream is live and owned here; it is released exactly once.
/// unsafe { raw.release.unwrap()(&mut raw) };
/// # }
/// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct ArrowDeviceArrayStream {
    /// The device type of every array this stream yields.
    pub device_type: ArrowDeviceType,
    /// Writes the stream's schema (CPU data) to `out`. Returns 0 or an errno.
    pub get_schema: Option<
        unsafe extern "C" fn(self_: *mut ArrowDeviceArrayStream, out: *mut ArrowSchema) -> c_int,
    >,
    /// Writes the next device array to `out` (`out.array.release == NULL` at end of stream).
    /// Returns 0 or an errno.
    pub get_next: Option<
        unsafe extern "C" fn(
            self_: *mut ArrowDeviceArrayStream,
            out: *mut ArrowDeviceArray,
        ) -> c_int,
    >,
    /// After a non-zero return: a UTF-8 message or NULL, valid until the next call on the stream.
    pub get_last_error:
        Option<unsafe extern "C" fn(self_: *mut ArrowDeviceArrayStream) -> *const c_char>,
    /// Releases the stream and sets itself to NULL.
    pub release: Option<unsafe extern "C" fn(self_: *mut ArrowDeviceArrayStream)>,
    /// Producer's bookkeeping; consumers never touch it.
    pub private_data: *mut c_void,
}
