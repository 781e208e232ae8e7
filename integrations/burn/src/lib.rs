//! [burn](https://burn.dev) 0.22's `TensorData` and DLPack (feature `burn`).
//!
//! `TensorData` is defined in `burn-std` and re-exported unchanged as `burn::tensor::TensorData`
//! (and by `burn-tensor` and `burn-backend`), so these functions take and return the very type
//! burn users have; this feature depends on `burn-std` alone, never on a backend. A tensor's
//! data reaches burn through `Tensor::from_data` and leaves it through `Tensor::into_data`.
//!
//! **Out**
//! ([`VersionedTensor::from_tensor_data`](dlpack_abi::dlpack::VersionedTensor::from_tensor_data)):
//! the `TensorData` moves into the export without copying: its `Bytes` become the export's owner,
//! freed by the deleter, and the tensor is a row-major CPU tensor of the same shape. Bytes that
//! burn holds alone (the usual case: `into_data` of a CPU tensor, `TensorData::new`) are exported
//! writable and marked `IS_COPIED`, so the consumer owns them outright; bytes that burn shares
//! (copy-on-write clones, `bytes::Bytes` from a memory map) are exported `READ_ONLY`; bytes still
//! on a device or in a file are read to the host first, by burn, as burn's own reads do. The dtype
//! maps to exactly the same format ([`dlpack_dtype`]); quantized data and 32-bit booleans have none
//! and are refused, and so is a buffer not aligned for its dtype.
//!
//! **In** ([`VersionedTensor::into_tensor_data`](dlpack_abi::dlpack::VersionedTensor::into_tensor_data),
//! [`TensorView::to_tensor_data`](dlpack_abi::dlpack::TensorView::to_tensor_data)): a host tensor
//! whose dtype burn has ([`burn_dtype`]) becomes a `TensorData` of the same shape and dtype.
//! burn's `Bytes` can wrap a foreign allocation (`Bytes::from_controller`), so
//! `into_tensor_data` shares the memory, without copying, when the tensor is this consumer's
//! alone (`IS_COPIED` without `READ_ONLY`, or an export of a uniquely owned Rust buffer),
//! C-contiguous and aligned: burn then owns the imported tensor and runs its deleter when its
//! `Bytes` drop (burn's writes go to the tensor's memory; burn's `clone` copies). Any other
//! tensor is copied, through its strides, into burn's own allocation (one allocation, one pass;
//! the imported tensor is released at once). `to_tensor_data` always copies.
//!
//! ```
//! use burn_std::{DType, TensorData};
//! use dlpack_abi::dlpack::VersionedTensor;
//!
//! let data = TensorData::new(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
//! let address = data.as_bytes().as_ptr();
//! let tensor = VersionedTensor::from_tensor_data(data)?; // zero-copy: the bytes move in
//! assert_eq!(tensor.view().shape(), [2, 3]);
//! assert_eq!(tensor.view().data_ptr().cast_const().cast(), address);
//!
//! let raw = tensor.into_raw(); // a DLManagedTensorVersioned* for C, PyTorch, NumPy, ...
//!
//! // What a consumer does: here this crate takes it back; IS_COPIED makes it the consumer's
//! // alone, so burn shares it again without copying.
//! // SAFETY: `raw` is live and its deleter has not run.
//! let tensor = unsafe { VersionedTensor::from_raw(raw) }?;
//! let back = tensor.into_tensor_data()?;
//! assert_eq!((back.shape().as_slice(), back.dtype()), ([2, 3].as_slice(), DType::F32));
//! assert_eq!(back.as_bytes().as_ptr(), address);
//! assert_eq!(back.as_slice::<f32>()?, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

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
mod export;
mod import;

use core::fmt;

use burn_std::{BoolStore, DType, DataError};

