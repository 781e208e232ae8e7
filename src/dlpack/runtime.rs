//! Handing device data on from one stream to another: a device runtime's event primitives
//! ([`StreamRuntime`]), the ordering hook of data that is ready on one stream only
//! ([`StreamReady`]: what an import with `stream=c` gives), and a tensor in use on a consumer's
//! stream whose deleter waits for that use ([`OnStream`]).
//!
//! The rule all three serve: **data is read only where it is ready, and freed only once it is
//! no longer read.** A tensor imported for stream `c` is ready on `c` and nowhere else; handing
//! it to stream `d` takes an event recorded on `c` that `d` waits on, to the host an event the
//! host waits on. Without a runtime that can do that, the hand-over is refused.
#![allow(unsafe_code)]

use alloc::sync::Arc;
use core::fmt;
use core::mem::ManuallyDrop;

use super::stream::StreamFamily;
use super::{ConsumerStream, DeviceEvent, OrderError, StreamOrder, VersionedTensor};
use crate::raw::{kDLCPU, DLDevice};

/// An event a [`StreamRuntime`] recorded: a [`DeviceEvent`] that may be shared between threads
/// (one event covers every later hand-over of the same data).
///
/// ```
/// use dlpack_abi::dlpack::{DeviceEvent, RuntimeEvent};
///
/// /// What an Arrow device array's `sync_event` would point to for this event.
/// fn sync_event_of(event: &RuntimeEvent) -> *mut core::ffi::c_void {
///     event.event_ptr().as_ptr()
/// }
/// ```
pub type RuntimeEvent = Arc<dyn DeviceEvent + Sync>;

/// A device runtime's part in ordering: events recorded on a stream, and waits on them by
/// another stream or by the host. `cudarc::CudaRuntime` is CUDA's (feature `cudarc`); the
/// Python glue looks one up for every hand-over between streams
/// (`python::install_stream_runtime`).
///
/// # Safety
/// [`record`](Self::record) returns an event whose [`event_ptr`](DeviceEvent::event_ptr) is
/// this runtime's event object, recorded after every piece of work enqueued on `stream` before
/// the call. [`wait`](Self::wait) returns `Ok` only once every piece of work enqueued on
/// `stream` afterwards is ordered after that work (for [`ConsumerStream::Host`]: once the work
/// has completed and its writes are visible to the host).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use core::{ffi::c_void, ptr::NonNull};
/// use dlpack_abi::dlpack::{ConsumerStream, DeviceEvent, OrderError, RuntimeEvent, StreamRuntime};
/// use dlpack_abi::raw::{kDLCUDA, DLDevice};
///
/// /// A device whose work completes as it is enqueued: it logs what it is asked.
/// #[derive(Default)]
/// struct Logged(Mutex<Vec<String>>);
/// struct Event(usize);
/// // SAFETY: points to the handle, which lives as long as the event.
/// unsafe impl DeviceEvent for Event {
///     fn event_ptr(&self) -> NonNull<c_void> { NonNull::from(&self.0).cast() }
/// }
/// // SAFETY: work on this device is complete when it is enqueued.
/// unsafe impl StreamRuntime for Logged {
///     fn drives(&self, device: DLDevice) -> bool { device.device_type == kDLCUDA }
///     fn record(&self, _: DLDevice, stream: ConsumerStream) -> Result<RuntimeEvent, OrderError> {
///         self.0.lock().unwrap().push(format!("record on {stream}"));
///         Ok(Arc::new(Event(7)))
///     }
///     unsafe fn wait(&self, _: DLDevice, _: &(dyn DeviceEvent + Sync), stream: ConsumerStream)
///         -> Result<(), OrderError> {
///         self.0.lock().unwrap().push(format!("wait on {stream}"));
///         Ok(())
///     }
/// }
/// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
/// let runtime = Logged::default();
/// let event = runtime.record(gpu, ConsumerStream::Handle(0x10))?;
/// // SAFETY: the event is this runtime's.
/// unsafe { runtime.wait(gpu, &*event, ConsumerStream::Host) }?;
/// assert_eq!(*runtime.0.lock().unwrap(), ["record on stream 0x10", "wait on the host"]);
/// # Ok::<(), OrderError>(())
/// ```
pub unsafe trait StreamRuntime: Send + Sync {
    /// Whether this runtime orders work on `device` (a CUDA runtime: CUDA devices, managed and
    /// pinned memory, where the driver loads).
    ///
    /// ```
    /// use dlpack_abi::dlpack::StreamRuntime;
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// /// Whether `runtime` can hand GPU 0's data from one stream to another.
    /// fn orders_gpu_data(runtime: &dyn StreamRuntime) -> bool {
    ///     runtime.drives(DLDevice { device_type: kDLCUDA, device_id: 0 })
    /// }
    /// ```
    fn drives(&self, device: DLDevice) -> bool;

