//! The borrowed view of a validated tensor, and typed access to its elements.
#![allow(unsafe_code)]

use core::ffi::c_void;
use core::fmt;
use core::marker::PhantomData;
use core::mem::align_of;
use core::ptr::NonNull;
use core::slice;

use super::validate::{self, Meta, KNOWN_FLAGS};
use super::{AccessError, Element, Strides, MAX_NDIM};
use crate::raw::{DLDataType, DLDevice, DLPackFlags, DLPackVersion, DLTensor};

/// A validated tensor, borrowed from its owner ([`VersionedTensor`](super::VersionedTensor) or
/// [`LegacyTensor`](super::LegacyTensor)).
///
/// Unknown device types, dtype codes and flag bits are reported as they are; only typed access
/// refuses them.
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi::raw::{kDLCPU, kDLFloat};
///
/// // Column-major 2 x 3 storage of 0..6.
/// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).strides(&[1, 2]).finish()?;
/// let view = tensor.view();
/// assert_eq!(view.device().device_type, kDLCPU);
/// assert_eq!(view.dtype().code, kDLFloat);
/// assert_eq!((view.ndim(), view.element_count(), view.byte_size()), (2, 6, 24));
/// assert!(view.is_f_contiguous() && !view.is_c_contiguous());
/// assert_eq!(view.get::<f32>(&[1, 0])?, 1.0);
/// assert!(view.iter::<f32>()?.eq([0.0, 2.0, 4.0, 1.0, 3.0, 5.0]));
/// # }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct TensorView<'a> {
    tensor: &'a DLTensor,
    meta: Meta,
    version: Option<DLPackVersion>,
    flags: DLPackFlags,
}

impl<'a> TensorView<'a> {
    #[inline(always)]
    pub(crate) fn new(
        tensor: &'a DLTensor,
        meta: Meta,
        version: Option<DLPackVersion>,
        flags: DLPackFlags,
    ) -> Self {
        Self {
            tensor,
            meta,
            version,
            flags,
        }
    }

