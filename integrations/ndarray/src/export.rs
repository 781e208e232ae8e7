//! ndarray out: [`export_array`] (an owned `Array` or `ArcArray`, zero-copy), [`lend_array`] and
//! [`lend_array_mut`] (any array or view, without allocation).
#![allow(unsafe_code)]

use dlpack_abi::dlpack::{
    BorrowedTensor, BorrowedTensorMut, Element, ExportError, TensorDescription, TensorOwner,
    VersionedTensor,
};
use dlpack_abi::raw::{kDLCPU, DLDevice, DLPackFlags};
use ndarray::{ArrayBase, Data, DataMut, Dimension, OwnedArcRepr, OwnedRepr, RawData};

/// The offset (in elements, from the first element) of an array's lowest-addressed element, and
/// the bytes from there to the end of its highest one: `(0, 0)` for an empty array, `None` when
/// it does not fit `isize`/`usize` (never for an array ndarray built: it keeps every offset
/// within `isize`; the description is then refused by the export's reach check).
fn reach(shape: &[usize], strides: &[isize], size: usize) -> Option<(isize, usize)> {
    if shape.contains(&0) {
        return Some((0, 0));
    }
    let (mut lowest, mut highest) = (0isize, 0isize);
    for (&extent, &stride) in shape.iter().zip(strides) {
        // `extent >= 1` (no zero extent).
        let reach = stride.checked_mul(isize::try_from(extent - 1).ok()?)?;
        if reach < 0 {
            lowest = lowest.checked_add(reach)?;
        } else {
            highest = highest.checked_add(reach)?;
        }
    }
    let elements = usize::try_from(highest.checked_sub(lowest)?.checked_add(1)?).ok()?;
    Some((lowest, elements.checked_mul(size)?))
}

/// The description of an ndarray array's memory on the CPU, whose first element is `first`
/// (`as_ptr`, or `as_mut_ptr` for memory to be written, whose provenance it keeps): `data` at its
/// lowest element and `len` exactly the bytes from there to its highest, the first element at
/// `byte_offset`, and its own `usize`/`isize` dims (no copy). The reach is computed here from
/// ndarray's own dims, before any validation, to state the buffer; the export then validates
/// the description and checks that reach against it.
fn describe<S, D>(array: &ArrayBase<S, D>, first: *mut S::Elem) -> TensorDescription<'_>
where
    S: RawData,
    S::Elem: Element,
    D: Dimension,
{
    let size = core::mem::size_of::<S::Elem>();
    // Unrepresentable (never for a real array): a buffer of 0 bytes, which the export refuses.
    let (lowest, len) = reach(array.shape(), array.strides(), size).unwrap_or((0, 0));
    let cpu = DLDevice {
        device_type: kDLCPU,
        device_id: 0,
    };
    let data = first.wrapping_offset(lowest).cast();
    let byte_offset = u64::try_from(lowest.unsigned_abs())
        .unwrap_or(u64::MAX)
        .saturating_mul(u64::try_from(size).unwrap_or(u64::MAX));
    TensorDescription::new(data, len, cpu, S::Elem::DTYPE, &[])
        .with_native_dims(array.shape(), array.strides())
        .with_byte_offset(byte_offset)
}

mod sealed {
    use super::{ArrayBase, Dimension, TensorDescription};

    /// What [`super::OwnedStorage`] stands for: the storage of an array that owns its
    /// elements, and how such an array describes them for its export.
    pub trait Owned: ndarray::Data + Send + Sized + 'static {
        /// The description of `array`'s memory, as [`TensorOwner::describe`] gives it.
        ///
        /// [`TensorOwner::describe`]: dlpack_abi::dlpack::TensorOwner::describe
        fn describe_owned<D: Dimension>(array: &mut ArrayBase<Self, D>) -> TensorDescription<'_>;
    }
}

