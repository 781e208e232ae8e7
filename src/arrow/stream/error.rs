//! The errors of consumed streams: what a producer reported ([`ProducerError`]), or
//! [`StreamError`] (that, or a struct refused by validation).

use core::ffi::c_int;
use core::fmt;

use crate::arrow::ValidationError;

/// An error a stream's producer reported: an errno-style code and, when the producer gave one,
/// its message (copied at once, as `get_last_error`'s string dies at the next call).
///
/// The message needs feature `alloc`; without it only the code is kept.
///
/// ```
/// use dlpack_abi::arrow::{errno, ProducerError};
///
/// let error = ProducerError::code_only(errno::ENOMEM);
/// assert_eq!((error.code(), error.message()), (errno::ENOMEM, None));
/// assert!(error.to_string().starts_with("the producer returned error"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerError {
    code: c_int,
    #[cfg(feature = "alloc")]
    message: Option<alloc::string::String>,
}

impl ProducerError {
    /// An error with `code` (non-zero; see [`errno`](crate::arrow::errno)) and an optional message.
    ///
    /// ```
    /// use dlpack_abi::arrow::{errno, ProducerError};
    ///
    /// let error = ProducerError::new(errno::EIO, Some("disk on fire"));
    /// assert_eq!(error.code(), errno::EIO);
    /// assert_eq!(error.message(), Some("disk on fire"));
    /// ```
    #[cfg(feature = "alloc")]
    pub fn new(code: c_int, message: Option<&str>) -> Self {
        Self {
            message: message.map(alloc::string::String::from),
            ..Self::code_only(code)
        }
    }

    /// An error with `code` and no message. A `code` of 0 (success) becomes `EIO`.
    ///
    /// ```
    /// use dlpack_abi::arrow::{errno, ProducerError};
    ///
    /// assert_eq!(ProducerError::code_only(errno::EINVAL).code(), errno::EINVAL);
    /// assert_eq!(ProducerError::code_only(0).code(), errno::EIO); // 0 is success, not an error
    /// ```
    pub fn code_only(code: c_int) -> Self {
        Self {
            code: if code == 0 {
                crate::arrow::errno::EIO
            } else {
                code
            },
            #[cfg(feature = "alloc")]
            message: None,
        }
    }

    /// The errno-style code (never 0).
    ///
    /// ```
    /// use dlpack_abi::arrow::{errno, ProducerError};
    ///
    /// assert_eq!(ProducerError::code_only(errno::ENOSYS).code(), errno::ENOSYS);
    /// ```
    pub fn code(&self) -> c_int {
        self.code
    }

    /// The producer's message, if it gave one (always `None` without feature `alloc`).
    ///
    /// ```
    /// use dlpack_abi::arrow::{errno, ProducerError};
    ///
    /// assert_eq!(ProducerError::code_only(errno::EIO).message(), None);
    /// #[cfg(feature = "alloc")]
    /// assert_eq!(ProducerError::new(errno::EIO, Some("timeout")).message(), Some("timeout"));
    /// ```
    pub fn message(&self) -> Option<&str> {
        #[cfg(feature = "alloc")]
        return self.message.as_deref();
        #[cfg(not(feature = "alloc"))]
        None
    }
}

impl fmt::Display for ProducerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the producer returned error {}", self.code)?;
        match self.message() {
            Some(message) => write!(f, ": {message}"),
            None => f.write_str(" without a message"),
        }
    }
}

/// Why a stream yielded no item: the producer failed, or what it produced was refused.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{errno, ArrayStream, ProducerError, SchemaDef, StreamError};
///
/// let items = vec![Err(ProducerError::new(errno::EIO, Some("source went away")))];
/// let mut stream = ArrayStream::from_iter(SchemaDef::new("i")?, items)?;
/// match stream.next() {
///     Some(Err(StreamError::Producer(error))) => assert_eq!(error.message(), Some("source went away")),
///     other => panic!("unexpected {other:?}"),
/// }
/// assert!(stream.next().is_none()); // fused after an error
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamError {
    /// `get_schema` or `get_next` returned a non-zero code.
    Producer(ProducerError),
    /// The stream itself, or the schema or array it produced, was refused (already released by
    /// then).
    Invalid(ValidationError),
}

// Each contract's error converts into the one that wraps it.
wraps! {
    StreamError::Invalid(ValidationError),
    StreamError::Producer(ProducerError),
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Producer(error) => error.fmt(f),
            Self::Invalid(error) => error.fmt(f),
        }
    }
}

impl core::error::Error for StreamError {}
impl core::error::Error for ProducerError {}

/// A message as a C string (for `get_last_error` and `on_error`): interior NULs become spaces,
/// so the whole message survives.
#[cfg(feature = "alloc")]
pub(crate) fn c_message(message: &str) -> Option<alloc::ffi::CString> {
    alloc::ffi::CString::new(message.replace('\0', " ")).ok()
}
