//! [ndarray](https://docs.rs/ndarray) 0.17 and DLPack, zero-copy both ways (feature `ndarray`).
//!
//! **Tensor → ndarray.** [`TensorView::as_array`] views any validated host tensor (imported,
//! borrowed from C, or lent) as an `ArrayView<T, D>`: `IxDyn`, or a fixed dimension such as `Ix2`
//! ([`AccessError::DimensionMismatch`] when `ndim` differs). Strides are kept (negative and zero
//! ones too), `byte_offset` is counted once, 0-d and empty tensors work.
//! [`TensorView::as_array_as`] reads any dtype that converts losslessly into the element type
//! ([`ReadAs`]): the same view when the dtype already is that type, and otherwise a converted
//! copy that the returned `CowArray` owns. Mutable views come from
//! [`TensorViewMut::as_array_mut`] (a kernel's output) and [`VersionedTensor::as_array_mut`] (a
//! tensor this consumer holds alone); strides that reach one element twice are refused
//! ([`AccessError::Overlapping`]). Nothing else is ever copied.
//!
//! **ndarray → tensor.** `Array<T, D>` and `ArcArray<T, D>` are [`TensorOwner`]s:
//! [`ManagedTensor::from_owner`](dlpack_abi::dlpack::ManagedTensor::from_owner) moves the array into
//! the export's one allocation, keeping its strides and the offset of its first element; an
//! `ArcArray` that shares its data is exported `READ_ONLY`, so that its copy-on-write is never
//! bypassed. Views (and any array) are lent to C without allocation by
//! [`BorrowedTensor::from_array`] and [`BorrowedTensorMut::from_array_mut`].
//!
//! ```
//! use dlpack_abi::dlpack::VersionedTensor;
//! use ndarray::{array, s, Ix2};
//!
//! let matrix = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
//! let reversed = matrix.slice_move(s![.., ..;-1]);
//! let address = reversed.as_ptr();
//! let tensor = VersionedTensor::from_owner(reversed)?; // zero-copy: the array moves in
//! let view = tensor.view().as_array::<f32, Ix2>()?;
//! assert_eq!(view, array![[3.0, 2.0, 1.0], [6.0, 5.0, 4.0]]);
//! assert_eq!(view.as_ptr(), address);
//! # Ok::<(), dlpack_abi::dlpack::TensorError>(())
//! ```
#![allow(unsafe_code)]

extern crate alloc;

/// `From` impls for errors that wrap others: `wraps! { Outer::Variant(Inner), ... }`.
#[allow(unused_macros)]
macro_rules! wraps {
    ($($outer:ident :: $variant:ident ($inner:ty)),+ $(,)?) => {$(
        impl From<$inner> for $outer {
            fn from(error: $inner) -> Self {
                Self::$variant(error)
            }
        }
    )+};
}

use ::ndarray::{
    ArcArray, Array, ArrayBase, ArrayView, ArrayViewMut, Axis, CowArray, Data, DataMut, Dimension,
    ShapeBuilder,
};
use core::ptr::NonNull;

use dlpack_abi::dlpack::{
    AccessError, BorrowedTensor, BorrowedTensorMut, Element, ExportError, ReadAs,
    TensorDescription, TensorOwner, TensorView, TensorViewMut, VersionedTensor,
};
use dlpack_abi::raw::{kDLCPU, DLDevice, DLPackFlags};

/// How a validated tensor maps onto an ndarray view: the shape, the absolute strides, the
/// offset (in elements, from the first element) of the lowest-addressed element, and which axes
/// run backwards (ndarray builds views from non-negative strides only).
struct Layout<D> {
    shape: D,
    abs_strides: D,
    lowest: isize,
    /// Bit `i`: axis `i` has a negative stride.
    backwards: u64,
    empty: bool,
}