/// The storage of an array that [`export_array`] takes: `OwnedRepr<T>` (an `Array<T, D>`, for
/// `T: Element + Send`) and `OwnedArcRepr<T>` (an `ArcArray<T, D>`, for
/// `T: Element + Send + Sync`). Sealed: this crate implements it for these two only. It lets
/// generic code take both kinds of array.
///
/// ```
/// use dlpack_abi::dlpack::{ExportError, VersionedTensor};
/// use dlpack_abi_ndarray::{export_array, OwnedStorage};
/// use ndarray::{array, ArrayBase, Dimension};
///
/// fn export_all<S: OwnedStorage, D: Dimension + 'static>(
///     arrays: Vec<ArrayBase<S, D>>,
/// ) -> Result<Vec<VersionedTensor>, ExportError> {
///     arrays.into_iter().map(export_array).collect()
/// }
///
/// let owned = export_all(vec![array![1u8, 2], array![3u8, 4, 5]])?;
/// let shared = export_all(vec![array![1.0f32, 2.0].into_shared()])?;
/// assert_eq!((owned.len(), shared.len()), (2, 1));
/// assert_eq!(owned[1].view().shape(), [3]);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub trait OwnedStorage: sealed::Owned {}

impl<T: Element + Send> sealed::Owned for OwnedRepr<T> {
    fn describe_owned<D: Dimension>(array: &mut ArrayBase<Self, D>) -> TensorDescription<'_> {
        // The consumer may write: the pointer of a unique borrow (an owned array never copies).
        let first = array.as_mut_ptr();
        describe(array, first)
    }
}

impl<T: Element + Send> OwnedStorage for OwnedRepr<T> {}

impl<T: Element + Send + Sync> sealed::Owned for OwnedArcRepr<T> {
    fn describe_owned<D: Dimension>(array: &mut ArrayBase<Self, D>) -> TensorDescription<'_> {
        let read_only = !array.is_unique();
        // Read-only when shared: `as_ptr`, since `as_mut_ptr` would copy (copy-on-write). A
        // unique holder's data may be written through it: nothing else references it.
        let first = array.as_ptr().cast_mut();
        let description = describe(array, first);
        if read_only {
            description.with_flags(DLPackFlags::READ_ONLY)
        } else {
            description
        }
    }
}

impl<T: Element + Send + Sync> OwnedStorage for OwnedArcRepr<T> {}

/// An owned array as the owner of its export.
struct ArrayOwner<S: RawData, D>(ArrayBase<S, D>);

// SAFETY: an owned array keeps its elements in its own allocation, which moving the array does
// not move and which nothing else references; `describe` states exactly the bytes its elements
// reach, from the lowest one, inside that allocation. An `ArcArray`'s shared allocation lives
// while any holder does, this one included; unless this holder is the only one, the export is
// `READ_ONLY` (writing would bypass the other holders' copy-on-write). A unique holder moved
// into the export stays unique (nothing can clone it there).
unsafe impl<S: sealed::Owned, D: Dimension + 'static> TensorOwner for ArrayOwner<S, D> {
    fn describe(&mut self) -> TensorDescription<'_> {
        S::describe_owned(&mut self.0)
    }
    fn ndim(&mut self) -> usize {
        self.0.ndim()
    }
}

/// Exports an owned `Array<T, D>` or `ArcArray<T, D>` as a CPU tensor of `T`'s dtype without
/// copying: the array moves into the export's one allocation (its deleter drops it), keeping
/// its strides (negative ones too) and the offset of its first element. An `ArcArray` that
/// shares its data is exported `READ_ONLY`, so that its copy-on-write is never bypassed; an
/// `Array`, or an `ArcArray` that is its data's only holder, is exported writable.
///
/// For a legacy `DLManagedTensor`, convert the result with
/// [`VersionedTensor::into_legacy`](dlpack_abi::dlpack::VersionedTensor::into_legacy).
///
/// # Errors
/// [`ExportError`] only for an array that DLPack cannot describe: more than
/// [`MAX_NDIM`](dlpack_abi::dlpack::MAX_NDIM) dimensions, or an extent an import would refuse.
///
/// ```
/// use dlpack_abi::raw::DLPackFlags;
/// use dlpack_abi_ndarray::export_array;
/// use ndarray::{array, ArcArray, Ix2};
///
/// let matrix = array![[1.0f64, 2.0], [3.0, 4.0]].reversed_axes();
/// let address = matrix.as_ptr();
/// let tensor = export_array(matrix)?; // zero-copy: the array moves in
/// assert_eq!(tensor.view().strides(), [1, 2]);
/// assert_eq!(tensor.view().data_ptr().cast_const().cast(), address);
///
/// let shared: ArcArray<f32, Ix2> = ArcArray::zeros((2, 2));
/// let holder = shared.clone();
/// let tensor = export_array(shared)?;
/// assert_eq!(tensor.view().flags(), DLPackFlags::READ_ONLY);
/// assert_eq!(tensor.view().data_ptr().cast_const().cast(), holder.as_ptr());
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub fn export_array<S: OwnedStorage, D: Dimension + 'static>(
    array: ArrayBase<S, D>,
) -> Result<VersionedTensor, ExportError> {
    VersionedTensor::from_owner(ArrayOwner(array))
}

