//! The device runtimes the glue orders data with when it hands a tensor from the stream it is
//! ready on to another (or to the host): installed once per process by whoever links one.

use alloc::sync::Arc;
use alloc::vec::Vec;
use std::sync::RwLock;

use dlpack_abi::dlpack::{ConsumerStream, OrderError, StreamOrder, StreamReady, StreamRuntime};
use dlpack_abi::raw::{kDLCPU, DLDevice};

/// The installed runtimes, newest last.
static RUNTIMES: RwLock<Vec<Arc<dyn StreamRuntime>>> = RwLock::new(Vec::new());

/// Installs a device runtime for this extension's hand-overs between streams: a `Tensor`
/// imported for one stream (`Tensor.from_dlpack(x, stream=c)`, or through a producer's
/// exchange API on its current stream) is then made ready on every other stream a consumer
/// names, and for the host and Arrow's `sync_event`, with events of this runtime. Without one,
/// those hand-overs are refused with a `BufferError` that names both streams.
///
/// The newest runtime that [drives](StreamRuntime::drives) a device is the one used. The
/// `dlpack_abi` Python package installs `dlpack_abi_cudarc::CudaRuntime` (crate
/// `dlpack-abi-cudarc`) when it is loaded; an extension of one's own installs it, or a
/// runtime of its own, in its module's init.
///
/// ```no_run
/// use std::sync::Arc;
/// use dlpack_abi::dlpack::{ConsumerStream, DeviceEvent, OrderError, RuntimeEvent, StreamRuntime};
/// use dlpack_abi::raw::{kDLROCM, DLDevice};
/// use pyo3::prelude::*;
///
/// /// A runtime for a device of one's own (here ROCm), which this sketch cannot order.
/// struct Rocm;
/// // SAFETY: it orders nothing, so it promises nothing it does not keep.
/// unsafe impl StreamRuntime for Rocm {
///     fn drives(&self, device: DLDevice) -> bool { device.device_type == kDLROCM }
///     fn record(&self, _: DLDevice, stream: ConsumerStream) -> Result<RuntimeEvent, OrderError> {
///         Err(OrderError::Unsupported { stream })
///     }
///     unsafe fn wait(&self, _: DLDevice, _: &(dyn DeviceEvent + Sync), stream: ConsumerStream)
///         -> Result<(), OrderError> {
///         Err(OrderError::Unsupported { stream })
///     }
/// }
///
/// #[pymodule]
/// fn my_tensors(m: &Bound<'_, PyModule>) -> PyResult<()> {
///     dlpack_abi_pyo3::install_stream_runtime(Arc::new(Rocm));
///     dlpack_abi_pyo3::add_to_module(m)
/// }
/// ```
pub fn install_stream_runtime(runtime: Arc<dyn StreamRuntime>) {
    let mut runtimes = RUNTIMES
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    runtimes.push(runtime);
}

/// Removes a runtime [installed](install_stream_runtime) before (the same `Arc`); whether it
/// was installed. Hooks made while it was installed keep it.
///
/// ```
/// use std::sync::Arc;
/// use dlpack_abi::dlpack::{ConsumerStream, DeviceEvent, OrderError, RuntimeEvent, StreamRuntime};
/// use dlpack_abi_pyo3::{install_stream_runtime, remove_stream_runtime, stream_runtime};
/// use dlpack_abi::raw::{kDLROCM, DLDevice};
///
/// struct Rocm;
/// // SAFETY: it never records or waits.
/// unsafe impl StreamRuntime for Rocm {
///     fn drives(&self, device: DLDevice) -> bool { device.device_type == kDLROCM }
///     fn record(&self, _: DLDevice, stream: ConsumerStream) -> Result<RuntimeEvent, OrderError> {
///         Err(OrderError::Unsupported { stream })
///     }
///     unsafe fn wait(&self, _: DLDevice, _: &(dyn DeviceEvent + Sync), stream: ConsumerStream)
///         -> Result<(), OrderError> { Err(OrderError::Unsupported { stream }) }
/// }
/// let rocm: Arc<dyn StreamRuntime> = Arc::new(Rocm);
/// install_stream_runtime(Arc::clone(&rocm));
/// let gpu = DLDevice { device_type: kDLROCM, device_id: 0 };
/// assert!(stream_runtime(gpu).is_some());
/// assert!(remove_stream_runtime(&rocm));
/// assert!(stream_runtime(gpu).is_none());
/// ```
pub fn remove_stream_runtime(runtime: &Arc<dyn StreamRuntime>) -> bool {
    let mut runtimes = RUNTIMES
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let before = runtimes.len();
    runtimes.retain(|installed| !Arc::ptr_eq(installed, runtime));
    runtimes.len() != before
}

/// The newest installed runtime that drives `device`.
///
/// ```
/// use dlpack_abi_pyo3::stream_runtime;
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
///
/// // No runtime orders CPU data: it has no streams.
/// assert!(stream_runtime(DLDevice { device_type: kDLCPU, device_id: 0 }).is_none());
/// ```
pub fn stream_runtime(device: DLDevice) -> Option<Arc<dyn StreamRuntime>> {
    let runtimes = RUNTIMES
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    runtimes
        .iter()
        .rev()
        .find(|runtime| runtime.drives(device))
        .cloned()
}

/// Whether data ready on `stream` is ready on `device`'s default stream (what a plain request
/// wants, and what needs no hook): CPU data, or the stream is that one by the core's naming
/// rule ([`canonical_stream`](dlpack_abi::dlpack::canonical_stream)).
pub(crate) fn on_default_stream(device: DLDevice, stream: ConsumerStream) -> bool {
    use dlpack_abi::dlpack::canonical_stream;
    canonical_stream(device, stream) == canonical_stream(device, ConsumerStream::Unspecified)
}

/// The hook of data on `device` that is ready on `stream` (none for CPU data, which is ready
/// everywhere), with the installed runtime for the device.
pub(crate) fn ready_on(
    device: DLDevice,
    stream: ConsumerStream,
) -> Result<Option<Arc<dyn StreamOrder>>, OrderError> {
    if device.device_type == kDLCPU {
        return Ok(None);
    }
    let ready = StreamReady::new(device, stream, stream_runtime(device))?;
    Ok(Some(Arc::new(ready)))
}
