//! The errors of dlpack-abi as Python exceptions: [`IntoPyErr`] for each, and
//! [`PyDlpackError`], the error type that `?` reaches from all of them (and from pyo3's
//! `PyErr`), so that a `#[pyfunction]` returning [`PyDlpackResult`] needs no `map_err`. Each
//! maps to the exception the DLPack Python spec, the array API or the Arrow PyCapsule interface
//! names for that kind of failure, with the error's message. One home: every path of this crate
//! raises through these. The table is in the crate's documentation.
//!
//! ```
//! use dlpack_abi::dlpack::{AccessError, Element, ImportError};
//! use dlpack_abi_pyo3::IntoPyErr;
//! use pyo3::exceptions::{PyBufferError, PyTypeError};
//!
//! pyo3::Python::initialize();
//! pyo3::Python::attach(|py| {
//!     let error = ImportError::NegativeNdim { ndim: -1 }.into_py_err();
//!     assert!(error.is_instance_of::<PyBufferError>(py));
//!     let error = AccessError::DtypeMismatch { requested: f64::DTYPE, found: f32::DTYPE }.into_py_err();
//!     assert!(error.is_instance_of::<PyTypeError>(py));
//!     assert_eq!(error.value(py).to_string(), "DLTensor.dtype is float32, but the requested type is float64");
//! });
//! ```

use alloc::format;
use alloc::string::{String, ToString};
use core::fmt;

use pyo3::exceptions::{
    PyBufferError, PyIndexError, PyOSError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyModule, PyType};
use pyo3::{intern, PyErr, PyResult};

use dlpack_abi::arrow::{
    ArrowError, AsyncStreamError, BridgeError, MetadataError, ProducerError, ReadError,
    StreamError, ValidationError,
};
use dlpack_abi::dlpack::{
    AccessError, ConsumerStreamError, ExportError, ImportError, IntoLegacyError, OrderError,
    TensorError,
};
use dlpack_abi::error_code::{ErrorCode, HasErrorCode};

/// An error that becomes a Python exception of its kind: every error of dlpack-abi, this
/// crate's [`BorrowError`](crate::BorrowError), the integration crates' errors (with their
/// `pyo3` features), and `PyErr` itself. What [`PyDlpackError`] converts from.
///
/// The orphan rule is why this is a trait of its own: neither this crate nor dlpack-abi may
/// write `From<dlpack_abi::dlpack::ImportError> for PyErr`. Implement it for an error type of
/// your own to make `?` reach [`PyDlpackResult`] from it.
///
/// ```
/// use dlpack_abi_pyo3::{IntoPyErr, PyDlpackResult};
/// use pyo3::exceptions::PyValueError;
/// use pyo3::PyErr;
///
/// #[derive(Debug)]
/// struct NotPositive(f64);
/// impl IntoPyErr for NotPositive {
///     fn into_py_err(self) -> PyErr {
///         PyValueError::new_err(format!("{} is not positive", self.0))
///     }
/// }
///
/// fn check(x: f64) -> PyDlpackResult<f64> {
///     if x <= 0.0 {
///         return Err(NotPositive(x).into());
///     }
///     Ok(x)
/// }
/// pyo3::Python::initialize();
/// assert!(check(-1.0).is_err());
/// ```
pub trait IntoPyErr {
    /// The exception.
    ///
    /// ```
    /// use dlpack_abi::dlpack::ImportError;
    /// use dlpack_abi_pyo3::IntoPyErr;
    ///
    /// pyo3::Python::initialize();
    /// let error = ImportError::NullTensor.into_py_err();
    /// pyo3::Python::attach(|py| {
    ///     assert!(error.is_instance_of::<pyo3::exceptions::PyBufferError>(py));
    /// });
    /// ```
    fn into_py_err(self) -> PyErr;
}

impl IntoPyErr for PyErr {
    fn into_py_err(self) -> PyErr {
        self
    }
}

