//! The dtype mapping, both ways: [`dlpack_dtype`] and its inverse [`candle_dtype`], and the
//! one-byte element types of the 8-bit floats Rust has no type for.
#![allow(unsafe_code)]

use candle_core::DType;

use dlpack_abi::dlpack::Element;
use dlpack_abi::raw::{kDLFloat8_e4m3fn, kDLFloat8_e8m0fnu, DLDataType, DLDataTypeCode};

use crate::CandleError;

/// One byte holding an element of the 8-bit DLPack float type `CODE` (typed access to formats
/// Rust has no type for).
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct Byte<const CODE: u8>(pub(crate) u8);

// SAFETY: a `repr(transparent)` `u8`: all zeroes is a valid value.
unsafe impl<const CODE: u8> bytemuck::Zeroable for Byte<CODE> {}
// SAFETY: a `repr(transparent)` `u8`: every bit pattern is valid, no padding; `Copy`, `'static`.
unsafe impl<const CODE: u8> bytemuck::Pod for Byte<CODE> {}

impl<const CODE: u8> Element for Byte<CODE> {
    const DTYPE: DLDataType = DLDataType {
        code: DLDataTypeCode(CODE),
        bits: 8,
        lanes: 1,
    };
}

/// candle's `F8E4M3` (the `float8` crate's: OCP E4M3, bias 7, NaN only at `S.1111.111`).
pub(crate) type E4m3fn = Byte<{ kDLFloat8_e4m3fn.0 }>;
/// candle's `F8E8M0` (stored as raw bytes: OCP E8M0, an unsigned power of two).
pub(crate) type E8m0fnu = Byte<{ kDLFloat8_e8m0fnu.0 }>;

/// The candle dtypes that have a DLPack equivalent, in `DType`'s order.
const MAPPED: [DType; 11] = [
    DType::U8,
    DType::U32,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::BF16,
    DType::F16,
    DType::F32,
    DType::F64,
    DType::F8E4M3,
    DType::F8E8M0,
];

/// The DLPack dtype of exactly the format of candle's `dtype`.
///
/// # Errors
/// [`CandleError::UnsupportedCandleDtype`] for `F6E2M3`, `F6E3M2`, `F4` (candle stores them as
/// raw bytes with no defined size per element) and dtypes newer than this crate.
///
/// ```
/// use candle_core::DType;
/// use dlpack_abi_candle::dlpack_dtype;
/// use dlpack_abi::raw::{kDLBfloat, kDLFloat8_e4m3fn, DLDataType};
///
/// assert_eq!(dlpack_dtype(DType::BF16)?, DLDataType { code: kDLBfloat, bits: 16, lanes: 1 });
/// assert_eq!(dlpack_dtype(DType::F8E4M3)?.code, kDLFloat8_e4m3fn);
/// assert!(dlpack_dtype(DType::F6E2M3).is_err());
/// # Ok::<(), dlpack_abi_candle::CandleError>(())
/// ```
pub fn dlpack_dtype(dtype: DType) -> Result<DLDataType, CandleError> {
    Ok(match dtype {
        DType::U8 => u8::DTYPE,
        DType::U32 => u32::DTYPE,
        DType::I16 => i16::DTYPE,
        DType::I32 => i32::DTYPE,
        DType::I64 => i64::DTYPE,
        DType::BF16 => half::bf16::DTYPE,
        DType::F16 => half::f16::DTYPE,
        DType::F32 => f32::DTYPE,
        DType::F64 => f64::DTYPE,
        DType::F8E4M3 => E4m3fn::DTYPE,
        DType::F8E8M0 => E8m0fnu::DTYPE,
        other => return Err(CandleError::UnsupportedCandleDtype(other)),
    })
}

/// The candle dtype of exactly the format of the DLPack `dtype` (the inverse of
/// [`dlpack_dtype`]).
///
/// # Errors
/// [`CandleError::VectorDtype`] when `lanes != 1`, [`CandleError::UnsupportedDtype`] for an
/// element type candle has no dtype for (`kDLBool`, 8-bit `kDLInt`, `kDLComplex`, ...).
///
/// ```
/// use candle_core::DType;
/// use dlpack_abi_candle::{candle_dtype, CandleError};
/// use dlpack_abi::dlpack::Element;
///
/// assert_eq!(candle_dtype(u32::DTYPE)?, DType::U32);
/// assert!(matches!(candle_dtype(i8::DTYPE), Err(CandleError::UnsupportedDtype(_))));
/// # Ok::<(), CandleError>(())
/// ```
pub fn candle_dtype(dtype: DLDataType) -> Result<DType, CandleError> {
    if dtype.lanes != 1 {
        return Err(CandleError::VectorDtype(dtype));
    }
    MAPPED
        .into_iter()
        .find(|&candle| dlpack_dtype(candle).is_ok_and(|mapped| mapped == dtype))
        .ok_or(CandleError::UnsupportedDtype(dtype))
}
