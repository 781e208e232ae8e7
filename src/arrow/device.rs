//! `ArrowDeviceArray` ([`DeviceArray`]) and the device types shared with DLPack.
#![allow(unsafe_code)]

use core::ffi::c_void;
use core::ptr::NonNull;

use super::binding::Binding;
use super::owned::Owned;
use super::{Array, ArrayView, BridgeError, SchemaRef, ValidationError};
use crate::raw::{ArrowDeviceArray, ArrowDeviceType, DLDevice, DLDeviceType, ARROW_DEVICE_CPU};

/// Arrow device types are DLPack's numbers: every Arrow value is the same DLPack value.
///
/// ```
/// use dlpack_abi::raw::{kDLCUDA, ArrowDeviceType, DLDeviceType, ARROW_DEVICE_CUDA};
///
/// assert_eq!(DLDeviceType::from(ARROW_DEVICE_CUDA), kDLCUDA);
/// assert_eq!(ArrowDeviceType::try_from(kDLCUDA), Ok(ARROW_DEVICE_CUDA));
/// ```
impl From<ArrowDeviceType> for DLDeviceType {
    fn from(device_type: ArrowDeviceType) -> Self {
        DLDeviceType(device_type.0)
    }
}

/// DLPack device types Arrow names convert; the others (`kDLMAIA`, `kDLTrn`, values from newer
/// headers) are [`BridgeError::DeviceNotInArrow`].
///
/// ```
/// use dlpack_abi::arrow::BridgeError;
/// use dlpack_abi::raw::{kDLMAIA, ArrowDeviceType};
///
/// assert_eq!(
///     ArrowDeviceType::try_from(kDLMAIA),
///     Err(BridgeError::DeviceNotInArrow { device_type: kDLMAIA })
/// );
/// ```
impl TryFrom<DLDeviceType> for ArrowDeviceType {
    type Error = BridgeError;

    fn try_from(device_type: DLDeviceType) -> Result<Self, BridgeError> {
        let arrow = ArrowDeviceType(device_type.0);
        match arrow.name() {
            Some(_) => Ok(arrow),
            None => Err(BridgeError::DeviceNotInArrow { device_type }),
        }
    }
}

/// The one device rule of device streams (consumed, produced and async): every array is on the
/// stream's device type.
pub(crate) fn check_stream_device(
    stream: ArrowDeviceType,
    array: ArrowDeviceType,
) -> Result<(), ValidationError> {
    if array == stream {
        return Ok(());
    }
    Err(ValidationError::DeviceMismatch {
        stream: stream.into(),
        array: array.into(),
    })
}

/// A DLPack device as Arrow writes it: the same type, and `device_id` -1 for the CPU (Arrow's
/// convention for devices without ids; DLPack writes 0).
///
/// # Errors
/// [`BridgeError::DeviceNotInArrow`] for a DLPack device type the Arrow device interface does
/// not define.
///
/// ```
/// use dlpack_abi::arrow::{arrow_device, dlpack_device};
/// use dlpack_abi::raw::{kDLCPU, kDLCUDA, DLDevice, ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA};
///
/// let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
/// assert_eq!(arrow_device(cpu), Ok((ARROW_DEVICE_CPU, -1)));
/// assert_eq!(dlpack_device(ARROW_DEVICE_CPU, -1), Ok(cpu));
/// let gpu = DLDevice { device_type: kDLCUDA, device_id: 3 };
/// assert_eq!(dlpack_device(ARROW_DEVICE_CUDA, 3), Ok(gpu));
/// ```
pub fn arrow_device(device: DLDevice) -> Result<(ArrowDeviceType, i64), BridgeError> {
    let device_type = ArrowDeviceType::try_from(device.device_type)?;
    let device_id = match (device_type, device.device_id) {
        (ARROW_DEVICE_CPU, 0) => -1,
        (_, id) => i64::from(id),
    };
    Ok((device_type, device_id))
}