/// The errors pyo3 converts into exceptions itself (a failed cast, a borrowed class, an integer
/// that does not fit, I/O, ...): as pyo3 converts them, so that `?` on them reaches
/// [`PyDlpackResult`] too.
macro_rules! as_pyo3_converts {
    ($($(#[$doc:meta])* $error:ty,)+) => {$(
        $(#[$doc])*
        impl IntoPyErr for $error {
            fn into_py_err(self) -> PyErr {
                self.into()
            }
        }
    )+};
}

as_pyo3_converts! {
    /// A Rust integer that does not fit another (`i64::try_from(len)?`): `OverflowError`.
    core::num::TryFromIntError,
    /// `TypeError`, as pyo3's `cast`.
    pyo3::CastError<'_, '_>,
    /// `TypeError`, as pyo3's `cast_into`.
    pyo3::CastIntoError<'_>,
    /// A `#[pyclass]` already borrowed mutably: `RuntimeError`.
    pyo3::pycell::PyBorrowError,
    /// A `#[pyclass]` already borrowed: `RuntimeError`.
    pyo3::pycell::PyBorrowMutError,
    /// The `OSError` subclass of the error's kind (`FileNotFoundError`, ...).
    std::io::Error,
    /// `ValueError`.
    core::num::ParseIntError,
    /// `ValueError`.
    core::num::ParseFloatError,
    /// `UnicodeDecodeError`.
    alloc::string::FromUtf8Error,
    /// `ValueError`.
    alloc::ffi::NulError,
}

/// A Python exception made from any [`IntoPyErr`] error: the error type of
/// [`PyDlpackResult`], which a `#[pyfunction]` returns so that `?` converts dlpack-abi's
/// errors, the integrations', and pyo3's `PyErr` alike. pyo3 raises it as the exception it
/// holds.
///
/// ```no_run
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_pyo3::{PyDlpackResult, PyVersionedTensor};
/// use pyo3::prelude::*;
///
/// #[pyfunction] // `?` on an AccessError, an ExportError and a PyErr
/// fn first_row(x: PyVersionedTensor, n: &Bound<'_, PyAny>) -> PyDlpackResult<PyVersionedTensor> {
///     let n: usize = n.extract()?;
///     let row: Vec<f32> = x.view().iter::<f32>()?.take(n).collect();
///     Ok(Export::new(row, &[i64::try_from(n)?]).finish()?.into())
/// }
/// ```
pub struct PyDlpackError(PyErr);

impl PyDlpackError {
    /// The exception.
    ///
    /// ```
    /// use dlpack_abi::dlpack::AccessError;
    /// use dlpack_abi_pyo3::PyDlpackError;
    ///
    /// pyo3::Python::initialize();
    /// let error = PyDlpackError::from(AccessError::ReadOnly).into_inner();
    /// pyo3::Python::attach(|py| {
    ///     assert!(error.is_instance_of::<pyo3::exceptions::PyBufferError>(py));
    /// });
    /// ```
    pub fn into_inner(self) -> PyErr {
        self.0
    }
}

impl<E: IntoPyErr> From<E> for PyDlpackError {
    fn from(error: E) -> Self {
        Self(error.into_py_err())
    }
}

impl From<PyDlpackError> for PyErr {
    fn from(error: PyDlpackError) -> Self {
        error.0
    }
}

impl fmt::Debug for PyDlpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for PyDlpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for PyDlpackError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// The result of a `#[pyfunction]` that uses dlpack-abi: `?` works on every error of the
/// workspace and on `PyErr` (see [`PyDlpackError`]).
///
/// ```no_run
/// use dlpack_abi_pyo3::{PyDlpackResult, PyVersionedTensor};
/// use pyo3::prelude::*;
///
/// #[pyfunction]
/// fn total(x: PyVersionedTensor) -> PyDlpackResult<f64> {
///     Ok(x.view().iter::<f64>()?.sum())
/// }
/// ```
pub type PyDlpackResult<T> = Result<T, PyDlpackError>;

/// `.py()?` in a function returning `PyResult`: this crate's own shorthand.
pub(crate) trait ToPyResult<T> {
    /// The error as its exception.
    fn py(self) -> PyResult<T>;
}

impl<T, E: IntoPyErr> ToPyResult<T> for Result<T, E> {
    #[inline(always)]
    fn py(self) -> PyResult<T> {
        self.map_err(IntoPyErr::into_py_err)
    }
}

impl IntoPyErr for ImportError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| {
            PyBufferError::new_err(format!("invalid DLPack tensor: {error}"))
        })
    }
}