    /// Records an event on `stream` of `device`, after the work enqueued there so far.
    ///
    /// # Errors
    /// [`OrderError::Unsupported`] for a stream this runtime cannot record on,
    /// [`OrderError::Runtime`] when the device runtime fails.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ConsumerStream, OrderError, RuntimeEvent, StreamRuntime};
    /// use dlpack_abi::raw::DLDevice;
    ///
    /// /// An event covering the work queued on `stream` so far, for a consumer to wait on.
    /// fn fence(runtime: &dyn StreamRuntime, device: DLDevice, stream: ConsumerStream)
    ///     -> Result<RuntimeEvent, OrderError> {
    ///     runtime.record(device, stream)
    /// }
    /// ```
    fn record(&self, device: DLDevice, stream: ConsumerStream) -> Result<RuntimeEvent, OrderError>;

    /// Makes `stream` of `device` wait on `event`: work enqueued there afterwards runs after the
    /// event's work. [`ConsumerStream::Host`] blocks until that work has completed.
    ///
    /// # Errors
    /// As for [`record`](Self::record).
    ///
    /// # Safety
    /// `event` was returned by this runtime's [`record`](Self::record) for `device`.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ConsumerStream, OrderError, StreamRuntime};
    /// use dlpack_abi::raw::DLDevice;
    ///
    /// /// Hands data ready on stream `from` to stream `to` (what `StreamReady` does).
    /// fn hand_over(runtime: &dyn StreamRuntime, device: DLDevice, from: ConsumerStream, to: ConsumerStream)
    ///     -> Result<(), OrderError> {
    ///     let event = runtime.record(device, from)?;
    ///     // SAFETY: the event is this runtime's, recorded for `device`.
    ///     unsafe { runtime.wait(device, &*event, to) }
    /// }
    /// ```
    unsafe fn wait(
        &self,
        device: DLDevice,
        event: &(dyn DeviceEvent + Sync),
        stream: ConsumerStream,
    ) -> Result<(), OrderError>;
}

/// The one rule for naming a stream of `device`: `stream` as the stream it is, so that two
/// spellings of one stream compare equal. No stream given ([`ConsumerStream::Unspecified`]) is
/// the legacy default stream on CUDA (device, managed and pinned host memory) and ROCm (device
/// and pinned host memory), as the array API says; elsewhere it stays the device's unnamed
/// default.
///
/// ```
/// use dlpack_abi::dlpack::{canonical_stream, ConsumerStream};
/// use dlpack_abi::raw::{kDLCUDA, DLDevice};
///
/// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
/// assert_eq!(canonical_stream(gpu, ConsumerStream::Unspecified), ConsumerStream::LegacyDefault);
/// assert_eq!(canonical_stream(gpu, ConsumerStream::Handle(0x10)), ConsumerStream::Handle(0x10));
/// ```
pub fn canonical_stream(device: DLDevice, stream: ConsumerStream) -> ConsumerStream {
    let legacy_by_default = StreamFamily::of(device) != StreamFamily::Other;
    match stream {
        ConsumerStream::Unspecified if legacy_by_default => ConsumerStream::LegacyDefault,
        other => other,
    }
}

