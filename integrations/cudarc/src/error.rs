//! [`CudaError`], why a cudarc export or import failed, and its stable [`codes`].

use core::fmt;

use ::cudarc::driver::DriverError;

use dlpack_abi::arrow::BridgeError;
use dlpack_abi::dlpack::{AccessError, ExportError, OrderError};
use dlpack_abi::error_code::{ErrorCode, HasErrorCode};
use dlpack_abi::raw::DLDeviceType;

/// Why a cudarc export or import failed.
///
/// ```
/// use dlpack_abi_cudarc::{codes, CudaError};
/// use dlpack_abi::raw::kDLROCM;
///
/// let error = CudaError::NotCuda { device_type: kDLROCM, device_id: 0 };
/// assert_eq!(error.to_string(), "the memory is on kDLROCM:0, not a CUDA device");
/// assert_eq!(error.code(), codes::NOT_CUDA);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CudaError {
    /// The CUDA driver failed.
    Driver(DriverError),
    /// The memory (or event) is not CUDA's.
    NotCuda {
        /// Its device type.
        device_type: DLDeviceType,
        /// Its device id.
        device_id: i64,
    },
    /// The memory is on another GPU than the stream's.
    OtherDevice {
        /// The memory's device id.
        device_id: i64,
        /// The stream's device ordinal.
        ordinal: usize,
    },
    /// Typed access refused it (dtype, alignment, layout, flags, exclusivity).
    Access(AccessError),
    /// The export's checks refused it.
    Export(ExportError),
    /// The Arrow bridge refused it.
    Bridge(BridgeError),
    /// The stream ordering hook refused it.
    Order(OrderError),
}

impl From<DriverError> for CudaError {
    fn from(error: DriverError) -> Self {
        Self::Driver(error)
    }
}

impl From<AccessError> for CudaError {
    fn from(error: AccessError) -> Self {
        Self::Access(error)
    }
}

impl From<ExportError> for CudaError {
    fn from(error: ExportError) -> Self {
        Self::Export(error)
    }
}

impl From<BridgeError> for CudaError {
    fn from(error: BridgeError) -> Self {
        Self::Bridge(error)
    }
}

impl From<OrderError> for CudaError {
    fn from(error: OrderError) -> Self {
        Self::Order(error)
    }
}

impl CudaError {
    /// This error's stable [`ErrorCode`] (15xx, [`codes`]); for the variants that hold one of
    /// dlpack-abi's errors, its code.
    ///
    /// ```
    /// use dlpack_abi::dlpack::AccessError;
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi_cudarc::{codes, CudaError};
    ///
    /// let error = CudaError::OtherDevice { device_id: 1, ordinal: 0 };
    /// assert_eq!(error.code(), codes::OTHER_DEVICE);
    /// let refused = CudaError::Access(AccessError::NotContiguous);
    /// assert_eq!(refused.code(), ErrorCode::ACCESS_NOT_CONTIGUOUS);
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Driver(_) => codes::DRIVER,
            Self::NotCuda { .. } => codes::NOT_CUDA,
            Self::OtherDevice { .. } => codes::OTHER_DEVICE,
            Self::Access(error) => error.code(),
            Self::Export(error) => error.code(),
            Self::Bridge(error) => error.code(),
            Self::Order(error) => error.code(),
        }
    }
}

impl HasErrorCode for CudaError {
    fn error_code(&self) -> ErrorCode {
        self.code()
    }
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Driver(error) => write!(f, "CUDA driver error {}", error.0 as i64),
            Self::NotCuda {
                device_type,
                device_id,
            } => write!(
                f,
                "the memory is on {device_type:?}:{device_id}, not a CUDA device"
            ),
            Self::OtherDevice { device_id, ordinal } => write!(
                f,
                "the memory is on GPU {device_id}, the stream on GPU {ordinal}"
            ),
            Self::Access(error) => error.fmt(f),
            Self::Export(error) => error.fmt(f),
            Self::Bridge(error) => error.fmt(f),
            Self::Order(error) => error.fmt(f),
        }
    }
}

impl core::error::Error for CudaError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Driver(error) => Some(error),
            Self::Access(error) => Some(error),
            Self::Export(error) => Some(error),
            Self::Bridge(error) => Some(error),
            Self::Order(error) => Some(error),
            Self::NotCuda { .. } | Self::OtherDevice { .. } => None,
        }
    }
}

/// The stable codes of [`CudaError`]'s own variants (15xx, the range of dlpack-abi-cudarc).
/// The variants that hold one of dlpack-abi's errors have its code.
///
/// ```
/// use dlpack_abi::error_code::{ErrorReport, HasErrorCode};
/// use dlpack_abi_cudarc::{codes, CudaError};
///
/// let error = CudaError::OtherDevice { device_id: 1, ordinal: 0 };
/// // What a C caller receives: the code and the message.
/// let report = ErrorReport::from(&error);
/// assert_eq!((report.code(), error.error_code()), (codes::OTHER_DEVICE, codes::OTHER_DEVICE));
/// assert_eq!(report.message(), "the memory is on GPU 1, the stream on GPU 0");
/// ```
pub mod codes {
    use dlpack_abi::error_code::ErrorCode;

