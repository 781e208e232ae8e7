//! The dtype mapping, both ways: [`dlpack_dtype`] and its inverse [`burn_dtype`].

use burn_std::{BoolStore, DType};

use dlpack_abi::dlpack::{Bool8, Element};
use dlpack_abi::raw::DLDataType;

use crate::BurnError;

/// The DLPack dtype whose elements are stored exactly as burn's `dtype` stores them: floats,
/// bfloat16, signed and unsigned integers of 8 to 64 bits, and booleans of one byte
/// (`BoolStore::Native` and `BoolStore::U8`, both 0 or 1) as `kDLBool` 8. `Flex32` is stored as
/// an `f32` and exported as `kDLFloat` 32 (imported back as `F32`).
///
/// # Errors
/// [`BurnError::Quantized`] for `QFloat` (packed values with their scales appended: no DLPack
/// dtype describes them), [`BurnError::NoDlpackDtype`] for 32-bit booleans (DLPack's
/// `kDLBool` is one byte).
///
/// ```
/// use burn_std::{BoolStore, DType};
/// use dlpack_abi::dlpack::Element;
/// use dlpack_abi_burn::{dlpack_dtype, BurnError};
///
/// assert_eq!(dlpack_dtype(DType::BF16)?, half::bf16::DTYPE);
/// assert_eq!(dlpack_dtype(DType::I16)?, i16::DTYPE);
/// let error = dlpack_dtype(DType::Bool(BoolStore::U32)).unwrap_err();
/// assert_eq!(error, BurnError::NoDlpackDtype { dtype: DType::Bool(BoolStore::U32) });
/// # Ok::<(), BurnError>(())
/// ```
pub fn dlpack_dtype(dtype: DType) -> Result<DLDataType, BurnError> {
    // The Rust element type's own dtype (`Element::DTYPE`, the one home of that rule).
    Ok(match dtype {
        DType::F64 => f64::DTYPE,
        DType::F32 | DType::Flex32 => f32::DTYPE,
        DType::F16 => half::f16::DTYPE,
        DType::BF16 => half::bf16::DTYPE,
        DType::I64 => i64::DTYPE,
        DType::I32 => i32::DTYPE,
        DType::I16 => i16::DTYPE,
        DType::I8 => i8::DTYPE,
        DType::U64 => u64::DTYPE,
        DType::U32 => u32::DTYPE,
        DType::U16 => u16::DTYPE,
        DType::U8 => u8::DTYPE,
        DType::Bool(BoolStore::Native | BoolStore::U8) => Bool8::DTYPE,
        DType::Bool(BoolStore::U32) => return Err(BurnError::NoDlpackDtype { dtype }),
        DType::QFloat(_) => return Err(BurnError::Quantized { dtype }),
    })
}

/// The burn dtype whose elements are stored exactly as `dtype`'s, the inverse of
/// [`dlpack_dtype`]: `kDLBool` 8 becomes `Bool(BoolStore::Native)` (burn's checked accessors
/// refuse bytes other than 0 and 1), `kDLFloat` 32 becomes `F32`.
///
/// # Errors
/// [`BurnError::NoBurnDtype`] for every other dtype: more than one lane, complex, FP8, FP6, FP4,
/// 128-bit integers, 32-bit booleans, codes this crate does not know.
///
/// ```
/// use burn_std::DType;
/// use dlpack_abi::dlpack::Element;
/// use dlpack_abi::raw::{kDLFloat, DLDataType};
/// use dlpack_abi_burn::{burn_dtype, BurnError};
///
/// assert_eq!(burn_dtype(u64::DTYPE)?, DType::U64);
/// let float4 = DLDataType { code: kDLFloat, bits: 32, lanes: 4 };
/// assert_eq!(burn_dtype(float4), Err(BurnError::NoBurnDtype { dtype: float4 }));
/// # Ok::<(), BurnError>(())
/// ```
pub fn burn_dtype(dtype: DLDataType) -> Result<DType, BurnError> {
    // The inverse of `dlpack_dtype`, derived from it (one table): the first burn dtype that
    // maps to `dtype` (`F32` before `Flex32`, `Bool(Native)` before `Bool(U8)`).
    const BURN_DTYPES: [DType; 13] = [
        DType::F64,
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U64,
        DType::U32,
        DType::U16,
        DType::U8,
        DType::Bool(BoolStore::Native),
    ];
    (BURN_DTYPES.into_iter())
        .find(|&burn| dlpack_dtype(burn).ok() == Some(dtype))
        .ok_or(BurnError::NoBurnDtype { dtype })
}
