//! Hand-overs between streams: `StreamReady` (data ready on one stream) and `OnStream` (a
//! consumer's fenced drop), against a runtime that logs every record, wait and deleter.

use core::ffi::c_void;
use core::ptr::NonNull;
use std::sync::{Arc, Mutex};

use dlpack_abi::dlpack::{
    canonical_stream, work_stream, ConsumerStream, DeviceEvent, Element, OnStream, OrderError,
    RuntimeEvent, StreamOrder, StreamReady, StreamRuntime, TensorDescription, TensorOwner,
    VersionedTensor,
};
use dlpack_abi::raw::{
    kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged, kDLOpenCL, kDLROCM, kDLROCMHost, DLDevice,
    DLDeviceType,
};

const GPU: DLDevice = DLDevice {
    device_type: kDLCUDA,
    device_id: 0,
};
const CPU: DLDevice = DLDevice {
    device_type: kDLCPU,
    device_id: 0,
};
const C: ConsumerStream = ConsumerStream::Handle(0xC0);
const D: ConsumerStream = ConsumerStream::Handle(0xD0);

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, entry: String) {
    log.lock().unwrap().push(entry);
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// A runtime of `device_type` that logs what it is asked, and fails every call when `fail`.
struct Logging {
    log: Log,
    device_type: DLDeviceType,
    fail: bool,
    next: Mutex<usize>,
}

fn runtime(log: &Log) -> Arc<Logging> {
    logging(log, kDLCUDA, false)
}

fn logging(log: &Log, device_type: DLDeviceType, fail: bool) -> Arc<Logging> {
    Arc::new(Logging {
        log: Arc::clone(log),
        device_type,
        fail,
        next: Mutex::new(0),
    })
}

struct Event {
    id: usize,
    log: Log,
}

// SAFETY: points to the id, which lives as long as the event.
unsafe impl DeviceEvent for Event {
    fn event_ptr(&self) -> NonNull<c_void> {
        NonNull::from(&self.id).cast()
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        push(&self.log, format!("event {} destroyed", self.id));
    }
}

// SAFETY: the device's memory is host memory nothing writes: every order is kept trivially.
unsafe impl StreamRuntime for Logging {
    fn drives(&self, device: DLDevice) -> bool {
        device.device_type == self.device_type
    }

    fn record(&self, _: DLDevice, stream: ConsumerStream) -> Result<RuntimeEvent, OrderError> {
        if self.fail {
            return Err(OrderError::Runtime {
                call: "cuEventRecord",
                code: 700,
            });
        }
        let mut next = self.next.lock().unwrap();
        *next += 1;
        push(&self.log, format!("record {} on {stream}", *next));
        Ok(Arc::new(Event {
            id: *next,
            log: Arc::clone(&self.log),
        }))
    }

    unsafe fn wait(
        &self,
        _: DLDevice,
        event: &(dyn DeviceEvent + Sync),
        stream: ConsumerStream,
    ) -> Result<(), OrderError> {
        // SAFETY: this runtime's events point to their id (the caller's contract).
        let id = unsafe { event.event_ptr().cast::<usize>().read() };
        push(&self.log, format!("wait for {id} on {stream}"));
        Ok(())
    }
}

/// Host memory described as lying on `device`, whose deleter logs.
struct Owned {
    values: Vec<f32>,
    shape: [i64; 1],
    device: DLDevice,
    log: Log,
}

// SAFETY: `values` is a live allocation this owner keeps until it is dropped, read-only.
unsafe impl TensorOwner for Owned {
    fn describe(&mut self) -> TensorDescription<'_> {
        let data = self.values.as_mut_ptr().cast();
        let bytes = 4 * self.values.len();
        TensorDescription::new(data, bytes, self.device, f32::DTYPE, &self.shape)
            .with_flags(dlpack_abi::raw::DLPackFlags::READ_ONLY)
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        push(&self.log, "deleter".into());
    }
}

fn tensor(device: DLDevice, log: &Log) -> VersionedTensor {
    let owner = Owned {
        values: vec![1.0, 2.0],
        shape: [2],
        device,
        log: Arc::clone(log),
    };
    VersionedTensor::from_owner(owner).unwrap()
}

#[test]
fn every_stream_waits_on_the_event_of_the_import() {
    let log = Log::default();
    let ready = StreamReady::new(GPU, C, Some(runtime(&log))).unwrap();
    assert_eq!(take(&log), ["record 1 on stream 0xc0"], "recorded at once");
    ready.ready_on(GPU, ConsumerStream::NoSync).unwrap();
    assert_eq!(take(&log), Vec::<String>::new());
    // Its own stream too: the handle may be a destroyed stream's, reused.
    ready.ready_on(GPU, C).unwrap();
    assert_eq!(take(&log), ["wait for 1 on stream 0xc0"]);
    ready.ready_on(GPU, D).unwrap();
    ready.ready_on(GPU, ConsumerStream::Host).unwrap();
    ready.ready_on(GPU, ConsumerStream::Unspecified).unwrap();
    assert_eq!(
        take(&log),
        [
            "wait for 1 on stream 0xd0",
            "wait for 1 on the host",
            "wait for 1 on the legacy default stream"
        ],
        "one event serves every hand-over, on any later stream"
    );
    drop(ready);
    assert_eq!(take(&log), ["event 1 destroyed"]);
}

