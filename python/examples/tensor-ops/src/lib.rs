//! `tensor_ops`: what a pyo3 author writes with dlpack-abi and its integration crates
//! (dlpack-abi-pyo3, -arrow-rs, -ndarray), and nothing else (no `unsafe`, no `map_err`, no
//! glue).
//!
//! - `scale(x, k)` takes any DLPack producer (NumPy, pyarrow, JAX, tvm-ffi, ...) as a
//!   `PyVersionedTensor` and returns a new tensor that any consumer reads and may write.
//! - `norm(x)` reads any dtype that converts exactly to f64 (`iter_as`), and `double(x)` runs one
//!   generic body for f32 or f64 (`dispatch_dtype!`): dtype-generic kernels, no dispatch by hand.
//! - `element_count(x)` takes any DLPack producer and returns its number of elements: the
//!   smallest function with a tensor argument, whose call python/bench.py times against
//!   nanobind's `nb::ndarray` argument.
//! - `scale_(x, k)`, `add_(out, x)`: in-place kernels through `ReadwriteTensor` arguments
//!   (`in_place.rs`), borrow-checked at run time.
//! - `Grid` is a class of this module's own (`tensor_ops.Grid`) that exports its memory through
//!   `DlpackExporter`: zero-copy, read-only (the values are shared), and counted, so that a test
//!   sees every export released. Its `#[pymethods]` block is the author's own, with
//!   `#[dlpack_exporter]` above it adding the protocol's dunders.
//! - `Ramp` is another: a fresh, writable vector per export, and a method and a getter of its
//!   own beside the protocol's.

mod docs_examples;
mod in_place;
mod rust_numpy;

use std::ops::Mul;
use std::sync::{Arc, Mutex};

use arrow_array::{
    ArrayRef, Int64Array, RecordBatch, RecordBatchIterator, StringArray, StructArray,
};
use dlpack_abi::dlpack::{
    AlignedVec, ConsumerStream, Element, Export, TensorView, VersionedTensor,
};
use dlpack_abi::raw::{kDLCPU, DLDevice};
use dlpack_abi_arrow_rs::{export_device_array, export_device_reader, export_reader, ArrowRsError};
use dlpack_abi_pyo3::{
    dlpack_exporter, ArrowArrayExport, ArrowStreamExport, DlpackExporter, PyDlpackResult,
    PyVersionedTensor,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// Return ``k * x`` for a float32 or float64 array ``x`` from any DLPack producer, in any
/// layout, as a new writable tensor of the same dtype and shape.
///
/// Raises ``TypeError`` for other dtypes and for objects that are not DLPack producers.
#[pyfunction]
fn scale(x: PyVersionedTensor, k: f64) -> PyDlpackResult<PyVersionedTensor> {
    let x = x.view();
    if x.dtype() == f32::DTYPE {
        // An f32 kernel takes an f32 factor: rounding `k` is the point.
        #[allow(clippy::cast_possible_truncation)]
        return scaled(&x, k as f32);
    }
    if x.dtype() == f64::DTYPE {
        return scaled(&x, k);
    }
    Err(PyTypeError::new_err(format!("scale takes float32 or float64, not {}", x.dtype())).into())
}

/// Return the number of elements of ``x``, any DLPack producer (NumPy, pyarrow, JAX, tvm-ffi,
/// ...) of any dtype, layout and device: the import, and nothing else.
///
/// Raises ``TypeError`` for objects that are not DLPack producers, ``BufferError`` for a
/// malformed tensor.
#[pyfunction]
fn element_count(x: PyVersionedTensor) -> usize {
    x.view().element_count()
}

fn scaled<T: Element + Send + Mul<Output = T>>(
    x: &TensorView<'_>,
    k: T,
) -> PyDlpackResult<PyVersionedTensor> {
    // 64-byte aligned: JAX imports it without a copy.
    let values: AlignedVec<T> = x.iter::<T>()?.map(|value| k * value).collect();
    Ok(Export::new(values, x.shape()).finish()?.into())
}

/// The Euclidean norm of ``x``, whose dtype may be any that converts exactly to float64
/// (int8 to int32, uint8 to uint32, float32, float64), in any layout.
///
/// Raises ``TypeError`` for other dtypes (int64 among them: it would round).
#[pyfunction]
fn norm(x: PyVersionedTensor) -> PyDlpackResult<f64> {
    // The dtype is matched once; `sum` then runs one loop over the source type.
    let squares = x.view().iter_as::<f64>()?.map(|value| value * value);
    Ok(squares.sum::<f64>().sqrt())
}

/// Return ``x + x`` for a float32 or float64 array ``x``, in any layout, as a new tensor of
/// the same dtype and shape.
///
/// Raises ``TypeError`` for other dtypes, naming the two it takes.
#[pyfunction]
fn double(x: PyVersionedTensor) -> PyDlpackResult<PyVersionedTensor> {
    let x = x.view();
    // One body, compiled for f32 and for f64: `T` is the tensor's element type.
    let doubled = dlpack_abi::dispatch_dtype!(x.dtype(), [f32, f64], T => {
        let values: AlignedVec<T> = x.iter::<T>()?.map(|value| value + value).collect();
        Export::new(values, x.shape()).finish()?
    })?;
    Ok(doubled.into())
}

/// A ``rows`` x ``cols`` grid of float64 values ``i * cols + j`` that DLPack and Arrow
/// consumers read zero-copy and read-only.
// Immutable (the stable ABI allows it only from CPython 3.14): consumers remember its table.
#[cfg_attr(
    not(feature = "abi3"),
    pyclass(frozen, immutable_type, module = "tensor_ops")
)]
#[cfg_attr(feature = "abi3", pyclass(frozen, module = "tensor_ops"))]
struct Grid {
    values: Arc<[f64]>,
    shape: [i64; 2],
    /// The stream the last consumer asked for, as the hook saw it.
    last_stream: Mutex<Option<ConsumerStream>>,
}

