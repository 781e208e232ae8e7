//! Legacy ↔ versioned adapters: the old tensor becomes the owner of a new, small header.
#![allow(unsafe_code)]

use super::managed::sealed::Raw;
use super::placed::Placed;
use super::{Dims, ExportError, ManagedStruct, ManagedTensor, TensorDescription};
use crate::raw::{DLManagedTensor, DLManagedTensorVersioned, DLPackFlags};

/// Re-exports `inner` under a header of kind `M` with `flags`, reusing its validation.
///
/// # Safety
/// `flags` are representable in `M` and describe the same storage as `inner`'s flags
/// (`IS_SUBBYTE_TYPE_PADDED` unchanged).
unsafe fn rewrap<M: ManagedStruct, I: ManagedStruct + 'static>(
    inner: ManagedTensor<I>,
    flags: DLPackFlags,
) -> ManagedTensor<M> {
    // The same validation, and exclusive only if the inner tensor was and stays writable.
    let meta = inner.meta();
    let meta = meta.with_exclusive(meta.is_exclusive() && !flags.contains(DLPackFlags::READ_ONLY));
    // The wrapper is a new struct the borrow registry does not know (the inner one stays
    // registered while the wrapper holds it).
    let meta = meta.with_tracked(false);
    let ndim = inner.view().ndim();
    let placed = Placed::<M, ManagedTensor<I>>::new(inner, ndim);
    // SAFETY: the inner tensor stays in place until the new deleter drops it; the view
    // borrowed from it is last used by `finish_validated`.
    let view = unsafe { placed.owner() }.view();
    let raw = view.raw();
    let strides = view.strides();
    // The same memory, `data` unchanged (`finish_validated` trusts the validated reach, so
    // `len` is not read).
    let description = TensorDescription {
        data: raw.data,
        len: 0,
        byte_offset: raw.byte_offset,
        device: raw.device,
        dtype: raw.dtype,
        shape: Dims::I64(view.shape()),
        strides: strides.as_slice().map(Dims::I64),
        flags,
    };
    // SAFETY: the same tensor `inner`'s import validated, with explicit strides where it
    // had none (what validation synthesised), so the same `meta`; flags per our caller; shape
    // and strides of `ndim` entries, the view's.
    unsafe { placed.finish_validated(&description, meta) }
}

impl ManagedTensor<DLManagedTensor> {
    /// Upgrades a legacy tensor to a versioned one (version 1.3, explicit strides),
    /// marked `READ_ONLY` because a legacy producer never said whether it may be written.
    /// The legacy deleter runs when the new one does. One small allocation; the data is
    /// not touched.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi::raw::DLPackFlags;
    ///
    /// let legacy = Export::new(vec![0.0f32, 1.0, 2.0, 3.0], &[2, 2]).finish_legacy()?;
    /// let versioned = legacy.into_versioned();
    /// assert_eq!(versioned.view().flags(), DLPackFlags::READ_ONLY);
    /// assert_eq!(versioned.view().strides(), [2, 1]);
    /// assert!(!versioned.view().strides().is_synthesised());
    /// # Ok(()) }
    /// ```
    pub fn into_versioned(self) -> ManagedTensor<DLManagedTensorVersioned> {
        // SAFETY: versioned headers carry every flag; the storage flag stays clear.
        unsafe { rewrap(self, DLPackFlags::READ_ONLY) }
    }

    /// Upgrades a legacy tensor to a versioned one without `READ_ONLY`.
    ///
    /// # Safety
    /// The producer allows writes to the data (as for [`LegacyTensor::as_mut_slice`]).
    ///
    /// [`LegacyTensor::as_mut_slice`]: super::LegacyTensor::as_mut_slice
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let legacy = Export::new(vec![0.0f32, 1.0], &[2]).finish_legacy()?;
    /// // SAFETY: this producer's buffers are writable.
    /// let mut versioned = unsafe { legacy.into_versioned_writable() };
    /// // Writable, but nothing proves this consumer holds it alone: unsafe access only.
    /// // SAFETY: nothing else holds this producer's buffer.
    /// unsafe { versioned.as_mut_slice_unchecked::<f32>() }?[0] = 9.0;
    /// assert_eq!(versioned.view().as_slice::<f32>()?, [9.0, 1.0]);
    /// # Ok(()) }
    /// ```
    pub unsafe fn into_versioned_writable(self) -> ManagedTensor<DLManagedTensorVersioned> {
        // SAFETY: as in `into_versioned`.
        unsafe { rewrap(self, DLPackFlags::empty()) }
    }
}

