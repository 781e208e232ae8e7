//! The integrations' error types: `code()` for each, in the 1xxx ranges (10xx arrow-rs, 11xx
//! safetensors, 12xx candle, 13xx burn, 14xx image, 15xx cudarc, 16xx the Python borrow registry). Variants that hold one of this
//! crate's errors have its code; variants that repeat an [`AccessError`](crate::dlpack::AccessError)
//! contract have the `ACCESS_` code.

#[allow(unused_imports)] // Used only with some of the features.
use super::{ErrorCode, HasErrorCode};

#[cfg(feature = "arrow-rs")]
use crate::arrow_rs::InteropError;
#[cfg(feature = "burn")]
use crate::burn::BurnError;
#[cfg(feature = "candle")]
use crate::candle::CandleError;
#[cfg(feature = "cudarc")]
use crate::cudarc::CudaError;
#[cfg(feature = "image")]
use crate::image::TensorImageError;
#[cfg(feature = "pyo3")]
use crate::python::BorrowError;
#[cfg(feature = "safetensors")]
use crate::safetensors::SafetensorsError;

#[cfg(feature = "arrow-rs")]
codes! {
    /// This error's stable [`ErrorCode`]: [`ARROW_RS_REFUSED`](ErrorCode::ARROW_RS_REFUSED)
    /// when arrow-rs refused, else the code of this crate's error it holds.
    ///
    /// ```
    /// use dlpack_abi::arrow::{ArrowError, ValidationError};
    /// use dlpack_abi::arrow_rs::InteropError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let error = InteropError::Arrow(ArrowError::Validation(ValidationError::Released));
    /// assert_eq!(error.code(), ErrorCode::ARROW_RELEASED);
    /// let refused = InteropError::ArrowRs(arrow_schema::ArrowError::SchemaError("no".into()));
    /// assert_eq!(refused.code(), ErrorCode::ARROW_RS_REFUSED);
    /// ```
    InteropError {
        Self::ArrowRs(_) => ARROW_RS_REFUSED,
    }
    wraps {
        Self::Arrow(error) => error,
        Self::Stream(error) => error,
    }
}

#[cfg(feature = "safetensors")]
codes! {
    /// This error's stable [`ErrorCode`] (11xx, `DLPACK_ABI_SAFETENSORS_*` in C); for
    /// [`Export`](Self::Export), the code of the [`ExportError`](crate::dlpack::ExportError).
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi::safetensors::SafetensorsError;
    ///
    /// let error = SafetensorsError::NoTensor { name: "weight".into() };
    /// assert_eq!(error.code(), ErrorCode::SAFETENSORS_NO_TENSOR);
    /// ```
    SafetensorsError {
        Self::Io(_) => SAFETENSORS_IO,
        Self::Format(_) => SAFETENSORS_FORMAT,
        Self::NoTensor { .. } => SAFETENSORS_NO_TENSOR,
        Self::UnsupportedDtype { .. } => SAFETENSORS_UNSUPPORTED_DTYPE,
        Self::Misaligned { .. } => SAFETENSORS_MISALIGNED,
        Self::ExtentTooLarge { .. } => SAFETENSORS_EXTENT_TOO_LARGE,
    }
    wraps {
        Self::Export { error, .. } => error,
    }
}

#[cfg(feature = "candle")]
codes! {
    /// This error's stable [`ErrorCode`] (12xx, `DLPACK_ABI_CANDLE_*` in C); for
    /// [`Export`](Self::Export) and [`Access`](Self::Access), the code of the error they hold.
    ///
    /// ```
    /// use dlpack_abi::candle::CandleError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// assert_eq!(CandleError::DimsOverflow.code(), ErrorCode::CANDLE_DIMS_OVERFLOW);
    /// ```
    CandleError {
        Self::UnsupportedCandleDevice(_) => CANDLE_UNSUPPORTED_CANDLE_DEVICE,
        Self::UnsupportedCandleDtype(_) => CANDLE_UNSUPPORTED_CANDLE_DTYPE,
        Self::UnsupportedDevice(_) => CANDLE_UNSUPPORTED_DEVICE,
        Self::UnsupportedDtype(_) => CANDLE_UNSUPPORTED_DTYPE,
        Self::VectorDtype(_) => CANDLE_VECTOR_DTYPE,
        Self::DimsOverflow => CANDLE_DIMS_OVERFLOW,
        Self::Candle(_) => CANDLE_REFUSED,
    }
    wraps {
        Self::Export(error) => error,
        Self::Access(error) => error,
    }
}

