//! The `dlpack_abi` Python module: `Tensor`, `ArrowArray`, `ArrowStream`, `from_dlpack`,
//! `counts`, and small examples of Rust functions that export and import.

mod arrow_rs;
mod conformance;
#[cfg(feature = "cuda")]
mod cuda;
#[cfg(feature = "model")]
mod model;
mod safetensors;

use abi::arrow::{Array, ArrayStream, BridgeError, ProducerError, SchemaDef};
use abi::dlpack::{
    AlignedVec, ConsumerStream, DeviceEvent, Element, Export, OrderError, StreamOrder,
    TensorDescription, TensorOwner, VersionedTensor,
};
use abi::raw::{kDLCPU, DLDevice, DLDeviceType, DLPackFlags};
use dlpack_abi_pyo3::{
    from_dlpack, import_array, AnyArrowArray, AnyArrowStream, ArrowStreamExport, DlpackExporter,
    DlpackRequest, PyDlpackResult, PyTensor, PyVersionedTensor,
};
use pyo3::prelude::*;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

/// Return ``[0.0, 1.0, ..., n - 1]`` as a read-only float32 ``Tensor`` whose memory Rust owns.
///
/// Every consumer shares the one buffer, 64-byte aligned, read-only.
///
/// Examples
/// --------
/// >>> import numpy as np
/// >>> np.from_dlpack(dlpack_abi.ramp(3))
/// array([0., 1., 2.], dtype=float32)
#[pyfunction]
fn ramp(n: usize) -> PyDlpackResult<PyTensor> {
    // 64-byte aligned, as every buffer of ours: JAX imports it with `copy=False`.
    let values: AlignedVec<f32> = (0..n).map(|i| i as f32).collect();
    let tensor: VersionedTensor = Export::new(values, &[i64::try_from(n)?]).finish()?;
    Ok(PyTensor::new(tensor))
}

/// Return ``k * x`` for a float64 array ``x`` from any DLPack producer, in any layout, as a
/// new writable ``Tensor``.
///
/// Raises ``TypeError`` when ``x`` is not float64 or not a DLPack producer.
///
/// Examples
/// --------
/// >>> import numpy as np
/// >>> np.from_dlpack(dlpack_abi.scale(np.arange(3.0)[::-1], 2.0))
/// array([4., 2., 0.])
#[pyfunction]
fn scale(x: PyVersionedTensor, k: f64) -> PyDlpackResult<PyVersionedTensor> {
    let values: AlignedVec<f64> = x.view().iter::<f64>()?.map(|v| k * v).collect();
    Ok(Export::new(values, x.view().shape()).finish()?.into())
}

/// Return any Arrow array (an object with ``__arrow_c_array__`` or
/// ``__arrow_c_device_array__``) as an ``ArrowArray`` over the same memory.
///
/// Raises ``ValueError`` for invalid Arrow data, ``TypeError`` for other objects.
///
/// Examples
/// --------
/// >>> import pyarrow as pa
/// >>> array = dlpack_abi.arrow_passthrough(pa.array(["a", None]))
/// >>> array.format, pa.array(array).to_pylist()
/// ('u', ['a', None])
#[pyfunction]
fn arrow_passthrough(x: AnyArrowArray) -> AnyArrowArray {
    x
}

/// Return the number of rows of any Arrow stream (CPU or device).
///
/// Raises ``OSError`` (with the producer's errno and message) when the stream fails.
///
/// Examples
/// --------
/// >>> import pyarrow as pa
/// >>> dlpack_abi.count_rows(pa.table({"n": [1, 2, 3]}))
/// 3
/// >>> dlpack_abi.count_rows(dlpack_abi.int64_stream([[1]], error="disk gone"))
/// Traceback (most recent call last):
///     ...
/// OSError: [Errno 5] disk gone
#[pyfunction]
fn count_rows(stream: AnyArrowStream) -> PyDlpackResult<usize> {
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

/// An 8-bit image that exports its pixels through DLPack and Arrow, zero-copy and read-only:
/// a class of its own, built with the ``DlpackExporter`` trait and ``dlpack_pymethods!``.
///
/// ``Image(height, width)`` makes a ``height`` x ``width`` image whose pixel ``(i, j)`` is
/// ``i * width + j`` (mod 256).
///
/// Examples
/// --------
/// >>> import numpy as np
/// >>> pixels = np.from_dlpack(dlpack_abi.Image(2, 3))
/// >>> pixels
/// array([[0, 1, 2],
///        [3, 4, 5]], dtype=uint8)
/// >>> pixels.flags.writeable
/// False
#[cfg_attr(
    not(feature = "abi3"),
    pyclass(frozen, immutable_type, module = "dlpack_abi")
)]
#[cfg_attr(feature = "abi3", pyclass(frozen, module = "dlpack_abi"))]
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
    fn dlpack_tensor(&self, _stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
        Ok(Export::new(Arc::clone(&self.pixels), &[self.height, self.width]).finish()?)
    }
}

