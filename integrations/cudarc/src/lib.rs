//! [cudarc](https://docs.rs/cudarc) 0.19 and CUDA memory, stream-ordered both ways (feature
//! `cudarc`). CUDA is loaded when first used, so this builds (and the rest of the crate runs)
//! on machines without it; [`cuda_available`] says whether it can be used.
//!
//! **cudarc → DLPack and Arrow.** [`CudaExport`] exports a `CudaSlice<T>` (moved in: writable;
//! or an `Arc` of one: read-only), or a strided part of one, as a DLPack tensor or an Arrow
//! device array, without copying. Its producer's work is on the slice's stream, and
//! [`CudaOrder`] is its [`StreamOrder`] hook: a consumer's stream is made to wait on an event
//! recorded there (`cuStreamWaitEvent`), the host synchronises that stream, and an Arrow export
//! carries an event recorded there as its `sync_event`, owned until release. In Python
//! ([`CudaExport::into_py_tensor`], feature `pyo3` too) `__dlpack__(stream=...)` runs that hook.
//!
//! **DLPack and Arrow → cudarc.** [`CudaTensor`] imports a CUDA tensor (from Python with
//! [`consumer_stream`] passed as `__dlpack__`'s `stream`, so that the producer orders its work
//! before yours) as a `&CudaSlice<T>` on your stream, tied to the tensor's lifetime: the memory
//! stays the producer's and is never freed by cudarc. [`CudaWait`] is the runtime's
//! [`HostWait`] and [`StreamWait`] for Arrow
//! device arrays' `sync_event`s; [`CudaTensor::from_device_array`] waits on the event with your
//! stream and bridges the array.
//!
//! ```no_run
//! use std::sync::Arc;
//! use cudarc::driver::CudaContext;
//! use dlpack_abi_cudarc::{CudaExport, CudaTensor};
//! use dlpack_abi::dlpack::ConsumerStream;
//!
//! let context = CudaContext::new(0)?;
//! let producer = context.new_stream()?;
//! let values = producer.clone_htod(&[1.0f32, 2.0, 3.0])?; // work queued on `producer`
//! let export = CudaExport::new(values);
//! let consumer = context.new_stream()?;
//! // The producer's work is ordered before the consumer's stream, without a host sync.
//! let tensor = export.finish_on(ConsumerStream::Handle(consumer.cu_stream() as usize))?;
//! let imported = CudaTensor::<f32>::new(tensor, &consumer)?;
//! assert_eq!(consumer.clone_dtoh(imported.slice())?, [1.0, 2.0, 3.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![allow(unsafe_code)]

extern crate alloc;

/// `From` impls for errors that wrap others: `wraps! { Outer::Variant(Inner), ... }`.
#[allow(unused_macros)]
macro_rules! wraps {
    ($($outer:ident :: $variant:ident ($inner:ty)),+ $(,)?) => {$(
        impl From<$inner> for $outer {
            fn from(error: $inner) -> Self {
                Self::$variant(error)
            }
        }
    )+};
}

mod export;
mod import;
mod runtime;

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::ffi::c_void;
use core::fmt;
use core::ptr::NonNull;

use ::cudarc::driver::{result, sys, CudaContext, CudaStream, DriverError};

pub use export::CudaExport;
pub use import::CudaTensor;
pub use runtime::CudaRuntime;

use dlpack_abi::arrow::{BridgeError, HostWait, StreamWait};
use dlpack_abi::dlpack::{
    AccessError, ConsumerStream, DeviceEvent, ExportError, OrderError, StreamOrder,
};
use dlpack_abi::raw::{
    kDLCUDA, kDLCUDAHost, kDLCUDAManaged, ArrowDeviceType, DLDevice, DLDeviceType,
};

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

/// The value to pass as `__dlpack__(stream=...)` (or [`DlpackRequest`]'s `stream`) for work on
/// `stream`, by the array API's table: the legacy default stream (a NULL `CUstream`) is 1, and
/// any other stream its handle. A producer then orders its work before `stream`.
///
/// [`DlpackRequest`]: https://docs.rs/dlpack-abi/latest/dlpack_abi/python/struct.DlpackRequest.html
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
fn cu_stream(stream: ConsumerStream) -> Option<sys::CUstream> {
    stream.cuda_handle().map(address)
}

/// A handle or device address as a pointer (without provenance: never dereferenced here).
fn address<T>(value: usize) -> *mut T {
    core::ptr::null_mut::<u8>().wrapping_add(value).cast()
}

/// A driver error as an ordering error.
fn driver_error(call: &'static str) -> impl FnOnce(DriverError) -> OrderError {
    move |error| OrderError::Runtime {
        call,
        code: error.0 as i64,
    }
}

