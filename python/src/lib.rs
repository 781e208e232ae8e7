//! The `dlpack_abi` Python module: `Tensor`, `ArrowArray`, `ArrowStream`, `from_dlpack`,
//! `counts`, and small examples of Rust functions that export and import.

use abi::arrow::{Array, ArrayStream, BridgeError, ProducerError, SchemaDef};
use abi::dlpack::{AlignedVec, ConsumerStream, Export, VersionedTensor};
use abi::python::{
    from_dlpack, import_array, AnyArrowArray, AnyArrowStream, ArrowStreamExport, DlpackExporter,
    DlpackRequest, PyTensor,
};
use abi::raw::{kDLCPU, DLDevice};
use pyo3::prelude::*;
use std::sync::Arc;

/// `[0.0, 1.0, ..., n - 1]` as a read-only f32 tensor owned by Rust (export example).
#[pyfunction]
fn ramp(n: usize) -> PyResult<PyTensor> {
    // 64-byte aligned, as every buffer of ours: JAX imports it with `copy=False`.
    let values: AlignedVec<f32> = (0..n).map(|i| i as f32).collect();
    let tensor: VersionedTensor = Export::new(values, &[i64::try_from(n)?]).finish()?;
    Ok(PyTensor::new(tensor))
}

/// `k * x` for a float64 array from any DLPack producer, as a new tensor NumPy can write: the
/// argument and return types a pyo3 author writes, with no `unsafe` and no `map_err`.
#[pyfunction]
fn scale(x: VersionedTensor, k: f64) -> PyResult<VersionedTensor> {
    let values: AlignedVec<f64> = x.view().iter::<f64>()?.map(|v| k * v).collect();
    Ok(Export::new(values, x.view().shape()).finish()?)
}

/// Any Arrow array, returned as ours: the Arrow argument and return types.
#[pyfunction]
fn arrow_passthrough(x: AnyArrowArray) -> AnyArrowArray {
    x
}

/// The number of rows of any Arrow stream (CPU or device); a producer's error is an `OSError`.
#[pyfunction]
fn count_rows(stream: AnyArrowStream) -> PyResult<usize> {
    let mut rows = 0;
    match stream {
        AnyArrowStream::Cpu(stream) => {
            for batch in stream {
                rows += batch?.len();
            }
        }
        AnyArrowStream::Device(stream) => {
            for batch in stream {
                rows += batch?.len();
            }
        }
    }
    Ok(rows)
}

/// A `#[pyclass]` of one's own that exports itself: an 8-bit image whose pixels NumPy reads with
/// `np.from_dlpack(image)`, zero-copy and read-only (the pixels are shared).
#[pyclass(frozen)]
struct Image {
    pixels: Arc<AlignedVec<u8>>,
    height: i64,
    width: i64,
}

impl DlpackExporter for Image {
    fn dlpack_device(&self) -> DLDevice {
        DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        }
    }

    /// Shares the pixels (an `Arc` clone, so the export is read-only). CPU memory: no stream.
    fn dlpack_tensor(&self, _stream: ConsumerStream) -> PyResult<VersionedTensor> {
        Ok(Export::new(Arc::clone(&self.pixels), &[self.height, self.width]).finish()?)
    }
}

abi::dlpack_pymethods! {
    impl Image {
        /// A `height` x `width` image whose pixel `(i, j)` is `i * width + j` (mod 256).
        #[new]
        fn new(height: usize, width: usize) -> PyResult<Self> {
            let pixels: Arc<AlignedVec<u8>> = Arc::new((0..height * width).map(|i| i as u8).collect());
            let height = i64::try_from(height)?;
            let width = i64::try_from(width)?;
            Ok(Self {
                pixels,
                height,
                width,
            })
        }
    }
}

/// The sum of a float64 array from any DLPack producer (import example).
#[pyfunction]
fn total(array: &Bound<'_, PyAny>) -> PyResult<f64> {
    let tensor = from_dlpack(array, &DlpackRequest::default())?;
    // Every error of the safe layers converts into the Python exception its kind calls for.
    let values = tensor.view().as_slice::<f64>()?;
    Ok(values.iter().sum())
}

/// The sum of an int64 Arrow array from any producer of `__arrow_c_array__` (or, for CPU data,
/// `__arrow_c_device_array__`), nulls skipped (Arrow import example).
#[pyfunction]
fn sum_int64(array: &Bound<'_, PyAny>) -> PyResult<i64> {
    let (schema, array) = import_array(array, None)?;
    let view = array.view(schema.view())?;
    let values = view.values::<i64>()?;
    let valid = view.validity()?;
    Ok(values
        .iter()
        .enumerate()
        .filter(|&(i, _)| valid.is_none_or(|bits| bits.get(i) == Some(true)))
        .map(|(_, &value)| value)
        .sum())
}

/// A stream of int64 arrays, one per batch, failing with EIO and `message` after them when a
/// message is given.
#[pyfunction]
#[pyo3(signature = (batches, error=None))]
fn int64_stream(batches: Vec<Vec<i64>>, error: Option<String>) -> PyResult<ArrowStreamExport> {
    let arrays: Vec<Result<Array, BridgeError>> =
        batches.into_iter().map(Array::from_vec).collect();
    let failure =
        error.map(|message| Err(ProducerError::new(abi::arrow::errno::EIO, Some(&message))));
    let items = arrays
        .into_iter()
        .map(|array| array.map_err(|_| ProducerError::code_only(abi::arrow::errno::EINVAL)))
        .chain(failure);
    let stream = ArrayStream::from_iter(SchemaDef::of::<i64>()?, items)?;
    Ok(ArrowStreamExport::new(stream))
}

/// The process-wide counters of the Python glue, as a dict (builds with `--features counters`).
#[cfg(feature = "counters")]
#[pyfunction]
fn counts(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let counts = abi::python::counts();
    let dict = pyo3::types::PyDict::new(py);
    dict.set_item("live_exports", counts.live_exports)?;
    dict.set_item("live_imports", counts.live_imports)?;
    dict.set_item("exchange_exports", counts.exchange_exports)?;
    dict.set_item("exchange_imports", counts.exchange_imports)?;
    dict.set_item("foreign_exchange_imports", counts.foreign_exchange_imports)?;
    dict.set_item("allocations", counts.allocations)?;
    Ok(dict)
}

#[pymodule]
fn dlpack_abi(module: &Bound<'_, PyModule>) -> PyResult<()> {
    abi::python::add_to_module(module)?;
    module.add(
        "from_dlpack",
        module.getattr("Tensor")?.getattr("from_dlpack")?,
    )?;
    module.add_function(wrap_pyfunction!(ramp, module)?)?;
    module.add_function(wrap_pyfunction!(scale, module)?)?;
    module.add_function(wrap_pyfunction!(arrow_passthrough, module)?)?;
    module.add_function(wrap_pyfunction!(count_rows, module)?)?;
    module.add_class::<Image>()?;
    module.add_function(wrap_pyfunction!(total, module)?)?;
    module.add_function(wrap_pyfunction!(sum_int64, module)?)?;
    module.add_function(wrap_pyfunction!(int64_stream, module)?)?;
    #[cfg(feature = "counters")]
    module.add_function(wrap_pyfunction!(counts, module)?)?;
    Ok(())
}
