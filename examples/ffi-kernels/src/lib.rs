//! An FFI crate on dlpack-abi: kernels that C (or Python through ctypes, or TVM) calls with
//! `DLTensor*` and `DLManagedTensorVersioned*`, and a C kernel that Rust calls with its own
//! memory. Every foreign tensor is validated before use; a bad one is refused with a message
//! (`kernels_last_error`), never read. Nothing here allocates but the error text.
//!
//! Return codes of the first kernels: 0 success, 1 the tensor is malformed (validation), 2 it
//! cannot be read as the kernel needs (dtype, device, layout), 3 a NULL output pointer.
//! `kernels_scale_managed` shows the other way: it returns dlpack-abi's stable error code (C
//! `DLPackAbiErrorCode`, one per refusal) and fills the caller's `DLPackAbiErrorReport` with the
//! code and message, so that C can branch on the code; nothing is allocated or to be freed.
#![deny(unsafe_op_in_unsafe_fn)]

use std::cell::RefCell;
use std::ffi::c_char;
use std::fmt::Display;

use dlpack_abi::dlpack::{
    AccessError, BorrowedTensor, BorrowedTensorMut, ImportError, TensorView, TensorViewMut,
    VersionedTensor,
};
use dlpack_abi::error_code::{ErrorCode, ErrorReport, HasErrorCode};
use dlpack_abi::raw::{DLManagedTensorVersioned, DLTensor};

thread_local! {
    /// The message of this thread's last refusal.
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Records `error` and returns `code`.
fn fail(code: i32, error: impl Display) -> i32 {
    LAST_ERROR.with(|last| *last.borrow_mut() = error.to_string());
    code
}

fn invalid(error: ImportError) -> i32 {
    fail(1, error)
}

fn unreadable(error: AccessError) -> i32 {
    fail(2, error)
}

/// `*out = sum of the float32 elements of x`, any strides and byte offset.
///
/// # Safety
/// `x` is NULL or a valid `DLTensor` whose reachable elements stay readable during the call;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn kernels_sum(x: *const DLTensor, out: *mut f64) -> i32 {
    // SAFETY: the caller's contract.
    let x = match unsafe { TensorView::from_raw(x) } {
        Ok(x) => x,
        Err(error) => return invalid(error),
    };
    match x.iter::<f32>() {
        // SAFETY: `out` is NULL or writable (the caller's contract).
        Ok(values) => unsafe { write(out, values.map(f64::from).sum()) },
        Err(error) => unreadable(error),
    }
}

/// `out = k * x` elementwise, for float32 tensors of one shape: `x` with any strides, `out`
/// C-contiguous. Not in place: `x` and `out` must not share memory.
///
/// # Safety
/// As for `kernels_sum`, and `out` is NULL or a valid `DLTensor` whose elements the kernel may
/// write and nothing else (`x` included) reads or writes during the call.
#[no_mangle]
pub unsafe extern "C" fn kernels_scale(x: *const DLTensor, k: f32, out: *mut DLTensor) -> i32 {
    // SAFETY: the caller's contract.
    let x = match unsafe { TensorView::from_raw(x) } {
        Ok(x) => x,
        Err(error) => return invalid(error),
    };
    // SAFETY: the caller's contract: `out` is writable and ours during the call.
    let mut out = match unsafe { TensorViewMut::from_raw(out) } {
        Ok(out) => out,
        Err(error) => return invalid(error),
    };
    if x.shape() != out.view().shape() {
        return fail(2, "x and out differ in shape");
    }
    let (values, results) = match (x.iter::<f32>(), out.as_mut_slice::<f32>()) {
        (Ok(values), Ok(results)) => (values, results),
        (Err(error), _) | (_, Err(error)) => return unreadable(error),
    };
    for (result, value) in results.iter_mut().zip(values) {
        *result = k * value;
    }
    0
}

/// Takes a managed tensor (the consumer's side of DLPack): `*out` = the sum of its float32
/// elements. Its deleter runs exactly once, before this returns, on success and on refusal.
///
/// # Safety
/// `x` is NULL or a live `DLManagedTensorVersioned` whose ownership passes to this call;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn kernels_sum_managed(
    x: *mut DLManagedTensorVersioned,
    out: *mut f64,
) -> i32 {
    // SAFETY: the caller hands the tensor over.
    let x = match unsafe { VersionedTensor::from_raw(x) } {
        Ok(x) => x,
        Err(error) => return invalid(error),
    };
    match x.view().iter::<f32>() {
        // SAFETY: `out` is NULL or writable (the caller's contract).
        Ok(values) => unsafe { write(out, values.map(f64::from).sum()) },
        Err(error) => unreadable(error),
    }
}

