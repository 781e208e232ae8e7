//! [`CandleError`], and its stable numeric [`codes`] (12xx).

use core::fmt;

use candle_core::{DType, DeviceLocation};

use dlpack_abi::dlpack::{AccessError, ExportError};
use dlpack_abi::error_code::{ErrorCode, HasErrorCode};
use dlpack_abi::raw::{DLDataType, DLDevice};

/// Why a candle export or import failed.
///
/// Each variant has a stable numeric code ([`code`](Self::code), in [`codes`]); the variants
/// that hold one of dlpack-abi's errors have that error's code.
///
/// ```
/// use candle_core::DType;
/// use dlpack_abi_candle::{codes, CandleError};
///
/// let error = CandleError::UnsupportedCandleDtype(DType::F4);
/// assert_eq!(error.to_string(), "candle's F4 has no DLPack dtype of exactly its format");
/// assert_eq!(error.code(), codes::UNSUPPORTED_CANDLE_DTYPE);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum CandleError {
    /// Export: the candle tensor is not on the CPU (CUDA and Metal tensors are not exported).
    UnsupportedCandleDevice(DeviceLocation),
    /// Export: the candle dtype has no DLPack dtype of exactly its format (`F6E2M3`, `F6E3M2`,
    /// `F4`, and dtypes newer than this crate).
    UnsupportedCandleDtype(DType),
    /// Import: the tensor is not in CPU memory (`kDLCPU`).
    UnsupportedDevice(DLDevice),
    /// Import: candle has no dtype for the tensor's element type.
    UnsupportedDtype(DLDataType),
    /// Import: a vector element type (`lanes != 1`); candle's elements are scalars.
    VectorDtype(DLDataType),
    /// Export: a dimension, stride or offset of the candle tensor does not fit DLPack's `int64_t`.
    DimsOverflow,
    /// candle refused (building the imported tensor, or compacting the exported one).
    Candle(::candle_core::Error),
    /// The export's checks refused the tensor.
    Export(ExportError),
    /// Typed access to the imported tensor refused it (misaligned data, unknown flags).
    Access(AccessError),
}

impl From<::candle_core::Error> for CandleError {
    fn from(error: ::candle_core::Error) -> Self {
        Self::Candle(error)
    }
}

impl From<ExportError> for CandleError {
    fn from(error: ExportError) -> Self {
        Self::Export(error)
    }
}

impl From<AccessError> for CandleError {
    fn from(error: AccessError) -> Self {
        Self::Access(error)
    }
}

impl fmt::Display for CandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedCandleDevice(location) => write!(
                f,
                "the candle tensor is on {location:?}; only CPU tensors are exported"
            ),
            Self::UnsupportedCandleDtype(dtype) => write!(
                f,
                "candle's {dtype:?} has no DLPack dtype of exactly its format"
            ),
            Self::UnsupportedDevice(device) => write!(
                f,
                "the tensor is on {:?}:{}; candle imports CPU tensors only",
                device.device_type, device.device_id
            ),
            Self::UnsupportedDtype(dtype) => write!(
                f,
                "candle has no dtype for {:?} with {} bits",
                dtype.code, dtype.bits
            ),
            Self::VectorDtype(dtype) => write!(
                f,
                "the dtype has {} lanes; candle's elements are scalars",
                dtype.lanes
            ),
            Self::DimsOverflow => f.write_str(
                "a dimension, stride or offset of the candle tensor does not fit an int64_t",
            ),
            Self::Candle(error) => write!(f, "candle: {error}"),
            Self::Export(error) => error.fmt(f),
            Self::Access(error) => error.fmt(f),
        }
    }
}

impl core::error::Error for CandleError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Candle(error) => Some(error),
            Self::Export(error) => Some(error),
            Self::Access(error) => Some(error),
            _ => None,
        }
    }
}

