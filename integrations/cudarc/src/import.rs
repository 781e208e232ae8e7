//! CUDA DLPack tensors and Arrow device arrays → a cudarc `CudaSlice` on the consumer's stream,
//! tied to the tensor's lifetime.
#![allow(unsafe_code)]

use alloc::sync::Arc;
use core::mem::ManuallyDrop;
use std::sync::OnceLock;

use ::cudarc::driver::{sys, CudaSlice, CudaStream, DriverError};

use crate::{CudaError, CudaRuntime, CudaWait};
use dlpack_abi::arrow::{DeviceArray, SchemaRef};
use dlpack_abi::dlpack::{
    AccessError, ConsumerStream, Element, OnStream, StreamRuntime, VersionedTensor,
};
use dlpack_abi::raw::{kDLCUDA, kDLCUDAManaged};

/// Takes `tensor` as a slice on `stream` (which must be on the tensor's GPU). The tensor
/// must already be ready on `stream`.
///
/// # Errors
/// [`CudaError::NotCuda`], [`CudaError::OtherDevice`], and [`CudaError::Access`] for a
/// dtype other than `T`'s, misaligned data, unknown flags or strides that are not
/// row-major contiguous; [`CudaError::Driver`] when cudarc cannot create the events it
/// tracks a slice with. The tensor is dropped (its deleter run) then.
///
/// ```no_run
/// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
/// let tensor = dlpack_abi_cudarc::export_slice(stream.clone_htod(&[4u16, 5])?).finish()?;
/// let imported = dlpack_abi_cudarc::import_slice::<u16>(tensor, &stream)?;
/// assert_eq!(stream.clone_dtoh(imported.slice())?, [4, 5]);
/// // The wrong element type is refused (and the tensor's deleter runs).
/// let tensor = dlpack_abi_cudarc::export_slice(stream.clone_htod(&[4u16, 5])?).finish()?;
/// assert!(dlpack_abi_cudarc::import_slice::<f32>(tensor, &stream).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_slice<T: Element>(
    tensor: VersionedTensor,
    stream: &Arc<CudaStream>,
) -> Result<CudaTensor<T>, CudaError> {
    let view = tensor.view();
    let device = view.device();
    if ![kDLCUDA, kDLCUDAManaged].contains(&device.device_type) {
        return Err(CudaError::NotCuda {
            device_type: device.device_type,
            device_id: i64::from(device.device_id),
        });
    }
    let ordinal = stream.context().ordinal();
    if usize::try_from(device.device_id) != Ok(ordinal) {
        return Err(CudaError::OtherDevice {
            device_id: i64::from(device.device_id),
            ordinal,
        });
    }
    if !view.is_c_contiguous() {
        return Err(AccessError::NotContiguous.into());
    }
    let start = view.device_ptr::<T>()?;
    let elements = view.element_count();
    let handle = crate::consumer_stream(stream);
    // A handle that is no stream (it cannot be: CUDA's are pointers) is refused below.
    let consumer = ConsumerStream::parse(device, Some(handle)).unwrap_or(ConsumerStream::NoSync);
    let tensor = OnStream::new(tensor, consumer, fence_runtime())?;
    // cudarc unwraps the creation of the two events it tracks a slice with: one made here
    // first turns a failure into an error, and a panic (a failure between the two) is
    // caught.
    if stream.context().is_event_tracking() {
        drop(stream.context().new_event(None)?);
    }
    let upgrade = std::panic::AssertUnwindSafe(|| {
        // SAFETY: `elements` elements of `T` at `start` (checked: dtype, alignment,
        // contiguity, and validated to lie in the producer's buffer) on the stream's GPU,
        // alive until the tensor's deleter runs, which `Drop` runs only after leaking the
        // slice (so cudarc never frees the memory).
        unsafe { stream.upgrade_device_ptr::<T>(start as u64, elements) }
    });
    let slice = std::panic::catch_unwind(upgrade)
        .map_err(|_| CudaError::Driver(DriverError(sys::cudaError_enum::CUDA_ERROR_UNKNOWN)))?;
    Ok(CudaTensor {
        slice: ManuallyDrop::new(slice),
        tensor: ManuallyDrop::new(tensor),
        _stream: Arc::clone(stream),
    })
}

/// Takes a CUDA Arrow device array (a primitive array, or an `arrow.fixed_shape_tensor`) as
/// a slice on `stream`: `stream` waits on its `sync_event` ([`CudaWait`]), and the array is
/// bridged to a DLPack tensor ([`DeviceArray::into_tensor`]) without copying.
///
/// # Errors
/// [`CudaError::Driver`] when the wait fails, [`CudaError::Bridge`] for arrays a tensor
/// cannot describe (nulls, other types, pinned or managed memory with an event pending for
/// the host), and those of [`import_slice`]. The array has been released then.
///
/// ```no_run
/// let context = cudarc::driver::CudaContext::new(0)?;
/// let (producer, consumer) = (context.new_stream()?, context.new_stream()?);
/// let (schema, array) = dlpack_abi_cudarc::export_slice(producer.clone_htod(&[1.5f64, 2.5])?).into_device_array()?;
/// let schema = schema.export()?;
/// let imported = dlpack_abi_cudarc::import_device_array::<f64>(array, schema.view(), &consumer)?;
/// assert_eq!(consumer.clone_dtoh(imported.slice())?, [1.5, 2.5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_device_array<T: Element>(
    mut array: DeviceArray,
    schema: SchemaRef<'_>,
    stream: &Arc<CudaStream>,
) -> Result<CudaTensor<T>, CudaError> {
    let waiter = CudaWait::new(Arc::clone(stream.context()));
    array.wait_stream(&waiter, stream.cu_stream() as usize)?;
    import_slice(array.into_tensor(schema)?, stream)
}

