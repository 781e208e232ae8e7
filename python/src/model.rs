//! A model GPU for the CPU tests (feature `model`): streams whose queued work runs late, in
//! whatever order the test picks; events, stream waits, host waits and frees; memory that is
//! host memory described as CUDA managed memory (so that host copies work), where every read
//! checks that it sees the writes it depends on and that the memory was not freed.
//!
//! It plays every part a GPU program has: producers that write late on their stream and order
//! it before a consumer's (as CuPy and PyTorch do), consumers that read on their stream and
//! fence their drop ([`OnStream`], as `CudaTensor` does), and the device runtime the glue
//! hands data between streams with ([`StreamRuntime`], installed for the model's device).

use std::collections::VecDeque;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};

use abi::arrow::HostWait;
use abi::dlpack::{
    ConsumerStream, DeviceEvent, Element, OnStream, OrderError, RuntimeEvent, StreamRuntime,
    TensorDescription, TensorOwner, VersionedTensor,
};
use abi::raw::{
    kDLCUDAManaged, ArrowDeviceType, DLDevice, DLManagedTensorVersioned, DLPackExchangeAPI,
};
use dlpack_abi_pyo3::{
    from_dlpack, import_device_array, install_stream_runtime, remove_stream_runtime,
    stream_runtime, DlpackExporter, DlpackRequest, PyDlpackResult, PyTensor, PyVersionedTensor,
    ReadonlyTensor,
};
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// The model's one device: managed memory, so that the host may read it (copies, `tobytes`).
const DEVICE: DLDevice = DLDevice {
    device_type: kDLCUDAManaged,
    device_id: 0,
};

/// Stream handles: index 0 is the legacy default stream (`1` in the array API's table); the
/// others are `HANDLE_BASE + index * HANDLE_STEP`, as a `cudaStream_t` would be.
const HANDLE_BASE: usize = 0x5000_0000;
const HANDLE_STEP: usize = 0x100;

/// A piece of queued work.
#[derive(Clone, Debug)]
enum Op {
    /// A producer's kernel: every element of `buffer` becomes `value`.
    Write { buffer: usize, value: f32 },
    /// A consumer's kernel: reads `buffer`, which must hold `expect` and not be freed.
    Read {
        buffer: usize,
        expect: f32,
        what: String,
    },
    /// `cuEventRecord`: the event completes when this runs.
    Record { event: usize },
    /// `cuStreamWaitEvent`: the stream goes on once the event has completed.
    Wait { event: usize },
}

/// One allocation: elements as `f32` bits (atomics: consumers read through raw pointers while
/// the model writes, never at once), kept until the model is dropped, so that a pointer a
/// consumer keeps past a free reads poison, never freed memory.
struct Buffer {
    values: Arc<[AtomicU32]>,
    /// The value the producer's write leaves (every buffer is written once).
    written: f32,
    freed: bool,
}

#[derive(Default)]
struct State {
    streams: Vec<VecDeque<Op>>,
    /// Whether each event has completed.
    events: Vec<bool>,
    buffers: Vec<Buffer>,
    violations: Vec<String>,
    /// Reads that ran.
    reads: usize,
    /// The stream producers report as their current work stream (the exchange API's).
    current: usize,
    /// CUDA's per-thread default stream (`stream=2`), when the model has one: a blocking stream,
    /// implicitly ordered with the legacy default stream (index 0) both ways.
    per_thread: Option<usize>,
    records: usize,
    stream_waits: usize,
    host_waits: usize,
}

/// The model's state, shared by its runtimes, producers and consumers.
struct World {
    state: Mutex<State>,
}

/// The poison a freed buffer holds.
const FREED: f32 = -1.0e30;

