//! The Rust examples of docs/python.md, verbatim (python/tests/test_in_place_docs.py checks
//! that each is in the guide word for word), as the functions of the submodule
//! `tensor_ops.docs`, so that the guide's claims about them run as tests.

// docs/python.md, "In-place kernels without `unsafe`": from here to the end of `add_`.
use dlpack_abi_pyo3::{PyDlpackResult, ReadonlyTensor, ReadwriteTensor};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// out += x, in place, for float32 arrays of one shape in any layouts: add_(a[::2], a[1::2])
/// works, add_(a, a) and add_(a, a[::2]) raise BufferError.
#[pyfunction]
fn add_(mut out: ReadwriteTensor<f32>, x: ReadonlyTensor<f32>) -> PyDlpackResult<()> {
    if out.view().shape() != x.view().shape() {
        return Err(PyValueError::new_err("add_ takes out and x of one shape").into());
    }
    // Row-major order through the strides, both: the elements of one index meet.
    for (out, x) in out.iter_mut()?.zip(x.view().iter::<f32>()?) {
        *out += x;
    }
    Ok(())
}

/// Adds the submodule `docs` to `module`.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let docs = PyModule::new(module.py(), "docs")?;
    docs.add_function(wrap_pyfunction!(add_, &docs)?)?;
    module.add_submodule(&docs)
}
