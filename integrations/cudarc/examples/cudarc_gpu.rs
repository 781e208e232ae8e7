//! The cudarc bridge on a real GPU (run by scripts/gpu-test.sh; needs a GPU, and says
//! "skipped: no GPU" without one): exports and imports whose producer's work is still running
//! when the consumer starts, read on the consumer's stream without a device synchronisation.
//! Prints one line per check and "cudarc_gpu: N passed, M failed"; fails when any check does.
//!
//! `cargo run -p dlpack-abi-cudarc --example cudarc_gpu`

use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cudarc::driver::{
    result, sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
};
use dlpack_abi::dlpack::{
    AccessError, ConsumerStream, TensorDescription, TensorOwner, VersionedTensor,
};
use dlpack_abi::raw::{kDLCUDA, DLDevice};
use dlpack_abi_cudarc::{
    cuda_available, export_shared_slice, export_slice, import_device_array, import_slice,
    CudaError, CudaWait,
};

/// Rounds per ordering check: a missing wait shows up as wrong values in some of them.
const ROUNDS: usize = 20;
/// Elements per buffer.
const N: usize = 1 << 20;
/// Every `u32` after `memset_d8(0x5a)`.
const PATTERN: u32 = 0x5a5a_5a5a;

type Check = fn(&Arc<CudaContext>) -> Result<(), String>;

fn main() {
    let gpus = if cuda_available() {
        CudaContext::device_count().unwrap_or(0)
    } else {
        0
    };
    if gpus == 0 {
        println!("cudarc_gpu: skipped: no GPU");
        return;
    }
    let context = CudaContext::new(0).expect("GPU 0");
    println!("cudarc_gpu: on {}", context.name().unwrap_or_default());
    let checks: [(&str, Check); 8] = [
        (
            "dlpack_ordered_on_a_consumer_stream",
            dlpack_ordered_on_a_consumer_stream,
        ),
        (
            "dlpack_ordered_on_the_per_thread_default_stream",
            dlpack_per_thread,
        ),
        ("dlpack_host_wait", dlpack_host_wait),
        ("arrow_sync_event_waited_by_a_stream", arrow_stream_wait),
        ("arrow_sync_event_waited_by_the_host", arrow_host_wait),
        ("imports_refuse_what_they_cannot_describe", refusals),
        (
            "cuda_tensor_drop_waits_for_the_consumer_before_the_deleter",
            drop_waits_for_the_consumer,
        ),
        (
            "runtime_records_on_a_stream_of_another_context",
            another_contexts_stream,
        ),
    ];
    let mut failed = 0;
    for (name, check) in checks {
        match check(&context) {
            Ok(()) => println!("ok     {name}"),
            Err(why) => {
                failed += 1;
                println!("FAILED {name}: {why}");
            }
        }
    }
    println!(
        "cudarc_gpu: {} passed, {failed} failed",
        checks.len() - failed
    );
    std::process::exit(i32::from(failed > 0));
}

/// A host function that sleeps `arg` milliseconds: work on the producer's stream that is
/// still running when the consumer starts.
unsafe extern "C" fn sleep_ms(arg: *mut c_void) {
    std::thread::sleep(Duration::from_millis(arg as usize as u64));
}

/// `N` zeroed `u32`s on a new stream, then (after 50 ms of other work on that stream) every
/// byte set to 0x5a: the producer's late writes.
fn late_values(context: &Arc<CudaContext>) -> Result<CudaSlice<u32>, String> {
    let stream = context.new_stream().map_err(debug)?;
    let mut values = stream.alloc_zeros::<u32>(N).map_err(debug)?;
    // SAFETY: a host function that makes no CUDA call; the argument is a plain number.
    unsafe {
        result::stream::launch_host_function(stream.cu_stream(), sleep_ms, 50 as *mut c_void)
    }
    .map_err(debug)?;
    let bytes = N * 4;
    let (pointer, _record) = values.device_ptr_mut(&stream);
    // SAFETY: `bytes` bytes of the slice's own allocation, on its stream.
    unsafe { result::memset_d8_async(pointer, 0x5a, bytes, stream.cu_stream()) }.map_err(debug)?;
    drop(_record);
    Ok(values)
}

