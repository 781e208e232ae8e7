//! [`SafetensorsError`] as a Python exception (feature `pyo3`).

use alloc::format;

use dlpack_abi_pyo3::{export_exception, IntoPyErr};
use pyo3::exceptions::{PyKeyError, PyOSError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::PyErr;

use crate::SafetensorsError;

/// `File` as Python's own `OSError` of its errno (`FileNotFoundError`, `IsADirectoryError`, ...,
/// with `errno`, `strerror` and `filename` set), `Io` as the `io::Error`'s `OSError` subclass,
/// `Format`, `TensorSize` and `Misaligned` as `ValueError`, `NoTensor` as `KeyError`, `UnsupportedDtype` as `TypeError`,
/// `ExtentTooLarge` as `OverflowError`, `Export` as its [`ExportError`](dlpack_abi::dlpack::ExportError) converts
/// (`BufferError` for flags a consumer cannot be told, else `ValueError`), with this error's
/// message, which names the tensor.
///
/// ```
/// use dlpack_abi_safetensors::SafetensorsError;
/// use pyo3::exceptions::{PyFileNotFoundError, PyKeyError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error: PyErr = SafetensorsError::NoTensor { name: "w".into() }.into();
///     assert!(error.is_instance_of::<PyKeyError>(py));
///     let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
///     let error: PyErr = SafetensorsError::Io(missing).into();
///     assert!(error.is_instance_of::<PyFileNotFoundError>(py));
/// });
/// ```
impl From<SafetensorsError> for PyErr {
    fn from(error: SafetensorsError) -> Self {
        let code = error.code();
        dlpack_abi_pyo3::with_code(exception(error), code)
    }
}

/// The exception of `error`, by kind (its code is added by the `From` impl).
fn exception(error: SafetensorsError) -> PyErr {
    use SafetensorsError as E;
    let message = format!("{error}");
    match error {
        E::Io(error) => error.into(),
        E::File { path, error } => os_error(&path, error),
        E::NoTensor { .. } => PyKeyError::new_err(message),
        E::UnsupportedDtype { .. } => PyTypeError::new_err(message),
        E::ExtentTooLarge { .. } => PyOverflowError::new_err(message),
        // The exception of the `ExportError`, with this message (it names the tensor).
        E::Export { error, .. } => export_exception(&error, message),
        // A file refused.
        E::Format(_) | E::Misaligned { .. } | E::TensorSize { .. } => {
            PyValueError::new_err(message)
        }
    }
}

/// Python's own `OSError` for `error` of the file at `path`: on unix, for an error the system
/// reported (an errno), `OSError(errno, strerror, path)`, which Python makes the subclass of that
/// errno (`FileNotFoundError`, `IsADirectoryError`, `PermissionError`, ...), with `errno`,
/// `strerror` and `filename` set as `open()`'s are. Otherwise (no errno, such as running out of
/// memory; Windows, whose codes are no errnos) pyo3's conversion of the `io::Error`, by kind
/// (`MemoryError`, `FileNotFoundError`, ...), with the path in its message.
fn os_error(path: &std::path::Path, error: std::io::Error) -> PyErr {
    #[cfg(unix)]
    if let Some(errno) = error.raw_os_error() {
        return Python::attach(|py| {
            let strerror = py
                .import("os")
                .and_then(|os| os.call_method1("strerror", (errno,)))
                .and_then(|text| text.extract::<String>());
            match strerror {
                Ok(strerror) => {
                    PyOSError::new_err((errno, strerror, path.as_os_str().to_os_string()))
                }
                Err(_) => by_kind(path, &error),
            }
        });
    }
    by_kind(path, &error)
}

/// pyo3's `OSError` subclass for `error`'s kind, its message naming `path`.
fn by_kind(path: &std::path::Path, error: &std::io::Error) -> PyErr {
    let message = format!("{}: {error}", path.display());
    std::io::Error::new(error.kind(), message).into()
}

/// As `From<SafetensorsError> for PyErr`, so that `?` on a `SafetensorsError` works in a
/// function returning `dlpack_abi_pyo3::PyDlpackResult`.
///
/// ```
/// use dlpack_abi_pyo3::{IntoPyErr, PyDlpackResult};
/// use dlpack_abi_safetensors::SafeTensorsFile;
/// use pyo3::exceptions::PyValueError;
///
/// fn open(bytes: &[u8]) -> PyDlpackResult<usize> {
///     Ok(SafeTensorsFile::from_bytes(bytes)?.len())
/// }
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error = open(b"not a safetensors file").unwrap_err().into_inner();
///     assert!(error.is_instance_of::<PyValueError>(py));
///     let error = SafeTensorsFile::from_bytes(b"").unwrap_err().into_py_err();
///     assert!(error.is_instance_of::<PyValueError>(py));
/// });
/// ```
impl IntoPyErr for SafetensorsError {
    fn into_py_err(self) -> PyErr {
        self.into()
    }
}