/// The stream-ordering hook of data whose producer works on one cudarc stream (what
/// [`CudaExport::order`] gives): makes a consumer's stream wait on an event recorded on it,
/// synchronises it for the host, and records `sync_event`s on it for Arrow.
///
/// ```no_run
/// use dlpack_abi_cudarc::CudaOrder;
/// use dlpack_abi::dlpack::{ConsumerStream, StreamOrder};
/// use dlpack_abi::raw::{kDLCUDA, DLDevice};
///
/// let context = cudarc::driver::CudaContext::new(0)?;
/// let (producer, consumer) = (context.new_stream()?, context.new_stream()?);
/// let order = CudaOrder::new(producer);
/// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
/// order.ready_on(gpu, ConsumerStream::Handle(consumer.cu_stream() as usize))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct CudaOrder {
    stream: Arc<CudaStream>,
}

impl CudaOrder {
    /// The hook of work on `stream`.
    ///
    /// ```no_run
    /// use dlpack_abi_cudarc::CudaOrder;
    /// use dlpack_abi::dlpack::{ConsumerStream, StreamOrder};
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// let order = CudaOrder::new(stream);
    /// // The host waits for everything queued on the producer's stream.
    /// order.ready_on(DLDevice { device_type: kDLCUDA, device_id: 0 }, ConsumerStream::Host)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(stream: Arc<CudaStream>) -> Self {
        Self { stream }
    }

    /// The producer's stream.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use dlpack_abi_cudarc::CudaOrder;
    ///
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// let order = CudaOrder::new(Arc::clone(&stream));
    /// assert!(Arc::ptr_eq(order.stream(), &stream));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

// SAFETY: `ready_on` returns `Ok` after `cuStreamWaitEvent` on an event recorded after all
// work on the producer's stream (or after `cuStreamSynchronize` for the host), and does nothing
// for `NoSync`; `record_event`'s event is recorded after that work.
unsafe impl StreamOrder for CudaOrder {
    fn ready_on(&self, _: DLDevice, stream: ConsumerStream) -> Result<(), OrderError> {
        if stream == ConsumerStream::NoSync {
            return Ok(());
        }
        if stream == ConsumerStream::Host {
            return self
                .stream
                .synchronize()
                .map_err(driver_error("cuStreamSynchronize"));
        }
        if cu_stream(stream).ok_or(OrderError::Unsupported { stream })? == self.stream.cu_stream() {
            return Ok(()); // one stream: ordered already
        }
        let event = runtime::record_on(self.stream.context(), self.stream.cu_stream())?;
        runtime::wait_recorded(&event, stream)
    }

    fn record_event(&self, _: DLDevice) -> Result<Option<Box<dyn DeviceEvent>>, OrderError> {
        let event = runtime::record_on(self.stream.context(), self.stream.cu_stream())?;
        Ok(Some(Box::new(event)))
    }
}

/// The CUDA runtime's waits on an Arrow `sync_event` (a pointer to a `CUevent`): for the host
/// (`cuEventSynchronize`, [`HostWait`]) and for a stream (`cuStreamWaitEvent`, [`StreamWait`]).
/// Events of other runtimes (ROCm's, ...) are refused with [`CudaError::NotCuda`].
///
/// ```no_run
/// use dlpack_abi::arrow::DeviceArray;
/// use dlpack_abi_cudarc::CudaWait;
///
/// fn ready(array: &mut DeviceArray) -> Result<(), dlpack_abi_cudarc::CudaError> {
///     let context = cudarc::driver::CudaContext::new(0)?;
///     array.wait_host(&CudaWait::new(context))
/// }
/// ```
#[derive(Clone, Debug)]
pub struct CudaWait {
    context: Arc<CudaContext>,
}

impl CudaWait {
    /// Waits made with `context` current.
    ///
    /// ```no_run
    /// use dlpack_abi_cudarc::{CudaExport, CudaWait};
    ///
    /// let context = cudarc::driver::CudaContext::new(0)?;
    /// let stream = context.new_stream()?;
    /// let (_schema, mut array) = CudaExport::new(stream.alloc_zeros::<f32>(4)?).into_device_array()?;
    /// // The host blocks until the event the producer recorded has completed.
    /// array.wait_host(&CudaWait::new(context))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(context: Arc<CudaContext>) -> Self {
        Self { context }
    }

    /// The `CUevent` an event pointer of a CUDA device array points to.
    fn event(
        &self,
        device_type: ArrowDeviceType,
        device_id: i64,
        event: NonNull<c_void>,
    ) -> Result<sys::CUevent, CudaError> {
        let device_type = DLDeviceType::from(device_type);
        if ![kDLCUDA, kDLCUDAHost, kDLCUDAManaged].contains(&device_type) {
            return Err(CudaError::NotCuda {
                device_type,
                device_id,
            });
        }
        self.context.bind_to_thread()?;
        // SAFETY: a CUDA device array's `sync_event` points to a `CUevent`, live until the
        // array's release (the device interface; `DeviceArray::from_raw`'s contract).
        Ok(unsafe { event.cast::<sys::CUevent>().read() })
    }
}

