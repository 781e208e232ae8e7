//! Stable numeric codes for every error of this crate, and [`ErrorReport`], which carries a code
//! and its message across a C boundary without allocating.
//!
//! C and C++ callers of an FFI crate built on dlpack-abi can print a message but cannot branch
//! on it. Every error type here has a `code()` (an [`ErrorCode`]; [`ProducerError`]'s is
//! [`HasErrorCode::error_code`], its `code()` being the producer's errno), one per variant, and
//! the C header `dlpack_abi.h` declares the same values as the enum `DLPackAbiErrorCode`
//! (`DLPACK_ABI_ACCESS_READ_ONLY`, ...) and the struct `DLPackAbiErrorReport`.
//!
//! **Stability:** within a major version of this crate, values are never renumbered or reused;
//! new codes may be added (a C `switch` needs a `default:`). This crate assigns only `0..=999`.
//! `1000..=1999` belong to the integration crates of the dlpack-abi workspace, each with a range
//! of its own whose codes it declares itself (as `ErrorCode` values, with its error type's
//! `code()`): 10xx `dlpack-abi-arrow-rs`, 11xx `dlpack-abi-safetensors`, 12xx
//! `dlpack-abi-candle`, 13xx `dlpack-abi-burn`, 14xx `dlpack-abi-image`, 15xx
//! `dlpack-abi-cudarc`, 16xx `dlpack-abi-pyo3`, 17xx `dlpack-abi-ndarray`. `2000..=9999` are
//! kept for later. Negative values and values from 10000 on are never assigned, so an FFI
//! crate may use them for its own errors. Errors that wrap another (`TensorError`, `ArrowError`,
//! `ExportError::Invalid`, `BridgeError::Tensor`, ...) have the code of the error they wrap.
//! Nothing here allocates; everything works without `alloc` or `std`.
//!
//! ```
//! use dlpack_abi::dlpack::AccessError;
//! use dlpack_abi::error_code::{ErrorCode, ErrorReport};
//!
//! let error = AccessError::ReadOnly;
//! assert_eq!(error.code(), ErrorCode::ACCESS_READ_ONLY);
//! assert_eq!(error.code().0, 207);
//! let report = ErrorReport::from(&error);
//! assert_eq!(report.code(), ErrorCode::ACCESS_READ_ONLY);
//! assert_eq!(report.message(), error.to_string());
//! ```
//!
//! [`ProducerError`]: crate::arrow::ProducerError

use core::fmt;

mod codes;
mod report;

pub use report::ErrorReport;

/// A stable numeric error code (C `DLPackAbiErrorCode`, an `int32_t`): 0 is success, each
/// error contract has its range (1xx DLPack import, 2xx typed access, 3xx export, 4xx DLPack
/// streams, 5xx Arrow metadata, 6xx Arrow validation, 7xx Arrow reads, 8xx the DLPack ↔ Arrow
/// bridge, 9xx Arrow streams). 1000 to 1999 belong to the integration crates, which declare
/// their own codes as `ErrorCode` values (see the [module docs](self)).
///
/// Stable within a major version: values are never renumbered or reused; new codes may be
/// added. Like the DLPack enums of [`raw`](crate::raw), it is an open `i32` newtype, not a
/// Rust enum: a code a C caller passes back (or one from a newer version of this crate, or an
/// FFI crate's own code from 10000 on) is a valid value, and [`name`](Self::name) says `None`
/// for it.
///
/// ```
/// use dlpack_abi::dlpack::ImportError;
/// use dlpack_abi::error_code::ErrorCode;
///
/// let code = ImportError::NullTensor.code();
/// assert_eq!(code, ErrorCode::IMPORT_NULL_TENSOR);
/// assert_eq!(code.name(), Some("DLPACK_ABI_IMPORT_NULL_TENSOR"));
/// assert_eq!(code.to_string(), "DLPACK_ABI_IMPORT_NULL_TENSOR (101)");
/// // A code this crate never assigns (an application's own) is still a value.
/// assert_eq!(format!("{:?}", ErrorCode(10001)), "ErrorCode(10001)");
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i32);