    /// The raw `DLTensor`, as the producer wrote it.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0], &[2]).finish()?;
    /// assert_eq!(tensor.view().raw().byte_offset, 0);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn raw(&self) -> &'a DLTensor {
        self.tensor
    }

    /// Where the data lives. The device type may be one this crate does not know.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0], &[2]).finish()?;
    /// assert_eq!(tensor.view().device().device_id, 0);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn device(&self) -> DLDevice {
        self.tensor.device
    }

    /// The element type. The code may be one this crate does not know.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{Element, Export};
    /// let tensor = Export::new(vec![0.0f32, 1.0], &[2]).finish()?;
    /// assert_eq!(tensor.view().dtype(), f32::DTYPE);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn dtype(&self) -> DLDataType {
        self.tensor.dtype
    }

    /// The number of dimensions, `0..=MAX_NDIM`.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let scalar = Export::new(vec![0.0f32], &[]).finish()?;
    /// assert_eq!(scalar.view().ndim(), 0);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn ndim(&self) -> usize {
        validate::ndim(self.tensor)
    }

    /// The extents, each `>= 0`; empty for a 0-d tensor (whose `shape` may be NULL).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32], &[2, 0]).finish()?;
    /// assert_eq!(tensor.view().shape(), [2, 0]);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn shape(&self) -> &'a [i64] {
        // SAFETY: validated at import: `shape` is non-NULL with `ndim` values when `ndim > 0`,
        // and stays valid and unwritten while the owner lives (`from_raw`'s contract).
        unsafe { validate::i64_array(self.tensor.shape, self.ndim()) }
    }

    /// The strides in elements; synthesised (compact row-major) when the producer sent NULL.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).strides(&[3, 1]).finish()?;
    /// assert_eq!(tensor.view().strides(), [3, 1]);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn strides(&self) -> Strides<'a> {
        Strides::new(self.shape(), self.given_strides())
    }

    /// The producer's strides array, `None` when it sent NULL.
    fn given_strides(&self) -> Option<&'a [i64]> {
        if self.tensor.strides.is_null() {
            return None;
        }
        // SAFETY: as for `shape`: a non-NULL `strides` holds `ndim` values.
        Some(unsafe { validate::i64_array(self.tensor.strides, self.ndim()) })
    }

    /// The number of elements (the product of the extents; 1 for a 0-d tensor).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32; 20], &[4, 5]).finish()?;
    /// assert_eq!(tensor.view().element_count(), 20);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn element_count(&self) -> usize {
        self.meta.elements()
    }

    /// Bytes the elements occupy when stored compactly: `count * bits * lanes / 8` for whole-byte
    /// types, `ceil(count * bits / 8)` for packed sub-byte types, one byte per element for padded
    /// ones (`IS_SUBBYTE_TYPE_PADDED`).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32; 20], &[4, 5]).finish()?;
    /// assert_eq!(tensor.view().byte_size(), 80);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn byte_size(&self) -> usize {
        self.meta.byte_size()
    }

    /// `true` for packed sub-byte elements (`bits * lanes < 8` without `IS_SUBBYTE_TYPE_PADDED`).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0], &[4]).finish()?;
    /// assert!(!tensor.view().is_packed());
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn is_packed(&self) -> bool {
        self.meta.storage().is_packed()
    }

    /// Bytes per element (`bits * lanes`, rounded up to whole bytes for padded sub-byte
    /// elements), `None` for packed sub-byte elements: validation's storage rule, for code
    /// that copies elements as bytes.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f64, 1.0], &[2]).finish()?;
    /// assert_eq!(tensor.view().element_bytes(), Some(8));
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn element_bytes(&self) -> Option<usize> {
        self.meta.storage().element_bytes()
    }

    /// The address of the first element, `data + byte_offset`. Meaningful as an address only on
    /// directly addressable devices; for opaque handles (OpenCL, Metal) use [`raw`](Self::raw).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0], &[4]).finish()?;
    /// assert_eq!(tensor.view().data_ptr(), tensor.view().raw().data);
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn data_ptr(&self) -> *mut c_void {
        // `byte_offset` fits in usize and does not wrap the address (validated at import).
        self.tensor
            .data
            .cast::<u8>()
            .wrapping_add(usize::try_from(self.tensor.byte_offset).unwrap_or(0))
            .cast()
    }

    /// Row-major (C) contiguity, as NumPy defines it: extent-1 dimensions are ignored and an
    /// empty tensor is contiguous.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// // The stride of an extent-1 dimension does not matter.
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0], &[1, 3]).strides(&[99, 1]).finish()?;
    /// assert!(tensor.view().is_c_contiguous());
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn is_c_contiguous(&self) -> bool {
        self.meta.is_c_contiguous()
    }

    /// Column-major (Fortran) contiguity, with the same rules as
    /// [`is_c_contiguous`](Self::is_c_contiguous).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).strides(&[1, 2]).finish()?;
    /// assert!(tensor.view().is_f_contiguous());
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn is_f_contiguous(&self) -> bool {
        validate::is_f_contiguous(self.shape(), self.given_strides(), &self.meta)
    }

    /// Whether typed access may read the elements from the host: the device is host-accessible
    /// (`kDLCPU`, pinned, managed, ...) and the flags have no bit this crate does not know. The
    /// first of [`typed_ptr`](Self::typed_ptr)'s checks, on its own: a borrow registry
    /// registers only tensors that Rust code can reach.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// assert!(Export::new(vec![1u8], &[1]).finish()?.view().is_host_readable());
    /// let raw = Export::new(vec![1u8], &[1]).finish()?.into_raw();
    /// unsafe { (*raw).dl_tensor.device = DLDevice { device_type: kDLCUDA, device_id: 0 } };
    /// let on_gpu = unsafe { dlpack_abi::dlpack::VersionedTensor::from_raw(raw) }?;
    /// assert!(!on_gpu.view().is_host_readable());
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn is_host_readable(&self) -> bool {
        self.meta.is_readable()
    }

    /// Whether two in-bounds indices may reach the same element (a zero stride on a dimension of
    /// extent above 1, or strides that interleave): then the tensor cannot be written through
    /// a mutable view without aliasing. Conservative, as ndarray's check is: it sorts the
    /// dimensions by `|stride|` and asks each to step past everything the faster ones reach.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let broadcast = Export::new(vec![0.0f32, 1.0, 2.0], &[2, 3]).strides(&[0, 1]).finish()?;
    /// assert!(broadcast.view().may_overlap());
    /// let transposed = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[3, 2]).strides(&[1, 3]).finish()?;
    /// assert!(!transposed.view().may_overlap());
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn may_overlap(&self) -> bool {
        validate::may_overlap(self.shape(), self.given_strides(), &self.meta)
    }

    /// The lowest and highest element offsets, in elements from the first element, that in-bounds
    /// indices reach through the strides (negative ones below zero); `(0, 0)` for an empty tensor.
    /// Every element lies at `typed_ptr().offset(k)` for some `k` in that range. (Only packed
    /// sub-byte elements can reach more than `isize::MAX` elements; their offsets saturate.)
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// // 2 x 3, rows backwards: the first element is the start of the last row.
    /// let rows = vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0];
    /// let tensor = Export::new(rows, &[2, 3]).first_element(3).strides(&[-3, 1]).finish()?;
    /// assert_eq!(tensor.view().element_offsets(), (-3, 2));
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn element_offsets(&self) -> (isize, isize) {
        let (low, high) = validate::element_reach(self.shape(), self.given_strides(), &self.meta);
        // Validated: the reach spans at most `isize::MAX` bytes, so whole-byte elements fit.
        let low = isize::try_from(low).unwrap_or(isize::MIN);
        (low, isize::try_from(high).unwrap_or(isize::MAX))
    }

    /// The bytes `[first, end)` the elements reach, counted from `data` (not from the first
    /// element): what a buffer holding this tensor must cover. `(0, 0)` for an empty tensor.
    #[inline]
    pub(crate) fn reach_from_data(&self) -> (i128, i128) {
        if self.meta.elements() == 0 {
            return (0, 0);
        }
        let (first, end) = validate::reach(self.shape(), self.given_strides(), &self.meta);
        let offset = i128::from(self.tensor.byte_offset);
        (offset + first, offset + end)
    }

    /// The flags, unknown bits included; empty for a legacy tensor (which has none).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{Export, VersionedTensor};
    /// use dlpack_abi::raw::DLPackFlags;
    ///
    /// let raw = Export::new(vec![0.0f32, 1.0], &[2]).finish()?.into_raw();
    /// // A newer producer sets a bit this crate does not know, beside READ_ONLY (bit 0).
    /// unsafe { (*raw).flags |= 1 | 1 << 40 };
    /// let tensor = unsafe { VersionedTensor::from_raw(raw) }?;
    /// assert!(tensor.view().flags().contains(DLPackFlags::READ_ONLY));
    /// assert_eq!(tensor.view().flags().bits(), 1 | 1 << 40);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn flags(&self) -> DLPackFlags {
        self.flags
    }

    /// The producer's version; `None` for a legacy tensor. The minor may be newer than 3.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0], &[2]).finish()?;
    /// assert_eq!(tensor.view().version().map(|v| v.major), Some(1));
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn version(&self) -> Option<DLPackVersion> {
        self.version
    }

    /// The elements as a slice in row-major order.
    ///
    /// Needs host-accessible memory (`kDLCPU`, `kDLCUDAHost`, `kDLROCMHost`, `kDLCUDAManaged`),
    /// no unknown flag bits, `T::DTYPE == dtype`, a start pointer aligned for `T`, and C
    /// contiguity; each failure is a specific [`AccessError`]. An empty tensor gives `&[]`.
    ///
    /// # Errors
    /// [`AccessError`]: the device is not host-accessible, unknown flag bits, another dtype,
    /// misaligned data, or a layout that is not C-contiguous.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{AccessError, Export};
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0], &[3]).finish()?;
    /// assert_eq!(tensor.view().as_slice::<f32>()?, [0.0, 1.0, 2.0]);
    /// assert!(matches!(tensor.view().as_slice::<i32>(), Err(AccessError::DtypeMismatch { .. })));
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T], AccessError> {
        self.contiguous_slice(false)
    }

    /// The elements as a slice in memory order: like [`as_slice`](Self::as_slice), but a
    /// column-major (F-contiguous) tensor is accepted too, its slice being in column-major order.
    ///
    /// # Errors
    /// As [`as_slice`](Self::as_slice), with F contiguity accepted.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0], &[2, 2]).strides(&[1, 2]).finish()?;
    /// assert_eq!(tensor.view().as_slice_memory_order::<f32>()?, [0.0, 1.0, 2.0, 3.0]);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn as_slice_memory_order<T: Element>(&self) -> Result<&'a [T], AccessError> {
        self.contiguous_slice(true)
    }

    /// The element at `index` (one coordinate per dimension), read through the strides, with
    /// bounds checks. Needs what [`as_slice`](Self::as_slice) needs except contiguity.
    ///
    /// # Errors
    /// [`AccessError::IndexRank`] or [`AccessError::IndexOutOfBounds`] for a bad `index`, and what
    /// [`as_slice`](Self::as_slice) refuses except contiguity.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{AccessError, Export};
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).finish()?;
    /// assert_eq!(tensor.view().get::<f32>(&[1, 2])?, 5.0);
    /// let out = AccessError::IndexOutOfBounds { dim: 1, index: 3, extent: 3 };
    /// assert_eq!(tensor.view().get::<f32>(&[1, 3]), Err(out));
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn get<T: Element>(&self, index: &[usize]) -> Result<T, AccessError> {
        let start = self.typed_ptr::<T>()?;
        let offset = self.offset_of(index)?;
        // SAFETY: the index is in bounds, so `offset` addresses an element inside the validated
        // reach; alignment and dtype were checked; the memory is readable (`from_raw`).
        Ok(unsafe { start.wrapping_offset(offset).read() })
    }

    /// The offset in elements of the element at `index` from the first element, with bounds
    /// checks: an in-bounds index addresses an element inside the validated reach.
    pub(crate) fn offset_of(&self, index: &[usize]) -> Result<isize, AccessError> {
        let shape = self.shape();
        if index.len() != shape.len() {
            return Err(AccessError::IndexRank {
                ndim: shape.len(),
                given: index.len(),
            });
        }
        let strides = self.strides();
        let mut offset: i64 = 0;
        for (dim, ((&i, &extent), stride)) in
            index.iter().zip(shape).zip(strides.iter()).enumerate()
        {
            // Validated: `0 <= extent`, and it fits `usize` (the size does).
            if usize::try_from(extent).map_or(true, |extent| i >= extent) {
                return Err(AccessError::IndexOutOfBounds {
                    dim,
                    index: i,
                    extent,
                });
            }
            // `i < extent`: the product is within the reach validated at import.
            offset = offset.wrapping_add((i as i64).wrapping_mul(stride));
        }
        // Within the validated reach, which spans at most `isize::MAX` bytes.
        Ok(offset as isize)
    }

    /// The elements in row-major order, read through the strides (any layout, including
    /// negative and zero strides). Needs what [`get`](Self::get) needs.
    ///
    /// # Errors
    /// What [`as_slice`](Self::as_slice) refuses, except contiguity.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// // Every other element of 0..6.
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0], &[3]).strides(&[2]).finish()?;
    /// assert!(tensor.view().iter::<f32>()?.eq([0.0, 2.0, 4.0]));
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn iter<T: Element>(&self) -> Result<Elements<'a, T>, AccessError> {
        let start = self.typed_ptr::<T>()?;
        // C-contiguous (synthesised strides always are): row-major order is memory order, and the
        // elements are read one after the other. Otherwise the odometer walks the given strides.
        let strides = match self.given_strides() {
            Some(strides) if !self.meta.is_c_contiguous() => strides,
            _ => &[],
        };
        Ok(Elements {
            start,
            shape: self.shape(),
            strides,
            index: [0; MAX_NDIM],
            offset: 0,
            remaining: self.meta.elements(),
            _data: PhantomData,
        })
    }

    /// `NotContiguous` unless C-contiguous (or F-contiguous, when `either_order`).
    #[inline(always)]
    pub(crate) fn check_contiguous(&self, either_order: bool) -> Result<(), AccessError> {
        if self.meta.is_c_contiguous() || (either_order && self.is_f_contiguous()) {
            Ok(())
        } else {
            Err(AccessError::NotContiguous)
        }
    }

    /// The first element (`data + byte_offset`) as a `*const T`, after every check typed access
    /// makes except contiguity: host-accessible memory, no unknown flags, `T::DTYPE == dtype`,
    /// and alignment for `T` (not checked for an empty tensor, whose `data` may be anything).
    /// For code that walks the strides itself: the element at an in-bounds index is at
    /// `ptr.offset(sum of index[d] * strides[d])`, readable while the view lives.
    ///
    /// # Errors
    /// What [`as_slice`](Self::as_slice) refuses, except contiguity.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// // Column-major 2 x 3 storage of 0..6.
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).strides(&[1, 2]).finish()?;
    /// let view = tensor.view();
    /// let start = view.typed_ptr::<f32>()?;
    /// let (shape, strides) = (view.shape(), view.strides());
    /// let mut sum = 0.0;
    /// for i in 0..shape[0] {
    ///     for j in 0..shape[1] {
    ///         let offset = i * strides.get(0).unwrap() + j * strides.get(1).unwrap();
    ///         // SAFETY: (i, j) is in bounds; `typed_ptr` checked dtype, device and alignment.
    ///         sum += unsafe { *start.offset(offset as isize) };
    ///     }
    /// }
    /// assert_eq!(sum, 15.0);
    /// assert!(view.typed_ptr::<i32>().is_err());
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn typed_ptr<T: Element>(&self) -> Result<*const T, AccessError> {
        self.checked_start(self.data_ptr().cast::<T>().cast_const())
    }

    /// The elements, after `check_contiguous(either_order)` and [`typed_ptr`](Self::typed_ptr)'s
    /// checks: the common case ([`common_slice`](Self::common_slice)), or everything else and
    /// every refusal out of line ([`contiguous_slice_in_full`](Self::contiguous_slice_in_full)),
    /// which returns the same slice where the common case does (the unit test
    /// `the_slice_fast_path_agrees_with_the_general_path` and the fuzz property
    /// `check_slice_paths` check it).
    #[inline(always)]
    fn contiguous_slice<T: Element>(&self, either_order: bool) -> Result<&'a [T], AccessError> {
        #[cfg(feature = "fast-path")]
        if let Some(slice) = self.common_slice() {
            return Ok(slice);
        }
        // By value: the copy is made on this cold path, so the view need not be in memory on the
        // common one.
        (*self).contiguous_slice_in_full(either_order)
    }

    /// The elements of a tensor in the common case, which typed slices accept without building an
    /// error: C-contiguous, readable, at least one element (one masked compare), `T`'s dtype, and
    /// aligned. `None` for anything else, which
    /// [`contiguous_slice_in_full`](Self::contiguous_slice_in_full) decides.
    #[cfg(feature = "fast-path")]
    #[inline(always)]
    pub(crate) fn common_slice<T: Element>(&self) -> Option<&'a [T]> {
        super::element::assert_size_matches::<T>();
        let start = self.data_ptr().cast::<T>().cast_const();
        let facts = Meta::C_CONTIGUOUS | Meta::READABLE | Meta::NON_EMPTY;
        if !self.meta.has_all(facts)
            || !self.is_dtype_of::<T>()
            || start as usize % align_of::<T>() != 0
        {
            return None;
        }
        // SAFETY: `start` is `data + byte_offset` of a non-empty tensor, and every `Meta` is what
        // validation returns (or, through `from_validated`, would return) for its tensor:
        // validation refuses a non-empty tensor whose `data` is NULL or whose start wraps
        // around. (What `from_raw_parts` below needs anyway; said here, it spares the caller's
        // `Option` a test of the pointer.)
        unsafe { core::hint::assert_unchecked(!start.is_null()) };
        // SAFETY: `start` is non-NULL (above) and aligned (checked); the tensor is C-contiguous,
        // readable (`has_all`) and of `T`'s dtype, and its `elements` elements are readable and
        // unwritten for `'a` (`from_raw`'s contract); the byte size fits in `isize` (validated at
        // import).
        Some(unsafe { slice::from_raw_parts(start, self.meta.elements()) })
    }

    /// [`contiguous_slice`](Self::contiguous_slice) for every tensor: out of line where the
    /// common case has its own path. The slice starts at `data + byte_offset`, or for an empty
    /// tensor (whose `data` may be anything) at a dangling, aligned pointer, so that it needs no
    /// branch of its own.
    #[cfg_attr(feature = "fast-path", cold, inline(never))]
    #[cfg_attr(not(feature = "fast-path"), inline(always))]
    pub(crate) fn contiguous_slice_in_full<T: Element>(
        self,
        either_order: bool,
    ) -> Result<&'a [T], AccessError> {
        self.check_contiguous(either_order)?;
        let start = if self.meta.elements() == 0 {
            NonNull::<T>::dangling().as_ptr().cast_const()
        } else {
            self.data_ptr().cast::<T>().cast_const()
        };
        let start = self.checked_start(start)?;
        // SAFETY: `start` is non-NULL and aligned (dangling for an empty tensor; otherwise
        // `data + byte_offset` of a non-empty tensor, whose `data` is non-NULL, checked aligned);
        // the tensor is contiguous (checked above), of `T`'s dtype, and its `elements` elements are
        // readable and unwritten for `'a` (`from_raw`'s contract); the byte size fits in `isize`
        // (validated at import).
        Ok(unsafe { slice::from_raw_parts(start, self.meta.elements()) })
    }

    /// Panics unless both typed slices of `T` ([`as_slice`](Self::as_slice) and
    /// [`as_slice_memory_order`](Self::as_slice_memory_order)) are what the general path
    /// returns, the same slice (start and length) or the same refusal; returns whether `as_slice`
    /// gave a non-empty slice (which the fast path may have). For the unit test and the fuzz
    /// property.
    #[cfg(any(test, fuzzing))]
    pub(crate) fn slice_paths_agree<T: Element>(&self) -> bool {
        let parts = |slice: &[T]| (slice.as_ptr(), slice.len());
        let general = self.contiguous_slice_in_full::<T>(false).map(parts);
        assert_eq!(self.as_slice::<T>().map(parts), general, "{self:?}");
        let either = self.contiguous_slice_in_full::<T>(true).map(parts);
        let memory_order = self.as_slice_memory_order::<T>().map(parts);
        assert_eq!(memory_order, either, "{self:?}");
        let non_empty = general.is_ok_and(|(_, len)| len > 0);
        // The common case answers for every non-empty C-contiguous slice, and for nothing else.
        #[cfg(feature = "fast-path")]
        assert_eq!(
            self.common_slice::<T>().map(parts),
            general.ok().filter(|_| non_empty),
            "{self:?}"
        );
        non_empty
    }

    /// Every check typed access makes except contiguity, for a first element at `start`:
    /// host-accessible memory, no unknown flags, `T::DTYPE == dtype`, and `start` aligned for `T`
    /// (not checked for an empty tensor).
    #[inline(always)]
    fn checked_start<T: Element>(&self, start: *const T) -> Result<*const T, AccessError> {
        super::element::assert_size_matches::<T>();
        if !self.meta.is_readable() || !self.is_dtype_of::<T>() {
            return Err(refusal::<T>(
                self.tensor.device,
                self.flags,
                self.tensor.dtype,
            ));
        }
        let address = start as usize;
        if self.meta.elements() > 0 && address % align_of::<T>() != 0 {
            return Err(AccessError::Misaligned {
                address,
                align: align_of::<T>(),
            });
        }
        Ok(start)
    }

    /// Whether the dtype is `T`'s (`element::is_dtype_of`, the one rule).
    #[inline(always)]
    fn is_dtype_of<T: Element>(&self) -> bool {
        super::element::is_dtype_of::<T>(self.tensor.dtype)
    }

    /// Refuses a dtype other than `T`'s: the one dtype rule of typed access, for callers that
    /// must report the dtype before anything else (a typed Python argument), or that check it
    /// without host access (a device pointer).
    ///
    /// # Errors
    /// [`AccessError::DtypeMismatch`] naming both dtypes.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{AccessError, Element, Export};
    ///
    /// let tensor = Export::new(vec![1.0f32], &[1]).finish()?;
    /// assert_eq!(tensor.view().check_dtype::<f32>(), Ok(()));
    /// assert_eq!(
    ///     tensor.view().check_dtype::<f64>(),
    ///     Err(AccessError::DtypeMismatch { requested: f64::DTYPE, found: f32::DTYPE })
    /// );
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn check_dtype<T: Element>(&self) -> Result<(), AccessError> {
        if self.is_dtype_of::<T>() {
            Ok(())
        } else {
            Err(self.dtype_mismatch::<T>())
        }
    }

    #[cold]
    fn dtype_mismatch<T: Element>(&self) -> AccessError {
        dtype_mismatch::<T>(self.tensor.dtype)
    }
}