fn check_values(values: &[u32]) -> Result<(), String> {
    match values.iter().position(|&value| value != PATTERN) {
        None => Ok(()),
        Some(at) => Err(format!(
            "element {at} is {:#x}: the consumer read before the producer's writes",
            values[at]
        )),
    }
}

fn debug(error: impl std::fmt::Debug) -> String {
    format!("{error:?}")
}

fn dlpack_ordered_on_a_consumer_stream(context: &Arc<CudaContext>) -> Result<(), String> {
    for _ in 0..ROUNDS {
        let consumer = context.new_stream().map_err(debug)?;
        let handle = ConsumerStream::Handle(consumer.cu_stream() as usize);
        let tensor = export_slice(late_values(context)?)
            .finish_on(handle)
            .map_err(debug)?;
        let imported = import_slice::<u32>(tensor, &consumer).map_err(debug)?;
        check_values(&consumer.clone_dtoh(imported.slice()).map_err(debug)?)?;
    }
    Ok(())
}

fn dlpack_per_thread(context: &Arc<CudaContext>) -> Result<(), String> {
    let consumer = context.per_thread_stream();
    for _ in 0..ROUNDS {
        let tensor = export_slice(late_values(context)?)
            .finish_on(ConsumerStream::PerThreadDefault)
            .map_err(debug)?;
        let imported = import_slice::<u32>(tensor, &consumer).map_err(debug)?;
        check_values(&consumer.clone_dtoh(imported.slice()).map_err(debug)?)?;
    }
    Ok(())
}

fn dlpack_host_wait(context: &Arc<CudaContext>) -> Result<(), String> {
    for _ in 0..ROUNDS {
        let tensor = export_slice(late_values(context)?)
            .finish_on(ConsumerStream::Host)
            .map_err(debug)?;
        // The host waited: a new stream needs no ordering.
        let consumer = context.new_stream().map_err(debug)?;
        let imported = import_slice::<u32>(tensor, &consumer).map_err(debug)?;
        check_values(&consumer.clone_dtoh(imported.slice()).map_err(debug)?)?;
    }
    Ok(())
}

fn arrow_stream_wait(context: &Arc<CudaContext>) -> Result<(), String> {
    for _ in 0..ROUNDS {
        let (schema, array) = export_slice(late_values(context)?)
            .into_device_array()
            .map_err(debug)?;
        if array.sync_event().is_none() {
            return Err("no sync_event".into());
        }
        let schema = schema.export().map_err(debug)?;
        let consumer: Arc<CudaStream> = context.new_stream().map_err(debug)?;
        let imported =
            import_device_array::<u32>(array, schema.view(), &consumer).map_err(debug)?;
        check_values(&consumer.clone_dtoh(imported.slice()).map_err(debug)?)?;
    }
    Ok(())
}

fn arrow_host_wait(context: &Arc<CudaContext>) -> Result<(), String> {
    for _ in 0..ROUNDS {
        let (schema, mut array) = export_slice(late_values(context)?)
            .into_device_array()
            .map_err(debug)?;
        array
            .wait_host(&CudaWait::new(Arc::clone(context)))
            .map_err(debug)?;
        let schema = schema.export().map_err(debug)?;
        let tensor = array.into_tensor(schema.view()).map_err(debug)?;
        let consumer = context.new_stream().map_err(debug)?;
        let imported = import_slice::<u32>(tensor, &consumer).map_err(debug)?;
        check_values(&consumer.clone_dtoh(imported.slice()).map_err(debug)?)?;
    }
    Ok(())
}

fn refusals(context: &Arc<CudaContext>) -> Result<(), String> {
    let stream = context.new_stream().map_err(debug)?;
    let values = stream.alloc_zeros::<u32>(8).map_err(debug)?;
    let tensor = export_slice(values).finish().map_err(debug)?;
    match import_slice::<f32>(tensor, &stream) {
        Err(CudaError::Access(AccessError::DtypeMismatch { .. })) => {}
        other => return Err(format!("a u32 tensor as f32: {other:?}")),
    }
    let values = Arc::new(stream.alloc_zeros::<u32>(8).map_err(debug)?);
    let strided = export_shared_slice(Arc::clone(&values))
        .shape(&[4])
        .strides(&[2])
        .finish()
        .map_err(debug)?;
    match import_slice::<u32>(strided, &stream) {
        Err(CudaError::Access(AccessError::NotContiguous)) => {}
        other => return Err(format!("a strided tensor: {other:?}")),
    }
    match export_shared_slice(values).shape(&[9]).finish() {
        Err(CudaError::Export(_)) => {}
        other => return Err(format!("9 elements of 8: {other:?}")),
    }
    let tensor = export_slice(stream.alloc_zeros::<u32>(4).map_err(debug)?)
        .finish()
        .map_err(debug)?;
    let mut imported = import_slice::<u32>(tensor, &stream).map_err(debug)?;
    match imported.slice_mut() {
        Err(AccessError::NotExclusive) => Ok(()),
        other => Err(format!("slice_mut of a shared export: {other:?}")),
    }
}