/// Declares the codes of table.rs: the associated constants, `KNOWN`, `name` and
/// `description`. A value given twice fails to compile (an unreachable pattern).
macro_rules! error_codes {
    ($($(#[doc = $doc:literal])+ $name:ident = $value:literal,)+) => {
        impl ErrorCode {
            $(
                $(#[doc = $doc])+
                #[doc = concat!(
                    "\n\nIn C: `DLPACK_ABI_", stringify!($name), " = ", stringify!($value), "`.",
                    "\n\n```\nuse dlpack_abi::error_code::ErrorCode;\n\n",
                    "assert_eq!(ErrorCode::", stringify!($name), ", ErrorCode(", stringify!($value), "));\n",
                    "assert_eq!(ErrorCode::", stringify!($name), ".name(), Some(\"DLPACK_ABI_",
                    stringify!($name), "\"));\n```"
                )]
                pub const $name: ErrorCode = ErrorCode($value);
            )+

            /// Every code this crate assigns, in ascending order.
            ///
            /// ```
            /// use dlpack_abi::error_code::ErrorCode;
            ///
            /// assert_eq!(ErrorCode::KNOWN[0], ErrorCode::OK);
            /// assert!(ErrorCode::KNOWN.iter().all(|code| code.name().is_some()));
            /// ```
            pub const KNOWN: &'static [ErrorCode] = &[$(ErrorCode::$name),+];

            /// The C name of this code (`"DLPACK_ABI_ACCESS_READ_ONLY"`), or `None` for a value
            /// this crate does not assign.
            ///
            /// ```
            /// use dlpack_abi::error_code::ErrorCode;
            ///
            /// assert_eq!(ErrorCode::ACCESS_READ_ONLY.name(), Some("DLPACK_ABI_ACCESS_READ_ONLY"));
            /// assert_eq!(ErrorCode(-5).name(), None);
            /// ```
            #[deny(unreachable_patterns)]
            pub const fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some(concat!("DLPACK_ABI_", stringify!($name))),)+
                    _ => None,
                }
            }

            /// What this code means, in one sentence (the same text as the C header's comment),
            /// or `None` for a value this crate does not assign.
            ///
            /// ```
            /// use dlpack_abi::error_code::ErrorCode;
            ///
            /// assert_eq!(ErrorCode::OK.description(), Some("Success: no error."));
            /// assert_eq!(ErrorCode(10001).description(), None);
            /// ```
            pub const fn description(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some(concat!($($doc),+).trim_ascii()),)+
                    _ => None,
                }
            }
        }
    };
}

include!("table.rs");

impl ErrorCode {
    /// Whether this is [`OK`](Self::OK) (0).
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// assert!(ErrorCode::OK.is_ok());
    /// assert!(!ErrorCode::ACCESS_READ_ONLY.is_ok());
    /// ```
    pub const fn is_ok(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "ErrorCode({})", self.0),
        }
    }
}

impl fmt::Display for ErrorCode {
    /// The C name and the value (`DLPACK_ABI_ACCESS_READ_ONLY (207)`), or `error code N` for a
    /// value this crate does not assign.
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// assert_eq!(ErrorCode::ACCESS_READ_ONLY.to_string(), "DLPACK_ABI_ACCESS_READ_ONLY (207)");
    /// assert_eq!(ErrorCode(10001).to_string(), "error code 10001");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(f, "error code {}", self.0),
        }
    }
}

/// Every error type of this crate: its [`ErrorCode`]. [`ErrorReport::from`] takes any of them,
/// so an FFI crate's helper can be generic over the errors it reports.
///
/// ```
/// use core::fmt::Display;
///
/// use dlpack_abi::dlpack::{AccessError, ImportError};
/// use dlpack_abi::error_code::{ErrorCode, ErrorReport, HasErrorCode};
///
/// fn report<E: HasErrorCode + Display>(error: &E) -> ErrorReport {
///     ErrorReport::from(error)
/// }
/// assert_eq!(report(&ImportError::NullTensor).code(), ErrorCode::IMPORT_NULL_TENSOR);
/// assert_eq!(AccessError::ReadOnly.error_code(), ErrorCode::ACCESS_READ_ONLY);
/// ```
pub trait HasErrorCode {
    /// The error's stable code (the same as its inherent `code()`, where it has one).
    ///
    /// ```
    /// use dlpack_abi::dlpack::AccessError;
    /// use dlpack_abi::error_code::{ErrorCode, HasErrorCode};
    ///
    /// assert_eq!(AccessError::NotContiguous.error_code(), ErrorCode::ACCESS_NOT_CONTIGUOUS);
    /// ```
    fn error_code(&self) -> ErrorCode;
}
