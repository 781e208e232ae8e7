//! An imported tensor whose elements are one host slice of a Rust element type: the import and
//! the typed slice in one step, validated knowing the element type.
#![allow(unsafe_code)]

use core::fmt;
use core::ops::Deref;
use core::ptr::NonNull;
use core::slice;

use super::{AccessError, Element, ImportError, ManagedStruct, ManagedTensor, TensorError};
use crate::raw::DLManagedTensorVersioned;

/// An imported tensor read as one slice of `T`: host-accessible memory, no unknown flags,
/// `T`'s dtype, C-contiguous and aligned for `T`, which [`from_raw`](Self::from_raw) checks once.
/// Derefs to `&[T]` (row-major order; empty for an empty tensor) with no check left; the deleter
/// runs when it is dropped.
///
/// What [`ManagedTensor::from_raw`] followed by [`TensorView::as_slice`] gives, with the same
/// checks and errors, for the consumer that knows its element type: knowing it, validation
/// compares the dtype with one instruction instead of deriving the element's storage from it.
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::{AccessError, Export, HostSlice, TensorError};
///
/// // A C producer hands over `DLManagedTensorVersioned*`: here, a 2 x 3 f32 tensor.
/// let raw = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).finish()?.into_raw();
/// // SAFETY: `raw` is live and its ownership passes here (`from_raw`'s contract).
/// let values = unsafe { HostSlice::<f32>::from_raw(raw) }?;
/// assert_eq!(values.iter().sum::<f32>(), 15.0);
/// assert_eq!(values.tensor().view().shape(), [2, 3]);
/// drop(values); // the producer's deleter runs here, once
///
/// // Another element type: refused, and the deleter has run.
/// let raw = Export::new(vec![1u8, 2], &[2]).finish()?.into_raw();
/// // SAFETY: as above.
/// let error = unsafe { HostSlice::<f32>::from_raw(raw) }.unwrap_err();
/// assert!(matches!(error, TensorError::Access(AccessError::DtypeMismatch { .. })));
/// # }
/// # Ok(()) }
/// ```
///
/// [`TensorView::as_slice`]: super::TensorView::as_slice
pub struct HostSlice<T: Element, M: ManagedStruct = DLManagedTensorVersioned> {
    tensor: ManagedTensor<M>,
    /// The first element: `data + byte_offset`, or dangling (and aligned) for an empty tensor.
    /// The tensor's `element_count()` elements from here are readable while `tensor` lives.
    start: NonNull<T>,
}

// SAFETY: the tensor is `Send` and `Sync` (see `ManagedTensor`); besides it the slice only lends
// `&T`s, which may cross threads and be shared where `T: Sync`.
unsafe impl<T: Element + Sync, M: ManagedStruct> Send for HostSlice<T, M> {}
// SAFETY: as above: `&HostSlice` only reads.
unsafe impl<T: Element + Sync, M: ManagedStruct> Sync for HostSlice<T, M> {}

