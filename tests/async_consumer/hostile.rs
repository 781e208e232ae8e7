//! Hostile async producers, C-style: raw structs, every release counted, the producer struct
//! freed right after the handler's `release` (so Miri sees any use after it).

use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;

use dlpack_abi::arrow::{errno, AsyncHandler, SchemaDef};
use dlpack_abi::raw::{
    ArrowArray, ArrowAsyncDeviceStreamHandler as Handler, ArrowAsyncProducer, ArrowAsyncTask,
    ArrowDeviceArray, ArrowDeviceType, ARROW_DEVICE_CPU,
};

/// Every count a hostile producer keeps.
#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) handler_releases: AtomicUsize,
    pub(crate) arrays_made: AtomicUsize,
    pub(crate) arrays_released: AtomicUsize,
    pub(crate) tasks_made: AtomicUsize,
    pub(crate) tasks_extracted: AtomicUsize,
    pub(crate) requests: AtomicUsize,
    pub(crate) cancels: AtomicUsize,
    /// A `request` is running (the slow-request producer).
    pub(crate) in_request: AtomicBool,
    /// A `request` has started (stays set).
    pub(crate) request_started: AtomicBool,
    /// The releasing thread is about to release.
    pub(crate) release_started: AtomicBool,
}

impl Counts {
    pub(crate) fn assert_balanced(&self) {
        assert_eq!(
            self.handler_releases.load(SeqCst),
            1,
            "handler released once"
        );
        assert_eq!(
            self.arrays_released.load(SeqCst),
            self.arrays_made.load(SeqCst),
            "every array released"
        );
        assert_eq!(
            self.tasks_extracted.load(SeqCst),
            self.tasks_made.load(SeqCst),
            "every task extracted once"
        );
    }
}

/// What a hostile producer does.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Script {
    /// Tasks before the end.
    pub(crate) tasks: usize,
    /// End with `on_error(EIO, "boom")` rather than the end marker.
    pub(crate) error_at_end: bool,
    /// Deliver (and end, and release) from inside `request`, on the consumer's thread.
    pub(crate) sync_request: bool,
    /// `cancel` calls `on_error` and `release` synchronously.
    pub(crate) release_in_cancel: bool,
    /// `request` takes its time; the producer thread releases meanwhile.
    pub(crate) release_during_request: bool,
    /// The producer's device type (arrays are CPU).
    pub(crate) device_type: ArrowDeviceType,
    /// `release` (and `on_error`) run on a fresh thread, not the delivering one.
    pub(crate) release_elsewhere: bool,
}

pub(crate) const SCRIPT: Script = Script {
    tasks: 2,
    error_at_end: false,
    sync_request: false,
    release_in_cancel: false,
    release_during_request: false,
    device_type: ARROW_DEVICE_CPU,
    release_elsewhere: false,
};

/// A C-style producer: `producer` first, so a `*mut ArrowAsyncProducer` is a `*mut Hostile`.
/// Freed by `finish`, right after the handler's `release`.
#[repr(C)]
pub(crate) struct Hostile {
    pub(crate) producer: ArrowAsyncProducer,
    pub(crate) handler: *mut Handler,
    pub(crate) script: Script,
    pub(crate) counts: Arc<Counts>,
    pub(crate) requested: AtomicUsize,
    pub(crate) delivered: AtomicUsize,
    pub(crate) cancelled: AtomicBool,
    /// Serialises deliveries (`on_next_task` calls are serialised).
    pub(crate) delivering: Mutex<()>,
}

/// A pointer that may cross threads (the tests say who uses it when).
#[derive(Clone, Copy)]
pub(crate) struct Send_<T>(pub(crate) *mut T);
// SAFETY: test-only; each use below is ordered by joins or the interface.
unsafe impl<T> Send for Send_<T> {}

