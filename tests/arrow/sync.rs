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
