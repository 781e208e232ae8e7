//! `VersionedTensor` as a `#[pyfunction]` argument and return type: any DLPack producer goes in,
//! and a `dlpack_abi.Tensor` that NumPy, pyarrow, tvm-ffi and array-API libraries read comes out.

use pyo3::prelude::*;
use pyo3::Borrowed;

use super::{from_dlpack, DlpackRequest, PyTensor};
use crate::dlpack::VersionedTensor;

/// Any DLPack producer as an argument: a capsule (consumed once), or an object with
/// `__dlpack__`, imported by [`from_dlpack`]'s rules (the C exchange API of its type first, then
/// `__dlpack__(max_version=(1, 3))`, then the legacy call), on the CPU, without a copy.
///
/// ```no_run
/// use dlpack_abi::dlpack::{Export, VersionedTensor};
/// use pyo3::prelude::*;
///
/// /// `k * x` for any float64 array; NumPy reads the result: `np.from_dlpack(scale(x, 2.0))`.
/// #[pyfunction]
/// fn scale(x: VersionedTensor, k: f64) -> PyResult<VersionedTensor> {
///     let values: Vec<f64> = x.view().iter::<f64>()?.map(|v| k * v).collect();
///     Ok(Export::new(values, x.view().shape()).finish()?)
/// }
/// ```
impl<'a, 'py> FromPyObject<'a, 'py> for VersionedTensor {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        from_dlpack(&source, &DlpackRequest::default())
    }
}

/// A tensor returned to Python: a `dlpack_abi.Tensor` ([`PyTensor`]) whose exports are
/// writable unless the tensor is `READ_ONLY`, and whose drop attaches to the interpreter first
/// (the tensor may hold memory imported from Python).
impl<'py> IntoPyObject<'py> for VersionedTensor {
    type Target = PyTensor;
    type Output = Bound<'py, PyTensor>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyTensor>> {
        Bound::new(py, PyTensor::imported(self))
    }
}