dlpack_abi_pyo3::dlpack_pymethods! {
    impl Image {
        /// Make a ``height`` x ``width`` image whose pixel ``(i, j)`` is ``i * width + j``
        /// (mod 256).
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

/// An exporter whose tensor method panics, for the tests: every path reports a ``PanicException``
/// instead of unwinding into C.
#[pyclass(frozen, module = "dlpack_abi", name = "_PanickingExporter")]
struct PanickingExporter;

impl DlpackExporter for PanickingExporter {
    fn dlpack_device(&self) -> DLDevice {
        DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        }
    }

    fn dlpack_tensor(&self, _stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
        panic!("the exporter failed")
    }
}

dlpack_abi_pyo3::dlpack_pymethods! {
    impl PanickingExporter {
        #[new]
        fn new() -> Self {
            Self
        }
    }
}

/// What the stream-ordering tests' fake device producer was asked, in order, as strings:
/// ``ready_on:<stream>``, ``record_event``, ``event_dropped``.
#[derive(Default)]
struct Recorder {
    log: Mutex<Vec<String>>,
    /// Streams to refuse (by their log name); `"runtime"` fails every call as a runtime would.
    refuse: Mutex<Vec<String>>,
}

impl Recorder {
    fn push(&self, entry: String) {
        self.log.lock().unwrap().push(entry);
    }

    fn refuses(&self, name: &str) -> bool {
        self.refuse.lock().unwrap().iter().any(|r| r == name)
    }
}

/// A stream's name in the log.
fn stream_name(stream: ConsumerStream) -> String {
    match stream {
        ConsumerStream::Unspecified => "unspecified".into(),
        ConsumerStream::NoSync => "no_sync".into(),
        ConsumerStream::LegacyDefault => "legacy_default".into(),
        ConsumerStream::PerThreadDefault => "per_thread_default".into(),
        ConsumerStream::Handle(handle) => format!("handle:{handle}"),
        ConsumerStream::Host => "host".into(),
        _ => "other".into(),
    }
}

/// The fake hook: a handle on the shared recorder.
#[derive(Clone)]
struct RecordingOrder(Arc<Recorder>);

// SAFETY: the fake device's memory is host memory that nothing writes after it is made: the data
// is always ready, so `Ok` is truthful for every stream.
unsafe impl StreamOrder for RecordingOrder {
    fn ready_on(&self, _: DLDevice, stream: ConsumerStream) -> Result<(), OrderError> {
        let name = stream_name(stream);
        if self.0.refuses("runtime") {
            return Err(OrderError::Runtime {
                call: "cuStreamWaitEvent",
                code: 400,
            });
        }
        if self.0.refuses(&name) {
            return Err(OrderError::Unsupported { stream });
        }
        self.0.push(format!("ready_on:{name}"));
        Ok(())
    }

    fn record_event(&self, _: DLDevice) -> Result<Option<Box<dyn DeviceEvent>>, OrderError> {
        if self.0.refuses("runtime") {
            return Err(OrderError::Runtime {
                call: "cuEventRecord",
                code: 700,
            });
        }
        self.0.push("record_event".into());
        Ok(Some(Box::new(RecordedEvent {
            handle: FAKE_EVENT_HANDLE,
            recorder: Arc::clone(&self.0),
        })))
    }
}

/// The handle every fake event holds (a `CUevent` is a pointer-sized handle).
const FAKE_EVENT_HANDLE: usize = 0xE7E7_0001;

/// A fake recorded event: logs its drop (the array's release frees it).
struct RecordedEvent {
    handle: usize,
    recorder: Arc<Recorder>,
}

// SAFETY: points to the handle, which lives as long as the event (boxed before use).
unsafe impl DeviceEvent for RecordedEvent {
    fn event_ptr(&self) -> NonNull<c_void> {
        NonNull::from(&self.handle).cast()
    }
}

impl Drop for RecordedEvent {
    fn drop(&mut self) {
        self.recorder.push("event_dropped".into());
    }
}

/// Host memory described as lying on another device, for the fake producer's exports.
struct FakeDeviceBuffer {
    values: Arc<AlignedVec<f32>>,
    shape: [i64; 1],
    device: DLDevice,
}

// SAFETY: the values are a live allocation this owner keeps alive, exported read-only (the Arc
// is shared, and nothing writes it).
unsafe impl TensorOwner for FakeDeviceBuffer {
    fn describe(&mut self) -> TensorDescription<'_> {
        let data = self.values.as_ptr().cast_mut().cast();
        let bytes = std::mem::size_of_val(&self.values[..]);
        TensorDescription::new(data, bytes, self.device, f32::DTYPE, &self.shape)
            .with_flags(DLPackFlags::READ_ONLY)
    }
}

