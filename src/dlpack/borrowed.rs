//! Import of a borrowed `DLTensor`: what a kernel is called with (`const DLTensor*` inputs,
//! `DLTensor*` outputs), validated by the same rules as a managed import, tied to the borrow.
//! Nothing is owned, so nothing is freed, and nothing here allocates.
#![allow(unsafe_code)]

use core::fmt;
use core::marker::PhantomData;

use super::validate;
use super::{AccessError, Element, ElementsMut, ImportError, TensorView};
use crate::raw::{DLPackFlags, DLTensor};

impl<'a> TensorView<'a> {
    /// Validates a borrowed `DLTensor` (a kernel's `const DLTensor*` argument) and views it for
    /// `'a`. The rules are those of a legacy managed import (a bare `DLTensor` has no version and
    /// no flags): `strides` may be NULL (compact row-major). Nothing is owned and nothing is
    /// freed, on success or error.
    ///
    /// # Safety
    /// - `tensor` is NULL ([`ImportError::NullTensor`]) or points to a `DLTensor` that nobody
    ///   writes for `'a`, with `shape` pointing to `ndim` readable `i64`s when `ndim > 0` and
    ///   `strides` likewise when non-NULL; validation reads only `ndim <= MAX_NDIM` values.
    /// - For typed access on a host-accessible device: the bytes reachable from
    ///   `data + byte_offset` through the shape and strides are readable, and nobody writes them,
    ///   for `'a`.
    ///
    /// # Errors
    /// [`ImportError`] for a tensor that breaks a rule of the table in the
    /// [module docs](crate::dlpack) (the legacy rules: NULL `strides` allowed).
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ImportError, TensorView};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
    /// use dlpack_abi::dlpack::Element;
    ///
    /// // What a C caller passes: a stack DLTensor over its own buffer.
    /// let mut values = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// let mut shape = [2i64, 3];
    /// let tensor = DLTensor {
    ///     data: values.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: f32::DTYPE,
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(), // compact row-major
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor, its shape and its data outlive the view and are not written.
    /// let view = unsafe { TensorView::from_raw(&tensor) }?;
    /// assert_eq!(view.as_slice::<f32>()?.iter().sum::<f32>(), 21.0);
    ///
    /// assert_eq!(unsafe { TensorView::from_raw(core::ptr::null()) }.unwrap_err(), ImportError::NullTensor);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    #[inline(always)]
    pub unsafe fn from_raw(tensor: *const DLTensor) -> Result<Self, ImportError> {
        // SAFETY: NULL or a `DLTensor` unwritten for `'a` (caller).
        let tensor = unsafe { tensor.as_ref() }.ok_or(ImportError::NullTensor)?;
        // SAFETY: `shape` and `strides` follow the rules `validate` needs (caller).
        let meta = unsafe { validate::validate(tensor, None, DLPackFlags::empty()) }?;
        Ok(Self::new(tensor, meta, None, DLPackFlags::empty()))
    }
}

/// A borrowed `DLTensor` whose elements this code may write: a kernel's output argument,
/// validated as [`TensorView::from_raw`] validates, with mutable typed access.
///
/// A bare `DLTensor` has no flags, so nothing in it says whether the memory may be written or
/// who else holds it: [`from_raw`](Self::from_raw) is `unsafe` and its caller promises both (as
/// the C convention for an output argument does). Given that, mutable access is safe:
/// [`as_mut_slice`](Self::as_mut_slice) for C-contiguous tensors (no two indices share an
/// element), [`iter_mut`](Self::iter_mut) for any layout whose strides reach no element twice
/// (a strided slice, a transpose, negative strides), [`get_mut`](Self::get_mut) and
/// [`set`](Self::set) for any layout, one element at a time (a broadcast too).
///
/// ```
/// use dlpack_abi::dlpack::{Element, TensorViewMut};
/// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
///
/// /// A kernel: writes `2 * i` into every element of its output.
/// unsafe extern "C" fn fill(out: *mut DLTensor) -> i32 {
///     // SAFETY: the caller passes a valid output tensor that nothing else uses meanwhile.
///     let Ok(mut out) = (unsafe { TensorViewMut::from_raw(out) }) else { return -1 };
///     let Ok(values) = out.as_mut_slice::<i32>() else { return -2 };
///     for (i, value) in values.iter_mut().enumerate() {
///         *value = 2 * i as i32;
///     }
///     0
/// }
///
/// let mut values = [0i32; 4];
/// let mut shape = [4i64];
/// let mut strides = [1i64];
/// let mut tensor = DLTensor {
///     data: values.as_mut_ptr().cast(),
///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
///     ndim: 1,
///     dtype: i32::DTYPE,
///     shape: shape.as_mut_ptr(),
///     strides: strides.as_mut_ptr(),
///     byte_offset: 0,
/// };
/// assert_eq!(unsafe { fill(&mut tensor) }, 0);
/// assert_eq!(values, [0, 2, 4, 6]);
/// ```
pub struct TensorViewMut<'a> {
    view: TensorView<'a>,
    _data: PhantomData<&'a mut [u8]>,
}

