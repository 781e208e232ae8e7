//! CUDA's [`StreamRuntime`]: events recorded on any stream of a GPU (the consumer's raw
//! handles included) and waits on them, through the driver API; and the handles and checks
//! every part of the crate shares ([`cuda_available`], [`consumer_stream`]).
#![allow(unsafe_code)]

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::ptr::NonNull;
use std::sync::{Mutex, OnceLock};

use ::cudarc::driver::{result, sys, CudaContext, CudaEvent, CudaStream, DriverError};

use dlpack_abi::dlpack::{ConsumerStream, DeviceEvent, OrderError, RuntimeEvent, StreamRuntime};
use dlpack_abi::raw::{kDLCUDA, kDLCUDAHost, kDLCUDAManaged, DLDevice};

/// Whether the CUDA driver library can be loaded here (cudarc panics on first use when it
/// cannot): check it before making a `CudaContext` on a machine that may have no GPU.
///
/// ```
/// if dlpack_abi_cudarc::cuda_available() {
///     let context = cudarc::driver::CudaContext::new(0);
/// }
/// ```
pub fn cuda_available() -> bool {
    // SAFETY: only tries to load the library by its names; no CUDA call is made.
    unsafe { sys::is_culib_present() }
}

/// The value to pass as `__dlpack__(stream=...)` (or `dlpack_abi_pyo3::DlpackRequest`'s
/// `stream`) for work on `stream`, by the array API's table: the legacy default stream (a NULL
/// `CUstream`) is 1, and any other stream its handle. A producer then orders its work before
/// `stream`.
///
/// ```no_run
/// let context = cudarc::driver::CudaContext::new(0)?;
/// let stream = context.new_stream()?;
/// assert_eq!(dlpack_abi_cudarc::consumer_stream(&stream), stream.cu_stream() as usize as i64);
/// assert_eq!(dlpack_abi_cudarc::consumer_stream(&context.default_stream()), 1);
/// # Ok::<(), cudarc::driver::DriverError>(())
/// ```
pub fn consumer_stream(stream: &CudaStream) -> i64 {
    let handle = stream.cu_stream() as usize;
    match handle {
        // NULL is the legacy default stream; 1 and 2 are the driver's own legacy and per-thread
        // handles, which the table spells the same way.
        0 => 1,
        // A pointer fits i64 on every CUDA platform (64-bit); a larger value cannot be one.
        _ => i64::try_from(handle).unwrap_or(-1),
    }
}

/// The `CUstream` a parsed consumer stream stands for (the driver's `CU_STREAM_LEGACY` and
/// `CU_STREAM_PER_THREAD` handles for the default streams), `None` for no stream.
pub(crate) fn cu_stream(stream: ConsumerStream) -> Option<sys::CUstream> {
    stream.cuda_handle().map(address)
}

/// A handle or device address as a pointer (without provenance: never dereferenced here).
pub(crate) fn address<T>(value: usize) -> *mut T {
    core::ptr::null_mut::<u8>().wrapping_add(value).cast()
}

/// A driver error as an ordering error.
pub(crate) fn driver_error(call: &'static str) -> impl FnOnce(DriverError) -> OrderError {
    move |error| OrderError::Runtime {
        call,
        code: error.0 as i64,
    }
}

