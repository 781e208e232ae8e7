//! Device arrays with a pending `sync_event`: no typed reads until the host has waited on it
//! through a device runtime's `HostWait`, which is asked exactly once, with the array's device
//! and event.

use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr::NonNull;

use dlpack_abi::arrow::*;
use dlpack_abi::raw::*;

/// A runtime that records each wait, and fails the first `failures` of them.
#[derive(Default)]
struct Recorder {
    waits: RefCell<Vec<(ArrowDeviceType, i64, usize)>>,
    failures: RefCell<usize>,
}

// SAFETY: the tests' "device" memory is host memory that nothing writes: there is never pending
// work, so returning `Ok` is always truthful.
unsafe impl HostWait for Recorder {
    type Error = &'static str;
    fn wait_host(
        &self,
        device_type: ArrowDeviceType,
        device_id: i64,
        event: NonNull<c_void>,
    ) -> Result<(), Self::Error> {
        let event = event.as_ptr() as usize;
        self.waits
            .borrow_mut()
            .push((device_type, device_id, event));
        let mut failures = self.failures.borrow_mut();
        if *failures > 0 {
            *failures -= 1;
            return Err("the runtime could not wait");
        }
        Ok(())
    }
}

/// An int32 array on `device_type`/1 with `event` pending.
fn pending(device_type: ArrowDeviceType, event: &mut u64) -> DeviceArray {
    let values = Array::from_vec(vec![7i32, 8]).unwrap();
    // SAFETY: the "device" memory is host memory; the event outlives the array (test scope).
    unsafe { DeviceArray::new(values, device_type, 1, std::ptr::from_mut(event).cast()) }
}

#[test]
fn typed_reads_wait_for_the_event_once() {
    let schema = SchemaDef::new("i").unwrap().export().unwrap();
    let mut event = 0u64;
    let event_address = std::ptr::from_mut(&mut event) as usize;
    let mut array = pending(ARROW_DEVICE_CUDA_HOST, &mut event);
    let unreadable = |array: &DeviceArray| {
        let view = array.view(schema.view()).unwrap();
        matches!(
            view.values::<i32>(),
            Err(ReadError::NotHostAccessible { .. })
        )
    };
    assert!(unreadable(&array), "pending work: no typed reads");
    assert!(array.check_host_readable(false).is_err());

    let runtime = Recorder {
        failures: RefCell::new(1),
        ..Recorder::default()
    };
    assert_eq!(array.wait_host(&runtime), Err("the runtime could not wait"));
    assert!(unreadable(&array), "a failed wait leaves it unreadable");
    array.wait_host(&runtime).unwrap();
    let view = array.view(schema.view()).unwrap();
    assert_eq!(view.values::<i32>().unwrap(), [7, 8]);
    assert!(array.check_host_readable(false).is_ok());
    array.wait_host(&runtime).unwrap();
    assert_eq!(
        *runtime.waits.borrow(),
        [(ARROW_DEVICE_CUDA_HOST, 1, event_address); 2],
        "asked with the array's device and event: once failing, once succeeding, never again"
    );
}

#[test]
fn arrays_without_an_event_or_host_access_are_as_before() {
    let schema = SchemaDef::new("i").unwrap().export().unwrap();
    let runtime = Recorder::default();
    // No event: nothing to wait for, readable at once.
    let mut cpu = DeviceArray::from_cpu(Array::from_vec(vec![1i32]).unwrap());
    cpu.wait_host(&runtime).unwrap();
    assert!(runtime.waits.borrow().is_empty());
    assert_eq!(
        cpu.view(schema.view()).unwrap().values::<i32>().unwrap(),
        [1]
    );
    // Device memory the host cannot address stays unreadable after the wait.
    let mut event = 0u64;
    let mut cuda = pending(ARROW_DEVICE_CUDA, &mut event);
    cuda.wait_host(&runtime).unwrap();
    assert_eq!(runtime.waits.borrow().len(), 1);
    let view = cuda.view(schema.view()).unwrap();
    assert!(view.values::<i32>().is_err());
    assert!(cuda.check_host_readable(false).is_err());
}

