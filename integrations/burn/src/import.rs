//! DLPack tensors in as `TensorData`: shared through a `Bytes` controller that owns the tensor,
//! or copied through the strides.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem::MaybeUninit;

use burn_std::{
    AccessError as BurnAccessError, AccessPolicy, AllocationController, AllocationProperty,
    BoolStore, Bytes, DType, Shape, TensorData,
};

use dlpack_abi::dlpack::{Bool8, Element, TensorView, VersionedTensor};

use crate::{burn_dtype, BurnError};

/// Calls `$f::<T>($args)` with the Rust element type `T` stored as burn's `$dtype` (one of
/// [`burn_dtype`]'s answers).
macro_rules! with_element {
    ($dtype:expr, $f:ident($($args:expr),*)) => {
        match $dtype {
            DType::F64 => $f::<f64>($($args),*),
            DType::F32 | DType::Flex32 => $f::<f32>($($args),*),
            DType::F16 => $f::<half::f16>($($args),*),
            DType::BF16 => $f::<half::bf16>($($args),*),
            DType::I64 => $f::<i64>($($args),*),
            DType::I32 => $f::<i32>($($args),*),
            DType::I16 => $f::<i16>($($args),*),
            DType::I8 => $f::<i8>($($args),*),
            DType::U64 => $f::<u64>($($args),*),
            DType::U32 => $f::<u32>($($args),*),
            DType::U16 => $f::<u16>($($args),*),
            DType::U8 => $f::<u8>($($args),*),
            DType::Bool(BoolStore::Native | BoolStore::U8) => $f::<Bool8>($($args),*),
            dtype @ (DType::Bool(BoolStore::U32) | DType::QFloat(_)) => {
                Err(BurnError::NoDlpackDtype { dtype })
            }
        }
    };
}

/// The burn dtype and shape of a view.
fn burn_layout(view: &TensorView<'_>) -> Result<(DType, Shape), BurnError> {
    let dtype = burn_dtype(view.dtype())?;
    // Validated: every extent is >= 0 and fits `usize` (the element count does).
    let shape: Vec<usize> = view
        .shape()
        .iter()
        .map(|&extent| usize::try_from(extent).unwrap_or(usize::MAX))
        .collect();
    Ok((dtype, Shape::from(shape)))
}

/// Copies the elements of `view`, in row-major order through its strides, into burn's own
/// allocation.
fn copied<T: Element + Send + Sync>(
    view: &TensorView<'_>,
    dtype: DType,
    shape: Shape,
) -> Result<TensorData, BurnError> {
    let elements: Vec<T> = view.iter::<T>()?.collect();
    TensorData::try_from_bytes(Bytes::from_elems(elements), shape, dtype).map_err(BurnError::Data)
}

/// An imported tensor as the allocation behind burn's `Bytes`: its elements are the bytes, and
/// dropping it runs the tensor's deleter.
struct TensorAllocation {
    /// Host-accessible, C-contiguous, aligned for its dtype, and this consumer's alone.
    tensor: VersionedTensor,
    /// The elements' bytes (typed access for the tensor's element type).
    bytes: fn(&VersionedTensor) -> &[u8],
    /// The elements' bytes, mutably.
    bytes_mut: fn(&mut VersionedTensor) -> &mut [u8],
    /// The alignment `shared` checked: the element type's.
    align: usize,
}

/// The tensor's elements as bytes; checked by `shared` on the same tensor, which cannot change
/// (a panic, never a short slice: burn trusts the length it was given).
fn element_bytes<T: Element>(tensor: &VersionedTensor) -> &[u8] {
    bytemuck::cast_slice((tensor.view().as_slice::<T>()).expect("checked by `shared`"))
}

/// The tensor's elements as mutable bytes; exclusive (checked by `shared`, as above).
fn element_bytes_mut<T: Element>(tensor: &mut VersionedTensor) -> &mut [u8] {
    bytemuck::cast_slice_mut((tensor.as_mut_slice::<T>()).expect("checked by `shared`"))
}

// burn's `Bytes` is `Send` and `Sync` for every controller (a blanket impl that trusts them):
// ours must be, as the imported tensor is.
static_assertions::assert_impl_all!(TensorAllocation: Send, Sync);

impl AllocationController for TensorAllocation {
    fn alloc_align(&self) -> usize {
        self.align
    }

    fn property(&self) -> AllocationProperty {
        AllocationProperty::Other
    }

    fn memory(&self, _policy: AccessPolicy) -> Result<&[MaybeUninit<u8>], BurnAccessError> {
        let bytes = (self.bytes)(&self.tensor);
        // SAFETY: `MaybeUninit<u8>` has `u8`'s layout, and initialised bytes are valid ones;
        // the slice is only read, for the borrow of `self`.
        Ok(unsafe { core::slice::from_raw_parts(bytes.as_ptr().cast(), bytes.len()) })
    }

