//! The ordering hooks of a producer's work on one cudarc stream ([`CudaOrder`], what an export
//! carries) and of the CUDA runtime's waits on Arrow `sync_event`s ([`CudaWait`]).
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::ffi::c_void;
use core::ptr::NonNull;

use ::cudarc::driver::{result, sys, CudaContext, CudaStream};

use crate::runtime::{self, address, cu_stream, driver_error};
use crate::CudaError;
use dlpack_abi::arrow::{HostWait, StreamWait};
use dlpack_abi::dlpack::{ConsumerStream, DeviceEvent, OrderError, StreamOrder};
use dlpack_abi::raw::{
    kDLCUDA, kDLCUDAHost, kDLCUDAManaged, ArrowDeviceType, DLDevice, DLDeviceType,
};

/// The stream-ordering hook of data whose producer works on one cudarc stream (what
/// [`CudaExport::order`](crate::CudaExport::order) gives): makes a consumer's stream wait on an event recorded on it,
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
    /// use dlpack_abi_cudarc::CudaWait;
    ///
    /// let context = cudarc::driver::CudaContext::new(0)?;
    /// let stream = context.new_stream()?;
    /// let (_schema, mut array) = dlpack_abi_cudarc::export_slice(stream.alloc_zeros::<f32>(4)?).into_device_array()?;
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