impl<T: Element, M: ManagedStruct> HostSlice<T, M> {
    /// Takes ownership of a managed tensor from a foreign producer, validates it and checks that
    /// its elements are a slice of `T`: everything [`ManagedTensor::from_raw`] and
    /// [`TensorView::as_slice`](super::TensorView::as_slice) check, with the same errors.
    ///
    /// On every error the deleter has run (exactly once) when this returns, except for
    /// [`ImportError::NullTensor`], where there is nothing to delete.
    ///
    /// # Safety
    /// As for [`ManagedTensor::from_raw`].
    ///
    /// # Errors
    /// [`TensorError::Import`] for a tensor that breaks a rule of the table in the
    /// [module docs](crate::dlpack); [`TensorError::Access`] for one that is valid but not a
    /// slice of `T` (another dtype, memory that is not host memory, unknown flags, a layout that
    /// is not C-contiguous, a misaligned start).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{AccessError, Export, HostSlice, TensorError};
    ///
    /// let raw = Export::new(vec![1i32, 2, 3], &[3]).finish()?.into_raw();
    /// // SAFETY: a live tensor, handed over once.
    /// assert_eq!(*unsafe { HostSlice::<i32>::from_raw(raw) }?, [1, 2, 3]);
    ///
    /// // Every other element: valid, but not one slice.
    /// let raw = Export::new(vec![1i32, 2, 3], &[2]).strides(&[2]).finish()?.into_raw();
    /// // SAFETY: as above.
    /// let error = unsafe { HostSlice::<i32>::from_raw(raw) }.unwrap_err();
    /// assert_eq!(error, TensorError::Access(AccessError::NotContiguous));
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut M) -> Result<Self, TensorError> {
        let ptr = NonNull::new(ptr).ok_or(ImportError::NullTensor)?;
        #[cfg(feature = "fast-path")]
        // SAFETY: the caller's contract is `from_raw`'s.
        if let Some(parts) = unsafe { ManagedTensor::known_layout(ptr) } {
            // SAFETY: `shape` and `strides` follow the rules validation needs (caller).
            if let Some(slice) = unsafe { accept_slice::<T, M>(ptr, parts) } {
                return Ok(slice);
            }
        }
        // SAFETY: the caller's contract.
        unsafe { Self::from_raw_in_full(ptr) }
    }

    /// [`from_raw`](Self::from_raw) without its fast path: the import, then the typed slice.
    /// Out of line where there is a fast path.
    ///
    /// # Safety
    /// As for [`from_raw`](Self::from_raw).
    #[cfg_attr(feature = "fast-path", cold, inline(never))]
    #[cfg_attr(not(feature = "fast-path"), inline(always))]
    unsafe fn from_raw_in_full(ptr: NonNull<M>) -> Result<Self, TensorError> {
        // SAFETY: the caller's contract. On error the deleter has run.
        let tensor = unsafe { ManagedTensor::from_raw(ptr.as_ptr()) }?;
        // On error the tensor is dropped here: its deleter runs.
        Self::from_tensor(tensor).map_err(|(_, error)| error.into())
    }

    /// The elements of an imported tensor as a slice of `T`, checked as
    /// [`TensorView::as_slice`](super::TensorView::as_slice) checks them; the tensor comes back
    /// with the error.
    ///
    /// # Errors
    /// What [`TensorView::as_slice`](super::TensorView::as_slice) refuses.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{AccessError, Export, HostSlice};
    ///
    /// let tensor = Export::new(vec![1u16, 2], &[2]).finish()?;
    /// let (tensor, error) = HostSlice::<i16>::from_tensor(tensor).unwrap_err();
    /// assert!(matches!(error, AccessError::DtypeMismatch { .. }));
    /// let values = HostSlice::<u16>::from_tensor(tensor).map_err(|(_, error)| error)?;
    /// assert_eq!(*values, [1, 2]);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn from_tensor(tensor: ManagedTensor<M>) -> Result<Self, (ManagedTensor<M>, AccessError)> {
        let start = match tensor.view().as_slice::<T>() {
            Ok(values) => NonNull::from(values).cast::<T>(),
            Err(error) => return Err((tensor, error)),
        };
        Ok(Self { tensor, start })
    }

    /// The elements, in row-major order.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{Export, HostSlice};
    ///
    /// let raw = Export::new(vec![0.5f64; 4], &[2, 2]).finish()?.into_raw();
    /// // SAFETY: a live tensor, handed over once.
    /// let values = unsafe { HostSlice::<f64>::from_raw(raw) }?;
    /// assert_eq!(values.as_slice(), [0.5; 4]);
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `start` and the element count are those of a slice `as_slice` gave for this
        // tensor (or `accept_slice`, which gives what it gives), whose elements stay readable
        // and unwritten while the tensor lives (`from_raw`'s contract), and `&self` keeps it
        // alive.
        unsafe { slice::from_raw_parts(self.start.as_ptr(), self.tensor.meta().elements()) }
    }

    /// The imported tensor: its view (shape, strides, dtype, device, flags) and raw struct.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{Export, HostSlice};
    ///
    /// let raw = Export::new(vec![1u8; 6], &[3, 2]).finish()?.into_raw();
    /// // SAFETY: a live tensor, handed over once.
    /// let values = unsafe { HostSlice::<u8>::from_raw(raw) }?;
    /// assert_eq!(values.tensor().view().shape(), [3, 2]);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn tensor(&self) -> &ManagedTensor<M> {
        &self.tensor
    }

    /// The imported tensor, given back whole (its deleter still to run).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{Export, HostSlice};
    ///
    /// let raw = Export::new(vec![1u8, 2], &[2]).finish()?.into_raw();
    /// // SAFETY: a live tensor, handed over once.
    /// let tensor = unsafe { HostSlice::<u8>::from_raw(raw) }?.into_tensor();
    /// assert_eq!(tensor.view().as_slice::<u8>()?, [1, 2]);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn into_tensor(self) -> ManagedTensor<M> {
        self.tensor
    }
}

/// The fast path of [`HostSlice::from_raw`]: the import's common case ([`accept_compact_with`])
/// with `T`'s dtype as the only element accepted (`element_rule`, one comparison), then the typed
/// slice's common case ([`TensorView::common_slice`]). `None` for anything else, valid or not:
/// [`HostSlice::from_raw_in_full`] decides. Where it accepts, it returns what the full path
/// returns: both halves return what the general paths return (the fuzz properties
/// `check_fast_paths` and `check_slice_paths` check them).
///
/// # Safety
/// As for [`HostSlice::from_raw`]; `parts` are the struct's (`known_layout`).
///
/// [`accept_compact_with`]: super::validate::accept_compact_with
/// [`TensorView::common_slice`]: super::TensorView::common_slice
#[cfg(feature = "fast-path")]
#[inline(always)]
unsafe fn accept_slice<T: Element, M: ManagedStruct>(
    ptr: NonNull<M>,
    (tensor, version, flags): (
        &crate::raw::DLTensor,
        Option<crate::raw::DLPackVersion>,
        crate::raw::DLPackFlags,
    ),
) -> Option<HostSlice<T, M>> {
    use super::validate::{accept_compact_with, element_rule};
    // SAFETY: `shape` and `strides` follow the rules validation needs (caller).
    let meta = unsafe { accept_compact_with(tensor, version, flags, element_rule::<T>, true) }?;
    let start = super::TensorView::new(tensor, meta, version, flags)
        .common_slice::<T>()
        .map(|values| NonNull::from(values).cast::<T>())?;
    // SAFETY: the struct the caller hands over, which validation accepts with `meta`.
    let tensor = unsafe { ManagedTensor::from_validated(ptr, meta) };
    Some(HostSlice { tensor, start })
}

impl<T: Element, M: ManagedStruct> Deref for HostSlice<T, M> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Element, M: ManagedStruct> AsRef<[T]> for HostSlice<T, M> {
    fn as_ref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Element, M: ManagedStruct> fmt::Debug for HostSlice<T, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostSlice")
            .field("tensor", &self.tensor.view())
            .finish()
    }
}