/// A test helper: a producer of "device" data (host memory described as lying on
/// ``device_type``) whose ordering hook records every stream and event it is asked for, refuses
/// the streams named in ``refuse`` (``"runtime"`` fails as a device runtime would), and whose
/// class reports ``0xC0FFEE`` as the exchange API's current work stream.
#[pyclass(frozen, module = "dlpack_abi", name = "_RecordingDevice")]
struct RecordingDevice {
    values: Arc<AlignedVec<f32>>,
    device: DLDevice,
    order: RecordingOrder,
}

impl RecordingDevice {
    fn owner(&self) -> FakeDeviceBuffer {
        FakeDeviceBuffer {
            values: Arc::clone(&self.values),
            shape: [i64::try_from(self.values.len()).unwrap_or(i64::MAX)],
            device: self.device,
        }
    }
}

impl DlpackExporter for RecordingDevice {
    fn dlpack_device(&self) -> DLDevice {
        self.device
    }

    fn dlpack_tensor(&self, stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
        self.order.ready_on(self.device, stream)?;
        Ok(VersionedTensor::from_owner(self.owner())?)
    }

    fn arrow_event(&self) -> PyDlpackResult<Option<Box<dyn DeviceEvent>>> {
        Ok(self.order.record_event(self.device)?)
    }

    fn current_work_stream(_: DLDevice) -> Option<usize> {
        Some(0xC0FFEE)
    }
}

dlpack_abi_pyo3::dlpack_pymethods! {
    impl RecordingDevice {
        #[new]
        #[pyo3(signature = (values, device_type=2, refuse=Vec::new()))]
        fn new(values: Vec<f32>, device_type: i32, refuse: Vec<String>) -> Self {
            let order = RecordingOrder(Arc::new(Recorder::default()));
            *order.0.refuse.lock().unwrap() = refuse;
            Self {
                values: Arc::new(values.into_iter().collect()),
                device: DLDevice { device_type: DLDeviceType(device_type), device_id: 0 },
                order,
            }
        }

        /// Every call recorded so far, oldest first (and forget them).
        fn take_log(&self) -> Vec<String> {
            std::mem::take(&mut *self.order.0.log.lock().unwrap())
        }

        /// A ``Tensor`` over the same data whose ordering hook is this producer's.
        fn tensor(&self) -> PyDlpackResult<PyTensor> {
            let tensor = VersionedTensor::from_owner(self.owner())?;
            Ok(PyTensor::new(tensor).with_order(self.order.clone()))
        }

        /// The handle every event of this producer holds.
        #[classattr]
        const EVENT_HANDLE: usize = FAKE_EVENT_HANDLE;
    }
}

/// Return the sum of a contiguous float64 array from any DLPack producer.
///
/// Raises ``TypeError`` for another dtype, ``BufferError`` for a non-contiguous array.
///
/// Examples
/// --------
/// >>> import numpy as np
/// >>> dlpack_abi.total(np.ones(4))
/// 4.0
/// >>> dlpack_abi.total(np.ones(4)[::2])
/// Traceback (most recent call last):
///     ...
/// BufferError: ...
#[pyfunction]
fn total(array: &Bound<'_, PyAny>) -> PyDlpackResult<f64> {
    let tensor = from_dlpack(array, &DlpackRequest::default())?;
    // Every error of the safe layers converts into the Python exception its kind calls for.
    let values = tensor.view().as_slice::<f64>()?;
    Ok(values.iter().sum())
}