/// Starts a hostile producer: sets `handler.producer` and calls `on_schema`. Returns NULL
/// (after releasing) when the consumer refused the schema.
pub(crate) unsafe fn start(
    handler: AsyncHandler,
    script: Script,
    counts: &Arc<Counts>,
) -> *mut Hostile {
    let handler = handler.into_raw();
    let this = Box::into_raw(Box::new(Hostile {
        producer: ArrowAsyncProducer {
            device_type: script.device_type,
            request: Some(request),
            cancel: Some(cancel),
            additional_metadata: ptr::null(),
            private_data: ptr::null_mut(),
        },
        handler,
        script,
        counts: counts.clone(),
        requested: AtomicUsize::new(0),
        delivered: AtomicUsize::new(0),
        cancelled: AtomicBool::new(false),
        delivering: Mutex::new(()),
    }));
    unsafe { (*handler).producer = this.cast() };
    let mut schema = SchemaDef::new("i").unwrap().export().unwrap().into_raw();
    let code = unsafe { (*handler).on_schema.unwrap()(handler, &mut schema) };
    if let Some(release) = schema.release {
        unsafe { release(&mut schema) }; // the consumer must move it out; ours if not
        panic!("the consumer left the schema behind");
    }
    if code != 0 {
        unsafe { finish(this, None) };
        return ptr::null_mut();
    }
    this
}