impl World {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl State {
    /// The index of a stream the model has (the legacy default stream is 0).
    fn stream_index(&self, stream: ConsumerStream) -> Result<usize, OrderError> {
        let index = match stream {
            ConsumerStream::Unspecified | ConsumerStream::LegacyDefault => Some(0),
            ConsumerStream::PerThreadDefault => self.per_thread,
            ConsumerStream::Handle(handle) => handle
                .checked_sub(HANDLE_BASE)
                .filter(|offset| offset % HANDLE_STEP == 0)
                .map(|offset| offset / HANDLE_STEP)
                .filter(|&index| (1..self.streams.len()).contains(&index))
                .filter(|&index| Some(index) != self.per_thread),
            _ => None,
        };
        index.ok_or(OrderError::Unsupported { stream })
    }

    /// The `ConsumerStream` of a stream index.
    fn consumer_stream(&self, index: usize) -> ConsumerStream {
        match index {
            0 => ConsumerStream::LegacyDefault,
            index if Some(index) == self.per_thread => ConsumerStream::PerThreadDefault,
            index => ConsumerStream::Handle(HANDLE_BASE + index * HANDLE_STEP),
        }
    }

    /// The `stream=` integer of a stream index.
    fn handle(&self, index: usize) -> i64 {
        match index {
            0 => 1,
            index if Some(index) == self.per_thread => 2,
            index => i64::try_from(HANDLE_BASE + index * HANDLE_STEP).unwrap_or(-1),
        }
    }

    /// Queues `op` on `stream`. Work queued on the legacy default stream or the per-thread
    /// default stream first waits for the work queued on the other one so far, as CUDA's
    /// implicit synchronization of the legacy default stream with blocking streams does (the
    /// model's other streams are non-blocking: nothing orders them but events).
    fn push(&mut self, stream: usize, op: Op) {
        let other = match self.per_thread {
            Some(per_thread) if stream == per_thread => Some(0),
            Some(per_thread) if stream == 0 => Some(per_thread),
            _ => None,
        };
        if let Some(other) = other.filter(|&other| !self.streams[other].is_empty()) {
            // The runtime's own event and wait: not counted as the glue's.
            let event = self.events.len();
            self.events.push(false);
            self.streams[other].push_back(Op::Record { event });
            self.streams[stream].push_back(Op::Wait { event });
        }
        self.streams[stream].push_back(op);
    }

    fn record(&mut self, stream: usize) -> usize {
        let event = self.events.len();
        self.events.push(false);
        self.push(stream, Op::Record { event });
        self.records += 1;
        event
    }

    fn wait(&mut self, stream: usize, event: usize) {
        self.push(stream, Op::Wait { event });
        self.stream_waits += 1;
    }

    fn runnable(&self, stream: usize) -> bool {
        match self.streams[stream].front() {
            None => false,
            Some(Op::Wait { event }) => self.events[*event],
            Some(_) => true,
        }
    }

    /// Runs the work at the head of `stream`, if it can run.
    fn step(&mut self, stream: usize) -> bool {
        if !self.runnable(stream) {
            return false;
        }
        let op = self.streams[stream].pop_front().expect("runnable");
        match op {
            Op::Write { buffer, value } => {
                let buffer = &self.buffers[buffer];
                if !buffer.freed {
                    for element in buffer.values.iter() {
                        element.store(value.to_bits(), Relaxed);
                    }
                }
            }
            Op::Read {
                buffer,
                expect,
                what,
            } => {
                self.reads += 1;
                let buffer = &self.buffers[buffer];
                if buffer.freed {
                    self.violations.push(format!(
                        "{what}: read on stream {stream} after the memory was freed"
                    ));
                } else if let Some(seen) = buffer
                    .values
                    .iter()
                    .map(|element| f32::from_bits(element.load(Relaxed)))
                    .find(|&seen| seen != expect)
                {
                    self.violations.push(format!(
                        "{what}: read {seen} on stream {stream}, before the write of {expect}"
                    ));
                }
            }
            Op::Record { event } => self.events[event] = true,
            Op::Wait { .. } => {}
        }
        true
    }

