//! [`ImageError`]: why a tensor cannot become an image of the requested pixel type, and its
//! stable [`codes`].

use core::fmt;

use dlpack_abi::dlpack::AccessError;
use dlpack_abi::error_code::{ErrorCode, HasErrorCode};
use dlpack_abi::raw::{DLDataType, DLDevice};

/// Why a tensor cannot become an `ImageBuffer` of the requested pixel type.
///
/// ```
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_image::{copy_image, ImageError};
/// use image::Rgb;
///
/// let gray = Export::new(vec![0u8; 6], &[2, 3, 1]).finish()?;
/// let error = copy_image::<Rgb<u8>>(&gray.view()).unwrap_err();
/// assert_eq!(error, ImageError::Channels { found: 1, expected: 3 });
/// assert_eq!(
///     error.to_string(),
///     "the tensor's last extent (channels) is 1, but the pixel type has 3 channels; an image \
///      tensor is [height, width, channels] (HWC), so a CHW tensor ([channels, height, width], \
///      PyTorch's layout) needs its channel axis moved last first (x.permute(1, 2, 0) in \
///      PyTorch, np.moveaxis(x, 0, -1) in NumPy)"
/// );
///
/// // A CHW tensor (3 x 2 x 5) given for RGB: the message says why and how to fix it.
/// let chw = Export::new(vec![0u8; 30], &[3, 2, 5]).finish()?;
/// let error = copy_image::<Rgb<u8>>(&chw.view()).unwrap_err();
/// assert!(error.to_string().contains("(HWC)"));
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImageError {
    /// The memory is not host-accessible (an image needs `kDLCPU`, `kDLCUDAHost`,
    /// `kDLROCMHost` or `kDLCUDAManaged`).
    NotHostAccessible {
        /// The tensor's device.
        device: DLDevice,
    },
    /// The dtype has more than one lane (a vector type); an image needs scalar subpixels.
    Lanes {
        /// The tensor's dtype.
        dtype: DLDataType,
    },
    /// The dtype is not the pixel's subpixel type.
    DtypeMismatch {
        /// The tensor's dtype.
        found: DLDataType,
        /// The subpixel's dtype.
        expected: DLDataType,
    },
    /// The tensor does not have three dimensions (`[height, width, channels]`).
    Ndim {
        /// The tensor's `ndim`.
        found: usize,
    },
    /// The last extent is not the pixel type's channel count.
    Channels {
        /// The tensor's last extent.
        found: i64,
        /// The pixel type's `CHANNEL_COUNT`.
        expected: u8,
    },
    /// The height or width does not fit the `u32` that `ImageBuffer` keeps.
    TooLarge {
        /// The tensor's first extent.
        height: i64,
        /// The tensor's second extent.
        width: i64,
    },
    /// Zero-copy only ([`import_image`](crate::import_image)): the strides are not C-contiguous
    /// (row-major `[width * channels, channels, 1]`), so the elements are not one slice.
    /// [`copy_image`](crate::copy_image) copies any layout.
    NotContiguous,
    /// Another refusal of typed access: unknown flag bits, or data not aligned for the subpixel
    /// (which copying refuses too).
    Access(AccessError),
}

impl ImageError {
    /// The image error for a refusal of typed access: device and dtype get their own variants.
    pub(crate) fn from_access(error: AccessError) -> Self {
        match error {
            AccessError::NotHostAccessible { device } => Self::NotHostAccessible { device },
            AccessError::DtypeMismatch { found, .. } if found.lanes != 1 => {
                Self::Lanes { dtype: found }
            }
            AccessError::DtypeMismatch { requested, found } => Self::DtypeMismatch {
                found,
                expected: requested,
            },
            AccessError::NotContiguous => Self::NotContiguous,
            other => Self::Access(other),
        }
    }

    /// This error's stable [`ErrorCode`] (14xx, the constants of [`codes`]); the variants that
    /// repeat typed access's refusals (host access, dtype, contiguity) have the core's `ACCESS_`
    /// codes, and [`Access`](Self::Access) the code of the [`AccessError`] it holds.
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi_image::{codes, ImageError};
    ///
    /// assert_eq!(ImageError::Ndim { found: 2 }.code(), codes::NDIM);
    /// assert_eq!(ImageError::NotContiguous.code(), ErrorCode::ACCESS_NOT_CONTIGUOUS);
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Lanes { .. } => codes::LANES,
            Self::Ndim { .. } => codes::NDIM,
            Self::Channels { .. } => codes::CHANNELS,
            Self::TooLarge { .. } => codes::TOO_LARGE,
            Self::NotHostAccessible { .. } => ErrorCode::ACCESS_NOT_HOST_ACCESSIBLE,
            Self::DtypeMismatch { .. } => ErrorCode::ACCESS_DTYPE_MISMATCH,
            Self::NotContiguous => ErrorCode::ACCESS_NOT_CONTIGUOUS,
            Self::Access(error) => error.code(),
        }
    }
}

