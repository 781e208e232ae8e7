//! Feature `pyo3`: [`ImageError`] as a Python exception of its kind.

use alloc::format;

use dlpack_abi_pyo3::IntoPyErr;
use pyo3::exceptions::{PyBufferError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::PyErr;

use crate::ImageError;

/// Memory the host cannot read and a layout that is not one slice as `BufferError`, a dtype
/// that is not the pixel's as `TypeError`, a shape that is not an image of the pixel as
/// `ValueError` (`OverflowError` when it does not fit `u32`), and the wrapped `AccessError` as
/// dlpack-abi-pyo3 converts it.
///
/// ```
/// use dlpack_abi_image::ImageError;
/// use pyo3::exceptions::{PyBufferError, PyValueError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error: PyErr = ImageError::Channels { found: 1, expected: 3 }.into();
///     assert!(error.is_instance_of::<PyValueError>(py));
///     let error: PyErr = ImageError::NotContiguous.into();
///     assert!(error.is_instance_of::<PyBufferError>(py));
/// });
/// ```
impl From<ImageError> for PyErr {
    fn from(error: ImageError) -> Self {
        let code = error.code();
        dlpack_abi_pyo3::with_code(exception(error), code)
    }
}

/// The exception of `error`, by kind (its code is added by the `From` impl).
fn exception(error: ImageError) -> PyErr {
    use ImageError as E;
    let message = format!("{error}");
    match error {
        E::Access(error) => error.into_py_err(),
        E::Lanes { .. } | E::DtypeMismatch { .. } => PyTypeError::new_err(message),
        E::Ndim { .. } | E::Channels { .. } => PyValueError::new_err(message),
        E::TooLarge { .. } => PyOverflowError::new_err(message),
        // `NotHostAccessible`, `NotContiguous`.
        _ => PyBufferError::new_err(message),
    }
}

/// As `From<ImageError> for PyErr`, so that `?` reaches
/// [`PyDlpackResult`](dlpack_abi_pyo3::PyDlpackResult) from an [`ImageError`].
///
/// ```
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_image::copy_image;
/// use dlpack_abi_pyo3::{IntoPyErr, PyDlpackResult};
/// use image::Rgb;
///
/// fn width(tensor: &dlpack_abi::dlpack::VersionedTensor) -> PyDlpackResult<u32> {
///     Ok(copy_image::<Rgb<u8>>(&tensor.view())?.width())
/// }
///
/// pyo3::Python::initialize();
/// let gray = Export::new(vec![0u8; 4], &[2, 2, 1]).finish()?;
/// assert!(width(&gray).is_err());
/// let error = dlpack_abi_image::ImageError::Ndim { found: 2 }.into_py_err();
/// pyo3::Python::attach(|py| assert!(error.is_instance_of::<pyo3::exceptions::PyValueError>(py)));
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
impl IntoPyErr for ImageError {
    fn into_py_err(self) -> PyErr {
        self.into()
    }
}