/// The memory of a producer with a caching allocator (PyTorch's, CuPy's): its deleter hands
/// the memory back to the pool, whose next user overwrites it at once on its own stream,
/// ordered after nothing of the consumer's. The deleter also notes whether the consumer's read
/// had completed when it ran.
struct PoolBlock {
    /// The allocation, freed (after the pool's write) when the block is dropped.
    _values: CudaSlice<u32>,
    pointer: sys::CUdeviceptr,
    device: DLDevice,
    shape: [i64; 1],
    /// The pool's next user of the memory.
    next_user: Arc<CudaStream>,
    /// Recorded on the consumer's stream after its read.
    read_done: Arc<Mutex<Option<CudaEvent>>>,
    /// What the deleter found.
    verdict: Arc<Mutex<Option<Result<(), String>>>>,
}

// SAFETY: `pointer` is the start of `_values`' `N` elements on `device`, which the block owns
// and frees only when it is dropped; nothing else holds Rust references to it.
unsafe impl TensorOwner for PoolBlock {
    fn describe(&mut self) -> TensorDescription<'_> {
        let start = self.pointer as usize as *mut u32;
        TensorDescription::elements(start, N, self.device, &self.shape, 0)
    }
}

impl Drop for PoolBlock {
    fn drop(&mut self) {
        let verdict = match &*self
            .read_done
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
        {
            None => Err("the deleter ran before the consumer's read was enqueued".to_string()),
            Some(event) if !event.is_complete() => Err(
                "the deleter ran while the consumer's read was still pending: a pool would \
                 have handed the memory out under it"
                    .to_string(),
            ),
            Some(_) => Ok(()),
        };
        *self.verdict.lock().unwrap_or_else(PoisonError::into_inner) = Some(verdict);
        // The pool's next user writes the memory at once, on its own stream.
        let written = self.next_user.context().bind_to_thread().and_then(|()| {
            // SAFETY: `N * 4` bytes of the block's own allocation, which is freed only after
            // the stream is synchronised below.
            unsafe { result::memset_d8_async(self.pointer, 0, N * 4, self.next_user.cu_stream()) }
        });
        if let Err(error) = written.and_then(|()| self.next_user.synchronize()) {
            *self.verdict.lock().unwrap_or_else(PoisonError::into_inner) =
                Some(Err(format!("the pool's write failed: {error:?}")));
        }
    }
}

/// A consumer reads late (its stream sleeps 50 ms, then copies the import out) and drops its
/// `CudaTensor` at once; the producer's deleter returns the memory to a pool whose next user
/// zeroes it. The deleter must run only after the read (the drop fences it), so the copy holds
/// the producer's values, never the pool's zeros.
fn drop_waits_for_the_consumer(context: &Arc<CudaContext>) -> Result<(), String> {
    let next_user = context.new_stream().map_err(debug)?;
    let device = DLDevice {
        device_type: kDLCUDA,
        device_id: i32::try_from(context.ordinal()).map_err(debug)?,
    };
    for _ in 0..ROUNDS {
        // The producer's data is ready before the export: this check is about the drop.
        let producer = context.new_stream().map_err(debug)?;
        let values = producer.alloc_zeros::<u32>(N).map_err(debug)?;
        let (pointer, record) = values.device_ptr(&producer);
        drop(record);
        // SAFETY: `N * 4` bytes of the slice's own allocation, on its stream.
        unsafe { result::memset_d8_async(pointer, 0x5a, N * 4, producer.cu_stream()) }
            .map_err(debug)?;
        producer.synchronize().map_err(debug)?;
        let read_done = Arc::new(Mutex::new(None));
        let verdict = Arc::new(Mutex::new(None));
        let tensor = VersionedTensor::from_owner(PoolBlock {
            _values: values,
            pointer,
            device,
            shape: [N as i64],
            next_user: Arc::clone(&next_user),
            read_done: Arc::clone(&read_done),
            verdict: Arc::clone(&verdict),
        })
        .map_err(debug)?;

        let consumer = context.new_stream().map_err(debug)?;
        let imported = import_slice::<u32>(tensor, &consumer).map_err(debug)?;
        let mut out = consumer.alloc_zeros::<u32>(N).map_err(debug)?;
        // SAFETY: a host function that makes no CUDA call; the argument is a plain number.
        unsafe {
            result::stream::launch_host_function(consumer.cu_stream(), sleep_ms, 50 as *mut c_void)
        }
        .map_err(debug)?;
        consumer
            .memcpy_dtod(imported.slice(), &mut out)
            .map_err(debug)?;
        *read_done.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(consumer.record_event(None).map_err(debug)?);
        drop(imported);
        let found = verdict
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or("the drop did not run the deleter")?;
        found?;
        check_values(&consumer.clone_dtoh(&out).map_err(debug)?)
            .map_err(|why| format!("the copy enqueued before the drop: {why}"))?;
    }
    Ok(())
}