/// A CUDA tensor (`kDLCUDA` or `kDLCUDAManaged`, row-major contiguous, of `T`) as a cudarc
/// `CudaSlice<T>` on the consumer's stream, without copying. The memory stays the producer's:
/// cudarc never frees it, and the tensor's deleter runs when this is dropped, once the work
/// enqueued on the stream before the drop has completed ([`OnStream`]): a producer with a
/// caching allocator (PyTorch, CuPy) may hand the memory out again as soon as its deleter
/// returns. That costs the drop one event and a host wait on it, as long as the stream's
/// pending work takes. A tensor on the per-thread default stream is fenced on the per-thread
/// stream of the thread that drops it: drop it on the thread that used it.
///
/// Import it ready on your stream ([`import_slice`]): from Python, pass
/// [`consumer_stream`](crate::consumer_stream) as `__dlpack__`'s `stream` (the producer orders
/// its work before it); from Arrow, [`import_device_array`] waits on the `sync_event`. [`slice`](Self::slice)
/// is for reading (kernels that take `&CudaSlice<T>`);
/// [`slice_mut`](Self::slice_mut) only for a tensor held alone (`IS_COPIED`, or an exclusive
/// export), as the host's `as_mut_slice` requires.
///
/// ```no_run
/// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
/// let tensor = dlpack_abi_cudarc::export_slice(stream.clone_htod(&[1u32, 2, 3])?).finish()?;
/// let imported = dlpack_abi_cudarc::import_slice::<u32>(tensor, &stream)?;
/// assert_eq!(stream.clone_dtoh(imported.slice())?, [1, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct CudaTensor<T> {
    /// Over the tensor's memory, never freed (leaked before the tensor is dropped).
    slice: ManuallyDrop<CudaSlice<T>>,
    /// The tensor, in use on the slice's stream: its deleter waits for that use.
    tensor: ManuallyDrop<OnStream>,
    /// The stream, kept alive until the fence has waited on it (the slice's own reference goes
    /// with the slice, and may be the last).
    _stream: Arc<CudaStream>,
}

/// The CUDA runtime that fences every `CudaTensor`'s drop (one per process: it keeps each
/// GPU's primary context, which is the one streams are made in).
fn fence_runtime() -> Arc<dyn StreamRuntime> {
    static RUNTIME: OnceLock<Arc<CudaRuntime>> = OnceLock::new();
    RUNTIME.get_or_init(|| Arc::new(CudaRuntime::new())).clone()
}

impl<T: Element> CudaTensor<T> {
    /// The elements, for reading on the stream (kernels, `clone_dtoh`, ...).
    ///
    /// ```no_run
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// let tensor = dlpack_abi_cudarc::export_slice(stream.clone_htod(&[1.0f32, 2.0, 3.0])?).finish()?;
    /// let imported = dlpack_abi_cudarc::import_slice::<f32>(tensor, &stream)?;
    /// // Any cudarc operation reads it on `stream`: a copy back, a kernel launch, ...
    /// let host: Vec<f32> = stream.clone_dtoh(imported.slice())?;
    /// assert_eq!(host, [1.0, 2.0, 3.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice(&self) -> &CudaSlice<T> {
        &self.slice
    }

    /// The elements, for writing, when this consumer holds the tensor alone.
    ///
    /// # Errors
    /// [`AccessError::ReadOnly`] or [`AccessError::NotExclusive`] otherwise.
    ///
    /// ```no_run
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// let tensor = dlpack_abi_cudarc::export_slice(stream.clone_htod(&[0u8; 4])?).finish()?;
    /// let mut imported = dlpack_abi_cudarc::import_slice::<u8>(tensor, &stream)?;
    /// // An owner's export is not marked IS_COPIED: it may be shared, so no `&mut`.
    /// assert!(imported.slice_mut().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice_mut(&mut self) -> Result<&mut CudaSlice<T>, AccessError> {
        self.tensor.tensor_mut().device_mut_ptr::<T>()?;
        Ok(&mut self.slice)
    }

    /// The tensor the slice is over.
    ///
    /// ```no_run
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// let tensor = dlpack_abi_cudarc::export_slice(stream.alloc_zeros::<u8>(12)?).shape(&[3, 4]).finish()?;
    /// let imported = dlpack_abi_cudarc::import_slice::<u8>(tensor, &stream)?;
    /// assert_eq!(imported.tensor().view().shape(), [3, 4]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn tensor(&self) -> &VersionedTensor {
        self.tensor.tensor()
    }
}

impl<T> Drop for CudaTensor<T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; never used again.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        // The stream waits for the work cudarc tracked on the slice; nothing is freed.
        slice.leak();
        // SAFETY: taken once, here, after the slice is gone: the host waits for the stream's
        // work (alive: `self._stream` is dropped after this), and the deleter runs last.
        drop(unsafe { ManuallyDrop::take(&mut self.tensor) });
    }
}

impl<T> core::fmt::Debug for CudaTensor<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CudaTensor")
            .field("tensor", self.tensor.tensor())
            .finish_non_exhaustive()
    }
}