    /// The CUDA driver failed: [`CudaError::Driver`](super::CudaError::Driver).
    ///
    /// ```
    /// use cudarc::driver::{sys::cudaError_enum, DriverError};
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi_cudarc::{codes, CudaError};
    ///
    /// assert_eq!(codes::DRIVER, ErrorCode(1501));
    /// let error = CudaError::from(DriverError(cudaError_enum::CUDA_ERROR_INVALID_HANDLE));
    /// assert_eq!(error.code(), codes::DRIVER);
    /// ```
    pub const DRIVER: ErrorCode = ErrorCode(1501);

    /// The memory (or event) is not CUDA's: [`CudaError::NotCuda`](super::CudaError::NotCuda).
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi::raw::kDLCPU;
    /// use dlpack_abi_cudarc::{codes, CudaError};
    ///
    /// assert_eq!(codes::NOT_CUDA, ErrorCode(1502));
    /// let error = CudaError::NotCuda { device_type: kDLCPU, device_id: 0 };
    /// assert_eq!(error.code(), codes::NOT_CUDA);
    /// ```
    pub const NOT_CUDA: ErrorCode = ErrorCode(1502);

    /// The memory is on another GPU than the stream's:
    /// [`CudaError::OtherDevice`](super::CudaError::OtherDevice).
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi_cudarc::{codes, CudaError};
    ///
    /// assert_eq!(codes::OTHER_DEVICE, ErrorCode(1503));
    /// let error = CudaError::OtherDevice { device_id: 1, ordinal: 0 };
    /// assert_eq!(error.code(), codes::OTHER_DEVICE);
    /// ```
    pub const OTHER_DEVICE: ErrorCode = ErrorCode(1503);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::cudarc::driver::sys::cudaError_enum;
    use dlpack_abi::arrow::ValidationError;
    use dlpack_abi::dlpack::ConsumerStream;
    use dlpack_abi::raw::kDLCPU;

    /// One error of each variant (a new variant does not compile until it is here).
    fn one_of_each() -> [CudaError; 7] {
        let driver = CudaError::Driver(DriverError(cudaError_enum::CUDA_ERROR_INVALID_HANDLE));
        match driver {
            CudaError::Driver(_)
            | CudaError::NotCuda { .. }
            | CudaError::OtherDevice { .. }
            | CudaError::Access(_)
            | CudaError::Export(_)
            | CudaError::Bridge(_)
            | CudaError::Order(_) => {}
        }
        [
            driver,
            CudaError::NotCuda {
                device_type: kDLCPU,
                device_id: 0,
            },
            CudaError::OtherDevice {
                device_id: 1,
                ordinal: 0,
            },
            CudaError::Access(AccessError::NotContiguous),
            CudaError::Export(ExportError::StridesLength {
                ndim: 2,
                strides: 1,
            }),
            CudaError::Bridge(BridgeError::NullsPresent { null_count: 1 }),
            CudaError::Order(OrderError::Unsupported {
                stream: ConsumerStream::Host,
            }),
        ]
    }

    /// Codes are stable: these values are pinned, whatever is added.
    #[test]
    fn pinned_values() {
        assert_eq!(codes::DRIVER, ErrorCode(1501));
        assert_eq!(codes::NOT_CUDA, ErrorCode(1502));
        assert_eq!(codes::OTHER_DEVICE, ErrorCode(1503));
    }

    /// Every own variant has a code of its own in 15xx; the wrapping ones their inner error's.
    #[test]
    fn own_variants_have_distinct_codes_in_the_range_and_wrappers_the_inner_code() {
        let [driver, not_cuda, other_device, access, export, bridge, order] = one_of_each();
        let own = [driver.code(), not_cuda.code(), other_device.code()];
        assert_eq!(own, [codes::DRIVER, codes::NOT_CUDA, codes::OTHER_DEVICE]);
        let mut sorted = own.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), own.len(), "two variants share a code");
        assert!(own.iter().all(|code| (1500..1600).contains(&code.0)));
        assert_eq!(access.code(), AccessError::NotContiguous.code());
        let CudaError::Export(inner) = export else {
            unreachable!()
        };
        assert_eq!(export.code(), inner.code());
        let CudaError::Bridge(inner) = bridge else {
            unreachable!()
        };
        assert_eq!(bridge.code(), inner.code());
        let CudaError::Order(inner) = order else {
            unreachable!()
        };
        assert_eq!(order.code(), inner.code());
        for error in one_of_each() {
            assert_eq!(error.error_code(), error.code());
        }
        // A wrapped Arrow validation error keeps its code through the bridge.
        let bridged = CudaError::from(BridgeError::Arrow(ValidationError::Released));
        assert_eq!(bridged.code(), ErrorCode::ARROW_RELEASED);
    }

    #[test]
    fn sources_are_the_wrapped_errors() {
        for error in one_of_each() {
            match core::error::Error::source(&error) {
                // (A `DriverError`'s `Display` asks the driver, which may not load here.)
                Some(source) if matches!(error, CudaError::Driver(_)) => {
                    assert!(source.downcast_ref::<DriverError>().is_some());
                }
                Some(source) => assert_eq!(source.to_string(), error.to_string()),
                None => assert!(matches!(
                    error,
                    CudaError::NotCuda { .. } | CudaError::OtherDevice { .. }
                )),
            }
        }
    }
}
