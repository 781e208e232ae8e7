//! [`CandleError`] as a Python exception (feature `pyo3`).

use alloc::format;

use dlpack_abi_pyo3::IntoPyErr;
use pyo3::exceptions::{PyBufferError, PyOverflowError, PyRuntimeError, PyTypeError};
use pyo3::PyErr;

use crate::CandleError;

/// A device candle or this crate cannot use as `BufferError`, a dtype without a counterpart as
/// `TypeError`, `DimsOverflow` as `OverflowError`, candle's own error as `RuntimeError`, and the
/// wrapped `ExportError`/`AccessError` as `dlpack-abi-pyo3` converts them.
///
/// ```
/// use dlpack_abi_candle::CandleError;
/// use pyo3::exceptions::{PyOverflowError, PyTypeError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error: PyErr = CandleError::UnsupportedCandleDtype(candle_core::DType::F4).into();
///     assert!(error.is_instance_of::<PyTypeError>(py));
///     let error: PyErr = CandleError::DimsOverflow.into();
///     assert!(error.is_instance_of::<PyOverflowError>(py));
/// });
/// ```
impl From<CandleError> for PyErr {
    fn from(error: CandleError) -> Self {
        let code = error.code();
        dlpack_abi_pyo3::with_code(exception(error), code)
    }
}

/// The exception of `error`, by kind (its code is added by the `From` impl).
fn exception(error: CandleError) -> PyErr {
    use CandleError as E;
    let message = format!("{error}");
    match error {
        E::Export(error) => error.into_py_err(),
        E::Access(error) => error.into_py_err(),
        E::UnsupportedCandleDevice(_) | E::UnsupportedDevice(_) => PyBufferError::new_err(message),
        E::UnsupportedCandleDtype(_) | E::UnsupportedDtype(_) | E::VectorDtype(_) => {
            PyTypeError::new_err(message)
        }
        E::DimsOverflow => PyOverflowError::new_err(message),
        // candle's own failure.
        E::Candle(_) => PyRuntimeError::new_err(message),
    }
}

/// As `From<CandleError> for PyErr`, so that `?` on a `CandleError` works in a function
/// returning `dlpack_abi_pyo3::PyDlpackResult`.
///
/// ```
/// use candle_core::DType;
/// use dlpack_abi_candle::dlpack_dtype;
/// use dlpack_abi_pyo3::{IntoPyErr, PyDlpackResult};
/// use pyo3::exceptions::PyTypeError;
///
/// fn code(dtype: DType) -> PyDlpackResult<u8> {
///     Ok(dlpack_dtype(dtype)?.code.0)
/// }
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error = code(DType::F4).unwrap_err().into_inner();
///     assert!(error.is_instance_of::<PyTypeError>(py));
///     let error = dlpack_dtype(DType::F6E2M3).unwrap_err().into_py_err();
///     assert!(error.is_instance_of::<PyTypeError>(py));
/// });
/// ```
impl IntoPyErr for CandleError {
    fn into_py_err(self) -> PyErr {
        self.into()
    }
}
