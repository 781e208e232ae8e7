//! Tensors into ndarray: [`view_array`], [`view_array_mut`] (zero-copy views with the tensor's
//! strides) and [`view_array_as`] (a view, or a converted copy).
#![allow(unsafe_code)]

use core::ptr::NonNull;

use dlpack_abi::dlpack::{AccessError, Element, ReadAs, TensorView, TensorViewMut};
use ndarray::{Array, ArrayBase, ArrayView, ArrayViewMut, Axis, CowArray, Dimension, ShapeBuilder};

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
                // `dim < MAX_NDIM = 64` (validated).
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
    fn invert<S: ndarray::RawData>(&self, array: &mut ArrayBase<S, D>) {
        for dim in 0..self.shape.ndim() {
            if self.backwards & (1 << dim) != 0 {
                array.invert_axis(Axis(dim));
            }
        }
    }
}

/// The tensor as an ndarray view of `T` with dimension `D` (`IxDyn`, or `Ix0`..`Ix6`), with its
/// strides (negative and zero ones too; `byte_offset` counted once; 0-d and empty tensors
/// work), for the view's lifetime `'a`. Needs what [`TensorView::get`] needs, and `ndim` equal
/// to `D`'s. Never copies.
///
/// # Errors
/// [`AccessError::DimensionMismatch`] when `ndim` is not `D`'s, and what [`TensorView::get`]
/// refuses (device, flags, dtype, alignment).
///
/// ```
/// use dlpack_abi::dlpack::{AccessError, BorrowedTensor};
/// use dlpack_abi_ndarray::view_array;
/// use ndarray::{array, Ix1, Ix2, IxDyn};
///
/// let values = [0i32, 1, 2, 3, 4, 5];
/// let lent = BorrowedTensor::strided(&values, [3, 2], [1, 3], 0)?; // a transpose
/// let raw = lent.dl_tensor();
/// assert_eq!(view_array::<i32, Ix2>(&raw.view())?, array![[0, 3], [1, 4], [2, 5]]);
/// assert_eq!(view_array::<i32, IxDyn>(&raw.view())?.ndim(), 2);
/// let error = view_array::<i32, Ix1>(&raw.view()).unwrap_err();
/// assert_eq!(error, AccessError::DimensionMismatch { ndim: 2, expected: 1 });
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub fn view_array<'a, T: Element, D: Dimension>(
    view: &TensorView<'a>,
) -> Result<ArrayView<'a, T, D>, AccessError> {
    let first = view.typed_ptr::<T>()?;
    let layout = Layout::<D>::of(view)?;
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
/// zero-copy view ([`CowArray::is_view`], with the tensor's strides, as [`view_array`] gives)
/// when the dtype already is `U`, and otherwise a new row-major array that owns the converted
/// copy. `.into_owned()` gives an `Array` either way (copying the view).
///
/// # Errors
/// [`AccessError::DimensionMismatch`] when `ndim` is not `D`'s,
/// [`AccessError::UnsupportedDtype`] when the dtype does not convert into `U` without loss,
/// and what [`TensorView::get`] refuses (device, flags, alignment).
///
/// ```
/// use dlpack_abi::dlpack::{AccessError, BorrowedTensor};
/// use dlpack_abi_ndarray::view_array_as;
/// use ndarray::{array, Ix2};
///
/// let values = [0u8, 1, 2, 3, 4, 5];
/// let lent = BorrowedTensor::strided(&values, [3, 2], [1, 3], 0)?; // a transpose
/// let raw = lent.dl_tensor();
/// let converted = view_array_as::<f32, Ix2>(&raw.view())?;
/// assert!(converted.is_owned());
/// assert_eq!(converted, array![[0.0f32, 3.0], [1.0, 4.0], [2.0, 5.0]]);
///
/// let same = view_array_as::<u8, Ix2>(&raw.view())?;
/// assert!(same.is_view() && same.as_ptr() == values.as_ptr());
/// let error = view_array_as::<i8, Ix2>(&raw.view()).unwrap_err();
/// assert!(matches!(error, AccessError::UnsupportedDtype { .. }));
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub fn view_array_as<'a, U: ReadAs, D: Dimension>(
    view: &TensorView<'a>,
) -> Result<CowArray<'a, U, D>, AccessError> {
    if view.dtype() == U::DTYPE {
        return view_array::<U, D>(view).map(CowArray::from);
    }
    let shape = Layout::<D>::of(view)?.shape;
    let values = view.to_vec_as::<U>()?;
    // `values` holds one element per index of `shape`, in row-major order: ndarray's check
    // cannot fail (were it to, the dimensions are what it would be about).
    let ndim = view.ndim();
    Array::from_shape_vec(shape, values)
        .map(CowArray::from)
        .map_err(|_| AccessError::DimensionMismatch {
            ndim,
            expected: D::NDIM.unwrap_or(ndim),
        })
}

