//! [`ArrowRsError`], why an exchange with arrow-rs failed, and its stable [`codes`].

use core::fmt;

use dlpack_abi::arrow::{ArrowError, BridgeError, ReadError, StreamError, ValidationError};
use dlpack_abi::error_code::{ErrorCode, HasErrorCode};

/// Why an exchange with arrow-rs failed: arrow-rs refused (its own error, message included), or
/// dlpack-abi did. Whatever was handed over has been released, exactly once.
///
/// ```
/// use dlpack_abi_arrow_rs::{codes, ArrowRsError};
///
/// let error = ArrowRsError::from(arrow_schema::ArrowError::SchemaError("no such type".into()));
/// assert_eq!(error.to_string(), "arrow-rs: Schema error: no such type");
/// assert_eq!(error.code(), codes::REFUSED);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ArrowRsError {
    /// arrow-rs refused, or its reader failed.
    ArrowRs(arrow_schema::ArrowError),
    /// dlpack-abi refused what arrow-rs produced, or what it was asked to hand over.
    Arrow(ArrowError),
    /// A stream of dlpack-abi's failed: its producer's code and message, or a refused item.
    Stream(StreamError),
}

impl ArrowRsError {
    /// This error's stable [`ErrorCode`]: [`codes::REFUSED`] when arrow-rs refused, else the
    /// code of the dlpack-abi error it holds.
    ///
    /// ```
    /// use dlpack_abi::arrow::{ArrowError, ValidationError};
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi_arrow_rs::{codes, ArrowRsError};
    ///
    /// let error = ArrowRsError::Arrow(ArrowError::Validation(ValidationError::Released));
    /// assert_eq!(error.code(), ErrorCode::ARROW_RELEASED);
    /// let refused = ArrowRsError::ArrowRs(arrow_schema::ArrowError::SchemaError("no".into()));
    /// assert_eq!(refused.code(), codes::REFUSED);
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::ArrowRs(_) => codes::REFUSED,
            Self::Arrow(error) => error.code(),
            Self::Stream(error) => error.code(),
        }
    }
}

impl HasErrorCode for ArrowRsError {
    fn error_code(&self) -> ErrorCode {
        self.code()
    }
}

impl fmt::Display for ArrowRsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ArrowRs(error) => write!(f, "arrow-rs: {error}"),
            Self::Arrow(error) => write!(f, "{error}"),
            Self::Stream(error) => write!(f, "{error}"),
        }
    }
}

impl core::error::Error for ArrowRsError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::ArrowRs(error) => Some(error),
            Self::Arrow(error) => Some(error),
            Self::Stream(error) => Some(error),
        }
    }
}

impl From<arrow_schema::ArrowError> for ArrowRsError {
    fn from(error: arrow_schema::ArrowError) -> Self {
        Self::ArrowRs(error)
    }
}

impl From<ArrowError> for ArrowRsError {
    fn from(error: ArrowError) -> Self {
        Self::Arrow(error)
    }
}

impl From<StreamError> for ArrowRsError {
    fn from(error: StreamError) -> Self {
        Self::Stream(error)
    }
}

impl From<ValidationError> for ArrowRsError {
    fn from(error: ValidationError) -> Self {
        Self::Arrow(error.into())
    }
}

impl From<ReadError> for ArrowRsError {
    fn from(error: ReadError) -> Self {
        Self::Arrow(error.into())
    }
}

impl From<BridgeError> for ArrowRsError {
    fn from(error: BridgeError) -> Self {
        Self::Arrow(error.into())
    }
}

/// The stable codes of [`ArrowRsError`]'s own variants (10xx, the range of
/// dlpack-abi-arrow-rs). The variants that hold a dlpack-abi error have its code.
///
/// ```
/// use dlpack_abi::error_code::{ErrorReport, HasErrorCode};
/// use dlpack_abi_arrow_rs::{codes, ArrowRsError};
///
/// let error = ArrowRsError::from(arrow_schema::ArrowError::SchemaError("no such type".into()));
/// // What a C caller receives: the code and the message.
/// let report = ErrorReport::from(&error);
/// assert_eq!((report.code(), error.error_code()), (codes::REFUSED, codes::REFUSED));
/// assert_eq!(report.message(), "arrow-rs: Schema error: no such type");
/// ```
pub mod codes {
    use dlpack_abi::error_code::ErrorCode;

    /// arrow-rs refused, or its reader failed (the message has arrow-rs's text):
    /// [`ArrowRsError::ArrowRs`](super::ArrowRsError::ArrowRs).
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorCode;
    /// use dlpack_abi_arrow_rs::{codes, ArrowRsError};
    ///
    /// assert_eq!(codes::REFUSED, ErrorCode(1001));
    /// let error = ArrowRsError::from(arrow_schema::ArrowError::ComputeError("no".into()));
    /// assert_eq!(error.code(), codes::REFUSED);
    /// ```
    pub const REFUSED: ErrorCode = ErrorCode(1001);
}

#[cfg(test)]
mod tests {
    use super::*;
    use dlpack_abi::arrow::{errno, ProducerError};

    /// One error of each variant (a new variant does not compile until it is here).
    fn one_of_each() -> [ArrowRsError; 3] {
        let error = ArrowRsError::ArrowRs(arrow_schema::ArrowError::ComputeError("x".into()));
        match &error {
            ArrowRsError::ArrowRs(_) | ArrowRsError::Arrow(_) | ArrowRsError::Stream(_) => {}
        }
        [
            error,
            ArrowRsError::Arrow(ValidationError::Released.into()),
            ArrowRsError::Stream(StreamError::Producer(ProducerError::code_only(errno::EIO))),
        ]
    }

    /// Codes are stable: these values are pinned, whatever is added.
    #[test]
    fn pinned_values() {
        assert_eq!(codes::REFUSED, ErrorCode(1001));
    }

    /// The own variant has its code; the wrapping ones their inner error's.
    #[test]
    fn the_own_variant_has_its_code_and_wrappers_the_inner_code() {
        let [refused, arrow, stream] = one_of_each();
        assert_eq!(refused.code(), codes::REFUSED);
        assert_eq!(refused.error_code(), codes::REFUSED);
        assert_eq!(arrow.code(), ErrorCode::ARROW_RELEASED);
        assert_eq!(stream.code(), ErrorCode::STREAM_PRODUCER);
        for wrapping in [arrow, stream] {
            assert!(wrapping.code().0 < 1000, "a dlpack-abi error's code");
        }
    }

    #[test]
    fn sources_are_the_wrapped_errors() {
        for error in one_of_each() {
            let source = core::error::Error::source(&error).expect("a source");
            assert!(error.to_string().contains(&source.to_string()), "{error}");
        }
    }
}