/// A dtype refusal is a `TypeError` that names the argument it is about when it is raised by
/// an argument's extraction (`ReadwriteTensor<f64>`, `ReadonlyTensor<f32>`): `argument 'x':
/// DLTensor.dtype is float32, but the requested type is float64`, on every Python version.
/// Its `.code` is the stable code ([`ErrorCode`](dlpack_abi::error_code::ErrorCode)).
///
/// ```
/// use dlpack_abi::dlpack::{AccessError, Element};
/// use dlpack_abi_pyo3::IntoPyErr;
/// use pyo3::prelude::*;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error = AccessError::DtypeMismatch { requested: f64::DTYPE, found: f32::DTYPE }.into_py_err();
///     assert!(error.is_instance_of::<pyo3::exceptions::PyTypeError>(py));
///     assert_eq!(error.value(py).getattr("code").unwrap().extract::<i32>().unwrap(), 204);
///     // What pyo3 does to an argument's extraction error: the note names the argument.
///     error.value(py).call_method1("add_note", ("while processing 'x'",)).unwrap();
///     assert_eq!(
///         error.value(py).to_string(),
///         "argument 'x': DLTensor.dtype is float32, but the requested type is float64"
///     );
/// });
/// ```
impl IntoPyErr for AccessError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| {
            let message = format!("{error}");
            match error {
                AccessError::DtypeMismatch { .. } | AccessError::UnsupportedDtype { .. } => {
                    dtype_error(message, error.error_code())
                }
                AccessError::IndexRank { .. } | AccessError::IndexOutOfBounds { .. } => {
                    PyIndexError::new_err(message)
                }
                AccessError::DimensionMismatch { .. } => PyValueError::new_err(message),
                _ => PyBufferError::new_err(message),
            }
        })
    }
}

/// The class of dtype refusals: a `TypeError` that prints and pickles as one, with the stable
/// code as `.code`, whose message names the argument it is about. pyo3 0.30 names the argument
/// of an extraction error only in a note (`add_note("while processing 'x'")`, which Python 3.10
/// lacks, and which `str(error)` leaves out), so that `add_(out, x)` gave one text for either
/// argument; this class takes that note into the message instead.
const DTYPE_ERROR: &core::ffi::CStr = cr#"
import builtins

_PREFIX = "while processing '"


class TypeError(builtins.TypeError):
    """A dtype refusal: TypeError, with the stable error code as ``code``."""

    __module__ = "builtins"

    def __init__(self, message="", code=None):
        super().__init__(message)
        self.code = code

    def add_note(self, note):
        if (
            isinstance(note, str) and note.startswith(_PREFIX) and note.endswith("'")
            and len(self.args) == 1 and not self.args[0].startswith("argument '")
        ):
            self.args = (f"argument '{note[len(_PREFIX):-1]}': {self.args[0]}",)
        elif hasattr(builtins.TypeError, "add_note"):
            super().add_note(note)
        else:
            self.__notes__ = [*getattr(self, "__notes__", ()), note]

    def __reduce__(self):
        return builtins.TypeError, self.args, self.__dict__
"#;

/// A [`DTYPE_ERROR`] with `message` and `code`; a plain `TypeError` if the class cannot be made.
fn dtype_error(message: String, code: ErrorCode) -> PyErr {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    Python::attach(|py| {
        let class = CLASS.get_or_try_init(py, || {
            let module = PyModule::from_code(
                py,
                DTYPE_ERROR,
                c"dlpack_abi_pyo3/errors.py",
                c"_dlpack_abi_pyo3_errors",
            )?;
            PyResult::Ok(module.getattr("TypeError")?.cast_into::<PyType>()?.unbind())
        });
        match class {
            Ok(class) => PyErr::from_type(class.bind(py).clone(), (message, code.0)),
            Err(_) => PyTypeError::new_err(message),
        }
    })
}

impl IntoPyErr for ExportError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| export_exception(&error, format!("{error}")))
    }
}

/// The exception `exception` makes of `error`, with `error`'s stable code as its `.code`: the
/// body of every [`IntoPyErr`] of this crate.
fn coded<E: HasErrorCode>(error: E, exception: impl FnOnce(E) -> PyErr) -> PyErr {
    let code = error.error_code();
    with_code(exception(error), code)
}

/// `error` with `code`, the stable code of the error it was made from, as its `.code` attribute:
/// what every exception made from this workspace's errors ([`IntoPyErr`]) carries, so that
/// Python code can tell refusals apart without parsing messages. An exception that takes no
/// attributes is returned as it is.
///
/// ```
/// use dlpack_abi::error_code::ErrorCode;
/// use dlpack_abi_pyo3::with_code;
/// use pyo3::exceptions::PyValueError;
/// use pyo3::prelude::*;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error = with_code(PyValueError::new_err("no"), ErrorCode(1101));
///     assert_eq!(error.value(py).getattr("code").unwrap().extract::<i32>().unwrap(), 1101);
/// });
/// ```
pub fn with_code(error: PyErr, code: ErrorCode) -> PyErr {
    Python::attach(|py| {
        let _ = error.value(py).setattr(intern!(py, "code"), code.0);
    });
    error
}

