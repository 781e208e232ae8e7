//! Export of Rust-owned memory as DLPack tensors, without copying the data: the
//! [`TensorOwner`] trait and [`ManagedTensor::from_owner`].
//!
//! Every export is checked: the description as an import would check it, and every byte it
//! reaches against the buffer the owner states. The allocation itself lives in `placed`.
#![allow(unsafe_code)]

use super::description::checked_ndim;
use super::placed::Placed;
use super::{ExportError, ManagedStruct, ManagedTensor, TensorDescription};

/// Anything that keeps tensor memory alive and can describe it: an `ndarray` array, a GPU buffer
/// handle, a memory-mapped file, an imported tensor viewed differently.
/// [`ManagedTensor::from_owner`] moves it into the export's allocation; the deleter drops it.
///
/// Owners are `Send` because the consumer may call the deleter on any thread, and `'static`
/// because nothing ties the deleter call to a Rust lifetime.
///
/// # Safety
/// The export uses the description [`describe`](Self::describe) returns once the owner has been
/// moved to the place where it stays until the deleter drops it (the default
/// [`ndim`](Self::ndim) also calls it before that move, and uses only the shape's length). Until
/// the deleter runs:
/// - `data` and `len` are a live allocation on `device` that the owner keeps allocated and
///   initialised;
/// - unless `flags` has `READ_ONLY`, the consumer may write it, so nothing else holds Rust
///   references to it;
/// - `IS_COPIED` only when this export is the one way to the memory (the consumer owns it
///   outright, as the spec says): a consumer that imports it may write it through a safe `&mut`.
///
/// Everything else is checked by the export: ndim, dtype, extents, strides, overflow, NULL data,
/// and that every byte the tensor reaches lies in the buffer.
///
/// ```
/// use dlpack_abi::dlpack::{Element, TensorDescription, TensorOwner, VersionedTensor};
///
/// /// A column-major matrix.
/// struct Matrix { values: Vec<f64>, shape: [i64; 2], strides: [i64; 2] }
///
/// // SAFETY: `values` is the matrix's own allocation, which nothing else references.
/// unsafe impl TensorOwner for Matrix {
///     fn describe(&mut self) -> TensorDescription<'_> {
///         TensorDescription::cpu(&mut self.values, &self.shape).with_strides(&self.strides)
///     }
///     fn ndim(&mut self) -> usize { 2 }
/// }
///
/// let matrix = Matrix { values: vec![1.0, 2.0, 3.0, 4.0], shape: [2, 2], strides: [1, 2] };
/// let tensor = VersionedTensor::from_owner(matrix)?;
/// assert!(tensor.view().is_f_contiguous());
/// assert_eq!(tensor.view().get::<f64>(&[0, 1])?, 3.0);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub unsafe trait TensorOwner: Send + 'static {
    /// Describes the memory. The export uses the call made once the owner is in its final place.
    ///
    /// ```
    /// # use dlpack_abi::dlpack::{TensorDescription, TensorOwner};
    /// struct Scalar(Box<[i32; 1]>);
    /// // SAFETY: the boxed value is the owner's own allocation.
    /// unsafe impl TensorOwner for Scalar {
    ///     fn describe(&mut self) -> TensorDescription<'_> {
    ///         TensorDescription::cpu(&mut self.0[..], &[])
    ///     }
    /// }
    /// assert_eq!(Scalar(Box::new([7])).describe().shape, [0i64; 0]);
    /// ```
    fn describe(&mut self) -> TensorDescription<'_>;

    /// The number of dimensions `describe` will report, to size the allocation before the owner
    /// is moved into it. The default calls `describe`; override it when that is costly. A
    /// mismatch is refused with [`ExportError::NdimChanged`].
    ///
    /// ```
    /// # use dlpack_abi::dlpack::{TensorDescription, TensorOwner};
    /// struct Row(Vec<u8>, [i64; 1]);
    /// // SAFETY: the vector is the owner's own allocation.
    /// unsafe impl TensorOwner for Row {
    ///     fn describe(&mut self) -> TensorDescription<'_> {
    ///         TensorDescription::cpu(&mut self.0, &self.1)
    ///     }
    /// }
    /// assert_eq!(Row(vec![1, 2], [2]).ndim(), 1);
    /// ```
    fn ndim(&mut self) -> usize {
        self.describe().shape.len()
    }
}

impl<M: ManagedStruct> ManagedTensor<M> {
    /// Exports memory held by a custom [`TensorOwner`] (use [`Export`](super::Export) for `Vec`,
    /// `Box<[T]>` and `Arc<[T]>`). The owner is dropped by the deleter; on error, before this
    /// returns.
    ///
    /// The description is checked as an import would check it ([`ExportError::Invalid`]), every
    /// byte it reaches must lie in its buffer ([`ExportError::OutsideBuffer`]), and a legacy
    /// export also refuses flags it cannot carry.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorDescription, TensorOwner, LegacyTensor};
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// /// A device allocation this program manages (here only an address and a length).
    /// struct DeviceBuffer { address: usize, bytes: usize, shape: [i64; 1] }
    /// // SAFETY: stands for a real allocation of `bytes` bytes on CUDA device 0.
    /// unsafe impl TensorOwner for DeviceBuffer {
    ///     fn describe(&mut self) -> TensorDescription<'_> {
    ///         let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
    ///         let data = core::ptr::null_mut::<u8>().wrapping_add(self.address).cast();
    ///         TensorDescription::new(data, self.bytes, gpu, f32::DTYPE, &self.shape)
    ///     }
    /// }
    ///
    /// let buffer = DeviceBuffer { address: 0x7000_0000, bytes: 1024, shape: [256] };
    /// let tensor = LegacyTensor::from_owner(buffer)?;
    /// assert_eq!(tensor.view().device().device_type, kDLCUDA);
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn from_owner<O: TensorOwner>(mut owner: O) -> Result<Self, ExportError> {
        let ndim = checked_ndim(owner.ndim())?;
        let placed = Placed::<M, O>::new(owner, ndim);
        // SAFETY: the owner stays in place until `placed` is dropped or finished, and the
        // description borrowed from it is last used by `finish`, before either.
        let description = unsafe { placed.owner() }.describe();
        let mut tensor = placed.finish(&description)?;
        // An owner's `IS_COPIED` tells the consumer what it may do; it does not prove to Rust that
        // nothing else reaches the memory (an owner may share it): no safe `&mut` here.
        tensor.set_exclusive(false);
        Ok(tensor)
    }
}