/// Why `typed_ptr` refused before the alignment check (the `READABLE` fact is `Meta::readable`'s
/// rule; this only picks which error names it). Takes the fields by value, so that the view need
/// not be in memory on the path that does not refuse; inlined, so that a caller that maps errors
/// to codes keeps only the checks (on small targets).
#[inline]
fn refusal<T: Element>(device: DLDevice, flags: DLPackFlags, found: DLDataType) -> AccessError {
    if !device.device_type.is_host_accessible() {
        AccessError::NotHostAccessible { device }
    } else if !KNOWN_FLAGS.contains(flags) {
        AccessError::UnknownFlags { flags }
    } else {
        dtype_mismatch::<T>(found)
    }
}

/// The refusal of a `found` dtype other than `T`'s.
#[inline]
fn dtype_mismatch<T: Element>(found: DLDataType) -> AccessError {
    AccessError::DtypeMismatch {
        requested: T::DTYPE,
        found,
    }
}

impl fmt::Debug for TensorView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorView")
            .field("version", &self.version)
            .field("device", &self.tensor.device)
            .field("dtype", &self.tensor.dtype)
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("data", &self.data_ptr())
            .field("flags", &self.flags)
            .finish()
    }
}

/// The elements of a tensor in row-major order, read by value through the strides. Made by
/// [`TensorView::iter`].
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::Export;
/// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0], &[2, 2]).strides(&[1, 2]).finish()?;
/// let elements = tensor.view().iter::<f32>()?;
/// assert_eq!(elements.len(), 4);
/// assert_eq!(elements.collect::<Vec<_>>(), [0.0, 2.0, 1.0, 3.0]);
/// # }
/// # Ok(()) }
/// ```
pub struct Elements<'a, T> {
    start: *const T,
    shape: &'a [i64],
    /// The producer's strides, walked by the odometer; empty when the elements are read in memory
    /// order (C-contiguous).
    strides: &'a [i64],
    /// The odometer: the index of the next element (strided tensors only).
    index: [usize; MAX_NDIM],
    /// Offset of the next element from `start`, in elements. Computed modulo the address width
    /// (wrapping, the strides truncated to it): every in-bounds offset lies within the validated
    /// reach, inside the address space, so the result is exact. On 32-bit targets the odometer
    /// costs half the code it costs in `i64`.
    offset: isize,
    remaining: usize,
    _data: PhantomData<&'a [T]>,
}

