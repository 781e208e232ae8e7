//! [`BurnError`], and its stable numeric [`codes`] (13xx).

use core::fmt;

use burn_std::{DType, DataError};

use dlpack_abi::dlpack::{AccessError, ExportError};
use dlpack_abi::error_code::{ErrorCode, HasErrorCode};
use dlpack_abi::raw::DLDataType;

/// Why `TensorData` could not go out as a DLPack tensor, or a tensor come in as `TensorData`.
/// On every error, what was handed over has been dropped, exactly once.
///
/// Each variant has a stable numeric code ([`code`](Self::code), in [`codes`]); the variants
/// that hold one of dlpack-abi's errors have that error's code.
///
/// ```
/// use dlpack_abi::raw::{kDLComplex, DLDataType};
/// use dlpack_abi_burn::{burn_dtype, codes, BurnError};
///
/// let complex = DLDataType { code: kDLComplex, bits: 64, lanes: 1 };
/// let error = burn_dtype(complex).unwrap_err();
/// assert_eq!(error, BurnError::NoBurnDtype { dtype: complex });
/// assert!(error.to_string().contains("which no burn dtype stores"));
/// assert_eq!(error.code(), codes::NO_BURN_DTYPE);
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

impl From<ExportError> for BurnError {
    fn from(error: ExportError) -> Self {
        Self::Export(error)
    }
}

impl From<AccessError> for BurnError {
    fn from(error: AccessError) -> Self {
        Self::Access(error)
    }
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

impl core::error::Error for BurnError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Export(error) => Some(error),
            Self::Access(error) => Some(error),
            Self::HostAccess(error) => Some(error),
            Self::Data(error) => Some(error),
            _ => None,
        }
    }
}

impl BurnError {
    /// This error's stable [`ErrorCode`] (13xx, one of [`codes`]); for [`Export`](Self::Export)
    /// and [`Access`](Self::Access), the code of the error they hold.
    ///
    /// ```
    /// use dlpack_abi::dlpack::AccessError;
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi_burn::{codes, BurnError};
    ///
    /// let error = BurnError::Misaligned { address: 0x1001, align: 4 };
    /// assert_eq!(error.code(), codes::MISALIGNED);
    /// assert_eq!(BurnError::Access(AccessError::ReadOnly).code(), ErrorCode::ACCESS_READ_ONLY);
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Quantized { .. } => codes::QUANTIZED,
            Self::NoDlpackDtype { .. } => codes::NO_DLPACK_DTYPE,
            Self::HostAccess(_) => codes::HOST_ACCESS,
            Self::Misaligned { .. } => codes::MISALIGNED,
            Self::ShapeTooLarge { .. } => codes::SHAPE_TOO_LARGE,
            Self::NoBurnDtype { .. } => codes::NO_BURN_DTYPE,
            Self::Data(_) => codes::DATA,
            Self::Export(error) => error.code(),
            Self::Access(error) => error.code(),
        }
    }
}

/// As [`BurnError::code`], so that `ErrorReport::from(&error)` hands the error to C.
impl HasErrorCode for BurnError {
    fn error_code(&self) -> ErrorCode {
        self.code()
    }
}

/// The stable numeric codes of [`BurnError`]'s own variants: `1301..=1307`, the range of
/// `dlpack-abi-burn` (13xx). Values are never renumbered or reused.
///
/// ```
/// use burn_std::{BoolStore, DType};
/// use dlpack_abi::error_code::ErrorReport;
/// use dlpack_abi_burn::{codes, BurnError};
///
/// let error = BurnError::NoDlpackDtype { dtype: DType::Bool(BoolStore::U32) };
/// let report = ErrorReport::from(&error); // for C: the code and the message
/// assert_eq!(report.code(), codes::NO_DLPACK_DTYPE);
/// assert_eq!(report.code().0, 1302);
/// ```
pub mod codes {
    use dlpack_abi::error_code::ErrorCode;

    /// burn's quantized dtype has no DLPack dtype.
    ///
    /// ```
    /// use burn_std::{DType, QuantScheme};
    /// use dlpack_abi_burn::{codes, BurnError};
    ///
    /// let error = BurnError::Quantized { dtype: DType::QFloat(QuantScheme::default()) };
    /// assert_eq!(error.code(), codes::QUANTIZED);
    /// assert_eq!(codes::QUANTIZED.0, 1301);
    /// ```
    pub const QUANTIZED: ErrorCode = ErrorCode(1301);

    /// No DLPack dtype stores elements as this burn dtype does.
    ///
    /// ```
    /// use burn_std::{BoolStore, DType};
    /// use dlpack_abi_burn::{codes, BurnError};
    ///
    /// let error = BurnError::NoDlpackDtype { dtype: DType::Bool(BoolStore::U32) };
    /// assert_eq!(error.code(), codes::NO_DLPACK_DTYPE);
    /// assert_eq!(codes::NO_DLPACK_DTYPE.0, 1302);
    /// ```
    pub const NO_DLPACK_DTYPE: ErrorCode = ErrorCode(1302);

    /// burn could not bring the bytes to the host.
    ///
    /// ```
    /// use dlpack_abi_burn::{codes, BurnError};
    ///
    /// let error = BurnError::HostAccess(burn_std::AccessError::Read("disk".into()));
    /// assert_eq!(error.code(), codes::HOST_ACCESS);
    /// assert_eq!(codes::HOST_ACCESS.0, 1303);
    /// ```
    pub const HOST_ACCESS: ErrorCode = ErrorCode(1303);

