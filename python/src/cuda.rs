//! GPU helpers for `scripts/gpu-test.sh` (feature `cuda`): a producer whose kernel writes on its
//! own stream after a delay, a consumer that reads on its own stream, and a consumer that reads
//! late and then lets the producer's allocator reuse the memory, all through
//! `dlpack_abi_cudarc`. None synchronises the device: correct values prove the ordering.

use std::sync::{Arc, OnceLock};

use abi::arrow::SchemaDef;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use dlpack_abi_cudarc::{
    consumer_stream, cuda_available, export_slice, import_device_array as cuda_import_device_array,
    import_slice, CudaError,
};
use dlpack_abi_pyo3::{
    from_dlpack, import_device_array, ArrowArrayExport, DlpackRequest, PyTensor,
};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// `late_fill` waits `spin` clock cycles, then writes `value + i` to element `i`: late writes on
/// the producer's stream, which a consumer reads wrong unless its stream is ordered after them.
/// `late_copy` waits `spin` cycles, then copies `n` elements: a consumer's late read.
const KERNEL: &str = r#"
extern "C" __global__ void late_fill(float *out, unsigned int n, float value, long long spin) {
    long long start = clock64();
    while (clock64() - start < spin) { }
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + (float)i;
}

extern "C" __global__ void late_copy(const float *in, float *out, unsigned int n, long long spin) {
    long long start = clock64();
    while (clock64() - start < spin) { }
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
"#;

/// GPU 0's primary context and the two kernels.
struct Gpu {
    context: Arc<CudaContext>,
    late_fill: CudaFunction,
    late_copy: CudaFunction,
}

fn error(error: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(error.to_string())
}

fn cuda(error: impl Into<CudaError>) -> PyErr {
    self::error(error.into())
}

/// GPU 0's primary context (the one CuPy, JAX and PyTorch use) and the kernels.
fn gpu() -> PyResult<&'static Gpu> {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    if let Some(gpu) = GPU.get() {
        return Ok(gpu);
    }
    if !cuda_available() {
        return Err(PyRuntimeError::new_err("no CUDA driver"));
    }
    let context = CudaContext::new(0).map_err(cuda)?;
    let ptx = cudarc::nvrtc::compile_ptx(KERNEL).map_err(error)?;
    let module = context.load_module(ptx).map_err(cuda)?;
    let late_fill = module.load_function("late_fill").map_err(cuda)?;
    let late_copy = module.load_function("late_copy").map_err(cuda)?;
    Ok(GPU.get_or_init(|| Gpu {
        context,
        late_fill,
        late_copy,
    }))
}

/// Whether a GPU can be used (the CUDA driver loads and sees a device).
#[pyfunction]
pub fn _cuda_available() -> bool {
    cuda_available() && CudaContext::device_count().is_ok_and(|count| count > 0)
}

/// `n` float32 values `value + i`, written by a kernel on a new stream after `spin` cycles.
fn late_values(n: usize, value: f32, spin: i64) -> PyResult<cudarc::driver::CudaSlice<f32>> {
    let gpu = gpu()?;
    let stream = gpu.context.new_stream().map_err(cuda)?;
    let mut values = stream.alloc_zeros::<f32>(n).map_err(cuda)?;
    let count = u32::try_from(n).map_err(error)?;
    let mut launch = stream.launch_builder(&gpu.late_fill);
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
    export_slice(late_values(n, value, spin)?)
        .into_py_tensor()
        .map_err(error)
}

/// Return an ``ArrowArray`` of the same values, whose ``sync_event`` is recorded after the
/// kernel.
#[pyfunction]
pub fn _cuda_late_arrow(n: usize, value: f32, spin: i64) -> PyResult<ArrowArrayExport> {
    let (schema, array) = export_slice(late_values(n, value, spin)?)
        .into_device_array()
        .map_err(error)?;
    let schema: SchemaDef = schema;
    ArrowArrayExport::new(schema.export().map_err(error)?, array).map_err(error)
}