impl<T> Elements<'_, T> {
    /// No elements (nothing is read: the pointer is never dereferenced).
    pub(super) fn empty() -> Self {
        Elements {
            start: core::ptr::NonNull::dangling().as_ptr(),
            shape: &[],
            strides: &[],
            index: [0; MAX_NDIM],
            offset: 0,
            remaining: 0,
            _data: PhantomData,
        }
    }

    /// The address of the next element in row-major order, and a step past it: the one stride
    /// walk of typed iteration, which reading ([`Elements`]) and writing
    /// ([`ElementsMut`]) share.
    ///
    /// The address is that of an in-bounds index (the odometer never leaves the shape while
    /// elements remain; in memory order it is the count so far, below the element count), so it
    /// lies inside the reach validated at import, as aligned as the first element.
    #[inline(always)]
    fn next_ptr(&mut self) -> Option<*const T> {
        if self.remaining == 0 {
            return None;
        }
        let at = self.start.wrapping_offset(self.offset);
        self.remaining -= 1;
        if self.strides.is_empty() {
            // Memory order: the next element follows (C-contiguous, or 0-d).
            self.offset += 1;
            return Some(at);
        }
        // Advance the row-major odometer. Wrapping arithmetic: an extent-1 dimension may carry
        // any stride, added and removed again at once.
        let dims = self.shape.iter().zip(self.strides).zip(&mut self.index);
        for ((&extent, &stride), index) in dims.rev() {
            // Modular, as `offset` says: truncating keeps the value modulo the address width.
            let stride = stride as isize;
            *index += 1;
            self.offset = self.offset.wrapping_add(stride);
            // A validated extent is at least the index, and fits `usize` (the element count does).
            if usize::try_from(extent).is_ok_and(|extent| *index < extent) {
                break;
            }
            // Back to the start of the dimension: `index` (its extent) steps of `stride` taken,
            // undone modulo the address width.
            self.offset = self
                .offset
                .wrapping_sub(stride.wrapping_mul(*index as isize));
            *index = 0;
        }
        Some(at)
    }
}