/// The exception of an [`ExportError`] (`BufferError` for flags a consumer cannot be told, else
/// `ValueError`), with `message`: the error's own, or that of an error that wraps it and says
/// more (an integration's, naming the tensor). One home for the rule.
///
/// ```
/// use dlpack_abi::dlpack::ExportError;
/// use dlpack_abi::raw::DLPackFlags;
/// use dlpack_abi_pyo3::export_exception;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error = ExportError::FlagsNotRepresentable { flags: DLPackFlags::READ_ONLY };
///     let exception = export_exception(&error, format!("tensor \"w\": {error}"));
///     assert!(exception.is_instance_of::<pyo3::exceptions::PyBufferError>(py));
///     assert!(exception.value(py).to_string().starts_with("tensor \"w\""));
/// });
/// ```
pub fn export_exception(error: &ExportError, message: String) -> PyErr {
    match error {
        ExportError::FlagsNotRepresentable { .. } => PyBufferError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// As the [`ExportError`] it carries (the tensor is dropped).
impl IntoPyErr for IntoLegacyError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| {
            export_exception(&error.error(), format!("{error}"))
        })
    }
}

impl IntoPyErr for TensorError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| match error {
            TensorError::Import(error) => error.into_py_err(),
            TensorError::Access(error) => error.into_py_err(),
            TensorError::Export(error) => error.into_py_err(),
            other => PyBufferError::new_err(other.to_string()),
        })
    }
}

impl IntoPyErr for ConsumerStreamError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| {
            let message = format!("{error}");
            match error {
                ConsumerStreamError::Invalid { .. } => PyValueError::new_err(message),
                _ => PyBufferError::new_err(message),
            }
        })
    }
}

/// A stream the producer cannot order on is a `BufferError` (the array API's convention); a
/// device runtime's failure a `RuntimeError`.
impl IntoPyErr for OrderError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| {
            let message = format!("{error}");
            match error {
                OrderError::Runtime { .. } => PyRuntimeError::new_err(message),
                _ => PyBufferError::new_err(message),
            }
        })
    }
}

impl IntoPyErr for ValidationError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| {
            PyValueError::new_err(format!("invalid Arrow data: {error}"))
        })
    }
}

impl IntoPyErr for ReadError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| PyValueError::new_err(format!("{error}")))
    }
}

impl IntoPyErr for BridgeError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| PyBufferError::new_err(format!("{error}")))
    }
}

impl IntoPyErr for ArrowError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| match error {
            ArrowError::Validation(error) => error.into_py_err(),
            ArrowError::Read(error) => error.into_py_err(),
            ArrowError::Bridge(error) => error.into_py_err(),
            other => PyValueError::new_err(other.to_string()),
        })
    }
}

impl IntoPyErr for StreamError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| match error {
            StreamError::Producer(error) => error.into_py_err(),
            StreamError::Invalid(error) => error.into_py_err(),
            other => PyValueError::new_err(other.to_string()),
        })
    }
}

/// `OSError(errno, message)`.
impl IntoPyErr for ProducerError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| {
            let message = error
                .message()
                .unwrap_or("the Arrow stream's producer failed");
            PyOSError::new_err((error.code(), message.to_string()))
        })
    }
}

/// `ValueError`: invalid Arrow data.
impl IntoPyErr for MetadataError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| {
            PyValueError::new_err(format!("invalid Arrow metadata: {error}"))
        })
    }
}

/// As the error it holds; a broken protocol, `RuntimeError`.
///
/// ```
/// use dlpack_abi::arrow::{AsyncStreamError, ProducerError};
/// use dlpack_abi_pyo3::IntoPyErr;
/// use pyo3::exceptions::{PyOSError, PyRuntimeError};
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error = AsyncStreamError::Protocol("a task before the schema").into_py_err();
///     assert!(error.is_instance_of::<PyRuntimeError>(py));
///     let error = AsyncStreamError::Producer(ProducerError::code_only(5)).into_py_err();
///     assert!(error.is_instance_of::<PyOSError>(py));
/// });
/// ```
impl IntoPyErr for AsyncStreamError {
    fn into_py_err(self) -> PyErr {
        coded(self, |error| match error {
            Self::Producer(error) => error.into_py_err(),
            Self::Invalid(error) => error.into_py_err(),
            other => PyRuntimeError::new_err(other.to_string()),
        })
    }
}