impl<D: Dimension> Layout<D> {
    fn of(view: &TensorView<'_>) -> Result<Self, AccessError> {
        let ndim = view.ndim();
        if let Some(expected) = D::NDIM {
            if expected != ndim {
                return Err(AccessError::DimensionMismatch { ndim, expected });
            }
        }
        let mut shape = D::zeros(ndim);
        let mut abs_strides = D::zeros(ndim);
        let mut backwards = 0u64;
        let empty = view.element_count() == 0;
        for (dim, (&extent, stride)) in view.shape().iter().zip(view.strides().iter()).enumerate() {
            // Validated: every extent fits `usize` (the element count does).
            shape[dim] = usize::try_from(extent).unwrap_or(0);
            if empty {
                // Nothing is read: strides that keep ndarray's overlap check content (it stops
                // at the first zero-extent axis, in increasing stride order).
                abs_strides[dim] = usize::from(extent != 0);
            } else if extent > 1 {
                // Validated: the reach through an axis of extent >= 2 spans at most
                // `isize::MAX` bytes, so the stride fits `isize`. (0 would only repeat the first
                // element, never leave the reach.) The stride of an extent-1 axis is never
                // used: it stays 0.
                let stride = isize::try_from(stride).unwrap_or(0);
                abs_strides[dim] = stride.unsigned_abs();
                backwards |= u64::from(stride < 0) << dim;
            }
        }
        // The lowest element, from the first: where ndarray's view of non-negative strides starts.
        let lowest = view.element_offsets().0;
        Ok(Self {
            shape,
            abs_strides,
            lowest,
            backwards,
            empty,
        })
    }

    /// The start of the ndarray view: the lowest element, or a dangling pointer when empty.
    fn base<T>(&self, first: *const T) -> *const T {
        if self.empty {
            NonNull::<T>::dangling().as_ptr()
        } else {
            first.wrapping_offset(self.lowest)
        }
    }

    /// Turns the axes that run backwards around again.
    fn invert<S: ::ndarray::RawData>(&self, array: &mut ArrayBase<S, D>) {
        for dim in 0..self.shape.ndim() {
            if self.backwards & (1 << dim) != 0 {
                array.invert_axis(Axis(dim));
            }
        }
    }
}