/// The CUDA driver as a [`StreamRuntime`]: it records events on a GPU's streams, named by
/// handle as consumers pass them to `__dlpack__`, and makes other streams (or the host) wait on
/// them. An event is recorded in the context of the stream it is recorded on: a stream handle's
/// own (`cuStreamGetCtx`), which may be a context other than the GPU's primary one; the default
/// streams (`1`, `2`) are those of the GPU's primary context (the one CuPy, PyTorch and JAX
/// use). Waits cross contexts and devices (`cuStreamWaitEvent` allows it). A context the
/// consumer created must outlive the tensors ordered on its streams: their events live in it,
/// and are destroyed there when the last holder goes. It drives CUDA devices, managed and
/// pinned memory, where the driver loads.
///
/// Install it for the Python glue (`dlpack_abi_pyo3::install_stream_runtime`) so that a
/// `Tensor` imported for one stream is ordered before every other stream it is handed to, and
/// use it for [`OnStream`](dlpack_abi::dlpack::OnStream) consumers.
///
/// ```no_run
/// use std::sync::Arc;
/// use dlpack_abi_cudarc::CudaRuntime;
/// use dlpack_abi::dlpack::{ConsumerStream, StreamReady, StreamOrder};
/// use dlpack_abi::raw::{kDLCUDA, DLDevice};
///
/// let context = cudarc::driver::CudaContext::new(0)?;
/// let (c, d) = (context.new_stream()?, context.new_stream()?);
/// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
/// // Data made ready on `c` (say, by an import for `c`) ...
/// let ready = StreamReady::new(gpu, ConsumerStream::Handle(c.cu_stream() as usize), Some(Arc::new(CudaRuntime::new())))?;
/// // ... is handed to `d`: `d` waits on an event recorded on `c`.
/// ready.ready_on(gpu, ConsumerStream::Handle(d.cu_stream() as usize))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct CudaRuntime {
    /// The primary contexts used so far, by ordinal.
    contexts: Mutex<Vec<(i32, Arc<CudaContext>)>>,
    /// Whether the driver library loads (looked up once: each look opens it).
    available: OnceLock<bool>,
}

impl CudaRuntime {
    /// A runtime that opens each GPU's primary context when first asked about it.
    ///
    /// ```
    /// use dlpack_abi_cudarc::CudaRuntime;
    /// use dlpack_abi::dlpack::StreamRuntime;
    /// use dlpack_abi::raw::{kDLCPU, DLDevice};
    ///
    /// let runtime = CudaRuntime::new();
    /// assert!(!runtime.drives(DLDevice { device_type: kDLCPU, device_id: 0 }));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The primary context of `device`'s GPU, bound to this thread.
    fn context(&self, device: DLDevice) -> Result<Arc<CudaContext>, OrderError> {
        let mut contexts = self
            .contexts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let context = match contexts.iter().find(|(id, _)| *id == device.device_id) {
            Some((_, context)) => Arc::clone(context),
            None => {
                let ordinal =
                    usize::try_from(device.device_id).map_err(|_| OrderError::Unsupported {
                        stream: ConsumerStream::Unspecified,
                    })?;
                let context =
                    CudaContext::new(ordinal).map_err(driver_error("cuDevicePrimaryCtxRetain"))?;
                contexts.push((device.device_id, Arc::clone(&context)));
                context
            }
        };
        context
            .bind_to_thread()
            .map_err(driver_error("cuCtxSetCurrent"))?;
        Ok(context)
    }
}

// SAFETY: `record` returns a `CUevent` recorded (`cuEventRecord`) on the stream after the work
// enqueued there; `wait` is `cuStreamWaitEvent` on the event (an ordering of later work on the
// stream), or `cuEventSynchronize` for the host (a completion).
unsafe impl StreamRuntime for CudaRuntime {
    fn drives(&self, device: DLDevice) -> bool {
        [kDLCUDA, kDLCUDAManaged, kDLCUDAHost].contains(&device.device_type)
            && *self.available.get_or_init(cuda_available)
    }