/// A stream of a context the consumer created (not GPU 0's primary context, which cudarc, CuPy
/// and PyTorch use): `CudaRuntime` orders its event after the work queued there (bridged into
/// the primary context), the host and a stream of the primary context wait on it, and the event
/// outlives the consumer's context, which is destroyed before it.
fn another_contexts_stream(context: &Arc<CudaContext>) -> Result<(), String> {
    use dlpack_abi::dlpack::StreamRuntime;
    let gpu = DLDevice {
        device_type: kDLCUDA,
        device_id: 0,
    };
    let mut device: sys::CUdevice = 0;
    // SAFETY: an out-pointer; ordinal 0 exists (the caller found a GPU).
    unsafe { sys::cuDeviceGet(&mut device, 0) }
        .result()
        .map_err(debug)?;
    let mut other: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: an out-pointer, no creation parameters (NULL: the defaults) and a device; the new
    // context is pushed current. (`cuCtxCreate_v4`: cudarc's bindings for CUDA 12.5 or later,
    // which this example needs.)
    unsafe { sys::cuCtxCreate_v4(&mut other, std::ptr::null_mut(), 0, device) }
        .result()
        .map_err(debug)?;
    let mut stream: sys::CUstream = std::ptr::null_mut();
    // SAFETY: an out-pointer; the stream is created in the current context, `other`.
    let created = unsafe { sys::cuStreamCreate(&mut stream, 0) }.result();
    let mut popped: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: pops `other`, which `cuCtxCreate` pushed on this thread.
    let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
    let checked = created.map_err(debug).and_then(|()| {
        context.bind_to_thread().map_err(debug)?;
        let runtime = dlpack_abi_cudarc::CudaRuntime::new();
        let started = std::time::Instant::now();
        // SAFETY: a host function that makes no CUDA call; the argument is a plain number.
        unsafe { result::stream::launch_host_function(stream, sleep_ms, 100 as *mut c_void) }
            .map_err(debug)?;
        let event = runtime
            .record(gpu, ConsumerStream::Handle(stream as usize))
            .map_err(debug)?;
        // SAFETY: the runtime's own event.
        unsafe { runtime.wait(gpu, &*event, ConsumerStream::Host) }.map_err(debug)?;
        if started.elapsed() < Duration::from_millis(100) {
            return Err("the host's wait ended before the work queued before the event".into());
        }
        let consumer = context.new_stream().map_err(debug)?;
        let handle = ConsumerStream::Handle(consumer.cu_stream() as usize);
        // SAFETY: the runtime's own event.
        unsafe { runtime.wait(gpu, &*event, handle) }.map_err(debug)?;
        consumer.synchronize().map_err(debug)?;
        Ok(event)
    });
    if !stream.is_null() {
        // SAFETY: the stream created above, no longer used.
        let _ = unsafe { sys::cuStreamDestroy_v2(stream) };
    }
    // SAFETY: the context created above, no longer used.
    let _ = unsafe { sys::cuCtxDestroy_v2(other) };
    context.bind_to_thread().map_err(debug)?;
    // The event is the primary context's: dropped after the consumer's context is gone.
    drop(checked?);
    Ok(())
}