/// `x *= k` in place, for a float32 managed tensor that the caller hands over and that this
/// kernel may write (`IS_COPIED`, not `READ_ONLY`); its deleter runs exactly once, before this
/// returns. Returns a `DLPackAbiErrorCode` (`DLPACK_ABI_OK`, `DLPACK_ABI_ACCESS_READ_ONLY`,
/// `DLPACK_ABI_ACCESS_DTYPE_MISMATCH`, ...) and writes the same code and the message to
/// `*report`, on success too.
///
/// # Safety
/// `x` is NULL or a live `DLManagedTensorVersioned` whose ownership passes to this call;
/// `report` is NULL (the code alone is wanted) or writable.
#[no_mangle]
pub unsafe extern "C" fn kernels_scale_managed(
    x: *mut DLManagedTensorVersioned,
    k: f32,
    report: *mut ErrorReport,
) -> i32 {
    // SAFETY: the caller hands the tensor over.
    let mut x = match unsafe { VersionedTensor::from_raw(x) } {
        Ok(x) => x,
        // SAFETY: `report` is NULL or writable (the caller's contract).
        Err(error) => return unsafe { refuse(&error, report) },
    };
    match x.as_mut_slice::<f32>() {
        Ok(values) => {
            values.iter_mut().for_each(|value| *value *= k);
            // SAFETY: as above.
            unsafe { ErrorReport::OK.write_to(report) }
        }
        // SAFETY: as above.
        Err(error) => unsafe { refuse(&error, report) },
    }
}

/// Writes `error`'s code and message to `report` and returns the code.
///
/// # Safety
/// `report` is NULL or writable.
unsafe fn refuse(error: &(impl HasErrorCode + Display), report: *mut ErrorReport) -> i32 {
    debug_assert_ne!(error.error_code(), ErrorCode::OK);
    // SAFETY: the caller's contract.
    unsafe { ErrorReport::from(error).write_to(report) }
}

/// Writes the C name dlpack-abi's Rust table gives `code` (`ErrorCode::name`, NUL-terminated,
/// truncated to `capacity`) and returns its length; 0 (nothing written) for a code the table
/// does not assign. The C test compares it with the header's `dlpack_abi_error_code_name`.
///
/// # Safety
/// `buffer` is NULL or writable for `capacity` bytes.
#[no_mangle]
pub unsafe extern "C" fn kernels_error_code_name(
    code: i32,
    buffer: *mut c_char,
    capacity: usize,
) -> usize {
    match ErrorCode(code).name() {
        // SAFETY: the caller's contract.
        Some(name) => unsafe { copy_out(name, buffer, capacity) },
        None => 0,
    }
}

/// Writes `text` to `buffer` (NUL-terminated, truncated to `capacity`) and returns its full
/// length.
///
/// # Safety
/// `buffer` is NULL or writable for `capacity` bytes.
unsafe fn copy_out(text: &str, buffer: *mut c_char, capacity: usize) -> usize {
    if !buffer.is_null() && capacity > 0 {
        let n = text.len().min(capacity - 1);
        // SAFETY: `buffer` has room for `capacity > n` bytes (caller).
        let buffer = unsafe { std::slice::from_raw_parts_mut(buffer.cast::<u8>(), n + 1) };
        buffer[..n].copy_from_slice(&text.as_bytes()[..n]);
        buffer[n] = 0;
    }
    text.len()
}

/// Writes the last refusal's message (NUL-terminated, truncated to `capacity`) and returns its
/// full length.
///
/// # Safety
/// `buffer` is NULL or writable for `capacity` bytes.
#[no_mangle]
pub unsafe extern "C" fn kernels_last_error(buffer: *mut c_char, capacity: usize) -> usize {
    // SAFETY: the caller's contract.
    LAST_ERROR.with(|last| unsafe { copy_out(&last.borrow(), buffer, capacity) })
}

extern "C" {
    /// The C kernel in c/scale.c: `out = k * in`, float32, at most 2-d, any strides.
    fn c_scale(input: *const DLTensor, k: f32, out: *mut DLTensor) -> i32;
}

/// Rust calling C with its own memory: lends the columns of a 2 x 3 matrix, backwards (a
/// negative stride and a byte offset), to the C kernel, which writes `2 * in` into a Rust
/// buffer. Returns 0 when the buffer holds what it should.
#[no_mangle]
pub extern "C" fn kernels_call_c_scale() -> i32 {
    let matrix = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let mut result = [0.0f32; 6];
    let input = match BorrowedTensor::strided(&matrix, [3, 2], [-1, 3], 2) {
        Ok(input) => input,
        Err(error) => return fail(1, error),
    };
    let mut output = match BorrowedTensorMut::new(&mut result, [3, 2]) {
        Ok(output) => output,
        Err(error) => return fail(1, error),
    };
    // SAFETY: both tensors are validated and borrowed for the call; C writes only `output`.
    let code = unsafe {
        c_scale(
            input.dl_tensor().as_ptr(),
            2.0,
            output.dl_tensor_mut().as_mut_ptr(),
        )
    };
    if code != 0 {
        return fail(2, "c_scale refused the tensors");
    }
    if result != [6.0, 12.0, 4.0, 10.0, 2.0, 8.0] {
        return fail(2, format_args!("c_scale wrote {result:?}"));
    }
    0
}

/// Writes `value` to `out`, or refuses NULL.
///
/// # Safety
/// `out` is NULL or valid for a write.
unsafe fn write(out: *mut f64, value: f64) -> i32 {
    if out.is_null() {
        return fail(3, "out is NULL");
    }
    // SAFETY: non-NULL, so writable (the caller's contract).
    unsafe { out.write(value) };
    0
}
