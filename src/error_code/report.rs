//! [`ErrorReport`]: an error's code and message in a fixed-size C struct, to pass across an FFI
//! boundary without allocating and without a free function.
#![allow(unsafe_code)]

use core::fmt::{self, Display, Write as _};
use core::mem::{align_of, size_of};

use super::{ErrorCode, HasErrorCode};

/// Bytes in [`ErrorReport`]'s message buffer, the terminating NUL included.
const CAPACITY: usize = 252;

/// What a truncated message ends with.
const ELLIPSIS: &str = "...";

/// An error's [`ErrorCode`] and its message, for a C caller (C `DLPackAbiErrorReport`:
/// `{ int32_t code; char message[252]; }`, 256 bytes, aligned to 4, the same on every target).
///
/// An FFI function takes a `DLPackAbiErrorReport*` from its caller (usually on the caller's
/// stack), fills it on failure and returns the code: nothing is allocated, and there is nothing
/// to free. The message is the error's `Display` text, UTF-8 and always NUL-terminated; one
/// longer than 251 bytes is cut at a character boundary and ends with `...`. Every byte of the
/// struct is written (the unused tail of `message` is zero), so no stack garbage reaches C.
///
/// ```
/// use dlpack_abi::dlpack::AccessError;
/// use dlpack_abi::error_code::{ErrorCode, ErrorReport};
///
/// /// In C: `int32_t write_value(DLPackAbiErrorReport* report);`
/// #[no_mangle]
/// pub unsafe extern "C" fn write_value(report: *mut ErrorReport) -> i32 {
///     let error = AccessError::ReadOnly; // whatever failed
///     // SAFETY: `report` is NULL or writable (the caller's contract).
///     unsafe { ErrorReport::from(&error).write_to(report) }
/// }
///
/// let mut report = ErrorReport::OK;
/// let code = unsafe { write_value(&mut report) };
/// assert_eq!(code, 207);
/// assert_eq!(report.code(), ErrorCode::ACCESS_READ_ONLY);
/// assert!(report.message().contains("READ_ONLY"));
/// ```
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ErrorReport {
    /// The code (`int32_t` in C).
    pub code: ErrorCode,
    /// The message: UTF-8, NUL-terminated, zero after the NUL, as this crate writes it (read it
    /// with [`message`](Self::message), which copes with any bytes a C caller left).
    pub message: [u8; CAPACITY],
}

static_assertions::const_assert_eq!(size_of::<ErrorReport>(), 256);
static_assertions::const_assert_eq!(align_of::<ErrorReport>(), 4);

impl ErrorReport {
    /// Bytes in the message buffer (252), the terminating NUL included: a message holds at most
    /// 251 bytes of text (C `DLPACK_ABI_ERROR_MESSAGE_SIZE`).
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorReport;
    ///
    /// assert_eq!(ErrorReport::MESSAGE_CAPACITY, 252);
    /// assert_eq!(core::mem::size_of::<ErrorReport>(), 256);
    /// ```
    pub const MESSAGE_CAPACITY: usize = CAPACITY;

    /// Success: code [`ErrorCode::OK`] and an empty message.
    ///
    /// ```
    /// use dlpack_abi::error_code::{ErrorCode, ErrorReport};
    ///
    /// assert_eq!(ErrorReport::OK.code(), ErrorCode::OK);
    /// assert_eq!(ErrorReport::OK.message(), "");
    /// ```
    pub const OK: ErrorReport = ErrorReport {
        code: ErrorCode::OK,
        message: [0; CAPACITY],
    };

    /// A report of `code` with `message`'s `Display` text (truncated as the type says). For an
    /// FFI crate's own errors: this crate's errors convert with [`From`].
    ///
    /// ```
    /// use dlpack_abi::error_code::{ErrorCode, ErrorReport};
    ///
    /// const SHAPE_MISMATCH: ErrorCode = ErrorCode(10_000); // the application's range
    /// let report = ErrorReport::new(SHAPE_MISMATCH, format_args!("x is {:?}, out is {:?}", [2, 3], [3]));
    /// assert_eq!(report.code().0, 10_000);
    /// assert_eq!(report.message(), "x is [2, 3], out is [3]");
    ///
    /// // Too long: cut at a character boundary, ending with "...".
    /// let long = ErrorReport::new(SHAPE_MISMATCH, "é".repeat(200));
    /// assert_eq!(long.message().len(), 251);
    /// assert!(long.message().ends_with("é..."));
    /// ```
    pub fn new(code: ErrorCode, message: impl Display) -> Self {
        let mut report = Self {
            code,
            message: [0; CAPACITY],
        };
        let mut writer = Truncating {
            buffer: &mut report.message,
            len: 0,
            truncated: false,
        };
        // A `fmt::Error` here is the writer's, when the buffer is full: the text is cut.
        let _ = write!(writer, "{message}");
        writer.finish();
        report
    }

    /// The code.
    ///
    /// ```
    /// use dlpack_abi::dlpack::ImportError;
    /// use dlpack_abi::error_code::{ErrorCode, ErrorReport};
    ///
    /// let report = ErrorReport::from(&ImportError::NullTensor);
    /// assert_eq!(report.code(), ErrorCode::IMPORT_NULL_TENSOR);
    /// ```
    pub const fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message: the bytes before the first NUL (all of them if C left none), up to the
    /// first that is not UTF-8 (for a report a C caller filled).
    ///
    /// ```
    /// use dlpack_abi::dlpack::ImportError;
    /// use dlpack_abi::error_code::ErrorReport;
    ///
    /// let error = ImportError::NegativeNdim { ndim: -1 };
    /// assert_eq!(ErrorReport::from(&error).message(), "DLTensor.ndim is -1, which is negative");
    /// ```
    pub fn message(&self) -> &str {
        let end = self
            .message
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(CAPACITY);
        let bytes = &self.message[..end];
        match core::str::from_utf8(bytes) {
            Ok(text) => text,
            // Valid up to `valid_up_to` by `from_utf8`'s own verdict.
            Err(error) => core::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or_default(),
        }
    }