/// The stream a DLPack exchange API's `current_work_stream` names (a `void*`, as an address):
/// NULL is the device's default stream; any other value means what the array API's `stream`
/// table ([`ConsumerStream::parse`]) says for the device (CUDA's 1 and 2 are the driver's
/// legacy and per-thread default handles), or is a handle where the table refuses it.
///
/// ```
/// use dlpack_abi::dlpack::{work_stream, ConsumerStream};
/// use dlpack_abi::raw::{kDLCUDA, DLDevice};
///
/// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
/// assert_eq!(work_stream(gpu, 0), ConsumerStream::LegacyDefault);
/// assert_eq!(work_stream(gpu, 0x7f00), ConsumerStream::Handle(0x7f00));
/// ```
pub fn work_stream(device: DLDevice, handle: usize) -> ConsumerStream {
    let stream = match handle {
        0 => ConsumerStream::Unspecified,
        handle => i64::try_from(handle)
            .ok()
            .and_then(|value| ConsumerStream::parse(device, Some(value)).ok())
            .unwrap_or(ConsumerStream::Handle(handle)),
    };
    canonical_stream(device, stream)
}

/// Whether `stream` is one that lives as long as the device (its default streams), so that an
/// event may be recorded on it at any later time.
fn lives_forever(stream: ConsumerStream) -> bool {
    matches!(
        stream,
        ConsumerStream::Unspecified | ConsumerStream::LegacyDefault
    )
}

/// The ordering hook of data that is ready on one stream only: what an import with
/// `stream=c` (or through an exchange API, on the producer's current work stream) gives, and
/// what a `Tensor` without a hook of its own is ready on (its device's default stream).
///
/// Asked for its own stream, it has nothing to do. Asked for another, or for the host, it
/// makes that stream wait (the host block) on an event recorded on its stream, through the
/// [`StreamRuntime`] it was made with; without one it refuses with
/// [`OrderError::NotOrdered`], which names both streams. The event is recorded when the hook is
/// made (a consumer may destroy its stream once the import returns), except on the device's
/// default stream, which lives as long as the device and is recorded on when needed.
///
/// Made for [`ConsumerStream::NoSync`] (`stream=-1`: the importer orders the work itself) it
/// hands the data to any stream as it is, the importer's to order, as `-1` says; the host and
/// Arrow's `sync_event`, which nothing orders then, are refused. CPU data is ready everywhere.
/// With a runtime, even the stream the data is ready on waits on the import's event (a cheap
/// no-op there): a stream handle may be a destroyed stream's, reused.
///
/// ```
/// use dlpack_abi::dlpack::{ConsumerStream, OrderError, StreamOrder, StreamReady};
/// use dlpack_abi::raw::{kDLCUDA, DLDevice};
///
/// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
/// let ready = StreamReady::new(gpu, ConsumerStream::Handle(0x10), None)?;
/// assert_eq!(ready.ready_on(gpu, ConsumerStream::Handle(0x10)), Ok(()));
/// let refused = ready.ready_on(gpu, ConsumerStream::Handle(0x20)).unwrap_err();
/// assert_eq!(
///     refused.to_string(),
///     "the data is ready on stream 0x10 only, and no device runtime is available to order it before stream 0x20"
/// );
/// # Ok::<(), OrderError>(())
/// ```
pub struct StreamReady {
    /// The device the data is on (the hook answers for it, whatever device it is asked about).
    device: DLDevice,
    stream: ConsumerStream,
    runtime: Option<Arc<dyn StreamRuntime>>,
    /// Recorded on `stream` when the hook was made (none on default streams, or without a
    /// runtime).
    event: Option<RuntimeEvent>,
}

