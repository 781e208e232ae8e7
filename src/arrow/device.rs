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
/// or managed memory) and no `sync_event` is pending; wait on the event (this crate links no GPU
/// runtime) and use [`view_synchronized`](Self::view_synchronized).
pub struct DeviceArray {
    inner: Owned<ArrowDeviceArray>,
    /// What the buffers were sized for: views accept only that.
    binding: Binding,
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
        })
    }

    /// A CPU device array (`device_id` -1, no event, `reserved` zeroed) around `array`.
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
    pub unsafe fn new(
        array: Array,
        device_type: ArrowDeviceType,
        device_id: i64,
        sync_event: *mut c_void,
    ) -> Self {
        let (array, binding) = array.into_parts();
        Self {
            binding,
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
    pub fn device_type(&self) -> ArrowDeviceType {
        self.inner.raw().device_type
    }

    /// The device ordinal (-1 for devices without ids).
    pub fn device_id(&self) -> i64 {
        self.inner.raw().device_id
    }

    /// The event to wait on before touching the buffers (a pointer to e.g. a `cudaEvent_t`),
    /// owned by the producer until release; `None` when no synchronisation is needed.
    pub fn sync_event(&self) -> Option<NonNull<c_void>> {
        NonNull::new(self.inner.raw().sync_event)
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        super::array::count(self.inner.raw().array.length)
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device type, when the host can read the buffers (the one host-accessibility rule,
    /// [`DLDeviceType::is_host_accessible`]).
    fn host_readable(&self) -> Option<DLDeviceType> {
        let device_type = DLDeviceType::from(self.device_type());
        device_type.is_host_accessible().then_some(device_type)
    }

    /// Whether the host can read the buffers now: a host-accessible device type
    /// ([`DLDeviceType::is_host_accessible`]) and no pending `sync_event` (unless the caller has
    /// `waited` on it). The rule [`view`](Self::view)'s typed reads follow.
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
        if self.host_readable().is_none() || (self.sync_event().is_some() && !waited) {
            return Err(super::ReadError::NotHostAccessible { device_type });
        }
        Ok(())
    }

    /// A validated view with the schema the array was imported with (see [`Array::view`]).
    /// Typed slices need host-readable memory and no pending `sync_event`;
    /// otherwise they are [`ReadError::NotHostAccessible`](super::ReadError::NotHostAccessible) (the structure and the buffer
    /// addresses are readable either way).
    pub fn view<'a>(&'a self, schema: SchemaRef<'a>) -> Result<ArrayView<'a>, ValidationError> {
        self.binding.check(schema)?;
        let host = self.host_readable().filter(|_| self.sync_event().is_none());
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
    pub fn as_raw(&self) -> &ArrowDeviceArray {
        self.inner.raw()
    }

    /// Gives the struct away unreleased.
    pub fn into_raw(self) -> ArrowDeviceArray {
        self.inner.into_raw()
    }

    /// Moves the device array into a consumer's struct (`ptr::write`). The consumer then owns
    /// it.
    ///
    /// # Safety
    /// `out` is valid for writes of an `ArrowDeviceArray`.
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
