//! rust-numpy's own borrowed arguments (`PyReadonlyArray`, `PyReadwriteArray`) beside
//! dlpack-abi-pyo3's: for a NumPy array, a `ReadwriteTensor` also takes rust-numpy's borrow, so
//! the two kinds refuse each other on the same memory, as two rust-numpy extensions would
//! (python/tests/test_rust_numpy_borrows.py).

use dlpack_abi_pyo3::ReadonlyTensor;
use numpy::{PyReadonlyArrayDyn, PyReadwriteArrayDyn};
use pyo3::prelude::*;

/// Multiply a float64 NumPy array by ``k`` in place, through rust-numpy's ``PyReadwriteArray``.
#[pyfunction]
fn numpy_scale_(mut x: PyReadwriteArrayDyn<'_, f64>, k: f64) {
    x.as_array_mut().mapv_inplace(|value| k * value);
}

/// The sum of a float64 NumPy array, read through rust-numpy's ``PyReadonlyArray``.
#[pyfunction]
fn numpy_sum(x: PyReadonlyArrayDyn<'_, f64>) -> f64 {
    x.as_array().sum()
}

/// The number of elements of a float64 NumPy array borrowed for writing through rust-numpy's
/// ``PyReadwriteArray`` (what rust-numpy's borrow checking costs beside a ``ReadwriteTensor``:
/// ``python/bench.py``).
#[pyfunction]
fn numpy_element_count_readwrite(x: PyReadwriteArrayDyn<'_, f64>) -> usize {
    numpy::PyUntypedArrayMethods::len(&**x)
}

/// Call ``callback()`` while rust-numpy holds ``x`` borrowed for writing, and return its result.
#[pyfunction]
fn numpy_while_borrowed_(
    x: PyReadwriteArrayDyn<'_, f64>,
    callback: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let result = callback.call0()?.unbind();
    drop(x);
    Ok(result)
}

/// Call ``callback()`` while rust-numpy holds ``x`` borrowed for reading, and return its result.
#[pyfunction]
fn numpy_while_read(
    x: PyReadonlyArrayDyn<'_, f64>,
    callback: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let result = callback.call0()?.unbind();
    drop(x);
    Ok(result)
}

/// Call ``callback()`` while ``x`` is borrowed for reading through a ``ReadonlyTensor``, and
/// return its result.
#[pyfunction]
fn while_read(x: ReadonlyTensor<f64>, callback: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let result = callback.call0()?.unbind();
    drop(x);
    Ok(result)
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(numpy_scale_, module)?)?;
    module.add_function(wrap_pyfunction!(numpy_sum, module)?)?;
    module.add_function(wrap_pyfunction!(numpy_element_count_readwrite, module)?)?;
    module.add_function(wrap_pyfunction!(numpy_while_borrowed_, module)?)?;
    module.add_function(wrap_pyfunction!(numpy_while_read, module)?)?;
    module.add_function(wrap_pyfunction!(while_read, module)?)
}
