//! The async device stream (`ARROW_C_ASYNC_STREAM_INTERFACE`, experimental upstream), as
//! declared in `abi.h` (which differs from the prose docs: no `ArrowAsyncProducer::release`,
//! and `request` takes an `int64_t`).

use core::ffi::{c_char, c_int, c_void};

use super::{ArrowDeviceArray, ArrowDeviceType, ArrowSchema};

/// One unit of data a producer hands to `on_next_task`, owned by the producer. Only valid during
/// that call unless copied; `extract_data` must be called exactly once and does the cleanup.
///
/// ```
/// use dlpack_abi::raw::arrow::{ArrowAsyncTask, ArrowDeviceArray};
///
/// /// A consumer's `on_next_task` takes the data out exactly once, during the call.
/// /// # Safety
/// /// `task` is the live task the producer passed to `on_next_task`.
/// unsafe fn take(task: *mut ArrowAsyncTask, out: *mut ArrowDeviceArray) -> i32 {
///     // SAFETY: see the contract; `extract_data` is non-NULL in a valid task.
///     match unsafe { (*task).extract_data } {
///         // SAFETY: as above; this is the one call.
///         Some(extract_data) => unsafe { extract_data(task, out) },
///         None => dlpack_abi::arrow::errno::EINVAL,
///     }
/// }
/// let _ = take;
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct ArrowAsyncTask {
    /// Moves the task's data into `out` (which the caller then owns) and cleans the task up.
    /// Returns 0 or an errno.
    pub extract_data: Option<
        unsafe extern "C" fn(self_: *mut ArrowAsyncTask, out: *mut ArrowDeviceArray) -> c_int,
    >,
    /// Producer's bookkeeping; consumers never touch it.
    pub private_data: *mut c_void,
}

/// The producer's side of an async stream, owned by the producer and valid until just before
/// the handler's `release` is called.
///
/// ```
/// use dlpack_abi::raw::arrow::ArrowAsyncProducer;
///
/// /// A consumer asks for `n` more tasks through the producer it was given in `on_schema`.
/// /// # Safety
/// /// `producer` is the live producer of the stream.
/// unsafe fn request_more(producer: *mut ArrowAsyncProducer, n: i64) {
///     // SAFETY: see the contract.
///     if let Some(request) = unsafe { (*producer).request } {
///         // SAFETY: as above; `request` may be called from any thread.
///         unsafe { request(producer, n) };
///     }
/// }
/// let _ = request_more;
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct ArrowAsyncProducer {
    /// The device type of every array the producer delivers.
    pub device_type: ArrowDeviceType,
    /// Asks for `n` (> 0) more tasks; back-pressure.
    pub request: Option<unsafe extern "C" fn(self_: *mut ArrowAsyncProducer, n: i64)>,
    /// Asks the producer to stop; idempotent and thread-safe.
    pub cancel: Option<unsafe extern "C" fn(self_: *mut ArrowAsyncProducer)>,
    /// NULL, or extra metadata in the schema metadata encoding, valid for the producer's life.
    pub additional_metadata: *const c_char,
    /// Producer's bookkeeping; consumers never touch it.
    pub private_data: *mut c_void,
}

/// The consumer's callbacks for an async stream. The consumer allocates it and hands it to the
/// producer, which calls `release` last.
///
/// ```
/// use dlpack_abi::raw::arrow::ArrowAsyncDeviceStreamHandler;
///
/// /// What a producer does when the stream ends: the handler's `release` is its last call.
/// /// # Safety
/// /// `handler` is the consumer's live handler and nothing calls it afterwards.
/// unsafe fn finish(handler: *mut ArrowAsyncDeviceStreamHandler) {
///     // SAFETY: see the contract.
///     if let Some(release) = unsafe { (*handler).release } {
///         // SAFETY: as above; called exactly once.
///         unsafe { release(handler) };
///     }
/// }
/// let _ = finish;
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct ArrowAsyncDeviceStreamHandler {
    /// Called once with the stream's schema, which the handler must move out. Non-zero stops
    /// the stream.
    pub on_schema: Option<
        unsafe extern "C" fn(
            self_: *mut ArrowAsyncDeviceStreamHandler,
            stream_schema: *mut ArrowSchema,
        ) -> c_int,
    >,
    /// Called per task; `task == NULL` means end of stream. `task` and `metadata` are valid only
    /// during the call. Non-zero stops the stream.
    pub on_next_task: Option<
        unsafe extern "C" fn(
            self_: *mut ArrowAsyncDeviceStreamHandler,
            task: *mut ArrowAsyncTask,
            metadata: *const c_char,
        ) -> c_int,
    >,
    /// Reports an errno-style error; the strings are valid only during the call. `release`
    /// follows.
    pub on_error: Option<
        unsafe extern "C" fn(
            self_: *mut ArrowAsyncDeviceStreamHandler,
            code: c_int,
            message: *const c_char,
            metadata: *const c_char,
        ),
    >,
    /// Last call the producer makes; frees the handler's resources.
    pub release: Option<unsafe extern "C" fn(self_: *mut ArrowAsyncDeviceStreamHandler)>,
    /// Set by the producer before any callback other than `release`.
    pub producer: *mut ArrowAsyncProducer,
    /// Consumer's bookkeeping.
    pub private_data: *mut c_void,
}