    /// The host waits until `event` has completed: the work it depends on runs first.
    fn host_wait(&mut self, event: usize) {
        self.host_waits += 1;
        while !self.events[event] {
            let Some(stream) = self.streams.iter().position(|queue| {
                queue
                    .iter()
                    .any(|op| matches!(op, Op::Record { event: e } if *e == event))
            }) else {
                self.violations.push(format!(
                    "the host waited on event {event}, which is never recorded"
                ));
                return;
            };
            self.run_head(stream);
        }
    }

    /// Runs the head of `stream`, first completing an event it waits on.
    fn run_head(&mut self, stream: usize) {
        if let Some(Op::Wait { event }) = self.streams[stream].front() {
            let event = *event;
            if !self.events[event] {
                self.host_wait(event);
                self.host_waits -= 1; // part of the outer wait
            }
        }
        self.step(stream);
    }

    /// The host waits for everything queued on `stream` so far.
    fn synchronize(&mut self, stream: usize) {
        let event = self.record(stream);
        self.records -= 1; // the model's own
        self.host_wait(event);
    }

    fn free(&mut self, buffer: usize) {
        let buffer = &mut self.buffers[buffer];
        buffer.freed = true;
        for element in buffer.values.iter() {
            element.store(FREED.to_bits(), Relaxed);
        }
    }

    /// The buffer a device address lies in.
    fn buffer_at(&self, address: usize) -> Option<usize> {
        self.buffers.iter().position(|buffer| {
            let start = buffer.values.as_ptr() as usize;
            (start..start + 4 * buffer.values.len()).contains(&address)
        })
    }
}

/// A recorded model event: `sync_event` points to its number.
struct ModelEvent {
    event: usize,
}

// SAFETY: points to the number, which lives as long as the event (boxed or in an `Arc`).
unsafe impl DeviceEvent for ModelEvent {
    fn event_ptr(&self) -> NonNull<c_void> {
        NonNull::from(&self.event).cast()
    }
}

/// The model's device runtime: what the glue is given, and what consumers fence with.
struct ModelRuntime {
    world: Arc<World>,
    enabled: AtomicBool,
}

// SAFETY: `record` queues a record after the work queued on the stream; `wait` queues a wait
// before any later work on the stream, or runs the work the event depends on (the host's wait).
unsafe impl StreamRuntime for ModelRuntime {
    fn drives(&self, device: DLDevice) -> bool {
        device == DEVICE && self.enabled.load(Relaxed)
    }

    fn record(&self, _: DLDevice, stream: ConsumerStream) -> Result<RuntimeEvent, OrderError> {
        let mut state = self.world.lock();
        let index = state.stream_index(stream)?;
        let event = state.record(index);
        Ok(Arc::new(ModelEvent { event }))
    }

    unsafe fn wait(
        &self,
        _: DLDevice,
        event: &(dyn DeviceEvent + Sync),
        stream: ConsumerStream,
    ) -> Result<(), OrderError> {
        // SAFETY: the event is one of this runtime's (caller): its pointer is to its number.
        let event = unsafe { event.event_ptr().cast::<usize>().read() };
        let mut state = self.world.lock();
        if stream == ConsumerStream::Host {
            state.host_wait(event);
            return Ok(());
        }
        let index = state.stream_index(stream)?;
        state.wait(index, event);
        Ok(())
    }
}

// SAFETY: returns once the event's work has run.
unsafe impl HostWait for ModelRuntime {
    type Error = OrderError;