impl HasErrorCode for ImageError {
    fn error_code(&self) -> ErrorCode {
        self.code()
    }
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ImageError::*;
        match *self {
            NotHostAccessible { device } => write!(
                f,
                "DLTensor.device is {device}, whose memory the host cannot read into an image"
            ),
            Lanes { dtype } => write!(
                f,
                "DLTensor.dtype is {dtype}, with {} lanes; an image needs 1",
                dtype.lanes
            ),
            DtypeMismatch { found, expected } => write!(
                f,
                "DLTensor.dtype is {found}, but the pixel's subpixel type is {expected}"
            ),
            Ndim { found } => write!(
                f,
                "DLTensor.ndim is {found}; an image needs 3 ([height, width, channels])"
            ),
            Channels { found, expected } => write!(
                f,
                "the tensor's last extent (channels) is {found}, but the pixel type has {expected} \
                 channels; an image tensor is [height, width, channels] (HWC), so a CHW tensor \
                 ([channels, height, width], PyTorch's layout) needs its channel axis moved last \
                 first (x.permute(1, 2, 0) in PyTorch, np.moveaxis(x, 0, -1) in NumPy)"
            ),
            TooLarge { height, width } => write!(
                f,
                "the tensor is {height} high and {width} wide; an image's height and width must \
                 each fit u32"
            ),
            NotContiguous => f.write_str(
                "DLTensor.strides are not C-contiguous, so the tensor cannot be shared as an \
                 image; copy_image copies any layout",
            ),
            Access(error) => fmt::Display::fmt(&error, f),
        }
    }
}

impl core::error::Error for ImageError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Access(error) => Some(error),
            _ => None,
        }
    }
}

/// The stable codes of [`ImageError`]'s own variants (14xx), for C callers and logs; the
/// variants that repeat typed access's refusals have the core's `ACCESS_` codes instead (see
/// [`ImageError::code`]). Values are never renumbered or reused.
///
/// ```
/// use dlpack_abi::error_code::ErrorReport;
/// use dlpack_abi_image::{codes, ImageError};
///
/// let error = ImageError::Ndim { found: 2 };
/// let report = ErrorReport::from(&error);
/// assert_eq!(report.code(), codes::NDIM);
/// assert_eq!(report.message(), error.to_string());
/// ```
pub mod codes {
    use dlpack_abi::error_code::ErrorCode;

    /// The dtype has more than one lane; an image needs scalar subpixels.
    ///
    /// ```
    /// use dlpack_abi::raw::{kDLUInt, DLDataType};
    /// use dlpack_abi_image::{codes, ImageError};
    ///
    /// let dtype = DLDataType { code: kDLUInt, bits: 8, lanes: 4 };
    /// assert_eq!(ImageError::Lanes { dtype }.code(), codes::LANES);
    /// assert_eq!(codes::LANES.0, 1401);
    /// ```
    pub const LANES: ErrorCode = ErrorCode(1401);

    /// The tensor does not have three dimensions (`[height, width, channels]`).
    ///
    /// ```
    /// use dlpack_abi_image::{codes, ImageError};
    ///
    /// assert_eq!(ImageError::Ndim { found: 2 }.code(), codes::NDIM);
    /// assert_eq!(codes::NDIM.0, 1402);
    /// ```
    pub const NDIM: ErrorCode = ErrorCode(1402);

    /// The last extent is not the pixel type's channel count.
    ///
    /// ```
    /// use dlpack_abi_image::{codes, ImageError};
    ///
    /// let error = ImageError::Channels { found: 1, expected: 3 };
    /// assert_eq!(error.code(), codes::CHANNELS);
    /// assert_eq!(codes::CHANNELS.0, 1403);
    /// ```
    pub const CHANNELS: ErrorCode = ErrorCode(1403);

    /// The height or width does not fit the `u32` that `ImageBuffer` keeps.
    ///
    /// ```
    /// use dlpack_abi_image::{codes, ImageError};
    ///
    /// let error = ImageError::TooLarge { height: 1 << 32, width: 1 };
    /// assert_eq!(error.code(), codes::TOO_LARGE);
    /// assert_eq!(codes::TOO_LARGE.0, 1404);
    /// ```
    pub const TOO_LARGE: ErrorCode = ErrorCode(1404);
}

