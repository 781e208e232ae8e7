//! In-place kernels with no `unsafe`: `ReadwriteTensor` arguments are the only borrow of their
//! memory while the call runs (checked at run time, across every extension built on
//! dlpack-abi), so their `&mut` is safe.

use dlpack_abi_ndarray::{view_array, view_array_mut};
use dlpack_abi_pyo3::{PyDlpackResult, ReadonlyTensor, ReadwriteTensor};
use ndarray::{IxDyn, Zip};
use pyo3::prelude::*;

/// Multiply a float64 array ``x`` of any layout by ``k``, in place, without holding the GIL.
///
/// Raises ``TypeError`` for another dtype, and ``BufferError`` for a read-only array or one
/// that another live import may share memory with.
#[pyfunction]
fn scale_(py: Python<'_>, mut x: ReadwriteTensor<f64>, k: f64) -> PyDlpackResult<()> {
    let mut view = x.view_mut();
    let mut values = view_array_mut::<f64, IxDyn>(&mut view)?;
    py.detach(|| values.mapv_inplace(|value| k * value));
    Ok(())
}

/// Add ``x`` to ``out`` in place (float64, same shape, any layouts): ``add_(a[::2], a[1::2])``
/// works, ``add_(a, a)`` raises ``BufferError`` (``out`` would alias ``x``).
#[pyfunction]
fn add_(mut out: ReadwriteTensor<f64>, x: ReadonlyTensor<f64>) -> PyDlpackResult<()> {
    let x = view_array::<f64, IxDyn>(&x.view())?;
    let mut view = out.view_mut();
    let mut out = view_array_mut::<f64, IxDyn>(&mut view)?;
    if out.shape() != x.shape() {
        return Err(pyo3::exceptions::PyValueError::new_err("add_ needs equal shapes").into());
    }
    Zip::from(&mut out).and(&x).for_each(|out, x| *out += x);
    Ok(())
}

/// Call ``callback()`` while ``x`` is borrowed for writing, and return its result: what any
/// import of the same memory meets during a long kernel.
#[pyfunction]
fn while_borrowed_(x: ReadwriteTensor<f64>, callback: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let result = callback.call0()?.unbind();
    drop(x);
    Ok(result)
}

/// The number of elements of a float64 array borrowed for writing (what passing a
/// ``ReadwriteTensor`` argument costs: ``python/bench.py``).
#[pyfunction]
fn element_count_readwrite(x: ReadwriteTensor<f64>) -> usize {
    x.view().element_count()
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(scale_, module)?)?;
    module.add_function(wrap_pyfunction!(add_, module)?)?;
    module.add_function(wrap_pyfunction!(while_borrowed_, module)?)?;
    module.add_function(wrap_pyfunction!(element_count_readwrite, module)?)
}