    unsafe fn memory_mut(
        &mut self,
        _policy: AccessPolicy,
    ) -> Result<&mut [MaybeUninit<u8>], BurnAccessError> {
        let bytes = (self.bytes_mut)(&mut self.tensor);
        // SAFETY: `MaybeUninit<u8>` has `u8`'s layout; the caller writes only initialised bytes
        // (this method's contract), so the elements stay initialised; the slice is the one
        // borrow of the tensor's memory for the borrow of `self`.
        Ok(unsafe { core::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), bytes.len()) })
    }
}

/// Wraps `tensor` as burn's `Bytes` without copying, if it is exclusive, C-contiguous and aligned
/// for `T`; otherwise hands it back.
fn shared<T: Element>(
    mut tensor: VersionedTensor,
) -> Result<Result<Bytes, VersionedTensor>, BurnError> {
    if tensor.as_mut_slice::<T>().is_err() {
        return Ok(Err(tensor));
    }
    let len = tensor.view().byte_size();
    let controller = TensorAllocation {
        tensor,
        bytes: element_bytes::<T>,
        bytes_mut: element_bytes_mut::<T>,
        align: core::mem::align_of::<T>(),
    };
    // SAFETY: `len` is the tensor's byte size, exactly the initialised bytes `memory` returns
    // (its C-contiguous elements, checked above and fixed for the tensor's life).
    Ok(Ok(unsafe {
        Bytes::from_controller(Box::new(controller), len)
    }))
}

/// Copies a host tensor into a new `TensorData` of the same shape and burn dtype
/// ([`burn_dtype`]), reading through its strides: one allocation (burn's own `Bytes`) and one
/// pass over the elements. The tensor is untouched.
///
/// # Errors
/// [`BurnError::NoBurnDtype`] for a dtype burn does not have, [`BurnError::Access`] for
/// memory the host cannot read, unknown flags or misaligned data.
///
/// ```
/// use burn_std::DType;
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_burn::copy_tensor_data;
///
/// // The transpose of a 2 x 3 row-major matrix.
/// let tensor = Export::new(vec![0u16, 1, 2, 3, 4, 5], &[3, 2]).strides(&[1, 3]).finish()?;
/// let data = copy_tensor_data(&tensor.view())?;
/// assert_eq!((data.shape().as_slice(), data.dtype()), ([3, 2].as_slice(), DType::U16));
/// assert_eq!(data.as_slice::<u16>()?, [0, 3, 1, 4, 2, 5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn copy_tensor_data(view: &TensorView<'_>) -> Result<TensorData, BurnError> {
    let (dtype, shape) = burn_layout(view)?;
    with_element!(dtype, copied(view, dtype, shape))
}

/// Imports a tensor as `TensorData` of the same shape and burn dtype ([`burn_dtype`]).
///
/// Zero-copy when the tensor is this consumer's alone (`IS_COPIED` without `READ_ONLY`, or an
/// export of a uniquely owned Rust buffer, such as [`export_tensor_data`](crate::export_tensor_data)'s),
/// C-contiguous and aligned: burn's `Bytes` (`Bytes::from_controller`) then own the tensor and
/// run its deleter when they drop, and burn's writes go to its memory (burn's `clone` copies).
/// Any other tensor is copied through its strides, as [`copy_tensor_data`] copies, into burn's
/// own allocation, and released at once.
///
/// # Errors
/// As [`copy_tensor_data`]; the tensor is released, once.
///
/// ```
/// use burn_std::DType;
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_burn::import_tensor_data;
///
/// // A Vec exported by dlpack-abi is the consumer's alone: shared with burn.
/// let values = vec![1.5f64, 2.5, 3.5, 4.5];
/// let address = values.as_ptr();
/// let data = import_tensor_data(Export::new(values, &[2, 2]).finish()?)?;
/// assert_eq!(data.as_bytes().as_ptr().cast(), address);
///
/// // A read-only tensor (a shared buffer, say) is copied.
/// let frozen = Export::new(vec![7i8, 8], &[2]).read_only().finish()?;
/// let address = frozen.view().data_ptr();
/// let data = import_tensor_data(frozen)?;
/// assert_ne!(data.as_bytes().as_ptr().cast(), address.cast_const());
/// assert_eq!((data.dtype(), data.as_slice::<i8>()?), (DType::I8, [7i8, 8].as_slice()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_tensor_data(tensor: VersionedTensor) -> Result<TensorData, BurnError> {
    let (dtype, shape) = burn_layout(&tensor.view())?;
    match with_element!(dtype, shared(tensor))? {
        Ok(bytes) => TensorData::try_from_bytes(bytes, shape, dtype).map_err(BurnError::Data),
        Err(tensor) => copy_tensor_data(&tensor.view()),
    }
}