impl StreamReady {
    /// Data on `device` ready on `stream`; `runtime` orders hand-overs to other streams (it is
    /// ignored unless it [drives](StreamRuntime::drives) `device`).
    ///
    /// # Errors
    /// The runtime's, when it cannot record the event.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ConsumerStream, OrderError, StreamReady};
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
    /// let ready = StreamReady::new(gpu, ConsumerStream::Unspecified, None)?;
    /// assert_eq!(ready.stream(), ConsumerStream::LegacyDefault);
    /// # Ok::<(), OrderError>(())
    /// ```
    pub fn new(
        device: DLDevice,
        stream: ConsumerStream,
        runtime: Option<Arc<dyn StreamRuntime>>,
    ) -> Result<Self, OrderError> {
        let stream = canonical_stream(device, stream);
        let runtime = runtime.filter(|runtime| runtime.drives(device));
        // Recorded now on a stream the consumer may destroy; not on CPU data (ready
        // everywhere), nor for `-1` (no stream, the importer's to order).
        let recorded = device.device_type != kDLCPU
            && stream != ConsumerStream::NoSync
            && !lives_forever(stream);
        let event = match &runtime {
            Some(runtime) if recorded => Some(runtime.record(device, stream)?),
            _ => None,
        };
        Ok(Self {
            device,
            stream,
            runtime,
            event,
        })
    }

    /// The refusal of a hand-over to `requested`.
    fn refused(&self, requested: ConsumerStream) -> OrderError {
        OrderError::NotOrdered {
            ready_on: self.stream,
            requested,
        }
    }

    /// The stream the data is ready on (as [`canonical_stream`] names it).
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ConsumerStream, OrderError, StreamReady};
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
    /// let ready = StreamReady::new(gpu, ConsumerStream::Handle(0x40), None)?;
    /// assert_eq!(ready.stream(), ConsumerStream::Handle(0x40));
    /// # Ok::<(), OrderError>(())
    /// ```
    pub fn stream(&self) -> ConsumerStream {
        self.stream
    }

    /// The event that covers the data's writes: the one recorded when the hook was made, or one
    /// recorded now on a default stream; `None` without a runtime, and for data the importer
    /// orders (`-1`: no stream to record on).
    fn event(&self) -> Result<Option<RuntimeEvent>, OrderError> {
        match (&self.event, &self.runtime) {
            (Some(event), _) => Ok(Some(Arc::clone(event))),
            (None, Some(runtime)) if lives_forever(self.stream) => {
                runtime.record(self.device, self.stream).map(Some)
            }
            _ => Ok(None),
        }
    }
}

// SAFETY: `ready_on` returns `Ok` without waiting only when nothing is pending for the request:
// CPU data; a `NoSync` request (the requester orders the work); data the importer orders
// (`NoSync`) asked for by another stream, which `-1` leaves to the importer (the host, which
// cannot be left anything, is refused); or, without a runtime, the stream the data is ready on
// (by its handle; not the per-thread default stream, another stream on every thread). Every
// other `Ok` is the runtime's `wait` on an event recorded on that stream after the data was
// ready there (at `new`, or now on a default stream), which the runtime's contract makes an
// ordering (a completion for the host). `record_event` returns that event. The device is the
// one the hook was made for, whatever the caller names.
unsafe impl StreamOrder for StreamReady {
    fn ready_on(&self, _: DLDevice, stream: ConsumerStream) -> Result<(), OrderError> {
        let device = self.device;
        let requested = canonical_stream(device, stream);
        if device.device_type == kDLCPU || requested == ConsumerStream::NoSync {
            return Ok(());
        }
        if self.stream == ConsumerStream::NoSync {
            // `-1`: the importer orders device work; the host's reads are ours, and unordered.
            return match requested {
                ConsumerStream::Host => Err(self.refused(requested)),
                _ => Ok(()),
            };
        }
        // One stream: nothing to order, unless an event was recorded at the import (a handle
        // compares equal to a destroyed stream's whose address was reused; a wait on the event
        // is right either way, and cheap on its own stream).
        if requested == self.stream
            && requested != ConsumerStream::PerThreadDefault
            && self.event.is_none()
        {
            return Ok(());
        }
        let (Some(event), Some(runtime)) = (self.event()?, &self.runtime) else {
            return Err(self.refused(requested));
        };
        // SAFETY: `event` was recorded by this runtime for `device` (`new`, `event`).
        unsafe { runtime.wait(device, &*event, requested) }
    }