impl<T: Element> Iterator for Elements<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        let at = self.next_ptr()?;
        // SAFETY: `next_ptr` gives the address of an in-bounds element inside the validated
        // reach; alignment, dtype and host access were checked by `TensorView::iter`, and the
        // memory is readable and unwritten for `'a` (`from_raw`'s contract).
        Some(unsafe { at.read() })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T: Element> ExactSizeIterator for Elements<'_, T> {}

impl<T> fmt::Debug for Elements<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Elements")
            .field("remaining", &self.remaining)
            .finish()
    }
}

/// The elements of a tensor in row-major order, as `&mut T` through the strides: what
/// [`TensorViewMut::iter_mut`](super::TensorViewMut::iter_mut) gives, for in-place kernels over
/// any layout whose strides reach no element twice. It walks the strides as [`Elements`] does
/// (the same odometer, the same memory-order fast path for C-contiguous tensors), so `zip`
/// with another tensor's [`iter`](TensorView::iter) pairs elements of one index.
///
/// ```
/// use dlpack_abi::dlpack::{Element, ElementsMut, TensorViewMut};
/// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
///
/// // The even elements of 0..6, written in place: `a[::2] += 10`.
/// let mut values = [0i32, 1, 2, 3, 4, 5];
/// let (mut shape, mut strides) = ([3i64], [2i64]);
/// let mut tensor = DLTensor {
///     data: values.as_mut_ptr().cast(),
///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
///     ndim: 1, dtype: i32::DTYPE, shape: shape.as_mut_ptr(),
///     strides: strides.as_mut_ptr(), byte_offset: 0,
/// };
/// // SAFETY: the tensor, its shape, strides and data are locals used only through the view.
/// let mut out = unsafe { TensorViewMut::from_raw(&mut tensor) }?;
/// let elements: ElementsMut<'_, i32> = out.iter_mut()?;
/// assert_eq!(elements.len(), 3);
/// elements.for_each(|value| *value += 10);
/// assert_eq!(values, [10, 1, 12, 3, 14, 5]);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub struct ElementsMut<'a, T> {
    /// The walk, shared with reading; its pointer carries the view's write permission.
    elements: Elements<'a, T>,
    _data: PhantomData<&'a mut [T]>,
}