impl<'a> TensorViewMut<'a> {
    /// Validates a borrowed `DLTensor` whose elements the caller may write for `'a`. Nothing is
    /// owned and nothing is freed, on success or error.
    ///
    /// # Safety
    /// - `tensor` is NULL ([`ImportError::NullTensor`]) or points to a `DLTensor` that nobody
    ///   writes for `'a`, with `shape` pointing to `ndim` readable `i64`s when `ndim > 0` and
    ///   `strides` likewise when non-NULL (the struct itself is never written, only the elements).
    /// - For typed access on a host-accessible device: the bytes reachable from
    ///   `data + byte_offset` through the shape and strides may be read and written through this
    ///   view, and nobody else reads or writes them for `'a` (not the caller, not another view of
    ///   the same memory: an in-place kernel whose input and output share memory needs one
    ///   `TensorViewMut`, not a `TensorView` and a `TensorViewMut`).
    ///
    /// # Errors
    /// As [`TensorView::from_raw`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ImportError, TensorViewMut};
    ///
    /// let error = unsafe { TensorViewMut::from_raw(core::ptr::null_mut()) }.unwrap_err();
    /// assert_eq!(error, ImportError::NullTensor);
    /// ```
    #[inline(always)]
    pub unsafe fn from_raw(tensor: *mut DLTensor) -> Result<Self, ImportError> {
        Ok(Self {
            // SAFETY: the caller's contract includes `TensorView::from_raw`'s.
            view: unsafe { TensorView::from_raw(tensor) }?,
            _data: PhantomData,
        })
    }

    /// Wraps a view whose memory the caller may write and holds alone for `'a`: a lent mutable
    /// slice, mutably borrowed for `'a`.
    pub(crate) fn from_view(view: TensorView<'a>) -> Self {
        Self {
            view,
            _data: PhantomData,
        }
    }