#[cfg(test)]
mod tests {
    use super::{codes, ImageError};
    use dlpack_abi::dlpack::{AccessError, Element};
    use dlpack_abi::error_code::ErrorCode;
    use dlpack_abi::raw::{kDLCPU, kDLCUDA, kDLUInt, DLDataType, DLDevice};

    /// One error of each variant (a new variant does not compile until it is added here).
    fn one_of_each() -> [ImageError; 8] {
        let cuda = DLDevice {
            device_type: kDLCUDA,
            device_id: 0,
        };
        let error = ImageError::NotContiguous;
        // Exhaustive within the crate: a new variant must be listed below.
        match error {
            ImageError::NotHostAccessible { .. }
            | ImageError::Lanes { .. }
            | ImageError::DtypeMismatch { .. }
            | ImageError::Ndim { .. }
            | ImageError::Channels { .. }
            | ImageError::TooLarge { .. }
            | ImageError::NotContiguous
            | ImageError::Access(_) => {}
        }
        [
            ImageError::NotHostAccessible { device: cuda },
            ImageError::Lanes {
                dtype: DLDataType {
                    code: kDLUInt,
                    bits: 8,
                    lanes: 4,
                },
            },
            ImageError::DtypeMismatch {
                found: u8::DTYPE,
                expected: u16::DTYPE,
            },
            ImageError::Ndim { found: 2 },
            ImageError::Channels {
                found: 1,
                expected: 3,
            },
            ImageError::TooLarge {
                height: 1 << 32,
                width: 1,
            },
            ImageError::NotContiguous,
            ImageError::Access(AccessError::Misaligned {
                address: 1,
                align: 2,
            }),
        ]
    }

    /// Codes are stable: these values are pinned, whatever is added.
    #[test]
    fn pinned_values() {
        assert_eq!(codes::LANES, ErrorCode(1401));
        assert_eq!(codes::NDIM, ErrorCode(1402));
        assert_eq!(codes::CHANNELS, ErrorCode(1403));
        assert_eq!(codes::TOO_LARGE, ErrorCode(1404));
    }

    /// The own variants have distinct codes in 14xx; those that repeat typed access's refusals
    /// have its `ACCESS_` codes, and `Access` the code of the error it holds.
    #[test]
    fn every_own_variant_has_its_own_code_in_the_range() {
        let mut own = alloc::vec::Vec::new();
        for error in one_of_each() {
            let code = error.code();
            assert_eq!(
                dlpack_abi::error_code::HasErrorCode::error_code(&error),
                code
            );
            match error {
                ImageError::NotHostAccessible { .. } => {
                    assert_eq!(code, ErrorCode::ACCESS_NOT_HOST_ACCESSIBLE);
                }
                ImageError::DtypeMismatch { .. } => {
                    assert_eq!(code, ErrorCode::ACCESS_DTYPE_MISMATCH);
                }
                ImageError::NotContiguous => assert_eq!(code, ErrorCode::ACCESS_NOT_CONTIGUOUS),
                ImageError::Access(inner) => {
                    assert_eq!(code, inner.code());
                    assert_eq!(code, ErrorCode::ACCESS_MISALIGNED);
                }
                _ => {
                    assert!((1400..=1499).contains(&code.0), "{error:?}: {code:?}");
                    own.push(code);
                }
            }
        }
        let count = own.len();
        own.sort();
        own.dedup();
        assert_eq!(own.len(), count, "two variants share a code");
        assert_eq!(
            own,
            [codes::LANES, codes::NDIM, codes::CHANNELS, codes::TOO_LARGE]
        );
    }

    /// Typed access's refusals become the variants of their kind; the rest are wrapped.
    #[test]
    fn access_refusals_map_to_their_variants() {
        let cpu = DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        };
        let vector = DLDataType {
            code: kDLUInt,
            bits: 8,
            lanes: 2,
        };
        assert_eq!(
            ImageError::from_access(AccessError::NotHostAccessible { device: cpu }),
            ImageError::NotHostAccessible { device: cpu }
        );
        assert_eq!(
            ImageError::from_access(AccessError::DtypeMismatch {
                requested: u8::DTYPE,
                found: vector
            }),
            ImageError::Lanes { dtype: vector }
        );
        assert_eq!(
            ImageError::from_access(AccessError::NotContiguous),
            ImageError::NotContiguous
        );
        assert_eq!(
            ImageError::from_access(AccessError::ReadOnly),
            ImageError::Access(AccessError::ReadOnly)
        );
        let error = ImageError::Access(AccessError::ReadOnly);
        let source = core::error::Error::source(&error).map(alloc::string::ToString::to_string);
        assert_eq!(source, Some(AccessError::ReadOnly.to_string()));
    }
}
