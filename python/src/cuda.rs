//! GPU helpers for `scripts/gpu-test.sh` (feature `cuda`): a producer whose kernel writes on its
//! own stream after a delay, and a consumer that reads on its own stream, both through
//! `dlpack_abi::cudarc`. Neither synchronises the device: correct values prove the ordering.

use std::sync::{Arc, OnceLock};

use abi::arrow::SchemaDef;
use abi::cudarc::{consumer_stream, cuda_available, CudaError, CudaExport, CudaTensor};
use abi::python::{from_dlpack, import_device_array, ArrowArrayExport, DlpackRequest, PyTensor};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// Waits `spin` clock cycles, then writes `value + i` to element `i`: late writes on the
/// producer's stream, which a consumer reads wrong unless its stream is ordered after them.
const KERNEL: &str = r#"
extern "C" __global__ void late_fill(float *out, unsigned int n, float value, long long spin) {
    long long start = clock64();
    while (clock64() - start < spin) { }
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + (float)i;
}
"#;

fn error(error: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(error.to_string())
}

fn cuda(error: impl Into<CudaError>) -> PyErr {
    self::error(error.into())
}

/// GPU 0's primary context (the one CuPy, JAX and PyTorch use) and the kernel.
fn gpu() -> PyResult<&'static (Arc<CudaContext>, CudaFunction)> {
    static GPU: OnceLock<(Arc<CudaContext>, CudaFunction)> = OnceLock::new();
    if let Some(gpu) = GPU.get() {
        return Ok(gpu);
    }
    if !cuda_available() {
        return Err(PyRuntimeError::new_err("no CUDA driver"));
    }
    let context = CudaContext::new(0).map_err(cuda)?;
    let ptx = cudarc::nvrtc::compile_ptx(KERNEL).map_err(error)?;
    let module = context.load_module(ptx).map_err(cuda)?;
    let function = module.load_function("late_fill").map_err(cuda)?;
    Ok(GPU.get_or_init(|| (context, function)))
}

/// Whether a GPU can be used (the CUDA driver loads and sees a device).
#[pyfunction]
pub fn _cuda_available() -> bool {
    cuda_available() && CudaContext::device_count().is_ok_and(|count| count > 0)
}

/// `n` float32 values `value + i`, written by a kernel on a new stream after `spin` cycles.
fn late_values(n: usize, value: f32, spin: i64) -> PyResult<cudarc::driver::CudaSlice<f32>> {
    let (context, function) = gpu()?;
    let stream = context.new_stream().map_err(cuda)?;
    let mut values = stream.alloc_zeros::<f32>(n).map_err(cuda)?;
    let count = u32::try_from(n).map_err(error)?;
    let mut launch = stream.launch_builder(function);
    launch.arg(&mut values).arg(&count).arg(&value).arg(&spin);
    // SAFETY: the kernel's signature is (float*, unsigned int, float, long long), and it
    // writes only the `n` elements of `values`.
    unsafe { launch.launch(LaunchConfig::for_num_elems(count.max(1))) }.map_err(cuda)?;
    Ok(values)
}

/// Return a ``Tensor`` of ``n`` float32 values ``value + i`` that a kernel writes on its own
/// stream after ``spin`` cycles: its ``__dlpack__(stream=...)`` orders that work before the
/// consumer's stream, with no device synchronisation.
#[pyfunction]
pub fn _cuda_late_tensor(n: usize, value: f32, spin: i64) -> PyResult<PyTensor> {
    CudaExport::new(late_values(n, value, spin)?)
        .into_py_tensor()
        .map_err(error)
}

/// Return an ``ArrowArray`` of the same values, whose ``sync_event`` is recorded after the
/// kernel.
#[pyfunction]
pub fn _cuda_late_arrow(n: usize, value: f32, spin: i64) -> PyResult<ArrowArrayExport> {
    let (schema, array) = CudaExport::new(late_values(n, value, spin)?)
        .into_device_array()
        .map_err(error)?;
    let schema: SchemaDef = schema;
    ArrowArrayExport::new(schema.export().map_err(error)?, array).map_err(error)
}

/// A new stream of GPU 0, or the per-thread default one.
fn consumer(per_thread: bool) -> PyResult<Arc<CudaStream>> {
    let (context, _) = gpu()?;
    if per_thread {
        Ok(context.per_thread_stream())
    } else {
        context.new_stream().map_err(cuda)
    }
}

/// Return the float32 values of a CUDA DLPack producer, read on a new stream (or the
/// per-thread default one) that is passed to ``__dlpack__`` as ``stream``: only that stream is
/// synchronised, so the values are right only if the producer ordered its work before it.
#[pyfunction]
#[pyo3(signature = (source, per_thread=false))]
pub fn _cuda_read(source: &Bound<'_, PyAny>, per_thread: bool) -> PyResult<Vec<f32>> {
    let stream = consumer(per_thread)?;
    let mut request = DlpackRequest::default();
    let handle = consumer_stream(&stream).into_pyobject(source.py())?;
    request.stream = Some(handle.into_any().unbind());
    let tensor = from_dlpack(source, &request)?;
    let imported = CudaTensor::<f32>::new(tensor, &stream).map_err(error)?;
    stream.clone_dtoh(imported.slice()).map_err(cuda)
}

/// Return the float32 values of a CUDA Arrow device array, read on a new stream that waits on
/// the array's ``sync_event``.
#[pyfunction]
pub fn _cuda_read_arrow(source: &Bound<'_, PyAny>) -> PyResult<Vec<f32>> {
    let stream = consumer(false)?;
    let (schema, array) = import_device_array(source, None)?;
    let imported =
        CudaTensor::<f32>::from_device_array(array, schema.view(), &stream).map_err(error)?;
    stream.clone_dtoh(imported.slice()).map_err(cuda)
}