    fn record(&self, device: DLDevice, stream: ConsumerStream) -> Result<RuntimeEvent, OrderError> {
        let handle = cu_stream(stream).ok_or(OrderError::Unsupported { stream })?;
        let primary = self.context(device)?;
        match stream_context(stream, handle)? {
            // A stream of another context (a context the consumer created, or another GPU's):
            // `cuEventRecord` needs an event of that context, which nothing here can keep alive
            // (the driver counts no references to a context that is not a primary one). So the
            // event recorded there only bridges: a new stream of the primary context waits on it
            // (waits cross contexts and devices), the returned event is recorded after that wait
            // in the primary context (which this runtime holds), and the bridge event is
            // destroyed before this returns, while the consumer's context surely lives (during
            // the export that names its stream).
            Some(context) if context != primary.cu_ctx() => {
                let bridge = primary
                    .new_stream()
                    .map_err(driver_error("cuStreamCreate"))?;
                let foreign = ForeignEvent::record(context, handle)?;
                // SAFETY: `bridge` is a live stream of the primary context (bound to this thread
                // again: `ForeignEvent::record` popped what it pushed) and `foreign.event` a live
                // event, recorded above.
                unsafe {
                    result::stream::wait_event(
                        bridge.cu_stream(),
                        foreign.event,
                        sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                    )
                }
                .map_err(driver_error("cuStreamWaitEvent"))?;
                // The bridge stream is destroyed when dropped, after its queued work completes;
                // the event recorded on it is independent of it.
                Ok(Arc::new(record_on(&primary, bridge.cu_stream())?))
            }
            _ => Ok(Arc::new(record_on(&primary, handle)?)),
        }
    }

    unsafe fn wait(
        &self,
        device: DLDevice,
        event: &(dyn DeviceEvent + Sync),
        stream: ConsumerStream,
    ) -> Result<(), OrderError> {
        self.context(device)?;
        // SAFETY: the event is one of this runtime's (caller): a `Recorded`, whose pointer is
        // to its live `CUevent` handle.
        let event = unsafe { event.event_ptr().cast::<sys::CUevent>().read() };
        wait_on(event, stream)
    }
}

/// The context a stream handle belongs to (`cuStreamGetCtx`); `None` for the default-stream
/// handles, which stand for the current (primary) context's.
fn stream_context(
    stream: ConsumerStream,
    handle: sys::CUstream,
) -> Result<Option<sys::CUcontext>, OrderError> {
    if !matches!(stream, ConsumerStream::Handle(_)) {
        return Ok(None);
    }
    let mut context: sys::CUcontext = core::ptr::null_mut();
    // SAFETY: `handle` is the consumer's live stream (the protocol keeps it alive during the
    // export that names it); `context` is a writable out-pointer.
    unsafe { sys::cuStreamGetCtx(handle, &mut context) }
        .result()
        .map_err(driver_error("cuStreamGetCtx"))?;
    Ok(Some(context))
}

/// An event of a context this runtime does not hold (a consumer's), recorded on one of its streams
/// and destroyed in it when dropped: it lives only during the `record` that bridges it.
struct ForeignEvent {
    event: sys::CUevent,
    context: sys::CUcontext,
}

impl ForeignEvent {
    /// Records a new event of `context` on `stream`, a stream of `context`; `context` is pushed
    /// current for the calls and popped after.
    fn record(context: sys::CUcontext, stream: sys::CUstream) -> Result<Self, OrderError> {
        let _current = Pushed::new(context)?;
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(driver_error("cuEventCreate"))?;
        let foreign = Self { event, context };
        // SAFETY: a live event of `context`, and a live stream of the same context (the
        // consumer's, during the export that names it).
        unsafe { result::event::record(event, stream) }.map_err(driver_error("cuEventRecord"))?;
        Ok(foreign)
    }
}

impl Drop for ForeignEvent {
    fn drop(&mut self) {
        let Ok(_current) = Pushed::new(self.context) else {
            return;
        };
        // SAFETY: the event `record` created, destroyed once (here), in its live context (the
        // consumer's, during the export). A pending event is released when it completes.
        let _ = unsafe { result::event::destroy(self.event) };
    }
}

/// `context` made current on this thread until dropped (`cuCtxPushCurrent`/`cuCtxPopCurrent`).
struct Pushed;

impl Pushed {
    fn new(context: sys::CUcontext) -> Result<Self, OrderError> {
        // SAFETY: a live context (a live stream's); popped when `Pushed` is dropped.
        unsafe { sys::cuCtxPushCurrent_v2(context) }
            .result()
            .map_err(driver_error("cuCtxPushCurrent"))?;
        Ok(Self)
    }
}

