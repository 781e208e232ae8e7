//! The Rust side of the C exchange test (`tests/c/run.sh`), built as a static library: Rust
//! exports tensors to C (which reads them and calls their deleters), and re-exports tensors that
//! C produced (imported, adapted, or viewed differently) back to C. Every owner Rust creates
//! counts its drops (`counted.rs`), which C reads with `rust_drops`.

use std::ptr;

use dlpack_abi::dlpack::{Export, LegacyTensor, TensorDescription, TensorOwner, VersionedTensor};
use dlpack_abi::raw::{DLManagedTensor, DLManagedTensorVersioned};

mod counted;

use counted::{count_drop, Counted};

/// `n` f32 values 0, 1, ..., n-1 as a 1-D versioned tensor; NULL if `n` is negative.
#[no_mangle]
pub extern "C" fn rust_export_f32(n: i64) -> *mut DLManagedTensorVersioned {
    let Ok(len) = usize::try_from(n) else {
        return ptr::null_mut();
    };
    let values = Counted((0..len).map(|i| i as f32).collect());
    Export::new(values, &[n])
        .finish()
        .map_or(ptr::null_mut(), VersionedTensor::into_raw)
}

/// The transpose of the 2 x 3 i32 matrix [[0, 1, 2], [10, 11, 12]]: shape [3, 2], strides
/// [1, 3], starting at element `offset` of a buffer with `offset` leading -1s.
#[no_mangle]
pub extern "C" fn rust_export_transposed(offset: usize) -> *mut DLManagedTensorVersioned {
    let mut values = vec![-1; offset];
    values.extend([0, 1, 2, 10, 11, 12]);
    Export::new(Counted(values), &[3, 2])
        .strides(&[1, 3])
        .first_element(offset)
        .finish()
        .map_or(ptr::null_mut(), VersionedTensor::into_raw)
}

/// A read-only u8 tensor [7, 8, 9].
#[no_mangle]
pub extern "C" fn rust_export_read_only() -> *mut DLManagedTensorVersioned {
    Export::new(Counted(vec![7u8, 8, 9]), &[3])
        .read_only()
        .finish()
        .map_or(ptr::null_mut(), VersionedTensor::into_raw)
}

/// An empty [0, 4] f64 tensor.
#[no_mangle]
pub extern "C" fn rust_export_empty() -> *mut DLManagedTensorVersioned {
    Export::new(Counted(Vec::<f64>::with_capacity(4)), &[0, 4])
        .finish()
        .map_or(ptr::null_mut(), VersionedTensor::into_raw)
}

/// `n` i16 values 0, -1, -2, ... as a legacy tensor.
#[no_mangle]
pub extern "C" fn rust_export_legacy(n: i64) -> *mut DLManagedTensor {
    let Ok(len) = usize::try_from(n) else {
        return ptr::null_mut();
    };
    let values = Counted((0..len).map(|i| -(i as i16)).collect());
    Export::new(values, &[n])
        .finish_legacy()
        .map_or(ptr::null_mut(), LegacyTensor::into_raw)
}

/// Imports a C tensor and gives it back as legacy; NULL (and the tensor deleted) if it cannot be.
///
/// # Safety
/// `tensor` is a live managed tensor handed over to Rust.
#[no_mangle]
pub unsafe extern "C" fn rust_reexport_legacy(
    tensor: *mut DLManagedTensorVersioned,
) -> *mut DLManagedTensor {
    // SAFETY: the caller hands the tensor over.
    match unsafe { VersionedTensor::from_raw(tensor) } {
        Ok(imported) => imported
            .into_legacy()
            .map_or(ptr::null_mut(), LegacyTensor::into_raw),
        Err(_) => ptr::null_mut(),
    }
}

/// Imports a legacy C tensor and gives it back upgraded to a (read-only) versioned one.
///
/// # Safety
/// `tensor` is a live legacy managed tensor handed over to Rust.
#[no_mangle]
pub unsafe extern "C" fn rust_upgrade(
    tensor: *mut DLManagedTensor,
) -> *mut DLManagedTensorVersioned {
    // SAFETY: the caller hands the tensor over.
    match unsafe { LegacyTensor::from_raw(tensor) } {
        Ok(imported) => imported.into_versioned().into_raw(),
        Err(_) => ptr::null_mut(),
    }
}

/// An imported 2-D tensor viewed transposed: the owner of a new export.
struct Transposed {
    inner: VersionedTensor,
    shape: [i64; 2],
    strides: [i64; 2],
}

impl Drop for Transposed {
    fn drop(&mut self) {
        count_drop();
    }
}

// SAFETY: the memory the imported tensor reaches (kept alive by it), with its two dimensions
// swapped; the export checks that the transpose stays inside it. Flags are kept (read-only
// stays read-only), and nothing in Rust references the memory.
unsafe impl TensorOwner for Transposed {
    fn describe(&mut self) -> TensorDescription<'_> {
        let mut description = TensorDescription::of(&self.inner.view());
        description.shape = dlpack_abi::dlpack::Dims::I64(&self.shape);
        description.with_strides(&self.strides)
    }
    fn ndim(&mut self) -> usize {
        2
    }
}

/// Imports a 2-D C tensor and re-exports its transpose (zero copy; the original is deleted when
/// the transpose is). NULL, with the tensor deleted, if it is not 2-D.
///
/// # Safety
/// `tensor` is a live managed tensor handed over to Rust.
#[no_mangle]
pub unsafe extern "C" fn rust_reexport_transposed(
    tensor: *mut DLManagedTensorVersioned,
) -> *mut DLManagedTensorVersioned {
    // SAFETY: the caller hands the tensor over.
    let Ok(inner) = (unsafe { VersionedTensor::from_raw(tensor) }) else {
        return ptr::null_mut();
    };
    let view = inner.view();
    if view.ndim() != 2 {
        return ptr::null_mut();
    }
    let (shape, strides) = (view.shape(), view.strides());
    let transposed = Transposed {
        shape: [shape[1], shape[0]],
        strides: [strides.get(1).unwrap_or(1), strides.get(0).unwrap_or(1)],
        inner,
    };
    VersionedTensor::from_owner(transposed).map_or(ptr::null_mut(), VersionedTensor::into_raw)
}