impl<'a, T> ElementsMut<'a, T> {
    /// Writes through the elements `elements` walks.
    ///
    /// # Safety
    /// The elements `elements` reaches may be written, and nothing else reads or writes them,
    /// for `'a`; no two of its indices reach the same element (`TensorView::may_overlap` is
    /// `false`).
    pub(super) unsafe fn new(elements: Elements<'a, T>) -> Self {
        Self {
            elements,
            _data: PhantomData,
        }
    }
}

impl<'a, T: Element> Iterator for ElementsMut<'a, T> {
    type Item = &'a mut T;

    #[inline]
    fn next(&mut self) -> Option<&'a mut T> {
        let at = self.elements.next_ptr()?.cast_mut();
        // SAFETY: `next_ptr` gives an in-bounds element inside the validated reach, aligned and
        // of `T`'s dtype (checked by `TensorView::iter`), each element at most once (its strides
        // reach no element twice: `new`'s contract), and the memory is writable and ours alone
        // for `'a` (`new`'s contract), so this `&mut` is the only reference to it.
        Some(unsafe { &mut *at })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.elements.size_hint()
    }
}

impl<T: Element> ExactSizeIterator for ElementsMut<'_, T> {}

impl<T> fmt::Debug for ElementsMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ElementsMut")
            .field("remaining", &self.elements.remaining)
            .finish()
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
