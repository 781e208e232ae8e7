//! [`BurnError`] as a Python exception (feature `pyo3`).

use alloc::format;

use dlpack_abi_pyo3::IntoPyErr;
use pyo3::exceptions::{PyBufferError, PyOSError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::PyErr;

use crate::BurnError;

/// A dtype without a counterpart as `TypeError`, misaligned bytes as `BufferError` (as
/// `AccessError` refuses them), an extent that does not fit as `OverflowError`, a failed read
/// of burn's bytes as `OSError`, data burn refuses as `ValueError`, and the wrapped
/// `ExportError`/`AccessError` as `dlpack-abi-pyo3` converts them.
///
/// ```
/// use dlpack_abi::raw::{kDLComplex, DLDataType};
/// use dlpack_abi_burn::BurnError;
/// use pyo3::exceptions::{PyBufferError, PyTypeError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let dtype = DLDataType { code: kDLComplex, bits: 64, lanes: 1 };
///     let error: PyErr = BurnError::NoBurnDtype { dtype }.into();
///     assert!(error.is_instance_of::<PyTypeError>(py));
///     let error: PyErr = BurnError::Misaligned { address: 3, align: 4 }.into();
///     assert!(error.is_instance_of::<PyBufferError>(py));
/// });
/// ```
impl From<BurnError> for PyErr {
    fn from(error: BurnError) -> Self {
        let code = error.code();
        dlpack_abi_pyo3::with_code(exception(error), code)
    }
}

/// The exception of `error`, by kind (its code is added by the `From` impl).
fn exception(error: BurnError) -> PyErr {
    use BurnError as E;
    let message = format!("{error}");
    match error {
        E::Export(error) => error.into_py_err(),
        E::Access(error) => error.into_py_err(),
        E::Quantized { .. } | E::NoDlpackDtype { .. } | E::NoBurnDtype { .. } => {
            PyTypeError::new_err(message)
        }
        E::Misaligned { .. } => PyBufferError::new_err(message),
        E::ShapeTooLarge { .. } => PyOverflowError::new_err(message),
        E::HostAccess(_) => PyOSError::new_err(message),
        // `Data`: burn refused the data.
        E::Data(_) => PyValueError::new_err(message),
    }
}

/// As `From<BurnError> for PyErr`, so that `?` on a `BurnError` works in a function returning
/// `dlpack_abi_pyo3::PyDlpackResult`.
///
/// ```
/// use dlpack_abi_burn::BurnError;
/// use dlpack_abi_pyo3::{IntoPyErr, PyDlpackResult};
/// use pyo3::exceptions::PyOverflowError;
///
/// fn checked() -> PyDlpackResult<()> {
///     Err(BurnError::ShapeTooLarge { dim: 0, extent: usize::MAX })?
/// }
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error = checked().unwrap_err().into_inner();
///     assert!(error.is_instance_of::<PyOverflowError>(py));
///     let error = BurnError::ShapeTooLarge { dim: 1, extent: usize::MAX }.into_py_err();
///     assert!(error.is_instance_of::<PyOverflowError>(py));
/// });
/// ```
impl IntoPyErr for BurnError {
    fn into_py_err(self) -> PyErr {
        self.into()
    }
}