impl ManagedTensor<DLManagedTensorVersioned> {
    /// Exposes a versioned tensor as a legacy one, for consumers that speak nothing else. The
    /// versioned deleter runs when the legacy one does. Refuses (giving the tensor back)
    /// when a flag would be lost: `READ_ONLY` (a legacy consumer would write),
    /// `IS_SUBBYTE_TYPE_PADDED` (it would read packed data) and unknown bits. `IS_COPIED`
    /// is dropped: without it a consumer only assumes less.
    ///
    /// # Errors
    /// [`IntoLegacyError`] when a flag would be lost; [`IntoLegacyError::into_tensor`] gives the
    /// tensor back.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// use dlpack_abi::dlpack::{Export, ExportError, VersionedTensor};
    /// use dlpack_abi::raw::DLPackFlags;
    ///
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0], &[3]).finish()?;
    /// let legacy = tensor.into_legacy().map_err(|refused| refused.error())?;
    /// assert_eq!(legacy.view().as_slice::<f32>()?, [0.0, 1.0, 2.0]);
    ///
    /// let frozen = Export::new(vec![0.0f32, 1.0, 2.0], &[3]).read_only().finish()?;
    /// let refused = frozen.into_legacy().unwrap_err();
    /// assert_eq!(
    ///     refused.error(),
    ///     ExportError::FlagsNotRepresentable { flags: DLPackFlags::READ_ONLY }
    /// );
    /// let frozen: VersionedTensor = refused.into_tensor(); // nothing lost
    /// assert_eq!(frozen.view().as_slice::<f32>()?, [0.0, 1.0, 2.0]);
    /// # Ok(()) }
    /// ```
    pub fn into_legacy(self) -> Result<ManagedTensor<DLManagedTensor>, IntoLegacyError> {
        let flags = self.view().flags();
        if let Err(error) = DLManagedTensor::representable(flags) {
            return Err(IntoLegacyError {
                error,
                tensor: self,
            });
        }
        // SAFETY: just checked; the storage flag is clear (it is not representable).
        Ok(unsafe { rewrap(self, DLPackFlags::empty()) })
    }
}

/// [`VersionedTensor::into_legacy`](super::VersionedTensor::into_legacy) refused:
/// the reason, and the tensor, unchanged.
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// use dlpack_abi::dlpack::Export;
///
/// let tensor = Export::new(vec![0.0f32], &[1]).read_only().finish()?;
/// let refused = tensor.into_legacy().unwrap_err();
/// assert_eq!(
///     refused.to_string(),
///     "DLManagedTensorVersioned.flags has READ_ONLY set, which a legacy DLManagedTensor \
///      cannot carry (nor a bare DLTensor)"
/// );
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct IntoLegacyError {
    error: ExportError,
    tensor: ManagedTensor<DLManagedTensorVersioned>,
}

impl IntoLegacyError {
    /// Why the tensor cannot be legacy.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// use dlpack_abi::dlpack::{Export, ExportError, VersionedTensor};
    /// use dlpack_abi::raw::DLPackFlags;
    ///
    /// // A producer that sets a flag legacy tensors have no room for.
    /// let raw = Export::new(vec![0u8], &[1]).finish()?.into_raw();
    /// unsafe { (*raw).flags = DLPackFlags::IS_SUBBYTE_TYPE_PADDED.bits() };
    /// let tensor = unsafe { VersionedTensor::from_raw(raw) }?;
    /// assert!(matches!(
    ///     tensor.into_legacy().unwrap_err().error(),
    ///     ExportError::FlagsNotRepresentable { .. }
    /// ));
    /// # Ok(()) }
    /// ```
    pub fn error(&self) -> ExportError {
        self.error
    }

    /// The tensor, unchanged (its deleter has not run).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let tensor = Export::new(vec![0.0f32, 1.0], &[2]).read_only().finish()?;
    /// let back = tensor.into_legacy().unwrap_err().into_tensor();
    /// assert_eq!(back.view().as_slice::<f32>()?, [0.0, 1.0]);
    /// # Ok(()) }
    /// ```
    pub fn into_tensor(self) -> ManagedTensor<DLManagedTensorVersioned> {
        self.tensor
    }
}

impl core::fmt::Display for IntoLegacyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(&self.error, f)
    }
}

impl core::error::Error for IntoLegacyError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.error)
    }
}