    fn wait_host(
        &self,
        _: ArrowDeviceType,
        _: i64,
        event: NonNull<c_void>,
    ) -> Result<(), OrderError> {
        // SAFETY: the model's device arrays carry model events, which point to their number.
        let event = unsafe { event.cast::<usize>().read() };
        self.world.lock().host_wait(event);
        Ok(())
    }
}

/// The world whose current stream model producers report (one model at a time).
static CURRENT_WORLD: Mutex<Option<Arc<World>>> = Mutex::new(None);

/// A logical free of a buffer when the last holder goes.
struct Allocation {
    world: Arc<World>,
    buffer: usize,
}

impl Drop for Allocation {
    fn drop(&mut self) {
        self.world.lock().free(self.buffer);
    }
}

/// One export of a model buffer: holds the allocation until its deleter runs.
struct Share {
    _allocation: Arc<Allocation>,
    values: Arc<[AtomicU32]>,
    shape: [i64; 1],
    writable: bool,
}

// SAFETY: the values are a live allocation (kept by the model until it is dropped, and by this
// owner), in cells that may be written through shared references (atomics); the model, the
// only Rust code that touches them, does so through atomics, one thread at a time.
unsafe impl TensorOwner for Share {
    fn describe(&mut self) -> TensorDescription<'_> {
        let data = self.values.as_ptr().cast_mut().cast();
        let flags = if self.writable {
            abi::raw::DLPackFlags::empty()
        } else {
            abi::raw::DLPackFlags::READ_ONLY
        };
        TensorDescription::new(data, 4 * self.values.len(), DEVICE, f32::DTYPE, &self.shape)
            .with_flags(flags)
    }
}

/// A model GPU: ``_ModelGpu(streams=4, runtime=True)``. ``runtime`` installs its device runtime
/// for the glue (``False``: the glue has none, and must refuse what it cannot order).
#[pyclass(module = "dlpack_abi", name = "_ModelGpu")]
pub struct ModelGpu {
    world: Arc<World>,
    /// Installed for the glue.
    installed: Arc<ModelRuntime>,
    /// The consumers' own (always on), as CuPy's runtime is theirs.
    consumers: Arc<ModelRuntime>,
    /// Runtimes that drove the model's device, reinstalled when it closes (newest first).
    shadowed: Mutex<Vec<Arc<dyn StreamRuntime>>>,
}

impl ModelGpu {
    fn index(&self, stream: usize) -> PyResult<usize> {
        let state = self.world.lock();
        if stream < state.streams.len() {
            Ok(stream)
        } else {
            Err(PyValueError::new_err(format!("no stream {stream}")))
        }
    }

    /// Reads `tensor` on `stream`, and holds it there until the use is released.
    fn use_on(
        &self,
        tensor: VersionedTensor,
        stream: usize,
        fenced: bool,
        what: &str,
    ) -> PyDlpackResult<ModelUse> {
        self.read(tensor.view().data_ptr() as usize, stream, what)?;
        let held = if fenced {
            let runtime: Arc<dyn StreamRuntime> = self.consumers.clone();
            let on = self.world.lock().consumer_stream(stream);
            Held::Fenced(OnStream::new(tensor, on, runtime)?)
        } else {
            Held::Bare(tensor)
        };
        Ok(ModelUse { held: Some(held) })
    }

    /// Queues a read of the buffer at `address` on `stream`.
    fn read(&self, address: usize, stream: usize, what: &str) -> PyResult<()> {
        let mut state = self.world.lock();
        let buffer = state
            .buffer_at(address)
            .ok_or_else(|| PyBufferError::new_err("not the model's memory"))?;
        let expect = state.buffers[buffer].written;
        state.push(
            stream,
            Op::Read {
                buffer,
                expect,
                what: what.to_string(),
            },
        );
        Ok(())
    }
}