/// A new stream of GPU 0, or the per-thread default one.
fn consumer(per_thread: bool) -> PyResult<Arc<CudaStream>> {
    let context = &gpu()?.context;
    if per_thread {
        Ok(context.per_thread_stream())
    } else {
        context.new_stream().map_err(cuda)
    }
}

/// A request for `stream`: the producer orders its work before it.
fn request_for(py: Python<'_>, stream: &Arc<CudaStream>) -> PyResult<DlpackRequest> {
    let mut request = DlpackRequest::default();
    let handle = consumer_stream(stream).into_pyobject(py)?;
    request.stream = Some(handle.into_any().unbind());
    Ok(request)
}

/// Return the float32 values of a CUDA DLPack producer, read on a new stream (or the
/// per-thread default one) that is passed to ``__dlpack__`` as ``stream``: only that stream is
/// synchronised, so the values are right only if the producer ordered its work before it.
#[pyfunction]
#[pyo3(signature = (source, per_thread=false))]
pub fn _cuda_read(source: &Bound<'_, PyAny>, per_thread: bool) -> PyResult<Vec<f32>> {
    let stream = consumer(per_thread)?;
    let tensor = from_dlpack(source, &request_for(source.py(), &stream)?)?;
    let imported = import_slice::<f32>(tensor, &stream).map_err(error)?;
    stream.clone_dtoh(imported.slice()).map_err(cuda)
}

/// Return the float32 values of a CUDA Arrow device array, read on a new stream that waits on
/// the array's ``sync_event``.
#[pyfunction]
pub fn _cuda_read_arrow(source: &Bound<'_, PyAny>) -> PyResult<Vec<f32>> {
    let stream = consumer(false)?;
    let (schema, array) = import_device_array(source, None)?;
    let imported = cuda_import_device_array::<f32>(array, schema.view(), &stream).map_err(error)?;
    stream.clone_dtoh(imported.slice()).map_err(cuda)
}

/// Return ``(values, reused)``: the float32 values of ``make()`` (a CUDA DLPack producer, asked
/// for a new stream of ours), copied by a kernel that waits ``spin`` cycles first; the import is
/// dropped (the producer's deleter runs) right after that copy is enqueued, and then
/// ``reuse()`` is called and its result returned as ``reused``.
///
/// Nothing but the import holds the producer's object once it is made, so its deleter hands
/// the memory back to the producer's allocator: ``reuse`` allocates the same size and writes
/// it, as the allocator's next user would. The values are right only if the drop waited for
/// the late copy before the deleter ran (`CudaTensor` fences its drop).
#[pyfunction]
pub fn _cuda_read_late(
    make: &Bound<'_, PyAny>,
    spin: i64,
    reuse: &Bound<'_, PyAny>,
) -> PyResult<(Vec<f32>, Py<PyAny>)> {
    let gpu = gpu()?;
    let stream = gpu.context.new_stream().map_err(cuda)?;
    let source = make.call0()?;
    let tensor = from_dlpack(&source, &request_for(make.py(), &stream)?)?;
    drop(source); // the import holds the producer's memory alone now
    let imported = import_slice::<f32>(tensor, &stream).map_err(error)?;
    let n = imported.slice().len();
    let mut out = stream.alloc_zeros::<f32>(n).map_err(cuda)?;
    let count = u32::try_from(n).map_err(error)?;
    {
        let mut launch = stream.launch_builder(&gpu.late_copy);
        launch
            .arg(imported.slice())
            .arg(&mut out)
            .arg(&count)
            .arg(&spin);
        // SAFETY: the kernel's signature is (const float*, float*, unsigned int, long long);
        // it reads `n` elements of the import and writes `n` elements of `out`.
        unsafe { launch.launch(LaunchConfig::for_num_elems(count.max(1))) }.map_err(cuda)?;
    }
    // The deleter runs here, once the copy has completed.
    drop(imported);
    let reused = reuse.call0()?.unbind();
    Ok((stream.clone_dtoh(&out).map_err(cuda)?, reused))
}
