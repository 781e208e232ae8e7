//! `dlpack_sum_f32`: validates a borrowed `DLTensor` and sums its `f32` elements through the
//! strides, without `alloc`. Built by `size.sh` for `thumbv7em-none-eabihf` to measure its code
//! size next to the hand-written C in `sum_f32.c`, which returns the same codes.
#![no_std]

use dlpack_abi::dlpack::{AccessError, ImportError, TensorView};
use dlpack_abi::raw::DLTensor;

/// Sums the `f32` elements of `t` in row-major order into `*out`. Returns 0, or the negative
/// code of the first check that failed (the same codes as `dlpack_sum_f32_c`).
///
/// # Safety
/// `t` is NULL or a valid `DLTensor` whose shape, strides and reachable data stay unwritten for
/// the call; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn dlpack_sum_f32(t: *const DLTensor, out: *mut f32) -> i32 {
    // SAFETY: forwarded from the caller.
    let view = match unsafe { TensorView::from_raw(t) } {
        Ok(view) => view,
        Err(error) => return import_code(&error),
    };
    let elements = match view.iter::<f32>() {
        Ok(elements) => elements,
        Err(error) => return access_code(&error),
    };
    // SAFETY: `out` is valid for a write (caller).
    unsafe { out.write(elements.fold(0.0, |sum, x| sum + x)) };
    0
}

fn import_code(error: &ImportError) -> i32 {
    match error {
        ImportError::NullTensor => -1,
        ImportError::NegativeNdim { .. } => -2,
        ImportError::TooManyDims { .. } => -3,
        ImportError::ZeroLanes { .. } => -4,
        ImportError::ZeroBits { .. } => -5,
        ImportError::SubByteBits { .. } => -6,
        ImportError::NullShape { .. } => -7,
        ImportError::NegativeExtent { .. } => -8,
        ImportError::SizeOverflow { .. } => -9,
        ImportError::ByteOffsetOverflow { .. } => -10,
        ImportError::NullData { .. } => -11,
        ImportError::StridesOverflow { .. } => -12,
        ImportError::AddressOverflow { .. } => -13,
        _ => -99,
    }
}

fn access_code(error: &AccessError) -> i32 {
    match error {
        AccessError::NotHostAccessible { .. } => -20,
        AccessError::DtypeMismatch { .. } => -21,
        AccessError::Misaligned { .. } => -22,
        _ => -99,
    }
}

#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