impl CandleError {
    /// This error's stable [`ErrorCode`] (12xx, one of [`codes`]); for
    /// [`Export`](Self::Export) and [`Access`](Self::Access), the code of the error they hold.
    ///
    /// ```
    /// use dlpack_abi::dlpack::AccessError;
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi_candle::{codes, CandleError};
    ///
    /// assert_eq!(CandleError::DimsOverflow.code(), codes::DIMS_OVERFLOW);
    /// assert_eq!(CandleError::Access(AccessError::ReadOnly).code(), ErrorCode::ACCESS_READ_ONLY);
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::UnsupportedCandleDevice(_) => codes::UNSUPPORTED_CANDLE_DEVICE,
            Self::UnsupportedCandleDtype(_) => codes::UNSUPPORTED_CANDLE_DTYPE,
            Self::UnsupportedDevice(_) => codes::UNSUPPORTED_DEVICE,
            Self::UnsupportedDtype(_) => codes::UNSUPPORTED_DTYPE,
            Self::VectorDtype(_) => codes::VECTOR_DTYPE,
            Self::DimsOverflow => codes::DIMS_OVERFLOW,
            Self::Candle(_) => codes::REFUSED,
            Self::Export(error) => error.code(),
            Self::Access(error) => error.code(),
        }
    }
}

/// As [`CandleError::code`], so that `ErrorReport::from(&error)` hands the error to C.
impl HasErrorCode for CandleError {
    fn error_code(&self) -> ErrorCode {
        self.code()
    }
}

/// The stable numeric codes of [`CandleError`]'s own variants: `1201..=1207`, the range of
/// `dlpack-abi-candle` (12xx). Values are never renumbered or reused.
///
/// ```
/// use dlpack_abi::error_code::ErrorReport;
/// use dlpack_abi_candle::{codes, CandleError};
///
/// let report = ErrorReport::from(&CandleError::DimsOverflow); // for C: the code and the message
/// assert_eq!(report.code(), codes::DIMS_OVERFLOW);
/// assert_eq!(report.code().0, 1206);
/// ```
pub mod codes {
    use dlpack_abi::error_code::ErrorCode;

    /// The candle tensor is not on the CPU.
    ///
    /// ```
    /// use candle_core::DeviceLocation;
    /// use dlpack_abi_candle::{codes, CandleError};
    ///
    /// let error = CandleError::UnsupportedCandleDevice(DeviceLocation::Cuda { gpu_id: 0 });
    /// assert_eq!(error.code(), codes::UNSUPPORTED_CANDLE_DEVICE);
    /// assert_eq!(codes::UNSUPPORTED_CANDLE_DEVICE.0, 1201);
    /// ```
    pub const UNSUPPORTED_CANDLE_DEVICE: ErrorCode = ErrorCode(1201);

    /// The candle dtype has no DLPack dtype of exactly its format.
    ///
    /// ```
    /// use candle_core::DType;
    /// use dlpack_abi_candle::{codes, dlpack_dtype};
    ///
    /// let error = dlpack_dtype(DType::F4).unwrap_err();
    /// assert_eq!(error.code(), codes::UNSUPPORTED_CANDLE_DTYPE);
    /// assert_eq!(codes::UNSUPPORTED_CANDLE_DTYPE.0, 1202);
    /// ```
    pub const UNSUPPORTED_CANDLE_DTYPE: ErrorCode = ErrorCode(1202);

    /// The tensor to import into candle is not in CPU memory.
    ///
    /// ```
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    /// use dlpack_abi_candle::{codes, CandleError};
    ///
    /// let error = CandleError::UnsupportedDevice(DLDevice { device_type: kDLCUDA, device_id: 0 });
    /// assert_eq!(error.code(), codes::UNSUPPORTED_DEVICE);
    /// assert_eq!(codes::UNSUPPORTED_DEVICE.0, 1203);
    /// ```
    pub const UNSUPPORTED_DEVICE: ErrorCode = ErrorCode(1203);

    /// candle has no dtype for the tensor's element type.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Element;
    /// use dlpack_abi_candle::{candle_dtype, codes};
    ///
    /// let error = candle_dtype(i8::DTYPE).unwrap_err();
    /// assert_eq!(error.code(), codes::UNSUPPORTED_DTYPE);
    /// assert_eq!(codes::UNSUPPORTED_DTYPE.0, 1204);
    /// ```
    pub const UNSUPPORTED_DTYPE: ErrorCode = ErrorCode(1204);

    /// A vector element type (lanes != 1), which candle cannot hold.
    ///
    /// ```
    /// use dlpack_abi::raw::{kDLFloat, DLDataType};
    /// use dlpack_abi_candle::{candle_dtype, codes};
    ///
    /// let error = candle_dtype(DLDataType { code: kDLFloat, bits: 32, lanes: 4 }).unwrap_err();
    /// assert_eq!(error.code(), codes::VECTOR_DTYPE);
    /// assert_eq!(codes::VECTOR_DTYPE.0, 1205);
    /// ```
    pub const VECTOR_DTYPE: ErrorCode = ErrorCode(1205);