/// The tensor as a mutable ndarray view, while `view` is borrowed; see [`view_array`]. Strides
/// that reach one element from two indices are refused ([`AccessError::Overlapping`]).
///
/// A [`TensorViewMut`] is what a kernel gets for its output argument
/// ([`TensorViewMut::from_raw`], a lent [`BorrowedTensorMut`](dlpack_abi::dlpack::BorrowedTensorMut)),
/// and what [`VersionedTensor::view_mut`](dlpack_abi::dlpack::VersionedTensor::view_mut) gives
/// for a tensor this consumer holds alone (`IS_COPIED` without `READ_ONLY`, or an export of a
/// unique buffer): `view_array_mut(&mut tensor.view_mut()?)`.
///
/// # Errors
/// [`AccessError::Overlapping`] for strides that reach one element twice, and what
/// [`view_array`] refuses.
///
/// ```
/// use dlpack_abi::dlpack::{BorrowedTensorMut, TensorViewMut};
/// use dlpack_abi_ndarray::view_array_mut;
/// use ndarray::Ix2;
///
/// let mut values = [0u8; 6];
/// let mut lent = BorrowedTensorMut::new(&mut values, [2, 3])?;
/// let mut raw = lent.dl_tensor_mut();
/// // What a kernel does with its output argument (`TensorViewMut::from_raw` in C's place).
/// let mut out: TensorViewMut<'_> = raw.view_mut();
/// view_array_mut::<u8, Ix2>(&mut out)?.column_mut(1).fill(7);
/// assert_eq!(values, [0, 7, 0, 0, 7, 0]);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
///
/// A tensor this consumer holds alone, through
/// [`VersionedTensor::view_mut`](dlpack_abi::dlpack::VersionedTensor::view_mut):
///
/// ```
/// use dlpack_abi::dlpack::{AccessError, Export};
/// use dlpack_abi_ndarray::view_array_mut;
/// use ndarray::IxDyn;
///
/// let mut tensor = Export::new(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]).finish()?;
/// view_array_mut::<f64, IxDyn>(&mut tensor.view_mut()?)?.mapv_inplace(|x| x * 10.0);
/// assert_eq!(tensor.view().as_slice::<f64>()?, [10.0, 20.0, 30.0, 40.0]);
///
/// let mut shared = Export::new(vec![1.0f64], &[1]).read_only().finish()?;
/// assert_eq!(shared.view_mut().unwrap_err(), AccessError::ReadOnly);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub fn view_array_mut<'v, T: Element, D: Dimension>(
    view: &'v mut TensorViewMut<'_>,
) -> Result<ArrayViewMut<'v, T, D>, AccessError> {
    let first = view.typed_mut_ptr::<T>()?;
    let tensor = view.view();
    let layout = Layout::<D>::of(&tensor)?;
    if tensor.may_overlap() {
        return Err(AccessError::Overlapping);
    }
    let shape = layout.shape.clone().strides(layout.abs_strides.clone());
    let base = layout.base(first.cast_const()).cast_mut();
    // SAFETY: as in `view_array`, and no two indices reach one element (checked above);
    // writable and ours alone while `view` is borrowed mutably (`TensorViewMut`'s contract:
    // `&'v mut` is the one borrow for the array's lifetime).
    let mut array = unsafe { ArrayViewMut::from_shape_ptr(shape, base) };
    layout.invert(&mut array);
    Ok(array)
}