#[test]
fn the_default_stream_is_recorded_on_only_when_handed_on() {
    let log = Log::default();
    let ready = StreamReady::new(GPU, ConsumerStream::Unspecified, Some(runtime(&log))).unwrap();
    assert_eq!(ready.stream(), ConsumerStream::LegacyDefault);
    ready.ready_on(GPU, ConsumerStream::LegacyDefault).unwrap();
    ready.ready_on(GPU, ConsumerStream::Unspecified).unwrap();
    assert_eq!(take(&log), Vec::<String>::new());
    ready.ready_on(GPU, D).unwrap();
    assert_eq!(
        take(&log),
        [
            "record 1 on the legacy default stream",
            "wait for 1 on stream 0xd0",
            "event 1 destroyed"
        ]
    );
}

#[test]
fn the_per_thread_default_stream_is_always_waited_on() {
    let log = Log::default();
    let ready =
        StreamReady::new(GPU, ConsumerStream::PerThreadDefault, Some(runtime(&log))).unwrap();
    take(&log);
    // Another thread's per-thread default stream is another stream.
    ready
        .ready_on(GPU, ConsumerStream::PerThreadDefault)
        .unwrap();
    assert_eq!(take(&log), ["wait for 1 on the per-thread default stream"]);
    let alone = StreamReady::new(GPU, ConsumerStream::PerThreadDefault, None).unwrap();
    assert!(alone
        .ready_on(GPU, ConsumerStream::PerThreadDefault)
        .is_err());
}

#[test]
fn without_a_runtime_every_other_stream_is_refused_by_name() {
    let ready = StreamReady::new(GPU, C, None).unwrap();
    ready.ready_on(GPU, C).unwrap();
    ready.ready_on(GPU, ConsumerStream::NoSync).unwrap();
    for requested in [D, ConsumerStream::Host, ConsumerStream::LegacyDefault] {
        assert_eq!(
            ready.ready_on(GPU, requested),
            Err(OrderError::NotOrdered {
                ready_on: C,
                requested
            })
        );
    }
    assert_eq!(
        ready.ready_on(GPU, ConsumerStream::Unspecified),
        Err(OrderError::NotOrdered {
            ready_on: C,
            requested: ConsumerStream::LegacyDefault
        }),
        "no stream on CUDA is the legacy default stream"
    );
    let error = ready.record_event(GPU).map(|_| ()).unwrap_err();
    assert_eq!(error, OrderError::NoEvent { ready_on: C });
    assert_eq!(
        error.to_string(),
        "the data is ready on stream 0xc0 only, and no device runtime is available to record a \
         sync_event for it"
    );
}

#[test]
fn the_hook_answers_for_its_own_device() {
    let ready = StreamReady::new(GPU, C, None).unwrap();
    // Asked about the CPU, it still answers for the GPU data it was made for.
    assert!(ready.ready_on(CPU, ConsumerStream::Host).is_err());
    assert!(ready.record_event(CPU).is_err());
}

#[test]
fn a_runtime_of_another_device_is_no_runtime() {
    let log = Log::default();
    let rocm = logging(&log, kDLROCM, false);
    let ready = StreamReady::new(GPU, C, Some(rocm)).unwrap();
    assert!(ready.ready_on(GPU, D).is_err());
    assert_eq!(take(&log), Vec::<String>::new());
}

#[test]
fn the_arrow_event_is_the_imports_and_outlives_the_hook() {
    let log = Log::default();
    let ready = StreamReady::new(GPU, C, Some(runtime(&log))).unwrap();
    let event = ready.record_event(GPU).unwrap().expect("an event");
    // SAFETY: the logging runtime's events point to their id.
    assert_eq!(unsafe { event.event_ptr().cast::<usize>().read() }, 1);
    drop(ready);
    assert_eq!(
        take(&log),
        ["record 1 on stream 0xc0"],
        "the array keeps it"
    );
    drop(event);
    assert_eq!(take(&log), ["event 1 destroyed"]);
}

#[test]
fn cpu_data_orders_nothing_and_stream_minus_one_leaves_the_device_to_the_importer() {
    let log = Log::default();
    let ready = StreamReady::new(CPU, ConsumerStream::Unspecified, Some(runtime(&log))).unwrap();
    ready.ready_on(CPU, ConsumerStream::Host).unwrap();
    assert!(ready.record_event(CPU).unwrap().is_none());
    // `-1`: the importer orders device work; the host and Arrow, which nothing orders, are refused.
    let importer_orders =
        StreamReady::new(GPU, ConsumerStream::NoSync, Some(runtime(&log))).unwrap();
    importer_orders.ready_on(GPU, D).unwrap();
    let host = importer_orders
        .ready_on(GPU, ConsumerStream::Host)
        .unwrap_err();
    assert!(
        host.to_string()
            .starts_with("the data was imported with stream=-1"),
        "{host}"
    );
    let arrow = importer_orders.record_event(GPU).map(|_| ()).unwrap_err();
    assert_eq!(
        arrow,
        OrderError::NoEvent {
            ready_on: ConsumerStream::NoSync
        }
    );
    assert_eq!(take(&log), Vec::<String>::new());
}