    fn record_event(
        &self,
        _: DLDevice,
    ) -> Result<Option<alloc::boxed::Box<dyn DeviceEvent>>, OrderError> {
        if self.device.device_type == kDLCPU {
            return Ok(None);
        }
        match self.event()? {
            Some(event) => Ok(Some(alloc::boxed::Box::new(SharedEvent(event)))),
            None => Err(OrderError::NoEvent {
                ready_on: self.stream,
            }),
        }
    }
}

impl fmt::Debug for StreamReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamReady")
            .field("device", &self.device)
            .field("stream", &self.stream)
            .field("runtime", &self.runtime.is_some())
            .field("event", &self.event.is_some())
            .finish()
    }
}

/// One share of a runtime's event, for an Arrow array's `sync_event` (kept until its release).
struct SharedEvent(RuntimeEvent);

// SAFETY: the pointer is the shared event's, which this share keeps alive and which does not
// move (it lives in the `Arc`'s allocation).
unsafe impl DeviceEvent for SharedEvent {
    fn event_ptr(&self) -> core::ptr::NonNull<core::ffi::c_void> {
        self.0.event_ptr()
    }
}

/// A tensor in use on one stream of its device (a consumer's kernels read or write it there):
/// when it is dropped, the host waits for the work enqueued on that stream before the drop,
/// and only then does the producer's deleter run. A producer with a caching allocator
/// (PyTorch, CuPy) may hand the memory out again as soon as its deleter returns, so a deleter
/// that ran while kernels still read the memory would let another tensor's writes reach them.
///
/// The cost is one event recorded and waited on per drop: the host blocks until the stream's
/// work up to the drop has completed (as a `cuStreamSynchronize` would, without waiting for
/// work enqueued later). When the runtime fails at the drop (a lost device context, where no
/// work runs any more), the deleter runs at once.
///
/// ```
/// use std::sync::Arc;
/// use core::{ffi::c_void, ptr::NonNull};
/// use dlpack_abi::dlpack::{ConsumerStream, DeviceEvent, Export, OnStream, OrderError, RuntimeEvent, StreamRuntime};
/// use dlpack_abi::raw::DLDevice;
///
/// /// Stands for a device runtime (CPU memory here, so that the example runs anywhere).
/// struct Done;
/// struct Event(usize);
/// // SAFETY: points to the handle, which lives as long as the event.
/// unsafe impl DeviceEvent for Event {
///     fn event_ptr(&self) -> NonNull<c_void> { NonNull::from(&self.0).cast() }
/// }
/// // SAFETY: every piece of work is complete when it is enqueued.
/// unsafe impl StreamRuntime for Done {
///     fn drives(&self, _: DLDevice) -> bool { true }
///     fn record(&self, _: DLDevice, _: ConsumerStream) -> Result<RuntimeEvent, OrderError> {
///         Ok(Arc::new(Event(1)))
///     }
///     unsafe fn wait(&self, _: DLDevice, _: &(dyn DeviceEvent + Sync), _: ConsumerStream)
///         -> Result<(), OrderError> { Ok(()) }
/// }
/// let tensor = Export::new(vec![1.0f32, 2.0], &[2]).finish()?;
/// let in_use = OnStream::new(tensor, ConsumerStream::Handle(0x10), Arc::new(Done))?;
/// assert_eq!(in_use.tensor().view().shape(), [2]);
/// drop(in_use); // the host waits for stream 0x10, then the deleter runs
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OnStream {
    tensor: ManuallyDrop<VersionedTensor>,
    stream: ConsumerStream,
    runtime: Arc<dyn StreamRuntime>,
}