    /// A dimension, stride or offset of the candle tensor does not fit DLPack's int64_t.
    ///
    /// ```
    /// use dlpack_abi_candle::{codes, CandleError};
    ///
    /// assert_eq!(CandleError::DimsOverflow.code(), codes::DIMS_OVERFLOW);
    /// assert_eq!(codes::DIMS_OVERFLOW.0, 1206);
    /// ```
    pub const DIMS_OVERFLOW: ErrorCode = ErrorCode(1206);

    /// candle refused (the message has candle's text).
    ///
    /// ```
    /// use dlpack_abi_candle::{codes, CandleError};
    ///
    /// let error = CandleError::from(candle_core::Error::Msg("no".into()));
    /// assert_eq!(error.code(), codes::REFUSED);
    /// assert_eq!(codes::REFUSED.0, 1207);
    /// ```
    pub const REFUSED: ErrorCode = ErrorCode(1207);
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use candle_core::{DType, DeviceLocation};
    use dlpack_abi::dlpack::{AccessError, Element, ExportError};
    use dlpack_abi::error_code::{ErrorCode, ErrorReport, HasErrorCode};
    use dlpack_abi::raw::{kDLCUDA, DLDevice};

    use super::{codes, CandleError};

    /// One value of every variant that is this crate's own (exhaustive: a new variant fails to
    /// compile here until it is listed).
    fn own_variants() -> Vec<CandleError> {
        let all = [
            CandleError::UnsupportedCandleDevice(DeviceLocation::Cuda { gpu_id: 0 }),
            CandleError::UnsupportedCandleDtype(DType::F4),
            CandleError::UnsupportedDevice(DLDevice {
                device_type: kDLCUDA,
                device_id: 0,
            }),
            CandleError::UnsupportedDtype(i8::DTYPE),
            CandleError::VectorDtype(f32::DTYPE),
            CandleError::DimsOverflow,
            CandleError::Candle(candle_core::Error::Msg("no".into())),
        ];
        for error in &all {
            match error {
                CandleError::UnsupportedCandleDevice(_)
                | CandleError::UnsupportedCandleDtype(_)
                | CandleError::UnsupportedDevice(_)
                | CandleError::UnsupportedDtype(_)
                | CandleError::VectorDtype(_)
                | CandleError::DimsOverflow
                | CandleError::Candle(_) => {}
                CandleError::Export(_) | CandleError::Access(_) => unreachable!("wraps"),
            }
        }
        all.into()
    }

    /// Codes are stable: these values are pinned, whatever is added.
    #[test]
    fn pinned_values() {
        let pinned = [
            (codes::UNSUPPORTED_CANDLE_DEVICE, 1201),
            (codes::UNSUPPORTED_CANDLE_DTYPE, 1202),
            (codes::UNSUPPORTED_DEVICE, 1203),
            (codes::UNSUPPORTED_DTYPE, 1204),
            (codes::VECTOR_DTYPE, 1205),
            (codes::DIMS_OVERFLOW, 1206),
            (codes::REFUSED, 1207),
        ];
        for (code, value) in pinned {
            assert_eq!(code, ErrorCode(value));
        }
        let codes: Vec<ErrorCode> = own_variants().iter().map(CandleError::code).collect();
        assert_eq!(codes, pinned.map(|(code, _)| code));
    }

    /// Every own variant has a code of its own, in 12xx; the wrapping ones their error's.
    #[test]
    fn every_variant_has_its_own_code() {
        let mut codes: Vec<ErrorCode> = own_variants().iter().map(CandleError::code).collect();
        assert!(codes.iter().all(|code| (1200..1300).contains(&code.0)));
        let count = codes.len();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), count, "two variants share a code");

        let export = ExportError::Capacity {
            ndim: 1,
            capacity: 0,
        };
        assert_eq!(CandleError::from(export).code(), export.code());
        let access = AccessError::ReadOnly;
        let error = CandleError::from(access);
        assert_eq!(error.code(), access.code());
        assert_eq!(error.error_code(), access.code());
        assert_eq!(ErrorReport::from(&error).code(), access.code());
    }
}