/// Optionally reports an error, releases the handler, and frees the producer.
pub(crate) unsafe fn finish(this: *mut Hostile, error: Option<(c_int, &'static CStr)>) {
    if unsafe { (*this).script.release_elsewhere } {
        let this = Send_(this);
        let elsewhere = thread::spawn(move || {
            let this = this;
            unsafe { finish_here(this.0, error) }
        });
        return elsewhere.join().unwrap();
    }
    unsafe { finish_here(this, error) }
}

pub(crate) unsafe fn finish_here(this: *mut Hostile, error: Option<(c_int, &CStr)>) {
    let (handler, counts) = unsafe { ((*this).handler, (*this).counts.clone()) };
    if let Some((code, message)) = error {
        unsafe { (*handler).on_error.unwrap()(handler, code, message.as_ptr(), ptr::null()) };
    }
    counts.handler_releases.fetch_add(1, SeqCst);
    unsafe { (*handler).release.unwrap()(handler) };
    // The producer is freed right after the handler's release (the interface allows it).
    drop(unsafe { Box::from_raw(this) });
}

/// Delivers the next task, or the end (and then releases and frees: `this` is gone when
/// this returns `true`).
pub(crate) unsafe fn step(this: *mut Hostile) -> bool {
    let (handler, script, counts) =
        unsafe { ((*this).handler, (*this).script, (*this).counts.clone()) };
    let guard = unsafe { &(*this).delivering }.lock().unwrap();
    let delivered = unsafe { &(*this).delivered }.fetch_add(1, SeqCst);
    if delivered == script.tasks {
        drop(guard);
        if script.error_at_end {
            unsafe { finish(this, Some((errno::EIO, c"boom"))) };
        } else {
            unsafe { (*handler).on_next_task.unwrap()(handler, ptr::null_mut(), ptr::null()) };
            unsafe { finish(this, None) };
        }
        return true;
    }
    let value = i32::try_from(delivered).unwrap();
    let mut task = ArrowAsyncTask {
        extract_data: Some(extract_data),
        private_data: Box::into_raw(Box::new((make_array(value, &counts), counts.clone()))).cast(),
    };
    counts.tasks_made.fetch_add(1, SeqCst);
    let code = unsafe { (*handler).on_next_task.unwrap()(handler, &mut task, ptr::null()) };
    drop(guard);
    if code != 0 {
        unsafe { finish(this, None) };
        return true;
    }
    false
}

pub(crate) unsafe extern "C" fn request(producer: *mut ArrowAsyncProducer, n: i64) {
    let this = producer.cast::<Hostile>();
    let (script, counts) = unsafe { ((*this).script, (*this).counts.clone()) };
    assert_eq!(n, 1, "the consumer asks for one task at a time");
    counts.requests.fetch_add(1, SeqCst);
    if script.sync_request {
        unsafe { step(this) }; // may release and free `this`
        return;
    }
    if script.release_during_request {
        counts.in_request.store(true, SeqCst);
        counts.request_started.store(true, SeqCst);
        while !counts.release_started.load(SeqCst) {
            thread::yield_now();
        }
        for _ in 0..50 {
            thread::yield_now();
        }
        // Still ours: the consumer's `release` waits for this call to return.
        assert!(!unsafe { &(*this).cancelled }.load(SeqCst));
        counts.in_request.store(false, SeqCst);
        return;
    }
    unsafe { &(*this).requested }.fetch_add(1, SeqCst);
}

pub(crate) unsafe extern "C" fn cancel(producer: *mut ArrowAsyncProducer) {
    let this = producer.cast::<Hostile>();
    let (script, counts) = unsafe { ((*this).script, (*this).counts.clone()) };
    counts.cancels.fetch_add(1, SeqCst);
    if script.release_in_cancel {
        unsafe { finish(this, Some((errno::EIO, c"cancelled"))) };
    } else {
        unsafe { &(*this).cancelled }.store(true, SeqCst);
    }
}

/// Runs the producer's side on its own thread until it has released the handler.
pub(crate) fn drive_on_thread(this: *mut Hostile) -> thread::JoinHandle<()> {
    let this = Send_(this);
    thread::spawn(move || {
        let this = this;
        let this = this.0;
        loop {
            if unsafe { &(*this).cancelled }.load(SeqCst) {
                return unsafe { finish(this, None) };
            }
            let requested = unsafe { &(*this).requested }.load(SeqCst);
            let delivered = unsafe { &(*this).delivered }.load(SeqCst);
            if delivered < requested {
                if unsafe { step(this) } {
                    return;
                }
            } else {
                thread::yield_now();
            }
        }
    })
}

/// A CPU int32 array of one value whose release is counted.
pub(crate) fn make_array(value: i32, counts: &Arc<Counts>) -> ArrowDeviceArray {
    struct Private {
        buffers: [*const c_void; 2],
        value: i32,
        counts: Arc<Counts>,
    }
    unsafe extern "C" fn release_array(array: *mut ArrowArray) {
        let private = unsafe { Box::from_raw((*array).private_data.cast::<Private>()) };
        private.counts.arrays_released.fetch_add(1, SeqCst);
        unsafe { (*array).release = None };
    }
    counts.arrays_made.fetch_add(1, SeqCst);
    let private = Box::into_raw(Box::new(Private {
        buffers: [ptr::null(); 2],
        value,
        counts: counts.clone(),
    }));
    unsafe { (*private).buffers[1] = ptr::addr_of!((*private).value).cast() };
    ArrowDeviceArray {
        array: ArrowArray {
            length: 1,
            null_count: 0,
            offset: 0,
            n_buffers: 2,
            n_children: 0,
            buffers: unsafe { ptr::addr_of_mut!((*private).buffers) }.cast(),
            children: ptr::null_mut(),
            dictionary: ptr::null_mut(),
            release: Some(release_array),
            private_data: private.cast(),
        },
        device_id: -1,
        device_type: ARROW_DEVICE_CPU,
        sync_event: ptr::null_mut(),
        reserved: [0; 3],
    }
}

/// A task's data: the array and the counts.
pub(crate) type TaskData = (ArrowDeviceArray, Arc<Counts>);

pub(crate) unsafe extern "C" fn extract_data(
    task: *mut ArrowAsyncTask,
    out: *mut ArrowDeviceArray,
) -> c_int {
    let data = unsafe { (*task).private_data.cast::<TaskData>() };
    assert!(!data.is_null(), "extract_data called twice");
    let (array, counts) = *unsafe { Box::from_raw(data) };
    unsafe { (*task).private_data = ptr::null_mut() };
    counts.tasks_extracted.fetch_add(1, SeqCst);
    unsafe { out.write(array) };
    0
}