/// Return the sum of an int64 Arrow array (``__arrow_c_array__``, or
/// ``__arrow_c_device_array__`` for CPU data), nulls skipped.
///
/// Raises ``TypeError`` for another type.
///
/// Examples
/// --------
/// >>> import pyarrow as pa
/// >>> dlpack_abi.sum_int64(pa.array([1, None, 3]))
/// 4
#[pyfunction]
fn sum_int64(array: &Bound<'_, PyAny>) -> PyDlpackResult<i64> {
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

/// Return an ``ArrowStream`` of int64 batches, one per list in ``batches``, which fails with
/// ``EIO`` and ``error`` after them when ``error`` is given.
///
/// Examples
/// --------
/// >>> import pyarrow as pa
/// >>> pa.chunked_array(dlpack_abi.int64_stream([[1, 2], [3]])).to_pylist()
/// [1, 2, 3]
#[pyfunction]
#[pyo3(signature = (batches, error=None))]
fn int64_stream(
    batches: Vec<Vec<i64>>,
    error: Option<String>,
) -> PyDlpackResult<ArrowStreamExport> {
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

/// Return the glue's process-wide counters as a dict: live exports and imports, exchange-API
/// calls and allocations (only in builds with ``--features counters``, for leak tests).
///
/// Examples
/// --------
/// >>> sorted(dlpack_abi.counts())
/// ['allocations', 'exchange_exports', 'exchange_imports', 'foreign_exchange_imports', 'live_exports', 'live_imports', 'numpy_direct_imports', 'registry_gil_takes']
#[cfg(feature = "counters")]
#[pyfunction]
fn counts(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let counts = dlpack_abi_pyo3::counts();
    let dict = pyo3::types::PyDict::new(py);
    dict.set_item("live_exports", counts.live_exports)?;
    dict.set_item("live_imports", counts.live_imports)?;
    dict.set_item("exchange_exports", counts.exchange_exports)?;
    dict.set_item("exchange_imports", counts.exchange_imports)?;
    dict.set_item("foreign_exchange_imports", counts.foreign_exchange_imports)?;
    dict.set_item("numpy_direct_imports", counts.numpy_direct_imports)?;
    dict.set_item("registry_gil_takes", counts.registry_gil_takes)?;
    dict.set_item("allocations", counts.allocations)?;
    Ok(dict)
}

/// The Python type of a class.
fn py_type<T: pyo3::PyTypeInfo>(py: Python<'_>) -> Bound<'_, pyo3::types::PyType> {
    T::type_object(py)
}

/// Zero-copy DLPack and Arrow PyCapsule exchange, validated: ``Tensor``, ``ArrowArray``,
/// ``ArrowStream`` and ``from_dlpack``, with small examples of Rust functions that take and
/// return them. Every tensor and Arrow struct is validated before use, and every deleter and
/// ``release`` runs exactly once.
///
/// Examples
/// --------
/// >>> import numpy as np
/// >>> t = dlpack_abi.from_dlpack(np.arange(6.0).reshape(2, 3))
/// >>> t
/// Tensor(shape=(2, 3), dtype=float64, device=cpu:0, readonly=False)
/// >>> np.from_dlpack(t).sum()
/// np.float64(15.0)
#[pymodule]
fn dlpack_abi(module: &Bound<'_, PyModule>) -> PyResult<()> {
    dlpack_abi_pyo3::add_to_module(module)?;
    // Hand-overs between CUDA streams are ordered with the driver's events, where it loads.
    #[cfg(feature = "cuda-runtime")]
    dlpack_abi_pyo3::install_stream_runtime(Arc::new(dlpack_abi_cudarc::CudaRuntime::new()));
    #[cfg(feature = "model")]
    model::add(module)?;
    module.add(
        "from_dlpack",
        module.getattr("Tensor")?.getattr("from_dlpack")?,
    )?;
    module.add_function(wrap_pyfunction!(ramp, module)?)?;
    module.add_function(wrap_pyfunction!(scale, module)?)?;
    module.add_function(wrap_pyfunction!(arrow_passthrough, module)?)?;
    module.add_function(wrap_pyfunction!(count_rows, module)?)?;
    module.add_class::<Image>()?;
    module.add_class::<safetensors::PySafeTensors>()?;
    // A test helper: in the module, not in its `__all__`.
    module.setattr(
        "_PanickingExporter",
        py_type::<PanickingExporter>(module.py()),
    )?;
    module.setattr("_RecordingDevice", py_type::<RecordingDevice>(module.py()))?;
    arrow_rs::add(module)?;
    // The conformance checker's helper: in the module, not in its `__all__`.
    module.setattr(
        "_guarded_capsule_destructor",
        wrap_pyfunction!(conformance::_guarded_capsule_destructor, module)?,
    )?;
    module.add_function(wrap_pyfunction!(total, module)?)?;
    module.add_function(wrap_pyfunction!(sum_int64, module)?)?;
    module.add_function(wrap_pyfunction!(int64_stream, module)?)?;
    #[cfg(feature = "counters")]
    module.add_function(wrap_pyfunction!(counts, module)?)?;
    #[cfg(feature = "cuda")]
    {
        module.add_function(wrap_pyfunction!(cuda::_cuda_available, module)?)?;
        module.add_function(wrap_pyfunction!(cuda::_cuda_late_tensor, module)?)?;
        module.add_function(wrap_pyfunction!(cuda::_cuda_late_arrow, module)?)?;
        module.add_function(wrap_pyfunction!(cuda::_cuda_read, module)?)?;
        module.add_function(wrap_pyfunction!(cuda::_cuda_read_arrow, module)?)?;
        module.add_function(wrap_pyfunction!(cuda::_cuda_read_late, module)?)?;
    }
    Ok(())
}