/// An Arrow device as DLPack writes it: the same type, and `device_id` -1 (no id) as 0.
/// Ids outside `int32_t` are [`BridgeError::DeviceIdOutOfRange`].
///
/// # Errors
/// [`BridgeError::DeviceIdOutOfRange`] for an id outside `int32_t`.
///
/// ```
/// use dlpack_abi::arrow::{dlpack_device, BridgeError};
/// use dlpack_abi::raw::{kDLCPU, DLDevice, ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA};
///
/// assert_eq!(dlpack_device(ARROW_DEVICE_CPU, -1)?, DLDevice { device_type: kDLCPU, device_id: 0 });
/// assert_eq!(
///     dlpack_device(ARROW_DEVICE_CUDA, 1 << 40),
///     Err(BridgeError::DeviceIdOutOfRange { device_id: 1 << 40 })
/// );
/// # Ok::<(), BridgeError>(())
/// ```
pub fn dlpack_device(
    device_type: ArrowDeviceType,
    device_id: i64,
) -> Result<DLDevice, BridgeError> {
    let id = if device_id == -1 { 0 } else { device_id };
    Ok(DLDevice {
        device_type: device_type.into(),
        device_id: i32::try_from(id).map_err(|_| BridgeError::DeviceIdOutOfRange { device_id })?,
    })
}

/// An `ArrowDeviceArray` this crate owns: validated at import, released exactly once on drop
/// (through `array.release`).
///
/// Only the buffers are on the device; the structs are CPU memory and readable anywhere.
/// [`view`](Self::view) gives typed slices only when the host can read the buffers (CPU, pinned
/// or managed memory) and no `sync_event` is pending: [`wait_host`](Self::wait_host) waits on
/// the event with the device runtime's [`HostWait`] (this crate links none), or, when the
/// caller waited itself, [`view_synchronized`](Self::view_synchronized).
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Array, DeviceArray, SchemaDef};
/// use dlpack_abi::raw::ARROW_DEVICE_CPU;
///
/// let schema = SchemaDef::new("s")?.export()?;
/// let array = DeviceArray::from_cpu(Array::from_vec(vec![1i16, -2])?);
/// assert_eq!((array.device_type(), array.device_id()), (ARROW_DEVICE_CPU, -1));
/// assert!(array.sync_event().is_none());
/// assert_eq!(array.view(schema.view())?.values::<i16>()?, [1, -2]);
/// # }
/// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
/// ```
pub struct DeviceArray {
    pub(super) inner: Owned<ArrowDeviceArray>,
    /// What the buffers were sized for: views accept only that.
    binding: Binding,
    /// Whether the host has waited on the `sync_event` ([`Self::wait_host`]).
    pub(super) waited: bool,
    /// The stream made to wait on the `sync_event` ([`Self::wait_stream`]), if one was.
    pub(super) ordered_on: Option<usize>,
}