/// Runs `body`, turning a panic into a `PanicException` (with the panic's message) instead of
/// letting it unwind into C, which would abort the process: the guard of every function this
/// crate hands to C that runs code it does not control (an exporter's `dlpack_tensor`, say).
pub(crate) fn catching_panics<R>(what: &str, body: impl FnOnce() -> PyResult<R>) -> PyResult<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| {
                payload
                    .downcast_ref::<alloc::string::String>()
                    .map(|s| s.as_str())
            })
            .unwrap_or("a panic without a message");
        Err(pyo3::panic::PanicException::new_err(format!(
            "{what} panicked: {message}"
        )))
    })
}

/// The stable numeric codes of this crate's own error, [`BorrowError`](crate::BorrowError): the
/// range 16xx of the workspace's integrations (dlpack-abi's `error_code` module documents the
/// ranges). Values are never renumbered or reused.
///
/// ```
/// use dlpack_abi::error_code::ErrorReport;
/// use dlpack_abi_pyo3::{codes, BorrowError};
///
/// let report = ErrorReport::from(&BorrowError::BorrowedMutably); // for C: code and message
/// assert_eq!(report.code(), codes::BORROWED_MUTABLY);
/// assert_eq!(report.code().0, 1601);
/// ```
pub mod codes {
    use dlpack_abi::error_code::ErrorCode;

    /// The memory is being written through a live `ReadwriteTensor`.
    ///
    /// ```
    /// use dlpack_abi_pyo3::{codes, BorrowError};
    ///
    /// assert_eq!(codes::BORROWED_MUTABLY.0, 1601);
    /// assert_eq!(BorrowError::BorrowedMutably.code(), codes::BORROWED_MUTABLY);
    /// ```
    pub const BORROWED_MUTABLY: ErrorCode = ErrorCode(1601);
    /// A `ReadwriteTensor` was asked for memory another live import may share.
    ///
    /// ```
    /// use dlpack_abi_pyo3::{codes, BorrowError};
    ///
    /// assert_eq!(codes::SHARED.0, 1602);
    /// assert_eq!(BorrowError::Shared.code(), codes::SHARED);
    /// ```
    pub const SHARED: ErrorCode = ErrorCode(1602);
    /// A `ReadwriteTensor` was given a copy (`IS_COPIED`): writes would not reach the array.
    ///
    /// ```
    /// use dlpack_abi_pyo3::{codes, BorrowError};
    ///
    /// assert_eq!(codes::COPIED.0, 1603);
    /// assert_eq!(BorrowError::Copied.code(), codes::COPIED);
    /// ```
    pub const COPIED: ErrorCode = ErrorCode(1603);
}

impl crate::BorrowError {
    /// This error's stable code (16xx: [`codes`]).
    ///
    /// ```
    /// use dlpack_abi::error_code::ErrorReport;
    /// use dlpack_abi_pyo3::{codes, BorrowError};
    ///
    /// assert_eq!(BorrowError::Shared.code(), codes::SHARED);
    /// assert_eq!(ErrorReport::from(&BorrowError::Shared).code().0, 1602);
    /// ```
    pub const fn code(&self) -> dlpack_abi::error_code::ErrorCode {
        match self {
            Self::BorrowedMutably => codes::BORROWED_MUTABLY,
            Self::Shared => codes::SHARED,
            Self::Copied => codes::COPIED,
        }
    }
}

impl dlpack_abi::error_code::HasErrorCode for crate::BorrowError {
    fn error_code(&self) -> dlpack_abi::error_code::ErrorCode {
        self.code()
    }
}

#[cfg(test)]
mod tests {
    use super::codes;
    use crate::BorrowError;

    /// The values are pinned, distinct and in this crate's range.
    #[test]
    fn borrow_codes_are_pinned_and_in_range() {
        let codes = [
            (
                BorrowError::BorrowedMutably.code(),
                codes::BORROWED_MUTABLY,
                1601,
            ),
            (BorrowError::Shared.code(), codes::SHARED, 1602),
            (BorrowError::Copied.code(), codes::COPIED, 1603),
        ];
        for (code, constant, value) in codes {
            assert_eq!(code, constant);
            assert_eq!(code.0, value);
            assert!((1600..1700).contains(&code.0));
        }
    }
}