#[pymethods]
impl ModelGpu {
    #[new]
    #[pyo3(signature = (streams=4, runtime=true, per_thread=false))]
    fn new(streams: usize, runtime: bool, per_thread: bool) -> Self {
        // `per_thread`: one more stream, the last, is CUDA's per-thread default stream.
        let streams = streams.max(1) + usize::from(per_thread);
        let world = Arc::new(World {
            state: Mutex::new(State {
                streams: vec![VecDeque::new(); streams],
                per_thread: per_thread.then_some(streams - 1),
                ..State::default()
            }),
        });
        // The model's device has no runtime but the model's: any other that drives it (CUDA's,
        // where the driver loads) stands aside until the model is closed.
        let mut shadowed = Vec::new();
        while let Some(other) = stream_runtime(DEVICE) {
            remove_stream_runtime(&other);
            shadowed.push(other);
        }
        let installed = Arc::new(ModelRuntime {
            world: Arc::clone(&world),
            enabled: AtomicBool::new(runtime),
        });
        let as_runtime: Arc<dyn StreamRuntime> = installed.clone();
        install_stream_runtime(as_runtime);
        *CURRENT_WORLD.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(&world));
        let consumers = Arc::new(ModelRuntime {
            world: Arc::clone(&world),
            enabled: AtomicBool::new(true),
        });
        Self {
            world,
            installed,
            consumers,
            shadowed: Mutex::new(shadowed),
        }
    }

    /// Uninstalls the runtime (also when the model is dropped).
    fn close(&self) {
        let as_runtime: Arc<dyn StreamRuntime> = self.installed.clone();
        remove_stream_runtime(&as_runtime);
        let shadowed =
            std::mem::take(&mut *self.shadowed.lock().unwrap_or_else(|p| p.into_inner()));
        for other in shadowed.into_iter().rev() {
            install_stream_runtime(other);
        }
        let mut current = CURRENT_WORLD.lock().unwrap_or_else(|p| p.into_inner());
        if current
            .as_ref()
            .is_some_and(|world| Arc::ptr_eq(world, &self.world))
        {
            *current = None;
        }
    }

    /// The ``stream=`` value of stream ``index`` (0 is the legacy default stream: ``1``).
    fn handle(&self, index: usize) -> PyResult<i64> {
        let index = self.index(index)?;
        Ok(self.world.lock().handle(index))
    }

    /// The index of CUDA's per-thread default stream (``stream=2``), or ``None``.
    #[getter]
    fn per_thread(&self) -> Option<usize> {
        self.world.lock().per_thread
    }

    /// The number of streams.
    #[getter]
    fn streams(&self) -> usize {
        self.world.lock().streams.len()
    }

    /// The stream producers name as their current work stream (the exchange API's).
    #[getter]
    fn get_current(&self) -> usize {
        self.world.lock().current
    }

    #[setter]
    fn set_current(&self, index: usize) -> PyResult<()> {
        let index = self.index(index)?;
        self.world.lock().current = index;
        Ok(())
    }

    /// A producer: ``n`` elements that a kernel queued on ``stream`` writes to ``value``,
    /// exported read-only unless ``writable``; ``refuses_per_thread``: its ``__dlpack__``
    /// refuses ``stream=2`` as PyTorch 2.11's does (``BufferError: per-thread default stream is
    /// not supported.``).
    #[pyo3(signature = (n, value, stream, writable=false, refuses_per_thread=false))]
    fn array(
        &self,
        n: usize,
        value: f32,
        stream: usize,
        writable: bool,
        refuses_per_thread: bool,
    ) -> PyResult<ModelArray> {
        let stream = self.index(stream)?;
        let values: Arc<[AtomicU32]> = (0..n.max(1)).map(|_| AtomicU32::new(0)).collect();
        let mut state = self.world.lock();
        let buffer = state.buffers.len();
        state.buffers.push(Buffer {
            values: Arc::clone(&values),
            written: value,
            freed: false,
        });
        state.push(stream, Op::Write { buffer, value });
        drop(state);
        Ok(ModelArray {
            world: Arc::clone(&self.world),
            allocation: Arc::new(Allocation {
                world: Arc::clone(&self.world),
                buffer,
            }),
            values,
            stream,
            writable,
            refuses_per_thread,
        })
    }

    /// The streams whose next piece of work can run now.
    fn runnable(&self) -> Vec<usize> {
        let state = self.world.lock();
        (0..state.streams.len())
            .filter(|&s| state.runnable(s))
            .collect()
    }

    /// Runs the next piece of work of ``stream``, if it can run; whether it ran.
    fn step(&self, stream: usize) -> PyResult<bool> {
        let stream = self.index(stream)?;
        Ok(self.world.lock().step(stream))
    }

    /// Runs every piece of queued work, in stream order where there is a choice.
    fn drain(&self) -> PyResult<()> {
        let mut state = self.world.lock();
        while let Some(stream) = (0..state.streams.len()).find(|&s| state.runnable(s)) {
            state.step(stream);
        }
        if state.streams.iter().any(|queue| !queue.is_empty()) {
            state
                .violations
                .push("work left that can never run (a wait on an event never recorded)".into());
        }
        Ok(())
    }

    /// The host waits for the work queued on ``stream`` so far.
    fn synchronize(&self, stream: usize) -> PyResult<()> {
        let stream = self.index(stream)?;
        self.world.lock().synchronize(stream);
        Ok(())
    }

    /// Every read that saw memory before its write, or after its free.
    fn violations(&self) -> Vec<String> {
        self.world.lock().violations.clone()
    }

    /// ``{"reads", "records", "stream_waits", "host_waits"}``: what ran and what was asked.
    fn counts(&self) -> std::collections::BTreeMap<&'static str, usize> {
        let state = self.world.lock();
        [
            ("reads", state.reads),
            ("records", state.records),
            ("stream_waits", state.stream_waits),
            ("host_waits", state.host_waits),
        ]
        .into_iter()
        .collect()
    }

    /// A consumer that calls ``source.__dlpack__(stream=handle(stream))`` and reads on
    /// ``stream`` (``fenced``: its drop waits for the read, as ``CudaTensor``'s does;
    /// ``no_sync``: it passes ``stream=-1`` instead, and orders nothing).
    #[pyo3(signature = (source, stream, fenced=true, no_sync=false))]
    fn use_dlpack(
        &self,
        source: &Bound<'_, PyAny>,
        stream: usize,
        fenced: bool,
        no_sync: bool,
    ) -> PyResult<ModelUse> {
        let stream = self.index(stream)?;
        let py = source.py();
        let kwargs = pyo3::types::PyDict::new(py);
        let handle = self.world.lock().handle(stream);
        kwargs.set_item("stream", if no_sync { -1 } else { handle })?;
        kwargs.set_item("max_version", (1, 3))?;
        let capsule = source.call_method("__dlpack__", (), Some(&kwargs))?;
        let tensor = from_dlpack(&capsule, &DlpackRequest::default())?;
        Ok(self.use_on(tensor, stream, fenced, "__dlpack__")?)
    }

    /// A consumer through ``type(source).__dlpack_c_exchange_api__``: the ``no_sync`` export
    /// (``bare``: the non-owning ``DLTensor`` one, valid while ``source`` lives, which the use
    /// holds), read on the stream its ``current_work_stream`` names.
    #[pyo3(signature = (source, bare=false))]
    fn use_exchange(&self, source: &Bound<'_, PyAny>, bare: bool) -> PyDlpackResult<ModelUse> {
        let attribute = source.get_type().getattr("__dlpack_c_exchange_api__")?;
        let capsule = attribute.cast::<PyCapsule>()?;
        let table = capsule.pointer_checked(Some(c"dlpack_exchange_api"))?;
        // SAFETY: a `dlpack_exchange_api` capsule points to a static major-1 table (ours).
        let table = unsafe { table.cast::<DLPackExchangeAPI>().as_ref() };
        let failed = |py| PyErr::take(py).unwrap_or_else(|| PyBufferError::new_err("failed"));
        let work = table.current_work_stream.expect("non-NULL");
        let mut handle: *mut c_void = std::ptr::null_mut();
        // SAFETY: a device and an out-pointer.
        if unsafe { work(DEVICE.device_type, DEVICE.device_id, &mut handle) } != 0 {
            return Err(PyBufferError::new_err("current_work_stream failed").into());
        }
        let stream = abi::dlpack::work_stream(DEVICE, handle as usize);
        let stream = self.world.lock().stream_index(stream)?;
        if bare {
            let Some(fill) = table.dltensor_from_py_object_no_sync else {
                return Err(PyBufferError::new_err("no dltensor_from_py_object_no_sync").into());
            };
            let mut raw = std::mem::MaybeUninit::<abi::raw::DLTensor>::zeroed();
            // SAFETY: the exchange API's contract: a live object, attached, a writable out.
            if unsafe { fill(source.as_ptr().cast(), raw.as_mut_ptr()) } != 0 {
                return Err(failed(source.py()).into());
            }
            // SAFETY: filled on success (and zeroed, a valid `DLTensor`, before).
            let raw = unsafe { raw.assume_init() };
            let offset = usize::try_from(raw.byte_offset).unwrap_or(usize::MAX);
            self.read(
                (raw.data as usize).wrapping_add(offset),
                stream,
                "the exchange API's DLTensor",
            )?;
            return Ok(ModelUse {
                held: Some(Held::Borrowed {
                    _source: source.clone().unbind(),
                    world: Arc::clone(&self.world),
                    stream,
                }),
            });
        }
        let export = table
            .managed_tensor_from_py_object_no_sync
            .expect("non-NULL");
        let mut out: *mut DLManagedTensorVersioned = std::ptr::null_mut();
        // SAFETY: the exchange API's contract: a live object of the table's type, attached.
        if unsafe { export(source.as_ptr().cast(), &mut out) } != 0 {
            return Err(failed(source.py()).into());
        }
        // SAFETY: on success `out` is an owning tensor handed to us.
        let tensor = unsafe { VersionedTensor::from_raw(out) }?;
        self.use_on(tensor, stream, true, "the exchange API")
    }

    /// A consumer of ``source.__arrow_c_device_array__()`` that waits on its ``sync_event``
    /// and reads on ``stream``. The model's memory is host-readable (managed), which a stream's
    /// wait does not make ready for a tensor's host reads: the host waits, which runs only the
    /// work the event covers.
    fn use_arrow(&self, source: &Bound<'_, PyAny>, stream: usize) -> PyDlpackResult<ModelUse> {
        let stream = self.index(stream)?;
        let (schema, mut array) = import_device_array(source, None)?;
        array.wait_host(&*self.consumers)?;
        let tensor = array
            .into_tensor(schema.view())
            .map_err(|error| PyBufferError::new_err(error.to_string()))?;
        self.use_on(tensor, stream, true, "__arrow_c_device_array__")
    }

    /// ``x`` through a ``#[pyfunction]`` that takes and returns a ``PyVersionedTensor``.
    fn passthrough(&self, x: PyVersionedTensor) -> PyVersionedTensor {
        x
    }

    /// The sum of ``x`` read on the host through a ``ReadonlyTensor<f32>`` argument: the glue
    /// makes the (host-accessible, managed) memory ready for the host first, waiting for the
    /// producer's queued work (``BufferError`` where no runtime can order it).
    fn host_total(&self, x: ReadonlyTensor<f32>) -> PyDlpackResult<f64> {
        Ok(x.view().iter::<f32>()?.map(f64::from).sum())
    }
}