/// A device runtime's wait on an Arrow `sync_event`, for the host: what
/// [`DeviceArray::wait_host`] needs before it hands out typed reads of a device array whose
/// producer has work pending. A CUDA runtime implements it with `cuEventSynchronize` on the
/// `CUevent` the pointer points to, for example.
///
/// # Safety
/// [`wait_host`](Self::wait_host) returns `Ok` only once the work the event stands for has
/// completed and its writes are visible to the host. Typed reads rely on it: reading memory a
/// device is still writing is a data race.
///
/// ```
/// use core::ffi::c_void;
/// use core::ptr::NonNull;
/// use dlpack_abi::arrow::HostWait;
/// use dlpack_abi::raw::ArrowDeviceType;
///
/// /// A runtime whose device work is always complete (a CPU "device").
/// struct Immediate;
///
/// // SAFETY: there is never pending work to wait for.
/// unsafe impl HostWait for Immediate {
///     type Error = core::convert::Infallible;
///     fn wait_host(&self, _: ArrowDeviceType, _: i64, _: NonNull<c_void>) -> Result<(), Self::Error> {
///         Ok(())
///     }
/// }
/// ```
pub unsafe trait HostWait {
    /// Why a wait failed (the runtime's error).
    type Error;
    /// Blocks until the work `event` (a pointer to the device's event object, e.g. a
    /// `CUevent`, on device `device_type`/`device_id`) stands for is complete and visible to
    /// the host.
    ///
    /// # Errors
    /// The runtime's, when it cannot wait (the array then stays unreadable).
    ///
    /// ```
    /// use core::ffi::c_void;
    /// use core::ptr::NonNull;
    /// use dlpack_abi::arrow::HostWait;
    /// use dlpack_abi::raw::ArrowDeviceType;
    ///
    /// /// Stands for a runtime; a CUDA one calls `cuEventSynchronize(*event.cast::<CUevent>())`.
    /// struct Blocking;
    /// // SAFETY: this runtime's work is complete when it is enqueued.
    /// unsafe impl HostWait for Blocking {
    ///     type Error = i32;
    ///     fn wait_host(&self, _: ArrowDeviceType, _: i64, event: NonNull<c_void>) -> Result<(), i32> {
    ///         let _ = event;
    ///         Ok(())
    ///     }
    /// }
    /// let mut event = 0u64;
    /// assert_eq!(Blocking.wait_host(ArrowDeviceType(2), 0, NonNull::from(&mut event).cast()), Ok(()));
    /// ```
    fn wait_host(
        &self,
        device_type: ArrowDeviceType,
        device_id: i64,
        event: NonNull<c_void>,
    ) -> Result<(), Self::Error>;
}

/// A device runtime's wait on an Arrow `sync_event`, for one of its streams: what
/// [`DeviceArray::wait_stream`] needs before the buffers are used by work on that stream (a
/// CUDA runtime implements it with `cuStreamWaitEvent` on the `CUevent` the pointer points to).
/// The host waits with [`HostWait`] instead.
///
/// # Safety
/// [`wait_stream`](Self::wait_stream) returns `Ok` only once work enqueued on `stream`
/// afterwards is ordered after the work the event stands for.
/// [`DeviceArray::into_tensor`](DeviceArray::into_tensor) relies on it for device memory.
///
/// ```
/// use core::ffi::c_void;
/// use core::ptr::NonNull;
/// use dlpack_abi::arrow::StreamWait;
/// use dlpack_abi::raw::ArrowDeviceType;
///
/// /// A runtime whose device work is always complete.
/// struct Immediate;
///
/// // SAFETY: there is never pending work to order after.
/// unsafe impl StreamWait for Immediate {
///     type Error = core::convert::Infallible;
///     fn wait_stream(
///         &self, _: ArrowDeviceType, _: i64, _: NonNull<c_void>, _: usize,
///     ) -> Result<(), Self::Error> {
///         Ok(())
///     }
/// }
/// ```
pub unsafe trait StreamWait {
    /// Why a wait failed (the runtime's error).
    type Error;
    /// Makes `stream` (a handle, e.g. a `CUstream`) wait for the work `event` (a pointer to the
    /// device's event object) stands for, without blocking the host.
    ///
    /// # Errors
    /// The runtime's, when it cannot wait (the array then stays pending).
    ///
    /// ```
    /// use core::ffi::c_void;
    /// use core::ptr::NonNull;
    /// use dlpack_abi::arrow::StreamWait;
    /// use dlpack_abi::raw::ArrowDeviceType;
    ///
    /// /// Stands for a runtime; a CUDA one calls `cuStreamWaitEvent(stream, *event, 0)`.
    /// struct Ordered;
    /// // SAFETY: this runtime runs everything in submission order.
    /// unsafe impl StreamWait for Ordered {
    ///     type Error = i32;
    ///     fn wait_stream(&self, _: ArrowDeviceType, _: i64, _: NonNull<c_void>, _stream: usize) -> Result<(), i32> {
    ///         Ok(())
    ///     }
    /// }
    /// let mut event = 0u64;
    /// let event = NonNull::from(&mut event).cast();
    /// assert_eq!(Ordered.wait_stream(ArrowDeviceType(2), 0, event, 0x5000), Ok(()));
    /// ```
    fn wait_stream(
        &self,
        device_type: ArrowDeviceType,
        device_id: i64,
        event: NonNull<c_void>,
        stream: usize,
    ) -> Result<(), Self::Error>;
}