impl<'a> TensorView<'a> {
    /// The tensor as an ndarray view of `T` with dimension `D` (`IxDyn`, or `Ix0`..`Ix6`), with its
    /// strides, for the view's lifetime. Needs what [`get`](Self::get) needs, and `ndim` equal to
    /// `D`'s ([`AccessError::DimensionMismatch`]). Never copies.
    ///
    /// # Errors
    /// [`AccessError::DimensionMismatch`] when `ndim` is not `D`'s, and what
    /// [`TensorView::get`] refuses.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{AccessError, BorrowedTensor};
    /// use ndarray::{array, Ix1, Ix2, IxDyn};
    ///
    /// let values = [0i32, 1, 2, 3, 4, 5];
    /// let lent = BorrowedTensor::strided(&values, [3, 2], [1, 3], 0)?; // a transpose
    /// let raw = lent.dl_tensor();
    /// assert_eq!(raw.view().as_array::<i32, Ix2>()?, array![[0, 3], [1, 4], [2, 5]]);
    /// assert_eq!(raw.view().as_array::<i32, IxDyn>()?.ndim(), 2);
    /// let error = raw.view().as_array::<i32, Ix1>().unwrap_err();
    /// assert_eq!(error, AccessError::DimensionMismatch { ndim: 2, expected: 1 });
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn as_array<T: Element, D: Dimension>(&self) -> Result<ArrayView<'a, T, D>, AccessError> {
        let first = self.typed_ptr::<T>()?;
        let layout = Layout::<D>::of(self)?;
        let shape = layout.shape.clone().strides(layout.abs_strides.clone());
        // SAFETY: every element at an in-bounds index lies in the validated reach, readable and
        // unwritten for `'a` (the view's contract); the base is the lowest of them (or dangling
        // for an empty view), aligned (`typed_ptr`), with non-negative strides; the reach spans
        // at most `isize::MAX` bytes.
        let mut array = unsafe { ArrayView::from_shape_ptr(shape, layout.base(first)) };
        layout.invert(&mut array);
        Ok(array)
    }

    /// The tensor as an ndarray array of `U` with dimension `D`, its elements converted
    /// losslessly from any of [`U::SOURCES`](ReadAs::SOURCES) (the rule is [`ReadAs`]'s): a
    /// zero-copy view ([`CowArray::is_view`], with the tensor's strides, as
    /// [`as_array`](Self::as_array) gives) when the dtype already is `U`, and otherwise a new
    /// row-major array that owns the converted copy. `.into_owned()` gives an `Array` either way
    /// (copying the view).
    ///
    /// # Errors
    /// [`AccessError::DimensionMismatch`] when `ndim` is not `D`'s,
    /// [`AccessError::UnsupportedDtype`] when the dtype does not convert into `U` without loss,
    /// and what [`TensorView::get`] refuses (device, flags, alignment).
    ///
    /// ```
    /// use dlpack_abi::dlpack::{AccessError, BorrowedTensor};
    /// use ndarray::{array, Ix2};
    ///
    /// let values = [0u8, 1, 2, 3, 4, 5];
    /// let lent = BorrowedTensor::strided(&values, [3, 2], [1, 3], 0)?; // a transpose
    /// let raw = lent.dl_tensor();
    /// let converted = raw.view().as_array_as::<f32, Ix2>()?;
    /// assert!(converted.is_owned());
    /// assert_eq!(converted, array![[0.0f32, 3.0], [1.0, 4.0], [2.0, 5.0]]);
    ///
    /// let same = raw.view().as_array_as::<u8, Ix2>()?;
    /// assert!(same.is_view() && same.as_ptr() == values.as_ptr());
    /// let error = raw.view().as_array_as::<i8, Ix2>().unwrap_err();
    /// assert!(matches!(error, AccessError::UnsupportedDtype { .. }));
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn as_array_as<U: ReadAs, D: Dimension>(&self) -> Result<CowArray<'a, U, D>, AccessError> {
        if self.dtype() == U::DTYPE {
            return self.as_array::<U, D>().map(CowArray::from);
        }
        let shape = Layout::<D>::of(self)?.shape;
        let values = self.to_vec_as::<U>()?;
        // `values` holds one element per index of `shape`, in row-major order: ndarray's check
        // cannot fail (were it to, the dimensions are what it would be about).
        let ndim = self.ndim();
        Array::from_shape_vec(shape, values)
            .map(CowArray::from)
            .map_err(|_| AccessError::DimensionMismatch {
                ndim,
                expected: D::NDIM.unwrap_or(ndim),
            })
    }
}

/// A mutable ndarray view at `first`, after the overlap check.
///
/// # Safety
/// `first` is the typed start of `view`, every element it reaches may be written and is ours
/// alone for `'b`.
unsafe fn array_mut<'b, T: Element, D: Dimension>(
    view: &TensorView<'_>,
    first: *mut T,
) -> Result<ArrayViewMut<'b, T, D>, AccessError> {
    let layout = Layout::<D>::of(view)?;
    if view.may_overlap() {
        return Err(AccessError::Overlapping);
    }
    let shape = layout.shape.clone().strides(layout.abs_strides.clone());
    let base = layout.base(first.cast_const()).cast_mut();
    // SAFETY: as in `as_array`, and no two indices reach one element (checked above); writable
    // and ours alone for `'b` (caller).
    let mut array = unsafe { ArrayViewMut::from_shape_ptr(shape, base) };
    layout.invert(&mut array);
    Ok(array)
}

impl<'a> TensorViewMut<'a> {
    /// The tensor as a mutable ndarray view, while `self` is borrowed; see
    /// [`TensorView::as_array`]. Strides that reach one element from two indices are refused
    /// ([`AccessError::Overlapping`]).
    ///
    /// # Errors
    /// [`AccessError::Overlapping`] for strides that reach one element twice, and what
    /// [`TensorView::as_array`] refuses.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{BorrowedTensorMut, TensorViewMut};
    /// use ndarray::Ix2;
    ///
    /// let mut values = [0u8; 6];
    /// let mut lent = BorrowedTensorMut::new(&mut values, [2, 3])?;
    /// let mut raw = lent.dl_tensor_mut();
    /// // What a kernel does with its output argument (`TensorViewMut::from_raw` in C's place).
    /// let mut out: TensorViewMut<'_> = raw.view_mut();
    /// out.as_array_mut::<u8, Ix2>()?.column_mut(1).fill(7);
    /// assert_eq!(values, [0, 7, 0, 0, 7, 0]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn as_array_mut<T: Element, D: Dimension>(
        &mut self,
    ) -> Result<ArrayViewMut<'_, T, D>, AccessError> {
        let first = self.typed_mut_ptr::<T>()?;
        // SAFETY: writable and ours alone for `'a` (`from_raw`'s contract); `&mut self` is the
        // one borrow for the view's lifetime.
        unsafe { array_mut(&self.view(), first) }
    }
}