impl Drop for ModelGpu {
    fn drop(&mut self) {
        self.close();
    }
}

/// What a consumer holds (for its drop: the fence, then the producer's deleter).
#[allow(dead_code)]
enum Held {
    Fenced(OnStream),
    Bare(VersionedTensor),
    /// A bare `DLTensor`'s object, kept until the host has waited for the read on `stream`.
    Borrowed {
        _source: Py<PyAny>,
        world: Arc<World>,
        stream: usize,
    },
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Self::Borrowed { world, stream, .. } = self {
            world.lock().synchronize(*stream);
        }
    }
}

/// A consumer's use of a tensor: ``release()`` (or dropping it) ends it, and the producer's
/// deleter runs then (after the read, when fenced).
#[pyclass(module = "dlpack_abi", name = "_ModelUse")]
pub struct ModelUse {
    held: Option<Held>,
}

#[pymethods]
impl ModelUse {
    fn release(&mut self) {
        self.held = None;
    }
}

/// A model producer: a buffer a kernel writes late on its stream. Its ``__dlpack__`` orders
/// that stream before the consumer's, as CuPy and PyTorch order theirs.
#[pyclass(frozen, module = "dlpack_abi", name = "_ModelArray")]
pub struct ModelArray {
    world: Arc<World>,
    allocation: Arc<Allocation>,
    values: Arc<[AtomicU32]>,
    stream: usize,
    writable: bool,
    refuses_per_thread: bool,
}