// SAFETY: as for `Array`; the sync event is owned through `private_data` until release.
unsafe impl Send for DeviceArray {}
// SAFETY: shared access only reads.
unsafe impl Sync for DeviceArray {}

impl DeviceArray {
    /// Takes ownership of a producer's device array (moving it: the source's `array.release`
    /// is set to NULL) and validates `array` against `schema`. `reserved` is not checked (some
    /// producers leave it uninitialised).
    ///
    /// On every error except [`ValidationError::NullPointer`] and [`ValidationError::Released`] the array
    /// has been released, exactly once, when this returns.
    ///
    /// # Safety
    /// As for [`Array::from_raw`], except that the buffers are memory of `device_type`; a
    /// non-NULL `sync_event` points to that device's event object until release.
    ///
    /// # Errors
    /// [`ValidationError`] when the array does not follow the C Data Interface for `schema`.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray, SchemaDef};
    ///
    /// let schema = SchemaDef::new("C")?.export()?;
    /// // A producer fills an `ArrowDeviceArray` (here this crate's own exporter does).
    /// let mut c_array = DeviceArray::from_cpu(Array::from_vec(vec![7u8, 8])?).into_raw();
    /// // SAFETY: the caller owns `c_array`, a CPU uint8 array; `from_raw` moves it out.
    /// let array = unsafe { DeviceArray::from_raw(&mut c_array, schema.view()) }?;
    /// assert!(c_array.array.release.is_none()); // moved
    /// assert_eq!(array.view(schema.view())?.values::<u8>()?, [7, 8]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub unsafe fn from_raw(
        ptr: *mut ArrowDeviceArray,
        schema: SchemaRef<'_>,
    ) -> Result<Self, ValidationError> {
        // SAFETY: forwarded from the caller.
        let inner = unsafe { Owned::take(ptr) }?;
        let mut budget = super::MAX_NODES;
        // SAFETY: the tree follows the C Data Interface (caller).
        unsafe { super::array::validate(&inner.raw().array, schema, 0, &mut budget) }?;
        Ok(Self {
            inner,
            binding: Binding::of(schema),
            waited: false,
            ordered_on: None,
        })
    }

    /// A CPU device array (`device_id` -1, no event, `reserved` zeroed) around `array`.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    /// use dlpack_abi::raw::ARROW_DEVICE_CPU;
    ///
    /// let array = DeviceArray::from_cpu(Array::from_vec(vec![1.0f64])?);
    /// assert_eq!(array.as_raw().device_type, ARROW_DEVICE_CPU);
    /// assert_eq!(array.as_raw().device_id, -1);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn from_cpu(array: Array) -> Self {
        // SAFETY: an `Array`'s buffers are CPU memory; no event.
        unsafe { Self::new(array, ARROW_DEVICE_CPU, -1, core::ptr::null_mut()) }
    }

    /// A device array around `array`, whose buffers are on `device_type`/`device_id`.
    ///
    /// # Safety
    /// The buffers of `array` (and of its children) are memory of that device, and a non-NULL
    /// `sync_event` points to the device's event object, valid until the array is released
    /// (the array's `release` frees it, e.g. through an owner it keeps).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    /// use dlpack_abi::raw::ARROW_DEVICE_CUDA_MANAGED;
    ///
    /// // Managed memory is readable on the host; here a host Vec stands in for it.
    /// let values = Array::from_vec(vec![1u32, 2, 3])?;
    /// // SAFETY: (a stand-in for) memory of device 0, with no event to wait on.
    /// let array = unsafe { DeviceArray::new(values, ARROW_DEVICE_CUDA_MANAGED, 0, core::ptr::null_mut()) };
    /// assert_eq!((array.device_type(), array.device_id(), array.len()), (ARROW_DEVICE_CUDA_MANAGED, 0, 3));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub unsafe fn new(
        array: Array,
        device_type: ArrowDeviceType,
        device_id: i64,
        sync_event: *mut c_void,
    ) -> Self {
        let (array, binding) = array.into_parts();
        Self {
            binding,
            waited: false,
            ordered_on: None,
            inner: Owned::new(ArrowDeviceArray {
                array,
                device_id,
                device_type,
                sync_event,
                reserved: [0; 3],
            }),
        }
    }

    /// The kind of memory the buffers live in.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    /// use dlpack_abi::raw::{DLDeviceType, ARROW_DEVICE_CPU};
    ///
    /// let array = DeviceArray::from_cpu(Array::from_vec(vec![0i8])?);
    /// assert_eq!(array.device_type(), ARROW_DEVICE_CPU);
    /// assert!(DLDeviceType::from(array.device_type()).is_host_accessible());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn device_type(&self) -> ArrowDeviceType {
        self.inner.raw().device_type
    }

    /// The device ordinal (-1 for devices without ids).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{dlpack_device, Array, DeviceArray};
    ///
    /// let array = DeviceArray::from_cpu(Array::from_vec(vec![0i8])?);
    /// assert_eq!(array.device_id(), -1); // Arrow's "no id"
    /// assert_eq!(dlpack_device(array.device_type(), array.device_id())?.device_id, 0); // DLPack's
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn device_id(&self) -> i64 {
        self.inner.raw().device_id
    }

    /// The event to wait on before touching the buffers (a pointer to e.g. a `cudaEvent_t`),
    /// owned by the producer until release; `None` when no synchronisation is needed.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    /// use dlpack_abi::raw::ARROW_DEVICE_CUDA;
    ///
    /// let mut event = 0u64; // stands for a `cudaEvent_t`
    /// let event_ptr: *mut u64 = &mut event;
    /// // SAFETY: a stand-in for device memory; the event outlives the array.
    /// let array = unsafe { DeviceArray::new(Array::from_vec(vec![1u8])?, ARROW_DEVICE_CUDA, 0, event_ptr.cast()) };
    /// assert_eq!(array.sync_event().map(|e| e.as_ptr().cast::<u64>()), Some(event_ptr));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn sync_event(&self) -> Option<NonNull<c_void>> {
        NonNull::new(self.inner.raw().sync_event)
    }

    /// Waits on the pending `sync_event` with the device runtime's `waiter` (once: later calls,
    /// and arrays without an event, return at once). Afterwards [`view`](Self::view) gives
    /// typed reads if the host can address the memory.
    ///
    /// # Errors
    /// The waiter's; the array stays unreadable then.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use core::ffi::c_void;
    /// use core::ptr::NonNull;
    /// use dlpack_abi::arrow::{Array, DeviceArray, HostWait, SchemaDef};
    /// use dlpack_abi::raw::{ArrowDeviceType, ARROW_DEVICE_CUDA_HOST};
    ///
    /// struct Immediate;
    /// // SAFETY: this example's "device" never has pending work.
    /// unsafe impl HostWait for Immediate {
    ///     type Error = ();
    ///     fn wait_host(&self, _: ArrowDeviceType, _: i64, _: NonNull<c_void>) -> Result<(), ()> {
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let schema = SchemaDef::new("f")?.export()?;
    /// let mut event = 0u64; // stands for a device event object
    /// let values = Array::from_vec(vec![1.5f32, 2.5])?;
    /// // SAFETY: CPU memory is host memory; the event outlives the array.
    /// let mut array = unsafe {
    ///     DeviceArray::new(values, ARROW_DEVICE_CUDA_HOST, 0, (&mut event as *mut u64).cast())
    /// };
    /// assert!(array.view(schema.view())?.values::<f32>().is_err(), "pending work");
    /// array.wait_host(&Immediate).unwrap();
    /// assert_eq!(array.view(schema.view())?.values::<f32>()?, [1.5, 2.5]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn wait_host<W: HostWait + ?Sized>(&mut self, waiter: &W) -> Result<(), W::Error> {
        if let Some(event) = self.sync_event().filter(|_| !self.waited) {
            waiter.wait_host(self.device_type(), self.device_id(), event)?;
            self.waited = true;
        }
        Ok(())
    }

    /// Makes `stream` (a handle of the device's runtime, e.g. a `CUstream`) wait on the pending
    /// `sync_event` with the runtime's `waiter`, without blocking the host (once per stream: a
    /// call for the stream waited on last, an array without an event, or one the host waited
    /// on, returns at once).
    /// Afterwards the buffers may be used by work on `stream`, and
    /// [`into_tensor`](Self::into_tensor) bridges device memory the host cannot read (memory the
    /// host can read still needs [`wait_host`](Self::wait_host) before typed reads).
    ///
    /// # Errors
    /// The waiter's; the array stays pending then.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use core::ffi::c_void;
    /// use core::ptr::NonNull;
    /// use dlpack_abi::arrow::{Array, DeviceArray, StreamWait};
    /// use dlpack_abi::raw::{ArrowDeviceType, ARROW_DEVICE_CUDA};
    ///
    /// struct Immediate;
    /// // SAFETY: this example's "device" never has pending work.
    /// unsafe impl StreamWait for Immediate {
    ///     type Error = ();
    ///     fn wait_stream(&self, _: ArrowDeviceType, _: i64, _: NonNull<c_void>, _: usize) -> Result<(), ()> {
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let mut event = 0u64; // stands for a device event object
    /// let values = Array::from_vec(vec![1.5f32, 2.5]).unwrap();
    /// // SAFETY: a stand-in for device memory; the event outlives the array.
    /// let mut array = unsafe {
    ///     DeviceArray::new(values, ARROW_DEVICE_CUDA, 0, (&mut event as *mut u64).cast())
    /// };
    /// array.wait_stream(&Immediate, 0x5000).unwrap();
    /// assert_eq!(array.ordered_on(), Some(0x5000));
    /// # }
    /// ```
    pub fn wait_stream<W: StreamWait + ?Sized>(
        &mut self,
        waiter: &W,
        stream: usize,
    ) -> Result<(), W::Error> {
        if self.ordered_on == Some(stream) || self.synchronized() {
            return Ok(());
        }
        if let Some(event) = self.sync_event() {
            waiter.wait_stream(self.device_type(), self.device_id(), event, stream)?;
            self.ordered_on = Some(stream);
        }
        Ok(())
    }

    /// The stream [`wait_stream`](Self::wait_stream) last made wait on the `sync_event`, if any.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    ///
    /// // A CPU array has no event: no stream is ever made to wait.
    /// let array = DeviceArray::from_cpu(Array::from_vec(vec![1u8])?);
    /// assert_eq!(array.ordered_on(), None);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn ordered_on(&self) -> Option<usize> {
        self.ordered_on
    }

    /// Whether no `sync_event` is pending: there is none, or the host waited on it.
    pub(super) fn synchronized(&self) -> bool {
        self.sync_event().is_none() || self.waited
    }

    /// Whether the buffers may be handed on as memory of the device: no event is pending for
    /// the host, or a stream was made to wait on it and the host cannot read the memory.
    #[cfg(feature = "alloc")]
    pub(super) fn ready_for_device_use(&self) -> bool {
        self.synchronized() || (self.ordered_on.is_some() && self.host_readable().is_none())
    }

    /// The number of values.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    ///
    /// assert_eq!(DeviceArray::from_cpu(Array::from_vec(vec![1u8, 2, 3])?).len(), 3);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn len(&self) -> usize {
        super::array::count(self.inner.raw().array.length)
    }

    /// Whether there are no values.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    ///
    /// assert!(DeviceArray::from_cpu(Array::from_vec(Vec::<u8>::new())?).is_empty());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device type, when the host can read the buffers (the one host-accessibility rule,
    /// [`DLDeviceType::is_host_accessible`], for the device types Arrow defines: a number Arrow
    /// does not name, such as DLPack's `kDLTPUHost`, is not taken to mean DLPack's memory).
    fn host_readable(&self) -> Option<DLDeviceType> {
        let arrow = self.device_type();
        let device_type = DLDeviceType::from(arrow);
        (arrow.name().is_some() && device_type.is_host_accessible()).then_some(device_type)
    }

    /// Whether the host can read the buffers now: a host-accessible device type
    /// ([`DLDeviceType::is_host_accessible`]) and no pending `sync_event` (none, or waited on by
    /// [`wait_host`](Self::wait_host), or by the caller: `waited`). The rule
    /// [`view`](Self::view)'s typed reads follow.
    ///
    /// # Errors
    /// [`ReadError::NotHostAccessible`](super::ReadError::NotHostAccessible) otherwise.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    ///
    /// let array = DeviceArray::from_cpu(Array::from_vec(vec![1u8]).unwrap());
    /// assert!(array.check_host_readable(false).is_ok());
    /// # }
    /// ```
    pub fn check_host_readable(&self, waited: bool) -> Result<(), super::ReadError> {
        let device_type = DLDeviceType::from(self.device_type());
        if self.host_readable().is_none() || !(self.synchronized() || waited) {
            return Err(super::ReadError::NotHostAccessible { device_type });
        }
        Ok(())
    }

    /// A validated view with the schema the array was imported with (see [`Array::view`]).
    /// Typed slices need host-readable memory and no pending `sync_event` (see
    /// [`wait_host`](Self::wait_host));
    /// otherwise they are [`ReadError::NotHostAccessible`](super::ReadError::NotHostAccessible) (the structure and the buffer
    /// addresses are readable either way).
    ///
    /// # Errors
    /// [`ValidationError::SchemaMismatch`] when `schema` is not the one the array was imported with
    /// (or one of the same layout, for arrays this crate built).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray, ReadError, SchemaDef};
    /// use dlpack_abi::raw::ARROW_DEVICE_CUDA;
    ///
    /// let schema = SchemaDef::new("f")?.export()?;
    /// // SAFETY: a stand-in for device memory, without an event.
    /// let array = unsafe { DeviceArray::new(Array::from_vec(vec![1.0f32])?, ARROW_DEVICE_CUDA, 0, core::ptr::null_mut()) };
    /// let view = array.view(schema.view())?;
    /// assert_eq!(view.len(), 1); // the structure is readable
    /// assert!(matches!(view.values::<f32>(), Err(ReadError::NotHostAccessible { .. }))); // the data is not
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn view<'a>(&'a self, schema: SchemaRef<'a>) -> Result<ArrayView<'a>, ValidationError> {
        self.binding.check(schema)?;
        let host = self.host_readable().filter(|_| self.synchronized());
        ArrayView::on_device(
            &self.inner.raw().array,
            schema,
            host,
            self.device_type().into(),
        )
    }

    /// A validated view after the caller has waited on the `sync_event`.
    ///
    /// # Safety
    /// The caller has waited on [`sync_event`](Self::sync_event) (e.g. with
    /// `cudaStreamWaitEvent` followed by a synchronisation the host observes).
    ///
    /// # Errors
    /// As [`view`](Self::view).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray, SchemaDef};
    /// use dlpack_abi::raw::ARROW_DEVICE_CUDA_HOST;
    ///
    /// let schema = SchemaDef::new("f")?.export()?;
    /// let mut event = 0u64; // stands for a `cudaEvent_t` the caller has synchronised on
    /// // SAFETY: pinned host memory (a stand-in); the event outlives the array.
    /// let array = unsafe {
    ///     DeviceArray::new(Array::from_vec(vec![2.0f32])?, ARROW_DEVICE_CUDA_HOST, 0, (&mut event as *mut u64).cast())
    /// };
    /// assert!(array.view(schema.view())?.values::<f32>().is_err()); // pending
    /// // SAFETY: the caller waited on the event (here: there is no real work).
    /// let view = unsafe { array.view_synchronized(schema.view()) }?;
    /// assert_eq!(view.values::<f32>()?, [2.0]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub unsafe fn view_synchronized<'a>(
        &'a self,
        schema: SchemaRef<'a>,
    ) -> Result<ArrayView<'a>, ValidationError> {
        self.binding.check(schema)?;
        ArrayView::on_device(
            &self.inner.raw().array,
            schema,
            self.host_readable(),
            self.device_type().into(),
        )
    }

    /// The struct, for reading raw fields.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    ///
    /// let array = DeviceArray::from_cpu(Array::from_vec(vec![1u64, 2])?);
    /// assert_eq!(array.as_raw().array.length, 2);
    /// assert_eq!(array.as_raw().reserved, [0; 3]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn as_raw(&self) -> &ArrowDeviceArray {
        self.inner.raw()
    }

    /// Gives the struct away unreleased.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    ///
    /// let mut raw = DeviceArray::from_cpu(Array::from_vec(vec![1u64])?).into_raw();
    /// // Whoever holds the struct releases it, exactly once, through `array.release`.
    /// // SAFETY: live and owned here.
    /// unsafe { raw.array.release.expect("live")(&mut raw.array) };
    /// assert!(raw.array.release.is_none());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn into_raw(self) -> ArrowDeviceArray {
        self.inner.into_raw()
    }

    /// Moves the device array into a consumer's struct (`ptr::write`). The consumer then owns
    /// it.
    ///
    /// # Safety
    /// `out` is valid for writes of an `ArrowDeviceArray`.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use core::mem::MaybeUninit;
    /// use dlpack_abi::arrow::{Array, DeviceArray, SchemaDef};
    /// use dlpack_abi::raw::ArrowDeviceArray;
    ///
    /// // A consumer's struct, as `__arrow_c_device_array__` or a C caller hands it over.
    /// let mut out = MaybeUninit::<ArrowDeviceArray>::uninit();
    /// // SAFETY: `out` is valid for writes.
    /// unsafe { DeviceArray::from_cpu(Array::from_vec(vec![4i32])?).export_to(out.as_mut_ptr()) };
    /// // SAFETY: initialised by `export_to`; the consumer owns it now.
    /// let mut c_array = unsafe { out.assume_init() };
    /// let schema = SchemaDef::new("i")?.export()?;
    /// let array = unsafe { DeviceArray::from_raw(&mut c_array, schema.view()) }?;
    /// assert_eq!(array.view(schema.view())?.values::<i32>()?, [4]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub unsafe fn export_to(self, out: *mut ArrowDeviceArray) {
        // SAFETY: forwarded from the caller.
        unsafe { self.inner.export_to(out) }
    }
}

impl core::fmt::Debug for DeviceArray {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DeviceArray")
            .field("device_type", &self.device_type())
            .field("device_id", &self.device_id())
            .field("sync_event", &self.sync_event())
            .field("length", &self.as_raw().array.length)
            .finish_non_exhaustive()
    }
}
