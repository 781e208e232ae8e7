//! Export of Rust-owned memory as DLPack tensors, without copying the data: the
//! [`TensorOwner`] trait and [`ManagedTensor::from_owner`].
//!
//! Every export is checked: the description as an import would check it, and every byte it
//! reaches against the buffer the owner states. The allocation itself lives in `placed`.
#![allow(unsafe_code)]

use core::ops::Deref;

use super::description::{check_inside, checked_ndim};
use super::placed::Placed;
use super::validate::{self, Meta};
use super::{ExportError, ManagedStruct, ManagedTensor, TensorDescription};
use crate::raw::DLPackFlags;

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
    /// use dlpack_abi::dlpack::{TensorDescription, TensorOwner};
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
    /// use dlpack_abi::dlpack::{TensorDescription, TensorOwner};
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
    /// # Errors
    /// [`ExportError::Invalid`] for a description an import would refuse,
    /// [`ExportError::OutsideBuffer`] when it reaches past the owner's buffer, and
    /// [`ExportError::FlagsNotRepresentable`] for flags a legacy tensor cannot carry.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, LegacyTensor, TensorDescription, TensorOwner};
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

impl<M: ManagedStruct> ManagedTensor<M> {
    /// Exports a validated tensor's memory again, shared with it, without validating it again:
    /// what [`from_owner`](Self::from_owner) makes of an owner that describes the tensor with
    /// [`TensorDescription::of`], for the cost of the allocation alone. `owner` keeps the tensor
    /// alive (an `Arc` of it, typically) until the new export's deleter drops it.
    ///
    /// The export carries `flags`, but never `IS_COPIED` (the memory stays the tensor's too), and
    /// the tensor's own `IS_SUBBYTE_TYPE_PADDED` (its storage); a legacy export refuses what it
    /// cannot carry ([`ExportError::FlagsNotRepresentable`]), and a tensor on an opaque-handle
    /// device that reaches before its `data` is refused as `from_owner` refuses it
    /// ([`ExportError::OutsideBuffer`]). On error the owner has been dropped.
    ///
    /// # Safety
    /// Unless `flags` has `READ_ONLY`, consumers may write the memory: while the export lives,
    /// nothing may read or write it through Rust references, and its producer must allow writes
    /// (as for a [`TensorOwner`]).
    ///
    /// # Errors
    /// [`ExportError::FlagsNotRepresentable`] for flags a legacy tensor cannot carry.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use dlpack_abi::dlpack::{Export, VersionedTensor};
    /// use dlpack_abi::raw::DLPackFlags;
    ///
    /// let tensor = Arc::new(Export::new(vec![1i32, 2, 3, 4], &[2, 2]).strides(&[1, 2]).finish()?);
    /// // SAFETY: READ_ONLY: consumers only read, as `tensor` does.
    /// let again = unsafe { VersionedTensor::share(Arc::clone(&tensor), DLPackFlags::READ_ONLY) }?;
    /// assert_eq!(again.view().strides(), [1, 2]);
    /// assert_eq!(again.view().data_ptr(), tensor.view().data_ptr());
    /// assert_eq!(again.view().flags(), DLPackFlags::READ_ONLY);
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub unsafe fn share<O, S>(owner: O, flags: DLPackFlags) -> Result<Self, ExportError>
    where
        O: Deref<Target = ManagedTensor<S>> + Send + 'static,
        S: ManagedStruct,
    {
        let ndim = owner.view().ndim();
        let placed = Placed::<M, O>::new(owner, ndim);
        // SAFETY: the owner stays in place until `placed` is dropped or finished, and what is
        // borrowed from it is last used by `finish_validated`, before either.
        let source: &ManagedTensor<S> = unsafe { placed.owner() };
        let view = source.view();
        let padded = view.flags() & DLPackFlags::IS_SUBBYTE_TYPE_PADDED;
        let flags =
            flags.difference(DLPackFlags::IS_COPIED | DLPackFlags::IS_SUBBYTE_TYPE_PADDED) | padded;
        // On error `placed` is dropped, and the owner with it.
        M::representable(flags)?;
        let validated = source.meta();
        let compact = (validated.elements() != 0)
            .then(|| validate::compact_reach(&validated))
            .flatten();
        let description = if let Some((first, end)) = compact {
            // Row-major and not empty: the reach `reach_from_data` would return, without the
            // view's shape and strides; it starts at the first element (`byte_offset` on), so
            // `of_reach` moves nothing and nothing can reach outside the buffer it states (the
            // check below cannot fail). 50 instructions fewer per re-export (BENCHMARKS.md).
            let start = i128::from(view.raw().byte_offset);
            TensorDescription::of_reach(&view, (start + first, start + end)).with_flags(flags)
        } else {
            let (first, end) = view.reach_from_data();
            let description = TensorDescription::of_reach(&view, (first, end)).with_flags(flags);
            // The one check validation of the new struct could fail: a tensor that reaches
            // before its `data` on a device whose `data` is a handle (`of` cannot start the
            // buffer earlier there). `of` keeps the first element where it was, so the reach
            // shifts by the change of `byte_offset`.
            let shift = i128::from(description.byte_offset) - i128::from(view.raw().byte_offset);
            check_inside(first + shift, end + shift, description.len)?;
            description
        };
        // What validation of the new struct returns: the same shape, strides, dtype and storage
        // (the padding flag is the tensor's), on the same device, with the new flags; never
        // exclusive (`IS_COPIED` is dropped).
        let meta = Meta::new(
            validated.elements(),
            validated.storage(),
            validated.is_c_contiguous(),
            view.device(),
            flags,
        );
        // SAFETY: `description` is the validated tensor's own (`of` keeps its shape, strides,
        // dtype and device, and states exactly the bytes it reaches as the buffer), which
        // validation accepts with `meta`; its flags were checked for `M`, and its shape and
        // strides have `ndim` entries.
        Ok(unsafe { placed.finish_validated(&description, meta) })
    }
}