impl ModelArray {
    fn share(&self) -> Share {
        Share {
            _allocation: Arc::clone(&self.allocation),
            values: Arc::clone(&self.values),
            shape: [i64::try_from(self.values.len()).unwrap_or(i64::MAX)],
            writable: self.writable,
        }
    }
}

impl DlpackExporter for ModelArray {
    fn dlpack_device(&self) -> DLDevice {
        DEVICE
    }

    fn dlpack_tensor(&self, stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
        if self.refuses_per_thread && stream == ConsumerStream::PerThreadDefault {
            return Err(
                PyBufferError::new_err("per-thread default stream is not supported.").into(),
            );
        }
        let mut state = self.world.lock();
        match stream {
            ConsumerStream::NoSync => {}
            ConsumerStream::Host => state.synchronize(self.stream),
            other => {
                let target = state.stream_index(other)?;
                if target != self.stream {
                    let event = state.record(self.stream);
                    state.wait(target, event);
                }
            }
        }
        drop(state);
        Ok(VersionedTensor::from_owner(self.share())?)
    }

    fn arrow_event(&self) -> PyDlpackResult<Option<Box<dyn DeviceEvent>>> {
        let event = self.world.lock().record(self.stream);
        Ok(Some(Box::new(ModelEvent { event })))
    }