impl DlpackExporter for Grid {
    fn dlpack_device(&self) -> DLDevice {
        DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        }
    }

    /// Shares the values: an `Arc` clone per export, so exports are read-only. CPU memory has
    /// no stream to order on; the hook only records what it was asked for.
    fn dlpack_tensor(&self, stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
        if let Ok(mut last) = self.last_stream.lock() {
            *last = Some(stream);
        }
        Ok(Export::new(Arc::clone(&self.values), &self.shape).finish()?)
    }
}

// The class's own block; the attribute adds __dlpack__, __dlpack_device__, its exchange table
// and the Arrow dunders to it.
#[dlpack_exporter]
#[pymethods]
impl Grid {
    #[new]
    fn new(rows: usize, cols: usize) -> PyResult<Self> {
        let count = rows
            .checked_mul(cols)
            .ok_or_else(|| PyTypeError::new_err("rows * cols overflows"))?;
        let values: Arc<[f64]> = (0..count).map(|i| i as f64).collect();
        Ok(Self {
            values,
            shape: [i64::try_from(rows)?, i64::try_from(cols)?],
            last_stream: Mutex::new(None),
        })
    }

    /// The stream the last export was asked to be ready on (``"Unspecified"``, ``"NoSync"``,
    /// ...), or ``None`` before the first export.
    #[getter]
    fn last_stream(&self) -> Option<String> {
        let last = self.last_stream.lock().ok()?;
        last.map(|stream| format!("{stream:?}"))
    }

    /// The number of exports alive: consumers that have not released theirs yet.
    #[getter]
    fn live_exports(&self) -> usize {
        Arc::strong_count(&self.values) - 1
    }
}

