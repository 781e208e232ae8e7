//! The Rust side of the C import test (`tests/c/run.sh`), built as a static library: C code
//! produces tensors and hands them over through these `extern "C"` functions; Rust imports them,
//! reads them, and drops them (calling the C deleter), reporting what it saw as text.

use std::ffi::{c_char, c_int};
use std::fmt::Write;

use dlpack_abi::dlpack::{
    LegacyTensor, ManagedStruct, ManagedTensor, TensorError, VersionedTensor,
};
use dlpack_abi::raw::{DLManagedTensor, DLManagedTensorVersioned};

/// Writes `text` as a NUL-terminated string into `out[..capacity]`, truncating.
///
/// # Safety
/// `out` points to `capacity >= 1` writable bytes.
unsafe fn write_c_string(text: &str, out: *mut c_char, capacity: usize) {
    let n = text.len().min(capacity - 1);
    // SAFETY: `n + 1 <= capacity` bytes are writable (the caller's contract).
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr().cast::<c_char>(), out, n);
        *out.add(n) = 0;
    }
}

/// Describes an imported i32 tensor: shape, strides, contiguity and the elements in row-major
/// order (read through the strides).
fn describe<M: ManagedStruct>(tensor: &ManagedTensor<M>) -> Result<String, TensorError> {
    let view = tensor.view();
    let mut text = format!(
        "shape={:?} strides={:?} c={} f={} elements=",
        view.shape(),
        view.strides(),
        u8::from(view.is_c_contiguous()),
        u8::from(view.is_f_contiguous())
    );
    let values: Vec<String> = view.iter::<i32>()?.map(|v| v.to_string()).collect();
    write!(text, "{}", values.join(",")).unwrap();
    Ok(text)
}

fn report(result: Result<String, TensorError>, out: *mut c_char, capacity: usize) -> c_int {
    let (code, text) = match result {
        Ok(text) => (0, text),
        Err(error) => (1, format!("error: {error}")),
    };
    // SAFETY: the C caller passes a buffer of `capacity` bytes.
    unsafe { write_c_string(&text, out, capacity) };
    code
}

/// Imports a versioned tensor (taking ownership), describes it into `out` and drops it.
/// Returns 0 on success, 1 if the import or the read was refused (the message says why).
///
/// # Safety
/// `tensor` is NULL or a live tensor handed over by the caller; `out` has `capacity >= 1` bytes.
#[no_mangle]
pub unsafe extern "C" fn rust_import_versioned(
    tensor: *mut DLManagedTensorVersioned,
    out: *mut c_char,
    capacity: usize,
) -> c_int {
    // SAFETY: the caller hands the tensor over (this function's contract).
    let result = unsafe { VersionedTensor::from_raw(tensor) }
        .map_err(TensorError::from)
        .and_then(|t| describe(&t));
    report(result, out, capacity)
}

/// As [`rust_import_versioned`], for a legacy tensor.
///
/// # Safety
/// As for [`rust_import_versioned`].
#[no_mangle]
pub unsafe extern "C" fn rust_import_legacy(
    tensor: *mut DLManagedTensor,
    out: *mut c_char,
    capacity: usize,
) -> c_int {
    // SAFETY: as above.
    let result = unsafe { LegacyTensor::from_raw(tensor) }
        .map_err(TensorError::from)
        .and_then(|t| describe(&t));
    report(result, out, capacity)
}

/// Imports, writes `value` into every element through the safe mutable slice (granted only for
/// IS_COPIED tensors, refused for READ_ONLY and shared ones), then drops. Returns 0 on success,
/// 1 on refusal.
///
/// # Safety
/// As for [`rust_import_versioned`].
#[no_mangle]
pub unsafe extern "C" fn rust_fill_versioned(
    tensor: *mut DLManagedTensorVersioned,
    value: i32,
    out: *mut c_char,
    capacity: usize,
) -> c_int {
    // SAFETY: as above.
    let result = unsafe { VersionedTensor::from_raw(tensor) }
        .map_err(TensorError::from)
        .and_then(|mut t| {
            t.as_mut_slice::<i32>()?.fill(value);
            Ok(String::from("filled"))
        });
    report(result, out, capacity)
}