use dlpack_abi::dlpack::{AccessError, Element, ExportError};
use dlpack_abi::raw::DLDataType;

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
/// use dlpack_abi_burn::{dlpack_dtype, BurnError};
/// use dlpack_abi::dlpack::Element;
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
        DType::Bool(BoolStore::Native | BoolStore::U8) => import::BoolByte::DTYPE,
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
/// use dlpack_abi_burn::{burn_dtype, BurnError};
/// use dlpack_abi::dlpack::Element;
/// use dlpack_abi::raw::{kDLFloat, DLDataType};
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

/// Why `TensorData` could not go out as a DLPack tensor, or a tensor come in as `TensorData`.
/// On every error, what was handed over has been dropped, exactly once.
///
/// ```
/// use dlpack_abi_burn::{burn_dtype, BurnError};
/// use dlpack_abi::raw::{kDLComplex, DLDataType};
///
/// let complex = DLDataType { code: kDLComplex, bits: 64, lanes: 1 };
/// let error = burn_dtype(complex).unwrap_err();
/// assert_eq!(error, BurnError::NoBurnDtype { dtype: complex });
/// assert!(error.to_string().contains("which no burn dtype stores"));
/// ```
#[derive(Debug, PartialEq)]
#[non_exhaustive]
pub enum BurnError {
    /// Out: burn's quantized dtype (packed values followed by their scales) has no DLPack dtype.
    Quantized {
        /// The data's dtype.
        dtype: DType,
    },
    /// Out: no DLPack dtype stores elements as this burn dtype does (32-bit booleans).
    NoDlpackDtype {
        /// The data's dtype.
        dtype: DType,
    },
    /// Out: burn could not bring the bytes to the host (a failed file or device read).
    HostAccess(burn_std::AccessError),
    /// Out: the bytes do not start at an address aligned for the dtype (a `bytes::Bytes` slice,
    /// say), so no consumer could read them as elements.
    Misaligned {
        /// The address of the first byte.
        address: usize,
        /// The alignment the dtype needs (its size).
        align: usize,
    },
    /// Out: an extent that does not fit DLPack's `i64`.
    ShapeTooLarge {
        /// The dimension.
        dim: usize,
        /// Its extent.
        extent: usize,
    },
    /// Out: the export refused the description (see [`ExportError`]).
    Export(ExportError),
    /// In: burn has no dtype that stores elements as this DLPack dtype does.
    NoBurnDtype {
        /// The tensor's dtype.
        dtype: DLDataType,
    },
    /// In: typed access refused the tensor (memory the host cannot read, unknown flags, data not
    /// aligned for its dtype).
    Access(AccessError),
    /// In: burn refused the data (see burn's `DataError`).
    Data(DataError),
}

wraps! {
    BurnError::Export(ExportError),
    BurnError::Access(AccessError),
}

impl fmt::Display for BurnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Quantized { dtype } => write!(
                f,
                "burn's quantized dtype {dtype:?} has no DLPack equivalent; dequantize first"
            ),
            Self::NoDlpackDtype { dtype } => write!(
                f,
                "burn's dtype {dtype:?} has no DLPack equivalent (kDLBool is one byte)"
            ),
            Self::HostAccess(error) => write!(f, "burn could not read its bytes: {error}"),
            Self::Misaligned { address, align } => write!(
                f,
                "TensorData's bytes start at {address:#x}, not aligned to the {align} bytes its \
                 dtype needs"
            ),
            Self::ShapeTooLarge { dim, extent } => write!(
                f,
                "TensorData's shape[{dim}] is {extent}, which does not fit DLPack's i64"
            ),
            Self::Export(error) => fmt::Display::fmt(error, f),
            Self::NoBurnDtype { dtype } => write!(
                f,
                "DLTensor.dtype is {dtype}, which no burn dtype stores (burn has 8- to 64-bit \
                 integers, f16, bf16, f32, f64 and one-byte booleans, one lane each)"
            ),
            Self::Access(error) => fmt::Display::fmt(error, f),
            Self::Data(error) => write!(f, "burn refused the data: {error}"),
        }
    }
}

impl core::error::Error for BurnError {}