// SAFETY: returns `Ok` only after `cuEventSynchronize`, which returns once the event's work is
// complete.
unsafe impl HostWait for CudaWait {
    type Error = CudaError;

    fn wait_host(
        &self,
        device_type: ArrowDeviceType,
        device_id: i64,
        event: NonNull<c_void>,
    ) -> Result<(), CudaError> {
        let event = self.event(device_type, device_id, event)?;
        // SAFETY: a live event of the producer's (above).
        Ok(unsafe { result::event::synchronize(event) }?)
    }
}

// SAFETY: returns `Ok` only after `cuStreamWaitEvent`, which orders later work on `stream`
// after the event's.
unsafe impl StreamWait for CudaWait {
    type Error = CudaError;

    fn wait_stream(
        &self,
        device_type: ArrowDeviceType,
        device_id: i64,
        event: NonNull<c_void>,
        stream: usize,
    ) -> Result<(), CudaError> {
        let event = self.event(device_type, device_id, event)?;
        let stream: sys::CUstream = address(stream);
        // SAFETY: the caller's live stream of this context; a live event of the producer's.
        let waited = unsafe {
            result::stream::wait_event(
                stream,
                event,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        };
        Ok(waited?)
    }
}

/// Why a cudarc export or import failed.
///
/// ```
/// use dlpack_abi_cudarc::CudaError;
/// use dlpack_abi::raw::kDLROCM;
///
/// let error = CudaError::NotCuda { device_type: kDLROCM, device_id: 0 };
/// assert_eq!(error.to_string(), "the memory is on kDLROCM:0, not a CUDA device");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CudaError {
    /// The CUDA driver failed.
    Driver(DriverError),
    /// The memory (or event) is not CUDA's.
    NotCuda {
        /// Its device type.
        device_type: DLDeviceType,
        /// Its device id.
        device_id: i64,
    },
    /// The memory is on another GPU than the stream's.
    OtherDevice {
        /// The memory's device id.
        device_id: i64,
        /// The stream's device ordinal.
        ordinal: usize,
    },
    /// Typed access refused it (dtype, alignment, layout, flags, exclusivity).
    Access(AccessError),
    /// The export's checks refused it.
    Export(ExportError),
    /// The Arrow bridge refused it.
    Bridge(BridgeError),
    /// The stream ordering hook refused it.
    Order(OrderError),
}

wraps! {
    CudaError::Driver(DriverError),
    CudaError::Access(AccessError),
    CudaError::Export(ExportError),
    CudaError::Bridge(BridgeError),
    CudaError::Order(OrderError),
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Driver(error) => write!(f, "CUDA driver error {}", error.0 as i64),
            Self::NotCuda {
                device_type,
                device_id,
            } => write!(
                f,
                "the memory is on {device_type:?}:{device_id}, not a CUDA device"
            ),
            Self::OtherDevice { device_id, ordinal } => write!(
                f,
                "the memory is on GPU {device_id}, the stream on GPU {ordinal}"
            ),
            Self::Access(error) => error.fmt(f),
            Self::Export(error) => error.fmt(f),
            Self::Bridge(error) => error.fmt(f),
            Self::Order(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for CudaError {}

/// Into the exception its kind calls for: the wrapped errors as they convert on their own, a
/// tensor on another device (or not CUDA's) a `BufferError`, the driver's a `RuntimeError`.
///
/// ```no_run
/// use dlpack_abi_cudarc::CudaError;
/// use dlpack_abi::raw::kDLCPU;
///
/// let error = pyo3::PyErr::from(CudaError::NotCuda { device_type: kDLCPU, device_id: 0 });
/// pyo3::Python::attach(|py| assert!(error.is_instance_of::<pyo3::exceptions::PyBufferError>(py)));
/// ```
#[cfg(feature = "pyo3")]
impl From<CudaError> for pyo3::PyErr {
    fn from(error: CudaError) -> Self {
        use pyo3::exceptions::{PyBufferError, PyRuntimeError};
        match error {
            CudaError::Access(error) => error.into(),
            CudaError::Export(error) => error.into(),
            CudaError::Bridge(error) => error.into(),
            CudaError::Order(error) => error.into(),
            CudaError::NotCuda { .. } | CudaError::OtherDevice { .. } => {
                PyBufferError::new_err(alloc::string::ToString::to_string(&error))
            }
            CudaError::Driver(_) => {
                PyRuntimeError::new_err(alloc::string::ToString::to_string(&error))
            }
        }
    }
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