#[test]
fn a_failing_runtime_is_an_error_at_the_import() {
    let log = Log::default();
    let failing = logging(&log, kDLCUDA, true);
    assert_eq!(
        StreamReady::new(GPU, C, Some(failing)).map(|_| ()),
        Err(OrderError::Runtime {
            call: "cuEventRecord",
            code: 700
        })
    );
}

#[test]
fn a_consumer_frees_only_after_the_host_waited_for_its_stream() {
    let log = Log::default();
    let in_use = OnStream::new(tensor(GPU, &log), D, runtime(&log)).unwrap();
    assert_eq!(in_use.stream(), D);
    assert_eq!(in_use.tensor().view().shape(), [2]);
    drop(in_use);
    assert_eq!(
        take(&log),
        [
            "record 1 on stream 0xd0",
            "wait for 1 on the host",
            "event 1 destroyed",
            "deleter"
        ]
    );
}

#[test]
fn a_consumer_whose_runtime_fails_still_runs_the_deleter_once() {
    let log = Log::default();
    let failing = logging(&log, kDLCUDA, true);
    drop(OnStream::new(tensor(GPU, &log), D, failing).unwrap());
    assert_eq!(take(&log), ["deleter"]);
}

#[test]
fn a_consumer_refused_runs_the_deleter_once() {
    let log = Log::default();
    for (device, stream) in [
        (CPU, D),
        (GPU, ConsumerStream::NoSync),
        (GPU, ConsumerStream::Host),
    ] {
        let refused = OnStream::new(tensor(device, &log), stream, runtime(&log));
        assert_eq!(refused.map(|_| ()), Err(OrderError::Unsupported { stream }));
        assert_eq!(take(&log), ["deleter"]);
    }
}

#[test]
fn streams_are_named_one_way() {
    let on = |device_type| DLDevice {
        device_type,
        device_id: 0,
    };
    let unspecified = ConsumerStream::Unspecified;
    assert_eq!(
        canonical_stream(GPU, unspecified),
        ConsumerStream::LegacyDefault
    );
    assert_eq!(
        canonical_stream(on(kDLROCM), unspecified),
        ConsumerStream::LegacyDefault
    );
    assert_eq!(canonical_stream(CPU, unspecified), unspecified);
    assert_eq!(work_stream(GPU, 0), ConsumerStream::LegacyDefault);
    assert_eq!(work_stream(GPU, 1), ConsumerStream::LegacyDefault);
    assert_eq!(work_stream(GPU, 2), ConsumerStream::PerThreadDefault);
    assert_eq!(work_stream(GPU, 0x7f00), ConsumerStream::Handle(0x7f00));
    assert_eq!(work_stream(on(kDLROCM), 2), ConsumerStream::Handle(2));
}

/// The array API's `stream` table, row by row: pinned host memory reads its runtime's row
/// (CUDA's `2` is the per-thread default stream on `kDLCUDAHost` too, ROCm's `1` and `2` are
/// refused on `kDLROCMHost`), and no stream given is the legacy default stream on all of them.
#[test]
fn pinned_host_memory_reads_its_runtimes_row_of_the_stream_table() {
    use dlpack_abi::dlpack::ConsumerStreamError;
    let on = |device_type| DLDevice {
        device_type,
        device_id: 0,
    };
    for cuda in [kDLCUDA, kDLCUDAManaged, kDLCUDAHost] {
        let device = on(cuda);
        assert_eq!(
            ConsumerStream::parse(device, Some(0)),
            Err(ConsumerStreamError::Ambiguous)
        );
        assert_eq!(
            ConsumerStream::parse(device, Some(1)),
            Ok(ConsumerStream::LegacyDefault)
        );
        assert_eq!(
            ConsumerStream::parse(device, Some(2)),
            Ok(ConsumerStream::PerThreadDefault)
        );
        assert_eq!(
            canonical_stream(device, ConsumerStream::Unspecified),
            ConsumerStream::LegacyDefault
        );
    }
    for rocm in [kDLROCM, kDLROCMHost] {
        let device = on(rocm);
        assert_eq!(
            ConsumerStream::parse(device, Some(0)),
            Ok(ConsumerStream::LegacyDefault)
        );
        for value in [1, 2] {
            assert_eq!(
                ConsumerStream::parse(device, Some(value)),
                Err(ConsumerStreamError::Unsupported { value })
            );
        }
        assert_eq!(
            canonical_stream(device, ConsumerStream::Unspecified),
            ConsumerStream::LegacyDefault
        );
    }
    // A device the table has no row for: every value but -1 is a handle.
    let opencl = on(kDLOpenCL);
    assert_eq!(
        ConsumerStream::parse(opencl, Some(2)),
        Ok(ConsumerStream::Handle(2))
    );
    assert_eq!(
        canonical_stream(opencl, ConsumerStream::Unspecified),
        ConsumerStream::Unspecified
    );
}