    /// burn's bytes are not aligned for the dtype.
    ///
    /// ```
    /// use dlpack_abi_burn::{codes, BurnError};
    ///
    /// let error = BurnError::Misaligned { address: 0x1001, align: 4 };
    /// assert_eq!(error.code(), codes::MISALIGNED);
    /// assert_eq!(codes::MISALIGNED.0, 1304);
    /// ```
    pub const MISALIGNED: ErrorCode = ErrorCode(1304);

    /// A burn extent does not fit DLPack's int64_t.
    ///
    /// ```
    /// use dlpack_abi_burn::{codes, BurnError};
    ///
    /// let error = BurnError::ShapeTooLarge { dim: 0, extent: usize::MAX };
    /// assert_eq!(error.code(), codes::SHAPE_TOO_LARGE);
    /// assert_eq!(codes::SHAPE_TOO_LARGE.0, 1305);
    /// ```
    pub const SHAPE_TOO_LARGE: ErrorCode = ErrorCode(1305);

    /// burn has no dtype that stores elements as this DLPack dtype does.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Element;
    /// use dlpack_abi_burn::{codes, BurnError};
    ///
    /// let error = BurnError::NoBurnDtype { dtype: u128::DTYPE };
    /// assert_eq!(error.code(), codes::NO_BURN_DTYPE);
    /// assert_eq!(codes::NO_BURN_DTYPE.0, 1306);
    /// ```
    pub const NO_BURN_DTYPE: ErrorCode = ErrorCode(1306);

    /// burn refused the data.
    ///
    /// ```
    /// use dlpack_abi_burn::{codes, BurnError};
    ///
    /// let error = BurnError::Data(burn_std::DataError::ElementCountMismatch { expected: 2, actual: 1 });
    /// assert_eq!(error.code(), codes::DATA);
    /// assert_eq!(codes::DATA.0, 1307);
    /// ```
    pub const DATA: ErrorCode = ErrorCode(1307);
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use burn_std::{BoolStore, DType, QuantScheme};
    use dlpack_abi::dlpack::{AccessError, Element, ExportError};
    use dlpack_abi::error_code::{ErrorCode, ErrorReport, HasErrorCode};

    use super::{codes, BurnError};

    /// One value of every variant that is this crate's own (exhaustive: a new variant fails to
    /// compile here until it is listed).
    fn own_variants() -> Vec<BurnError> {
        let all = [
            BurnError::Quantized {
                dtype: DType::QFloat(QuantScheme::default()),
            },
            BurnError::NoDlpackDtype {
                dtype: DType::Bool(BoolStore::U32),
            },
            BurnError::HostAccess(burn_std::AccessError::Read("disk".into())),
            BurnError::Misaligned {
                address: 3,
                align: 4,
            },
            BurnError::ShapeTooLarge {
                dim: 0,
                extent: usize::MAX,
            },
            BurnError::NoBurnDtype { dtype: u128::DTYPE },
            BurnError::Data(burn_std::DataError::ElementCountMismatch {
                expected: 2,
                actual: 1,
            }),
        ];
        for error in &all {
            match error {
                BurnError::Quantized { .. }
                | BurnError::NoDlpackDtype { .. }
                | BurnError::HostAccess(_)
                | BurnError::Misaligned { .. }
                | BurnError::ShapeTooLarge { .. }
                | BurnError::NoBurnDtype { .. }
                | BurnError::Data(_) => {}
                BurnError::Export(_) | BurnError::Access(_) => unreachable!("wraps"),
            }
        }
        all.into()
    }

    /// Codes are stable: these values are pinned, whatever is added.
    #[test]
    fn pinned_values() {
        let pinned = [
            (codes::QUANTIZED, 1301),
            (codes::NO_DLPACK_DTYPE, 1302),
            (codes::HOST_ACCESS, 1303),
            (codes::MISALIGNED, 1304),
            (codes::SHAPE_TOO_LARGE, 1305),
            (codes::NO_BURN_DTYPE, 1306),
            (codes::DATA, 1307),
        ];
        for (code, value) in pinned {
            assert_eq!(code, ErrorCode(value));
        }
        let codes: Vec<ErrorCode> = own_variants().iter().map(BurnError::code).collect();
        assert_eq!(codes, pinned.map(|(code, _)| code));
    }

    /// Every own variant has a code of its own, in 13xx; the wrapping ones their error's.
    #[test]
    fn every_variant_has_its_own_code() {
        let mut codes: Vec<ErrorCode> = own_variants().iter().map(BurnError::code).collect();
        assert!(codes.iter().all(|code| (1300..1400).contains(&code.0)));
        let count = codes.len();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), count, "two variants share a code");

        let export = ExportError::Capacity {
            ndim: 1,
            capacity: 0,
        };
        assert_eq!(BurnError::from(export).code(), export.code());
        let access = AccessError::ReadOnly;
        let error = BurnError::from(access);
        assert_eq!(error.code(), access.code());
        assert_eq!(error.error_code(), access.code());
        assert_eq!(ErrorReport::from(&error).code(), access.code());
    }
}