impl Drop for Pushed {
    fn drop(&mut self) {
        let mut popped: sys::CUcontext = core::ptr::null_mut();
        // SAFETY: pops the context `new` pushed on this thread; `popped` is writable.
        let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
    }
}

/// A `CUevent` recorded on a stream; `sync_event` and [`DeviceEvent::event_ptr`] point to its
/// handle.
pub(crate) struct Recorded {
    /// The handle the event pointer points to (the spec's `cudaEvent_t*`).
    handle: sys::CUevent,
    /// Destroys the event when dropped (an event of a primary context cudarc holds).
    _owner: CudaEvent,
}

// SAFETY: `CudaEvent` is Send and Sync (cudarc); the handle is a copy of its, only read.
unsafe impl Send for Recorded {}
// SAFETY: as above.
unsafe impl Sync for Recorded {}

// SAFETY: points to the handle of the event this owns, which it destroys only when dropped.
unsafe impl DeviceEvent for Recorded {
    fn event_ptr(&self) -> NonNull<c_void> {
        NonNull::from(&self.handle).cast()
    }
}

/// Records a new event on `stream` (a handle of `context`'s GPU, or a default-stream handle),
/// after the work enqueued there so far.
pub(crate) fn record_on(
    context: &Arc<CudaContext>,
    stream: sys::CUstream,
) -> Result<Recorded, OrderError> {
    let event = context
        .new_event(None)
        .map_err(driver_error("cuEventCreate"))?;
    // SAFETY: a live event of this context; `stream` is a live stream of the context's GPU
    // (the consumer's, during the export that names it) or a driver default-stream handle.
    unsafe { result::event::record(event.cu_event(), stream) }
        .map_err(driver_error("cuEventRecord"))?;
    Ok(Recorded {
        handle: event.cu_event(),
        _owner: event,
    })
}

/// Makes `stream` wait on `event` (`cuStreamWaitEvent`), or the host (`cuEventSynchronize`).
/// The event's context is bound to the thread.
fn wait_on(event: sys::CUevent, stream: ConsumerStream) -> Result<(), OrderError> {
    if stream == ConsumerStream::Host {
        // SAFETY: a live event (caller).
        return unsafe { result::event::synchronize(event) }
            .map_err(driver_error("cuEventSynchronize"));
    }
    let waiter = cu_stream(stream).ok_or(OrderError::Unsupported { stream })?;
    // SAFETY: a live event (caller); `waiter` is the consumer's live stream (the protocol keeps
    // it alive during the export that names it) or a driver default-stream handle.
    unsafe {
        result::stream::wait_event(
            waiter,
            event,
            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
        )
    }
    .map_err(driver_error("cuStreamWaitEvent"))
}

/// Makes `stream` wait on a recorded event (the host, for [`ConsumerStream::Host`]).
pub(crate) fn wait_recorded(event: &Recorded, stream: ConsumerStream) -> Result<(), OrderError> {
    wait_on(event.handle, stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumer_streams_map_to_the_drivers_handles() {
        assert_eq!(cu_stream(ConsumerStream::LegacyDefault), Some(address(1)));
        assert_eq!(cu_stream(ConsumerStream::Unspecified), Some(address(1)));
        assert_eq!(
            cu_stream(ConsumerStream::PerThreadDefault),
            Some(address(2))
        );
        assert_eq!(
            cu_stream(ConsumerStream::Handle(0xabc0)),
            Some(address(0xabc0))
        );
        assert_eq!(cu_stream(ConsumerStream::NoSync), None);
        assert_eq!(cu_stream(ConsumerStream::Host), None);
    }

    #[test]
    fn driver_errors_keep_their_code() {
        let error = driver_error("cuEventRecord")(DriverError(
            sys::cudaError_enum::CUDA_ERROR_INVALID_HANDLE,
        ));
        assert_eq!(
            error,
            OrderError::Runtime {
                call: "cuEventRecord",
                code: 400
            }
        );
    }
}