impl OnStream {
    /// `tensor`, in use on `stream` from now on, fenced by `runtime` when dropped.
    ///
    /// # Errors
    /// [`OrderError::Unsupported`] when `runtime` does not drive the tensor's device, or
    /// `stream` names no stream ([`ConsumerStream::NoSync`], [`ConsumerStream::Host`]); the
    /// tensor is dropped (its deleter run) then.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use dlpack_abi::dlpack::{ConsumerStream, OnStream, OrderError, StreamRuntime, VersionedTensor};
    ///
    /// /// Reads a tensor on `stream` with a kernel of one's own, then lets it go: the
    /// /// producer's deleter waits for the read.
    /// fn read_on(tensor: VersionedTensor, stream: ConsumerStream, runtime: Arc<dyn StreamRuntime>)
    ///     -> Result<(), OrderError> {
    ///     let in_use = OnStream::new(tensor, stream, runtime)?;
    ///     let _address = in_use.tensor().view().data_ptr(); // ... a kernel on `stream` reads it
    ///     Ok(()) // dropped: the host waits for `stream`, then the deleter runs
    /// }
    /// ```
    pub fn new(
        tensor: VersionedTensor,
        stream: ConsumerStream,
        runtime: Arc<dyn StreamRuntime>,
    ) -> Result<Self, OrderError> {
        let device = tensor.view().device();
        if !runtime.drives(device)
            || matches!(stream, ConsumerStream::NoSync | ConsumerStream::Host)
        {
            return Err(OrderError::Unsupported { stream });
        }
        Ok(Self {
            tensor: ManuallyDrop::new(tensor),
            stream: canonical_stream(device, stream),
            runtime,
        })
    }

    /// The tensor.
    ///
    /// ```
    /// use dlpack_abi::dlpack::OnStream;
    ///
    /// /// The extents of a tensor in use.
    /// fn shape_of(in_use: &OnStream) -> Vec<i64> {
    ///     in_use.tensor().view().shape().to_vec()
    /// }
    /// ```
    pub fn tensor(&self) -> &VersionedTensor {
        &self.tensor
    }

    /// The tensor, for exclusive access (`as_mut_slice`, `device_mut_ptr`).
    ///
    /// ```
    /// use dlpack_abi::dlpack::{AccessError, OnStream};
    ///
    /// /// The device address a kernel of one's own writes, for a tensor this consumer holds alone.
    /// fn output(in_use: &mut OnStream) -> Result<*mut f32, AccessError> {
    ///     in_use.tensor_mut().device_mut_ptr::<f32>()
    /// }
    /// ```
    pub fn tensor_mut(&mut self) -> &mut VersionedTensor {
        &mut self.tensor
    }

    /// The stream the tensor is in use on.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ConsumerStream, OnStream};
    ///
    /// /// Whether a kernel queued on `stream` may use the tensor without further ordering.
    /// fn usable_on(in_use: &OnStream, stream: ConsumerStream) -> bool {
    ///     in_use.stream() == stream
    /// }
    /// ```
    pub fn stream(&self) -> ConsumerStream {
        self.stream
    }
}

impl Drop for OnStream {
    fn drop(&mut self) {
        let device = self.tensor.view().device();
        // A runtime that fails here has lost the device (documented): the deleter runs anyway.
        if let Ok(event) = self.runtime.record(device, self.stream) {
            // SAFETY: `event` was recorded by this runtime for `device`.
            let _ = unsafe { self.runtime.wait(device, &*event, ConsumerStream::Host) };
        }
        // SAFETY: taken once, here, after the wait; never used again.
        drop(unsafe { ManuallyDrop::take(&mut self.tensor) });
    }
}

impl fmt::Debug for OnStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnStream")
            .field("tensor", &*self.tensor)
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}