    /// A read-only view, for as long as this borrow of `self` lasts.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorViewMut};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
    /// let mut values = [7u8; 3];
    /// let mut shape = [3i64];
    /// let mut tensor = DLTensor {
    ///     data: values.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
    ///     ndim: 1, dtype: u8::DTYPE, shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(), byte_offset: 0,
    /// };
    /// let out = unsafe { TensorViewMut::from_raw(&mut tensor) }?;
    /// assert_eq!(out.view().as_slice::<u8>()?, [7, 7, 7]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn view(&self) -> TensorView<'_> {
        self.view
    }

    /// The first element as a `*mut T`, after the checks of [`TensorView::typed_ptr`], for code
    /// that walks the strides itself and writes. Every element at an in-bounds index may be read
    /// and written through it for `'a`, but not while a slice, element or view borrowed from
    /// `self` is alive.
    ///
    /// # Errors
    /// As [`TensorView::typed_ptr`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorViewMut};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
    /// let mut values = [0f64; 4];
    /// let (mut shape, mut strides) = ([2i64], [2i64]); // every other element
    /// let mut tensor = DLTensor {
    ///     data: values.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
    ///     ndim: 1, dtype: f64::DTYPE, shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(), byte_offset: 0,
    /// };
    /// let mut out = unsafe { TensorViewMut::from_raw(&mut tensor) }?;
    /// let start = out.typed_mut_ptr::<f64>()?;
    /// // SAFETY: indexes 0 and 1 are in bounds; the stride is 2.
    /// unsafe { *start = 1.0; *start.offset(2) = 2.0 };
    /// assert_eq!(values, [1.0, 0.0, 2.0, 0.0]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn typed_mut_ptr<T: Element>(&mut self) -> Result<*mut T, AccessError> {
        Ok(self.view.typed_ptr::<T>()?.cast_mut())
    }

    /// The elements as a mutable slice in row-major order; needs what
    /// [`TensorView::as_slice`] needs (C contiguity among it, so no element is reachable twice).
    ///
    /// # Errors
    /// As [`TensorView::as_slice`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::{AccessError, Element, TensorViewMut};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
    /// let mut values = [0u16; 4];
    /// let (mut shape, mut strides) = ([2i64, 2], [1i64, 2]); // column-major
    /// let mut tensor = DLTensor {
    ///     data: values.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
    ///     ndim: 2, dtype: u16::DTYPE, shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(), byte_offset: 0,
    /// };
    /// let mut out = unsafe { TensorViewMut::from_raw(&mut tensor) }?;
    /// assert_eq!(out.as_mut_slice::<u16>(), Err(AccessError::NotContiguous));
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T], AccessError> {
        self.view.check_contiguous(false)?;
        let start = self.typed_mut_ptr::<T>()?;
        // SAFETY: validated: host-accessible, row-major contiguous (no element reachable twice),
        // dtype of `T`, aligned, `elements` elements reachable; writable and ours alone for `'a`
        // (`from_raw`'s contract), and `&mut self` is the one borrow.
        Ok(unsafe { super::managed::mut_slice(start, self.view.element_count()) })
    }

    /// Like [`as_mut_slice`](Self::as_mut_slice), for the whole borrow `'a`.
    ///
    /// # Errors
    /// As [`TensorView::as_slice`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorViewMut};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
    /// let mut values = [0i8; 2];
    /// let mut shape = [2i64];
    /// let mut tensor = DLTensor {
    ///     data: values.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
    ///     ndim: 1, dtype: i8::DTYPE, shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(), byte_offset: 0,
    /// };
    /// let slice: &mut [i8] = unsafe { TensorViewMut::from_raw(&mut tensor) }?.into_mut_slice()?;
    /// slice.copy_from_slice(&[-1, 1]);
    /// assert_eq!(values, [-1, 1]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn into_mut_slice<T: Element>(mut self) -> Result<&'a mut [T], AccessError> {
        self.view.check_contiguous(false)?;
        let start = self.typed_mut_ptr::<T>()?;
        // SAFETY: as in `as_mut_slice`; `self` is consumed, so the slice is the one borrow for
        // the rest of `'a`.
        Ok(unsafe { super::managed::mut_slice(start, self.view.element_count()) })
    }

    /// The elements in row-major order as `&mut T`, through the strides: in-place kernels over
    /// any layout (`out[::2]`, a transpose, negative strides). Needs what
    /// [`TensorView::iter`] needs, and strides that reach no element twice
    /// ([`TensorView::may_overlap`] is `false`). Zip it with another tensor's
    /// [`TensorView::iter`] to pair the elements of one index (check that the shapes are equal:
    /// `zip` stops at the shorter).
    ///
    /// # Errors
    /// What [`TensorView::iter`] refuses, and [`AccessError::Overlapping`] for strides that may
    /// reach one element from two indices (a zero stride, as a broadcast has): write those one
    /// element at a time with [`get_mut`](Self::get_mut) or [`set`](Self::set).
    ///
    /// ```
    /// use dlpack_abi::dlpack::{AccessError, Element, TensorView, TensorViewMut};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
    ///
    /// fn tensor<T: Element>(values: &mut [T], shape: &mut [i64], strides: &mut [i64]) -> DLTensor {
    ///     DLTensor {
    ///         data: values.as_mut_ptr().cast(),
    ///         device: DLDevice { device_type: kDLCPU, device_id: 0 },
    ///         ndim: shape.len() as i32, dtype: T::DTYPE, shape: shape.as_mut_ptr(),
    ///         strides: strides.as_mut_ptr(), byte_offset: 0,
    ///     }
    /// }
    ///
    /// // out += x, where out is a[::2] and x is b[1::2]: strided both.
    /// let (mut a, mut b) = ([1.0f32, 0.0, 2.0, 0.0, 3.0, 0.0], [0.0f32, 10.0, 0.0, 20.0, 0.0, 30.0]);
    /// let (mut shape, mut strides, mut x_shape, mut x_strides) = ([3i64], [2i64], [3i64], [2i64]);
    /// let mut out = tensor(&mut a, &mut shape, &mut strides);
    /// let mut x = tensor(&mut b[1..], &mut x_shape, &mut x_strides);
    /// // SAFETY: the tensors, their shapes, strides and data are locals used only through the
    /// // views; `out` and `x` are different arrays.
    /// let (mut out, x) = unsafe { (TensorViewMut::from_raw(&mut out)?, TensorView::from_raw(&mut x)?) };
    /// assert_eq!(out.view().shape(), x.shape());
    /// for (out, x) in out.iter_mut::<f32>()?.zip(x.iter::<f32>()?) {
    ///     *out += x;
    /// }
    /// assert_eq!(a, [11.0, 0.0, 22.0, 0.0, 33.0, 0.0]);
    ///
    /// // A broadcast (a zero stride) reaches one element from every index: refused.
    /// let (mut shape, mut strides) = ([4i64], [0i64]);
    /// let mut one = [0u8];
    /// let mut broadcast = tensor(&mut one, &mut shape, &mut strides);
    /// // SAFETY: as above.
    /// let mut out = unsafe { TensorViewMut::from_raw(&mut broadcast) }?;
    /// assert_eq!(out.iter_mut::<u8>().unwrap_err(), AccessError::Overlapping);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn iter_mut<T: Element>(&mut self) -> Result<ElementsMut<'_, T>, AccessError> {
        // `&mut self` is the one borrow of the memory while the shorter view lives.
        TensorViewMut::from_view(self.view).into_iter_mut()
    }

    /// Like [`iter_mut`](Self::iter_mut), for the whole borrow `'a`: what a function that
    /// makes the view and returns the iterator needs.
    ///
    /// # Errors
    /// As [`iter_mut`](Self::iter_mut).
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, ElementsMut, TensorViewMut};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
    ///
    /// /// The elements of a kernel's output argument, of any layout.
    /// fn elements(out: &mut DLTensor) -> Option<ElementsMut<'_, u64>> {
    ///     // SAFETY: the caller passes an output tensor that nothing else uses meanwhile.
    ///     unsafe { TensorViewMut::from_raw(out) }.ok()?.into_iter_mut().ok()
    /// }
    ///
    /// let mut values = [0u64; 6];
    /// let (mut shape, mut strides) = ([2i64, 3], [1i64, 2]); // column-major
    /// let mut tensor = DLTensor {
    ///     data: values.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
    ///     ndim: 2, dtype: u64::DTYPE, shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(), byte_offset: 0,
    /// };
    /// // Row-major order: (0, 0), (0, 1), (0, 2), (1, 0), ...
    /// for (i, value) in elements(&mut tensor).unwrap().enumerate() {
    ///     *value = i as u64;
    /// }
    /// assert_eq!(values, [0, 3, 1, 4, 2, 5]);
    /// ```
    pub fn into_iter_mut<T: Element>(self) -> Result<ElementsMut<'a, T>, AccessError> {
        let elements = self.view.iter::<T>()?;
        if self.view.may_overlap() {
            return Err(AccessError::Overlapping);
        }
        // SAFETY: the elements are writable and ours alone for `'a` (`from_raw`'s contract),
        // `self` is consumed, so the iterator is the one borrow of them for the rest of `'a`,
        // and no two indices reach one element (checked above).
        Ok(unsafe { ElementsMut::new(elements) })
    }

    /// The element at `index`, mutably, through the strides (any layout: two indices may share
    /// an element, but only one `&mut` exists at a time). Needs what [`TensorView::get`] needs.
    ///
    /// # Errors
    /// As [`TensorView::get`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorViewMut};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
    /// let mut values = [0u32; 6];
    /// let (mut shape, mut strides) = ([2i64, 3], [1i64, 2]); // column-major
    /// let mut tensor = DLTensor {
    ///     data: values.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
    ///     ndim: 2, dtype: u32::DTYPE, shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(), byte_offset: 0,
    /// };
    /// let mut out = unsafe { TensorViewMut::from_raw(&mut tensor) }?;
    /// *out.get_mut::<u32>(&[1, 2])? = 9;
    /// assert_eq!(values, [0, 0, 0, 0, 0, 9]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn get_mut<T: Element>(&mut self, index: &[usize]) -> Result<&mut T, AccessError> {
        let start = self.typed_mut_ptr::<T>()?;
        let offset = self.view.offset_of(index)?;
        // SAFETY: an in-bounds index addresses an element inside the validated reach; dtype,
        // device and alignment were checked; writable and ours alone (`from_raw`), and
        // `&mut self` is the one borrow.
        Ok(unsafe { &mut *start.wrapping_offset(offset) })
    }

    /// Writes `value` at `index`; see [`get_mut`](Self::get_mut).
    ///
    /// # Errors
    /// As [`TensorView::get`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::{AccessError, Element, TensorViewMut};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};
    /// let mut values = [0i64; 2];
    /// let mut shape = [2i64];
    /// let mut tensor = DLTensor {
    ///     data: values.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
    ///     ndim: 1, dtype: i64::DTYPE, shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(), byte_offset: 0,
    /// };
    /// let mut out = unsafe { TensorViewMut::from_raw(&mut tensor) }?;
    /// out.set(&[1], 5i64)?;
    /// assert!(matches!(out.set(&[2], 5i64), Err(AccessError::IndexOutOfBounds { .. })));
    /// assert_eq!(values, [0, 5]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn set<T: Element>(&mut self, index: &[usize], value: T) -> Result<(), AccessError> {
        *self.get_mut::<T>(index)? = value;
        Ok(())
    }
}

impl fmt::Debug for TensorViewMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TensorViewMut").field(&self.view).finish()
    }
}