impl VersionedTensor {
    /// The tensor as a mutable ndarray view, for a tensor this consumer holds alone (as for
    /// [`as_mut_slice`](Self::as_mut_slice): `IS_COPIED` without `READ_ONLY`, or an export of a
    /// unique buffer); see [`TensorView::as_array`] and [`TensorViewMut::as_array_mut`].
    ///
    /// # Errors
    /// As [`VersionedTensor::as_mut_slice`](dlpack_abi::dlpack::VersionedTensor::as_mut_slice) and
    /// [`TensorView::as_array`], except contiguity.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{AccessError, Export};
    /// use ndarray::IxDyn;
    ///
    /// let mut tensor = Export::new(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]).finish()?;
    /// tensor.as_array_mut::<f64, IxDyn>()?.mapv_inplace(|x| x * 10.0);
    /// assert_eq!(tensor.view().as_slice::<f64>()?, [10.0, 20.0, 30.0, 40.0]);
    ///
    /// let mut shared = Export::new(vec![1.0f64], &[1]).read_only().finish()?;
    /// assert_eq!(shared.as_array_mut::<f64, IxDyn>().unwrap_err(), AccessError::ReadOnly);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn as_array_mut<T: Element, D: Dimension>(
        &mut self,
    ) -> Result<ArrayViewMut<'_, T, D>, AccessError> {
        let first = self.typed_mut_ptr::<T>()?;
        // SAFETY: exclusive (`typed_mut_ptr` checked it): writable and ours alone while the
        // tensor lives, and `&mut self` is the one borrow for the view's lifetime.
        unsafe { array_mut(&self.view(), first) }
    }
}

/// The description of an ndarray array's memory on the CPU, whose first element is `first`
/// (the reach is computed here from ndarray's own dims, before any validation, to state the
/// buffer; the export then validates the description and checks that reach against it),
/// (`as_ptr`, or `as_mut_ptr` for memory to be written, whose provenance it keeps): `data` at its
/// lowest element and `len` exactly the bytes from there to its highest, the first element at
/// `byte_offset`, and its own `usize`/`isize` dims (no copy).
fn describe<T: Element, S: ::ndarray::RawData<Elem = T>, D: Dimension>(
    array: &ArrayBase<S, D>,
    first: *mut T,
) -> TensorDescription<'_> {
    let (mut lowest, mut highest) = (0isize, 0isize);
    let empty = array.is_empty();
    for (&extent, &stride) in array.shape().iter().zip(array.strides()) {
        if empty || extent == 0 {
            continue;
        }
        // ndarray keeps every offset of an array within `isize`.
        let reach = stride * (extent as isize - 1);
        if reach < 0 {
            lowest += reach;
        } else {
            highest += reach;
        }
    }
    let size = core::mem::size_of::<T>();
    let len = if empty {
        0
    } else {
        (highest - lowest + 1) as usize * size
    };
    let cpu = DLDevice {
        device_type: kDLCPU,
        device_id: 0,
    };
    let data = first.wrapping_offset(lowest).cast();
    let mut description = TensorDescription::new(data, len, cpu, T::DTYPE, &[])
        .with_native_dims(array.shape(), array.strides());
    description.byte_offset = lowest.unsigned_abs() as u64 * size as u64;
    description
}