    /// Writes this report to `out` (a C caller's `DLPackAbiErrorReport*`; NULL: nothing is
    /// written) and returns the code, for `return report.write_to(out)` in an FFI function.
    ///
    /// # Safety
    /// `out` is NULL or valid for a write of an `ErrorReport` (aligned to 4); it need not be
    /// initialized.
    ///
    /// ```
    /// use dlpack_abi::dlpack::AccessError;
    /// use dlpack_abi::error_code::ErrorReport;
    ///
    /// let mut report = core::mem::MaybeUninit::<ErrorReport>::uninit();
    /// let error = AccessError::NotContiguous;
    /// let code = unsafe { ErrorReport::from(&error).write_to(report.as_mut_ptr()) };
    /// assert_eq!(code, 206);
    /// assert_eq!(unsafe { report.assume_init() }.message(), error.to_string());
    /// // NULL: the caller wants the code only.
    /// assert_eq!(unsafe { ErrorReport::from(&error).write_to(core::ptr::null_mut()) }, 206);
    /// ```
    pub unsafe fn write_to(&self, out: *mut ErrorReport) -> i32 {
        if !out.is_null() {
            // SAFETY: non-NULL, so valid for a write (the caller's contract); `write` neither
            // reads nor drops the old contents, which may be uninitialized.
            unsafe { out.write(*self) };
        }
        self.code.0
    }
}

impl<E: HasErrorCode + Display + ?Sized> From<&E> for ErrorReport {
    /// The error's code and its `Display` text.
    ///
    /// ```
    /// use dlpack_abi::arrow::ValidationError;
    /// use dlpack_abi::error_code::{ErrorCode, ErrorReport};
    ///
    /// let report = ErrorReport::from(&ValidationError::Released);
    /// assert_eq!(report.code(), ErrorCode::ARROW_RELEASED);
    /// assert_eq!(report.message(), ValidationError::Released.to_string());
    /// ```
    fn from(error: &E) -> Self {
        Self::new(error.error_code(), error)
    }
}

impl fmt::Debug for ErrorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorReport")
            .field("code", &self.code)
            .field("message", &self.message())
            .finish()
    }
}

impl Default for ErrorReport {
    /// [`ErrorReport::OK`].
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorReport;
    ///
    /// assert_eq!(ErrorReport::default(), ErrorReport::OK);
    /// ```
    fn default() -> Self {
        Self::OK
    }
}

/// Writes into the message buffer, keeping room for the NUL; past that, cuts the text at a
/// character boundary and (in [`finish`](Self::finish)) marks the cut with [`ELLIPSIS`].
struct Truncating<'a> {
    buffer: &'a mut [u8; CAPACITY],
    len: usize,
    truncated: bool,
}

impl fmt::Write for Truncating<'_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let room = CAPACITY - 1 - self.len;
        let mut take = text.len().min(room);
        while !text.is_char_boundary(take) {
            take -= 1;
        }
        self.buffer[self.len..self.len + take].copy_from_slice(&text.as_bytes()[..take]);
        self.len += take;
        if take < text.len() {
            self.truncated = true;
            return Err(fmt::Error);
        }
        Ok(())
    }
}

impl Truncating<'_> {
    /// Ends a cut text with the ellipsis, at a character boundary; zeroes what follows.
    fn finish(self) {
        if self.truncated {
            let mut end = self.len.min(CAPACITY - 1 - ELLIPSIS.len());
            // Back to the start of a character: UTF-8 continuation bytes are 0b10xx_xxxx.
            while end > 0 && self.buffer[end] & 0xC0 == 0x80 {
                end -= 1;
            }
            self.buffer[end..end + ELLIPSIS.len()].copy_from_slice(ELLIPSIS.as_bytes());
            self.buffer[end + ELLIPSIS.len()..].fill(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_exactly_then_truncates() {
        let code = ErrorCode(10_000);
        let full = "a".repeat(CAPACITY - 1);
        assert_eq!(ErrorReport::new(code, &full).message(), full);
        let over = "a".repeat(CAPACITY);
        let cut = ErrorReport::new(code, &over);
        assert_eq!(cut.message().len(), CAPACITY - 1);
        assert!(cut.message().ends_with("a..."));
        // A 4-byte character straddling the cut is left out whole.
        let emoji = alloc::format!("{}{}", "a".repeat(246), "😀😀");
        let cut = ErrorReport::new(code, &emoji);
        assert_eq!(cut.message(), alloc::format!("{}...", "a".repeat(246)));
        assert_eq!(cut.message[cut.message().len()..], [0; 256 - 4 - 249]);
    }

    #[test]
    fn c_filled_reports_read_safely() {
        let mut report = ErrorReport::OK;
        report.message = [b'x'; CAPACITY]; // no NUL
        assert_eq!(report.message().len(), CAPACITY);
        report.message[3] = 0xFF; // not UTF-8
        assert_eq!(report.message(), "xxx");
    }
}