/// A producer's event that counts its drops and remembers whether the array had been released
/// first.
struct Event {
    handle: usize,
    drops: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

// SAFETY: points to the handle, which lives as long as the event (boxed before use).
unsafe impl dlpack_abi::dlpack::DeviceEvent for Event {
    fn event_ptr(&self) -> NonNull<c_void> {
        NonNull::from(&self.handle).cast()
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        self.drops.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

fn counted_event(handle: usize) -> (Box<Event>, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let drops = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let event = Box::new(Event {
        handle,
        drops: std::sync::Arc::clone(&drops),
    });
    (event, drops)
}

fn drops(count: &std::sync::atomic::AtomicUsize) -> usize {
    count.load(std::sync::atomic::Ordering::SeqCst)
}

/// A fixed_shape_tensor device array (a parent with one child) on pinned memory, over counted
/// values.
fn tensor_array() -> (Schema, DeviceArray) {
    let tensor = dlpack_abi::dlpack::Export::new(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])
        .finish()
        .unwrap();
    let (schema, array) = DeviceArray::from_tensor(tensor).unwrap();
    let mut raw = array.into_raw();
    raw.device_type = ARROW_DEVICE_CUDA_HOST;
    raw.device_id = 0;
    let schema = schema.export().unwrap();
    // SAFETY: a live device array this test owns, of type `schema`.
    let array = unsafe { DeviceArray::from_raw(&mut raw, schema.view()) }.unwrap();
    (schema, array)
}

#[test]
fn an_attached_event_is_carried_owned_and_dropped_after_the_release() {
    let (schema, array) = tensor_array();
    let (event, dropped) = counted_event(0xe7e7);
    let array = array.with_event(event).unwrap();
    // The event is a pointer to the handle (the spec's `cudaEvent_t*`).
    let event = array.sync_event().unwrap();
    // SAFETY: the event lives until the array is released.
    assert_eq!(unsafe { event.cast::<usize>().read() }, 0xe7e7);
    // Pending: typed reads wait for the host.
    let mut array = array;
    assert!(array
        .view(schema.view())
        .unwrap()
        .child(0)
        .unwrap()
        .values::<f32>()
        .is_err());
    array.wait_host(&Recorder::default()).unwrap();
    let view = array.view(schema.view()).unwrap();
    assert_eq!(
        view.child(0).unwrap().values::<f32>().unwrap(),
        [1.0, 2.0, 3.0, 4.0]
    );
    // Exported, a child moved out, the parent released: the event goes with the parent, once.
    let mut raw = array.into_raw();
    // SAFETY: the child array of a live parent, moved out as the C Data Interface allows.
    let mut child = unsafe { std::ptr::read(*raw.array.children) };
    // SAFETY: the original was moved out above; mark it released for the parent.
    unsafe { (**raw.array.children).release = None };
    assert_eq!(drops(&dropped), 0);
    // SAFETY: the parent's release, once.
    unsafe { raw.array.release.unwrap()(&mut raw.array) };
    assert!(raw.array.release.is_none(), "the node's own release ran");
    assert_eq!(drops(&dropped), 1, "the event is dropped with the parent");
    // The child's values outlive the parent.
    // SAFETY: the moved child is live; buffer 1 holds four f32 values.
    let values = unsafe { std::slice::from_raw_parts((*child.buffers.add(1)).cast::<f32>(), 4) };
    assert_eq!(values, [1.0, 2.0, 3.0, 4.0]);
    // SAFETY: the child's release, once.
    unsafe { child.release.unwrap()(&mut child) };
    assert_eq!(drops(&dropped), 1);
}

#[test]
fn events_are_refused_on_cpu_arrays_and_arrays_that_have_one() {
    let (event, dropped) = counted_event(1);
    let cpu = DeviceArray::from_cpu(Array::from_vec(vec![1i32]).unwrap());
    assert_eq!(
        cpu.with_event(event).unwrap_err(),
        BridgeError::EventNotAttachable
    );
    assert_eq!(drops(&dropped), 1, "a refused event is dropped");

    let (_, array) = tensor_array();
    let (first, first_dropped) = counted_event(1);
    let (second, second_dropped) = counted_event(2);
    let array = array.with_event(first).unwrap();
    assert_eq!(
        array.with_event(second).unwrap_err(),
        BridgeError::EventNotAttachable
    );
    assert_eq!(drops(&second_dropped), 1);
    assert_eq!(
        drops(&first_dropped),
        1,
        "the refused array was released with its event"
    );
}

#[test]
fn a_bridged_array_waited_on_becomes_a_tensor() {
    let (schema, array) = tensor_array();
    let (event, dropped) = counted_event(3);
    let (_, unwaited) = tensor_array();
    let (other, other_dropped) = counted_event(4);
    let unwaited = unwaited.with_event(other).unwrap();
    assert_eq!(
        unwaited.into_tensor(schema.view()).unwrap_err(),
        BridgeError::PendingEvent
    );
    assert_eq!(drops(&other_dropped), 1);
    let mut array = array.with_event(event).unwrap();
    array.wait_host(&Recorder::default()).unwrap();
    let tensor = array.into_tensor(schema.view()).unwrap();
    assert_eq!(tensor.view().shape(), [2, 2]);
    assert_eq!(
        drops(&dropped),
        0,
        "the tensor holds the array and its event"
    );
    drop(tensor);
    assert_eq!(drops(&dropped), 1);
}

/// A runtime that records each stream wait, and fails the first `failures` of them.
#[derive(Default)]
struct StreamRecorder {
    waits: RefCell<Vec<(ArrowDeviceType, usize, usize)>>,
    failures: RefCell<usize>,
}

// SAFETY: the tests' "device" memory is host memory that nothing writes: never pending work.
unsafe impl StreamWait for StreamRecorder {
    type Error = &'static str;
    fn wait_stream(
        &self,
        device_type: ArrowDeviceType,
        _: i64,
        event: NonNull<c_void>,
        stream: usize,
    ) -> Result<(), Self::Error> {
        self.waits
            .borrow_mut()
            .push((device_type, event.as_ptr() as usize, stream));
        let mut failures = self.failures.borrow_mut();
        if *failures > 0 {
            *failures -= 1;
            return Err("the runtime could not wait");
        }
        Ok(())
    }
}

#[test]
fn a_stream_wait_bridges_device_memory_but_never_unlocks_host_reads() {
    let mut event = 0u64;
    let event_address = std::ptr::from_mut(&mut event) as usize;
    let schema = SchemaDef::new("i").unwrap().export().unwrap();
    let runtime = StreamRecorder {
        failures: RefCell::new(1),
        ..StreamRecorder::default()
    };
    // Device memory the host cannot read: a stream wait is what a device consumer needs.
    let mut cuda = pending(ARROW_DEVICE_CUDA, &mut event);
    assert_eq!(
        cuda.wait_stream(&runtime, 0x50),
        Err("the runtime could not wait")
    );
    assert_eq!(cuda.ordered_on(), None, "a failed wait leaves it pending");
    cuda.wait_stream(&runtime, 0x50).unwrap();
    cuda.wait_stream(&runtime, 0x50).unwrap();
    cuda.wait_stream(&runtime, 0x60).unwrap();
    assert_eq!(cuda.ordered_on(), Some(0x60));
    assert_eq!(
        *runtime.waits.borrow(),
        [
            (ARROW_DEVICE_CUDA, event_address, 0x50),
            (ARROW_DEVICE_CUDA, event_address, 0x50),
            (ARROW_DEVICE_CUDA, event_address, 0x60),
        ],
        "once failing, once per stream after that"
    );
    let tensor = cuda.into_tensor(schema.view()).unwrap();
    assert_eq!(tensor.view().device().device_type, kDLCUDA);

    // Host-readable memory: a stream wait orders the device, not the host.
    let mut pinned = pending(ARROW_DEVICE_CUDA_HOST, &mut event);
    pinned.wait_stream(&runtime, 0x70).unwrap();
    assert!(pinned.view(schema.view()).unwrap().values::<i32>().is_err());
    assert!(pinned.check_host_readable(false).is_err());
    assert_eq!(
        pinned.into_tensor(schema.view()).unwrap_err(),
        BridgeError::PendingEvent
    );
}

#[test]
fn arrays_without_a_pending_event_need_no_stream_wait() {
    let runtime = StreamRecorder::default();
    let mut cpu = DeviceArray::from_cpu(Array::from_vec(vec![1i32]).unwrap());
    cpu.wait_stream(&runtime, 1).unwrap();
    let mut event = 0u64;
    let mut waited = pending(ARROW_DEVICE_CUDA_HOST, &mut event);
    waited.wait_host(&Recorder::default()).unwrap();
    waited.wait_stream(&runtime, 1).unwrap();
    assert!(runtime.waits.borrow().is_empty());
    assert_eq!(waited.ordered_on(), None);
}

#[test]
fn a_device_stream_carries_each_arrays_event_through_the_c_interface() {
    let (first, first_dropped) = counted_event(0x11);
    let (second, second_dropped) = counted_event(0x22);
    let mut events = vec![first, second].into_iter();
    let arrays = (0..2).map(move |_| {
        let values = Array::from_vec(vec![1i32, 2]).unwrap();
        // SAFETY: a stand-in for device memory (host memory nothing writes); no event yet.
        let array = unsafe { DeviceArray::new(values, ARROW_DEVICE_CUDA, 0, std::ptr::null_mut()) };
        Ok(array.with_event(events.next().unwrap()).unwrap())
    });
    let stream =
        DeviceArrayStream::from_iter(SchemaDef::new("i").unwrap(), ARROW_DEVICE_CUDA, arrays)
            .unwrap();
    let items: Vec<DeviceArray> = stream.map(Result::unwrap).collect();
    let handles: Vec<usize> = items
        .iter()
        // SAFETY: each event lives until its array is released.
        .map(|array| unsafe { array.sync_event().unwrap().cast::<usize>().read() })
        .collect();
    assert_eq!(handles, [0x11, 0x22]);
    assert_eq!((drops(&first_dropped), drops(&second_dropped)), (0, 0));
    drop(items);
    assert_eq!((drops(&first_dropped), drops(&second_dropped)), (1, 1));
}