// SAFETY: an owned array keeps its elements in its own allocation, which moving the array does
// not move and which nothing else references; `describe` states exactly the bytes its elements
// reach, from the lowest one, inside that allocation.
unsafe impl<T: Element + Send, D: Dimension + 'static> TensorOwner for Array<T, D> {
    fn describe(&mut self) -> TensorDescription<'_> {
        // The consumer may write: the pointer of a unique borrow (an owned array never copies).
        let first = self.as_mut_ptr();
        describe(self, first)
    }
    fn ndim(&mut self) -> usize {
        ArrayBase::ndim(self)
    }
}

// SAFETY: as for `Array`: the shared allocation lives while any holder does, this one included.
// Unless this holder is the only one, the export is `READ_ONLY`: writing would bypass the other
// holders' copy-on-write. A unique holder moved into the export stays unique (nothing can clone
// it there).
unsafe impl<T: Element + Send + Sync, D: Dimension + 'static> TensorOwner for ArcArray<T, D> {
    fn describe(&mut self) -> TensorDescription<'_> {
        let read_only = !self.is_unique();
        // Read-only when shared: `as_ptr`, since `as_mut_ptr` would copy (copy-on-write). A
        // unique holder's data may be written through it: nothing else references it.
        let first = self.as_ptr().cast_mut();
        let description = describe(self, first);
        if read_only {
            description.with_flags(DLPackFlags::READ_ONLY)
        } else {
            description
        }
    }
    fn ndim(&mut self) -> usize {
        ArrayBase::ndim(self)
    }
}

impl<'a, const N: usize> BorrowedTensor<'a, N> {
    /// Lends any ndarray array or view (strides, negative ones too, and the offset of its first
    /// element kept) as a `DLTensor` with room for `N` dimensions, without allocation.
    ///
    /// # Errors
    /// [`ExportError::Invalid`] when the array has more than `N` dimensions or extents an import
    /// would refuse.
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensor;
    /// use ndarray::{array, s};
    ///
    /// let matrix = array![[1u16, 2, 3], [4, 5, 6]];
    /// let view = matrix.slice(s![..;-1, 1..]);
    /// let lent = BorrowedTensor::<2>::from_array(&view)?;
    /// assert_eq!(lent.dl_tensor().view().strides(), [-3, 1]);
    /// assert!(lent.dl_tensor().view().iter::<u16>()?.eq([5, 6, 2, 3]));
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn from_array<T: Element, S: Data<Elem = T>, D: Dimension>(
        array: &'a ArrayBase<S, D>,
    ) -> Result<Self, ExportError> {
        // SAFETY: the elements are borrowed for `'a` from an array that owns or borrows them, so
        // they stay allocated and nobody writes them meanwhile (an `ArcArray` holder that writes
        // copies first).
        unsafe { Self::from_description(&describe(array, array.as_ptr().cast_mut())) }
    }
}

impl<'a, const N: usize> BorrowedTensorMut<'a, N> {
    /// Lends any mutable ndarray array or view as a `DLTensor` for C to write, without
    /// allocation; an `ArcArray` that shares its data is made unique first (its copy-on-write).
    ///
    /// # Errors
    /// As [`BorrowedTensor::from_array`](dlpack_abi::dlpack::BorrowedTensor::from_array).
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensorMut;
    /// use ndarray::{s, Array2};
    ///
    /// let mut matrix = Array2::<i32>::zeros((3, 3));
    /// let mut diagonal_block = matrix.slice_mut(s![1.., 1..]);
    /// let mut lent = BorrowedTensorMut::<2>::from_array_mut(&mut diagonal_block)?;
    /// lent.dl_tensor_mut().view_mut().set(&[0, 0], 5i32)?;
    /// assert_eq!(matrix[[1, 1]], 5);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn from_array_mut<T: Element, S: DataMut<Elem = T>, D: Dimension>(
        array: &'a mut ArrayBase<S, D>,
    ) -> Result<Self, ExportError> {
        // Makes a shared `ArcArray` unique (copying) before its strides are read, and gives the
        // pointer C may write through.
        let first = array.as_mut_ptr();
        let description = describe(array, first);
        // SAFETY: the elements are borrowed mutably for `'a` from an array whose data is now
        // its own (`as_mut_ptr` above), so they may be written and nobody else touches them.
        unsafe { Self::from_description(&description) }
    }
}