/// ``0, 1, ..., n - 1`` as int64: each export is a fresh vector moved into the tensor, which
/// its consumer may write.
#[pyclass(frozen, module = "tensor_ops")]
struct Ramp {
    n: i64,
}

impl DlpackExporter for Ramp {
    fn dlpack_device(&self) -> DLDevice {
        DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        }
    }

    fn dlpack_tensor(&self, _stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
        let values: Vec<i64> = (0..self.n).collect();
        Ok(Export::new(values, &[self.n]).finish()?)
    }
}

#[dlpack_exporter]
#[pymethods]
impl Ramp {
    #[new]
    fn new(n: i64) -> PyResult<Self> {
        if n < 0 {
            return Err(PyValueError::new_err("a ramp has no negative length"));
        }
        Ok(Self { n })
    }

    /// The sum ``0 + 1 + ... + (n - 1)``, computed without exporting.
    fn total(&self) -> i64 {
        self.n * (self.n - 1) / 2
    }

    /// The number of values.
    #[getter]
    fn length(&self) -> i64 {
        self.n
    }
}

/// An arrow-rs record batch of ``rows`` rows (``id`` int64, ``name`` utf8 with nulls), as an
/// ``ArrowArray`` that pyarrow reads through ``__arrow_c_device_array__``, zero-copy.
#[pyfunction]
fn record_batch(rows: usize) -> PyDlpackResult<ArrowArrayExport> {
    let (schema, array) = export_device_array(&StructArray::from(arrow_batch(0, rows)?))
        .map_err(|error| PyValueError::new_err(error.to_string()))?;
    Ok(ArrowArrayExport::new(schema, array)?)
}

/// An arrow-rs reader of ``count`` batches of ``rows`` rows, as an ``ArrowStream``: of device
/// arrays (``__arrow_c_device_stream__``, which arrow-rs cannot export by itself) when
/// ``device`` is true, of arrays (``__arrow_c_stream__``) otherwise.
#[pyfunction]
#[pyo3(signature = (count, rows, *, device=true))]
fn batches(count: usize, rows: usize, device: bool) -> PyResult<ArrowStreamExport> {
    let batches = (0..count)
        .map(|index| arrow_batch(index * rows, rows))
        .collect::<PyResult<Vec<_>>>()?;
    let schema = arrow_batch(0, 0)?.schema();
    let reader = Box::new(RecordBatchIterator::new(
        batches.into_iter().map(Ok),
        schema,
    ));
    let refused = |error: ArrowRsError| PyValueError::new_err(error.to_string());
    Ok(if device {
        ArrowStreamExport::new_device(export_device_reader(reader).map_err(refused)?)
    } else {
        ArrowStreamExport::new(export_reader(reader).map_err(refused)?)
    })
}

/// Rows `first..first + rows`: `id` and a `name` that is null every third row.
fn arrow_batch(first: usize, rows: usize) -> PyResult<RecordBatch> {
    let ids: Vec<i64> = (first..first + rows).map(|i| i as i64).collect();
    let names: Vec<Option<String>> = (first..first + rows)
        .map(|i| (i % 3 != 0).then(|| format!("row {i}")))
        .collect();
    RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
        ("name", Arc::new(StringArray::from(names)) as ArrayRef),
    ])
    .map_err(|error| PyValueError::new_err(error.to_string()))
}

#[pymodule]
fn tensor_ops(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(record_batch, module)?)?;
    module.add_function(wrap_pyfunction!(batches, module)?)?;
    module.add_function(wrap_pyfunction!(scale, module)?)?;
    module.add_function(wrap_pyfunction!(norm, module)?)?;
    module.add_function(wrap_pyfunction!(double, module)?)?;
    module.add_function(wrap_pyfunction!(element_count, module)?)?;
    in_place::register(module)?;
    rust_numpy::register(module)?;
    docs_examples::register(module)?;
    module.add_class::<Grid>()?;
    module.add_class::<Ramp>()?;
    Ok(())
}