#[cfg(feature = "burn")]
codes! {
    /// This error's stable [`ErrorCode`] (13xx, `DLPACK_ABI_BURN_*` in C); for
    /// [`Export`](Self::Export) and [`Access`](Self::Access), the code of the error they hold.
    ///
    /// ```
    /// use dlpack_abi::burn::BurnError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let error = BurnError::Misaligned { address: 0x1001, align: 4 };
    /// assert_eq!(error.code(), ErrorCode::BURN_MISALIGNED);
    /// ```
    BurnError {
        Self::Quantized { .. } => BURN_QUANTIZED,
        Self::NoDlpackDtype { .. } => BURN_NO_DLPACK_DTYPE,
        Self::HostAccess(_) => BURN_HOST_ACCESS,
        Self::Misaligned { .. } => BURN_MISALIGNED,
        Self::ShapeTooLarge { .. } => BURN_SHAPE_TOO_LARGE,
        Self::NoBurnDtype { .. } => BURN_NO_BURN_DTYPE,
        Self::Data(_) => BURN_DATA,
    }
    wraps {
        Self::Export(error) => error,
        Self::Access(error) => error,
    }
}

#[cfg(feature = "image")]
codes! {
    /// This error's stable [`ErrorCode`] (14xx, `DLPACK_ABI_IMAGE_*` in C); the variants that
    /// repeat typed access's refusals (host access, dtype, contiguity) have its `ACCESS_` codes.
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi::image::TensorImageError;
    ///
    /// assert_eq!(TensorImageError::Ndim { found: 2 }.code(), ErrorCode::IMAGE_NDIM);
    /// assert_eq!(TensorImageError::NotContiguous.code(), ErrorCode::ACCESS_NOT_CONTIGUOUS);
    /// ```
    TensorImageError {
        Self::Lanes { .. } => IMAGE_LANES,
        Self::Ndim { .. } => IMAGE_NDIM,
        Self::Channels { .. } => IMAGE_CHANNELS,
        Self::TooLarge { .. } => IMAGE_TOO_LARGE,
    }
    same {
        Self::NotHostAccessible { .. } => ACCESS_NOT_HOST_ACCESSIBLE,
        Self::DtypeMismatch { .. } => ACCESS_DTYPE_MISMATCH,
        Self::NotContiguous => ACCESS_NOT_CONTIGUOUS,
    }
    wraps {
        Self::Access(error) => error,
    }
}

#[cfg(feature = "cudarc")]
codes! {
    /// This error's stable [`ErrorCode`] (15xx, `DLPACK_ABI_CUDA_*` in C); for the variants
    /// that hold one of this crate's errors, its code.
    ///
    /// ```
    /// use dlpack_abi::cudarc::CudaError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let error = CudaError::OtherDevice { device_id: 1, ordinal: 0 };
    /// assert_eq!(error.code(), ErrorCode::CUDA_OTHER_DEVICE);
    /// ```
    CudaError {
        Self::Driver(_) => CUDA_DRIVER,
        Self::NotCuda { .. } => CUDA_NOT_CUDA,
        Self::OtherDevice { .. } => CUDA_OTHER_DEVICE,
    }
    wraps {
        Self::Access(error) => error,
        Self::Export(error) => error,
        Self::Bridge(error) => error,
        Self::Order(error) => error,
    }
}

#[cfg(feature = "pyo3")]
codes! {
    /// This error's stable [`ErrorCode`] (16xx, `DLPACK_ABI_PYTHON_*` in C).
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi::python::BorrowError;
    ///
    /// assert_eq!(BorrowError::Shared.code(), ErrorCode::PYTHON_SHARED);
    /// ```
    BorrowError {
        Self::BorrowedMutably => PYTHON_BORROWED_MUTABLY,
        Self::Shared => PYTHON_SHARED,
        Self::Copied => PYTHON_COPIED,
    }
}

/// The codes of the enabled integrations' own variants.
#[cfg(test)]
pub(super) fn leaf_codes() -> alloc::vec::Vec<ErrorCode> {
    #[allow(unused_mut)]
    let mut codes = alloc::vec::Vec::new();
    #[cfg(feature = "arrow-rs")]
    codes.extend_from_slice(InteropError::LEAF_CODES);
    #[cfg(feature = "safetensors")]
    codes.extend_from_slice(SafetensorsError::LEAF_CODES);
    #[cfg(feature = "candle")]
    codes.extend_from_slice(CandleError::LEAF_CODES);
    #[cfg(feature = "burn")]
    codes.extend_from_slice(BurnError::LEAF_CODES);
    #[cfg(feature = "image")]
    codes.extend_from_slice(TensorImageError::LEAF_CODES);
    #[cfg(feature = "cudarc")]
    codes.extend_from_slice(CudaError::LEAF_CODES);
    #[cfg(feature = "pyo3")]
    codes.extend_from_slice(BorrowError::LEAF_CODES);
    codes
}

/// The first code of each enabled integration's range.
#[cfg(test)]
pub(super) fn enabled_ranges() -> alloc::vec::Vec<i32> {
    [
        (cfg!(feature = "arrow-rs"), 1000),
        (cfg!(feature = "safetensors"), 1100),
        (cfg!(feature = "candle"), 1200),
        (cfg!(feature = "burn"), 1300),
        (cfg!(feature = "image"), 1400),
        (cfg!(feature = "cudarc"), 1500),
        (cfg!(feature = "pyo3"), 1600),
    ]
    .into_iter()
    .filter_map(|(on, start)| on.then_some(start))
    .collect()
}