/// Lends any ndarray array or view (strides, negative ones too, and the offset of its first
/// element kept) as a `DLTensor` with room for `N` dimensions, without allocation, for as long
/// as it is borrowed (read-only).
///
/// # Errors
/// [`ExportError::Capacity`] when the array has more than `N` dimensions, and
/// [`ExportError::Invalid`] for extents an import would refuse.
///
/// ```
/// use dlpack_abi::dlpack::BorrowedTensor;
/// use dlpack_abi_ndarray::lend_array;
/// use ndarray::{array, s};
///
/// let matrix = array![[1u16, 2, 3], [4, 5, 6]];
/// let view = matrix.slice(s![..;-1, 1..]);
/// let lent: BorrowedTensor<'_, 2> = lend_array(&view)?;
/// assert_eq!(lent.dl_tensor().view().strides(), [-3, 1]);
/// assert!(lent.dl_tensor().view().iter::<u16>()?.eq([5, 6, 2, 3]));
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub fn lend_array<const N: usize, S, D>(
    array: &ArrayBase<S, D>,
) -> Result<BorrowedTensor<'_, N>, ExportError>
where
    S: Data,
    S::Elem: Element,
    D: Dimension,
{
    // SAFETY: the elements are borrowed from an array that owns or borrows them, for the
    // lifetime of the lent tensor, so they stay allocated and nobody writes them meanwhile (an
    // `ArcArray` holder that writes copies first).
    unsafe { BorrowedTensor::from_description(&describe(array, array.as_ptr().cast_mut())) }
}

/// Lends any mutable ndarray array or view as a `DLTensor` for C to write (a kernel's output),
/// with room for `N` dimensions, without allocation, for as long as it is borrowed; an
/// `ArcArray` that shares its data is made unique first (its copy-on-write).
///
/// # Errors
/// As [`lend_array`].
///
/// ```
/// use dlpack_abi::dlpack::BorrowedTensorMut;
/// use dlpack_abi_ndarray::lend_array_mut;
/// use ndarray::{s, Array2};
///
/// let mut matrix = Array2::<i32>::zeros((3, 3));
/// let mut diagonal_block = matrix.slice_mut(s![1.., 1..]);
/// let mut lent: BorrowedTensorMut<'_, 2> = lend_array_mut(&mut diagonal_block)?;
/// lent.dl_tensor_mut().view_mut().set(&[0, 0], 5i32)?;
/// assert_eq!(matrix[[1, 1]], 5);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub fn lend_array_mut<const N: usize, S, D>(
    array: &mut ArrayBase<S, D>,
) -> Result<BorrowedTensorMut<'_, N>, ExportError>
where
    S: DataMut,
    S::Elem: Element,
    D: Dimension,
{
    // Makes a shared `ArcArray` unique (copying) before its strides are read, and gives the
    // pointer C may write through.
    let first = array.as_mut_ptr();
    let description = describe(array, first);
    // SAFETY: the elements are borrowed mutably, for the lifetime of the lent tensor, from an
    // array whose data is now its own (`as_mut_ptr` above), so they may be written and nobody
    // else touches them.
    unsafe { BorrowedTensorMut::from_description(&description) }
}

#[cfg(test)]
mod tests {
    use super::reach;

    #[test]
    fn reach_counts_from_the_lowest_element_and_refuses_what_does_not_fit() {
        assert_eq!(reach(&[], &[], 4), Some((0, 4)));
        assert_eq!(reach(&[2, 3], &[3, 1], 4), Some((0, 24)));
        assert_eq!(reach(&[2, 3], &[-3, -1], 2), Some((-5, 12)));
        assert_eq!(reach(&[2, 0], &[-3, 1], 8), Some((0, 0)));
        assert_eq!(reach(&[3], &[isize::MAX], 1), None);
        assert_eq!(reach(&[2], &[isize::MAX], 2), None);
    }
}
