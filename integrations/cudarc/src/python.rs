//! Feature `pyo3`: [`CudaExport::into_py_tensor`], a `dlpack_abi.Tensor` whose exports are
//! stream-ordered, and [`CudaError`] as a Python exception (`From` for `PyErr`, and
//! [`IntoPyErr`] for [`PyDlpackResult`](dlpack_abi_pyo3::PyDlpackResult)).

use alloc::string::ToString;

use dlpack_abi::dlpack::Element;
use dlpack_abi_pyo3::{IntoPyErr, PyTensor};
use pyo3::exceptions::{PyBufferError, PyRuntimeError};
use pyo3::PyErr;

use crate::{CudaError, CudaExport};

impl<T: Element> CudaExport<T> {
    /// A `dlpack_abi.Tensor` for Python, whose exports run [`order`](Self::order): NumPy-like
    /// consumers (CuPy, PyTorch, JAX) pass their stream to `__dlpack__` and get the data
    /// ordered before it. Writable when the slice was moved in
    /// ([`export_slice`](crate::export_slice)).
    ///
    /// # Errors
    /// Those of [`finish`](Self::finish).
    ///
    /// The README's CuPy ⇄ Rust example (compiled here):
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// use dlpack_abi_cudarc::{consumer_stream, export_slice, import_slice, CudaError};
    /// use dlpack_abi_pyo3::{from_dlpack, DlpackRequest, PyTensor};
    /// use pyo3::prelude::*;
    ///
    /// /// Rust → CuPy: values a kernel may still be writing on our stream.
    /// #[pyfunction]
    /// fn squares(n: usize) -> PyResult<PyTensor> {
    ///     let stream = CudaContext::new(0).and_then(|gpu| gpu.new_stream()).map_err(CudaError::from)?;
    ///     let values = stream.alloc_zeros::<f32>(n).map_err(CudaError::from)?; // + a kernel on `stream`
    ///     Ok(export_slice(values).into_py_tensor()?) // __dlpack__(stream=s): s waits on `stream`
    /// }
    ///
    /// /// CuPy → Rust: read on our own stream, after the producer's work, with no device sync.
    /// #[pyfunction]
    /// fn total(x: &Bound<'_, PyAny>) -> PyResult<f32> {
    ///     let stream = CudaContext::new(0).and_then(|gpu| gpu.new_stream()).map_err(CudaError::from)?;
    ///     let mut request = DlpackRequest::default();
    ///     request.stream = Some(consumer_stream(&stream).into_pyobject(x.py())?.into_any().unbind());
    ///     let tensor = import_slice::<f32>(from_dlpack(x, &request)?, &stream)?;
    ///     Ok(stream.clone_dtoh(tensor.slice()).map_err(CudaError::from)?.iter().sum())
    /// }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "pyo3")))]
    pub fn into_py_tensor(self) -> Result<PyTensor, CudaError> {
        let order = self.order();
        let writable = self.is_owned();
        let tensor = self.finish()?;
        let tensor = if writable {
            PyTensor::new_writable(tensor)
        } else {
            PyTensor::new(tensor)
        };
        Ok(tensor.with_order(order))
    }
}

/// Into the exception its kind calls for: the wrapped errors as dlpack-abi-pyo3 converts them,
/// a tensor on another device (or not CUDA's) a `BufferError`, the driver's a `RuntimeError`.
///
/// ```
/// use dlpack_abi_cudarc::CudaError;
/// use dlpack_abi::dlpack::AccessError;
/// use dlpack_abi::raw::kDLCPU;
/// use pyo3::exceptions::{PyBufferError, PyRuntimeError};
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error = pyo3::PyErr::from(CudaError::NotCuda { device_type: kDLCPU, device_id: 0 });
///     assert!(error.is_instance_of::<PyBufferError>(py));
///     assert_eq!(error.value(py).to_string(), "the memory is on kDLCPU:0, not a CUDA device");
///     let driver = cudarc::driver::DriverError(cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY);
///     assert!(pyo3::PyErr::from(CudaError::Driver(driver)).is_instance_of::<PyRuntimeError>(py));
///     // A wrapped error converts as on its own: a layout refused is a BufferError.
///     let error = pyo3::PyErr::from(CudaError::Access(AccessError::NotContiguous));
///     assert!(error.is_instance_of::<PyBufferError>(py));
/// });
/// ```
impl From<CudaError> for PyErr {
    fn from(error: CudaError) -> Self {
        let code = error.code();
        dlpack_abi_pyo3::with_code(exception(error), code)
    }
}

/// The exception of `error`, by kind (its code is added by the `From` impl).
fn exception(error: CudaError) -> PyErr {
    match error {
        CudaError::Access(error) => error.into_py_err(),
        CudaError::Export(error) => error.into_py_err(),
        CudaError::Bridge(error) => error.into_py_err(),
        CudaError::Order(error) => error.into_py_err(),
        CudaError::NotCuda { .. } | CudaError::OtherDevice { .. } => {
            PyBufferError::new_err(error.to_string())
        }
        CudaError::Driver(_) => PyRuntimeError::new_err(error.to_string()),
    }
}

/// As `From<CudaError> for PyErr`, so that `?` reaches a
/// [`PyDlpackResult`](dlpack_abi_pyo3::PyDlpackResult) from a [`CudaError`].
///
/// ```
/// use dlpack_abi_cudarc::CudaError;
/// use dlpack_abi_pyo3::PyDlpackResult;
///
/// /// Refuses a second GPU (a `BufferError` in Python).
/// fn on_gpu_0(device_id: i64) -> PyDlpackResult<()> {
///     if device_id != 0 {
///         return Err(CudaError::OtherDevice { device_id, ordinal: 0 }.into());
///     }
///     Ok(())
/// }
///
/// pyo3::Python::initialize();
/// assert!(on_gpu_0(0).is_ok());
/// let error = on_gpu_0(1).unwrap_err().into_inner();
/// pyo3::Python::attach(|py| assert!(error.is_instance_of::<pyo3::exceptions::PyBufferError>(py)));
/// ```
impl IntoPyErr for CudaError {
    fn into_py_err(self) -> PyErr {
        self.into()
    }
}