    fn current_work_stream(_: DLDevice) -> Option<usize> {
        let world = CURRENT_WORLD
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        let state = world.lock();
        usize::try_from(state.handle(state.current))
            .ok()
            .filter(|&h| h != 1)
    }
}

dlpack_abi_pyo3::dlpack_pymethods! {
    impl ModelArray {
        /// The stream its write is queued on.
        #[getter]
        fn stream(&self) -> usize {
            self.stream
        }
    }
}

/// An exporter class that holds another producer's data as a ``Tensor`` and hands it on:
/// ``_ModelReexporter(source)``.
#[pyclass(frozen, module = "dlpack_abi", name = "_ModelReexporter")]
pub struct ModelReexporter {
    data: PyTensor,
}

impl DlpackExporter for ModelReexporter {
    fn dlpack_device(&self) -> DLDevice {
        self.data.device()
    }

    fn dlpack_tensor(&self, stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
        Ok(self.data.share(stream)?)
    }

    fn arrow_event(&self) -> PyDlpackResult<Option<Box<dyn DeviceEvent>>> {
        Ok(self.data.sync_event()?)
    }
}

dlpack_abi_pyo3::dlpack_pymethods! {
    impl ModelReexporter {
        #[new]
        #[pyo3(signature = (source, stream=None))]
        fn new(source: &Bound<'_, PyAny>, stream: Option<Bound<'_, PyAny>>) -> PyResult<Self> {
            let mut request = DlpackRequest::default();
            request.stream = stream.map(Bound::unbind);
            Ok(Self { data: PyTensor::from_dlpack(source, &request)? })
        }
    }
}

/// Adds the model's classes to the module (not to its ``__all__``).
pub fn add(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.setattr("_ModelGpu", py.get_type::<ModelGpu>())?;
    module.setattr("_ModelArray", py.get_type::<ModelArray>())?;
    module.setattr("_ModelReexporter", py.get_type::<ModelReexporter>())?;
    module.setattr("_ModelUse", py.get_type::<ModelUse>())?;
    Ok(())
}
