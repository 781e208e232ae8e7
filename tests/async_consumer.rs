#![cfg(feature = "std")]
//! The async device stream consumer against this crate's `AsyncProducer` and against hostile
//! producers written here (C-style: raw structs, every release counted, the producer struct
//! freed right after the handler's `release`, so Miri sees any use after it).

use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use dlpack_abi::arrow::{
    errno, Array, AsyncConsumer, AsyncHandler, AsyncProducer, AsyncState, AsyncStreamError,
    DeviceArray, ProducerError, SchemaDef, ValidationError,
};
use dlpack_abi::raw::{ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA};

type Item = Result<DeviceArray, AsyncStreamError>;

// ---- a minimal executor: park until woken ----

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

fn waker() -> Waker {
    Waker::from(Arc::new(Unpark(thread::current())))
}

/// Blocks the thread on the next item.
fn next(consumer: &mut AsyncConsumer) -> Option<Item> {
    let waker = waker();
    let mut cx = Context::from_waker(&waker);
    loop {
        match consumer.poll_next(&mut cx) {
            Poll::Ready(item) => return item,
            Poll::Pending => thread::park(),
        }
    }
}

fn values(consumer: &AsyncConsumer, array: &DeviceArray) -> Vec<i32> {
    let schema = consumer.schema().expect("schema before arrays");
    array
        .view(schema)
        .unwrap()
        .values::<i32>()
        .unwrap()
        .to_vec()
}

fn poll_once(consumer: &mut AsyncConsumer) -> Poll<Option<Item>> {
    let waker = waker();
    consumer.poll_next(&mut Context::from_waker(&waker))
}

// ---- against our own AsyncProducer ----

fn batch(values: Vec<i32>) -> Result<DeviceArray, ProducerError> {
    Ok(DeviceArray::from_cpu(Array::from_vec(values).unwrap()))
}

/// Runs an `AsyncProducer` over `items` on its own thread, driving until it finishes.
fn spawn_producer(
    handler: AsyncHandler,
    items: Vec<Result<DeviceArray, ProducerError>>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let schema = SchemaDef::new("i").unwrap();
        // SAFETY: our handler follows the interface and lives until the producer releases it.
        let mut producer = unsafe {
            AsyncProducer::start(
                handler.into_raw(),
                ARROW_DEVICE_CPU,
                &schema,
                items.into_iter(),
            )
        };
        while producer.drive() == AsyncState::Waiting {
            thread::yield_now();
        }
    })
}

#[test]
fn consumer_and_handler_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<AsyncConsumer>();
    send::<AsyncHandler>();
}

#[test]
fn own_producer_yields_every_batch_in_order_then_none() {
    let (mut consumer, handler) = AsyncConsumer::new();
    let items = vec![batch(vec![1, 2]), batch(vec![]), batch(vec![3, 4, 5])];
    let thread = spawn_producer(handler, items);
    let mut seen = Vec::new();
    while let Some(item) = next(&mut consumer) {
        let array = item.unwrap();
        assert_eq!(array.device_type(), ARROW_DEVICE_CPU);
        seen.push(values(&consumer, &array));
    }
    assert_eq!(seen, [vec![1, 2], vec![], vec![3, 4, 5]]);
    assert_eq!(consumer.schema().unwrap().format(), b"i");
    assert!(next(&mut consumer).is_none()); // fused
    thread.join().unwrap();
}

#[test]
fn own_producer_error_keeps_code_and_message() {
    let (mut consumer, handler) = AsyncConsumer::new();
    let error = ProducerError::new(errno::ENOMEM, Some("out of device memory"));
    let thread = spawn_producer(handler, vec![batch(vec![7]), Err(error.clone())]);
    let array = next(&mut consumer).unwrap().unwrap();
    assert_eq!(values(&consumer, &array), [7]);
    assert_eq!(
        next(&mut consumer).unwrap().unwrap_err(),
        AsyncStreamError::Producer(error)
    );
    assert!(next(&mut consumer).is_none());
    thread.join().unwrap();
}

#[test]
fn back_pressure_requests_one_task_at_a_time() {
    let (mut consumer, handler) = AsyncConsumer::new();
    let items = vec![batch(vec![1]), batch(vec![2])];
    // SAFETY: as in `spawn_producer`.
    let mut producer = unsafe {
        AsyncProducer::start(
            handler.into_raw(),
            ARROW_DEVICE_CPU,
            &SchemaDef::new("i").unwrap(),
            items.into_iter(),
        )
    };
    assert!(poll_once(&mut consumer).is_pending());
    assert!(poll_once(&mut consumer).is_pending()); // no second request while one is open
    assert_eq!(producer.drive(), AsyncState::Waiting); // delivered exactly one
    assert!(matches!(poll_once(&mut consumer), Poll::Ready(Some(Ok(_)))));
    assert!(poll_once(&mut consumer).is_pending());
    // Dropping the consumer cancels: the producer then releases without delivering more.
    drop(consumer);
    assert_eq!(producer.drive(), AsyncState::Finished);
}

#[test]
fn handler_never_handed_out_releases_itself() {
    let (mut consumer, handler) = AsyncConsumer::new();
    drop(handler);
    let waker = waker();
    let mut cx = Context::from_waker(&waker);
    assert!(matches!(
        consumer.poll_schema(&mut cx),
        Poll::Ready(Err(AsyncStreamError::Protocol(_)))
    ));
    assert!(matches!(
        consumer.poll_next(&mut cx),
        Poll::Ready(Some(Err(AsyncStreamError::Protocol(_))))
    ));
    assert!(consumer.poll_next(&mut cx).is_ready());
}

// ---- hostile producers (tests/async_consumer/hostile.rs) ----

#[path = "async_consumer/hostile.rs"]
mod hostile;
use hostile::*;

/// Iterations of the loops (Miri is slow).
const ROUNDS: usize = if cfg!(miri) { 12 } else { 300 };

/// Iterations of the stress loop.
const STRESS: usize = if cfg!(miri) { 12 } else { 3000 };

/// (a) Release from the producer's thread right after the end marker or `on_error`, racing
/// the consumer, which reads `stop_after` items and then drops.
fn race(script: Script, stop_after: usize) {
    let counts = Arc::new(Counts::default());
    let (mut consumer, handler) = AsyncConsumer::new();
    let this = unsafe { start(handler, script, &counts) };
    let thread = drive_on_thread(this);
    let mut read = 0;
    while read < stop_after {
        match next(&mut consumer) {
            Some(Ok(array)) => {
                assert_eq!(values(&consumer, &array), [i32::try_from(read).unwrap()]);
                read += 1;
            }
            Some(Err(error)) => {
                assert!(script.error_at_end && read == script.tasks);
                let AsyncStreamError::Producer(error) = error else {
                    panic!("{error}")
                };
                assert_eq!((error.code(), error.message()), (errno::EIO, Some("boom")));
                read += 1;
            }
            None => break,
        }
    }
    drop(consumer);
    thread.join().unwrap();
    counts.assert_balanced();
}

#[test]
fn release_from_another_thread_races_the_consumer() {
    for round in 0..ROUNDS {
        let error_at_end = round % 2 == 1;
        let script = Script {
            error_at_end,
            release_elsewhere: round % 4 >= 2,
            tasks: 2,
            ..SCRIPT
        };
        race(script, round % 5); // 0..=4: drop before, during, at and after the end
    }
}

#[test]
fn stress_every_release_counted() {
    let counts = Arc::new(Counts::default());
    let started = std::time::Instant::now();
    for round in 0..STRESS {
        let (mut consumer, handler) = AsyncConsumer::new();
        let script = Script {
            tasks: round % 4,
            error_at_end: round % 3 == 0,
            release_elsewhere: round % 5 == 0,
            ..SCRIPT
        };
        let this = unsafe { start(handler, script, &counts) };
        let thread = drive_on_thread(this);
        for _ in 0..round % 6 {
            if next(&mut consumer).is_none() {
                break;
            }
        }
        // The consumer may drop on another thread than the one that polled.
        thread::spawn(move || drop(consumer)).join().unwrap();
        thread.join().unwrap();
    }
    assert_eq!(counts.handler_releases.load(SeqCst), STRESS);
    assert_eq!(
        counts.arrays_released.load(SeqCst),
        counts.arrays_made.load(SeqCst)
    );
    assert_eq!(
        counts.tasks_extracted.load(SeqCst),
        counts.tasks_made.load(SeqCst)
    );
    assert!(started.elapsed().as_secs() < 30 || cfg!(miri));
}

/// (b) Everything happens synchronously inside `request`: tasks, end marker, release.
#[test]
fn synchronous_delivery_and_release_inside_request() {
    for error_at_end in [false, true] {
        let counts = Arc::new(Counts::default());
        let (mut consumer, handler) = AsyncConsumer::new();
        let script = Script {
            sync_request: true,
            error_at_end,
            ..SCRIPT
        };
        let this = unsafe { start(handler, script, &counts) };
        assert!(!this.is_null());
        // Delivered inside `request`, so ready at the first poll.
        let first = poll_once(&mut consumer);
        let Poll::Ready(Some(Ok(array))) = first else {
            panic!("{first:?}")
        };
        assert_eq!(values(&consumer, &array), [0]);
        drop(array);
        let array = next(&mut consumer).unwrap().unwrap();
        assert_eq!(values(&consumer, &array), [1]);
        drop(array);
        // `request` ends the stream and releases the handler (and frees the producer).
        match next(&mut consumer) {
            None => assert!(!error_at_end),
            Some(Err(AsyncStreamError::Producer(error))) => {
                assert!(error_at_end);
                assert_eq!((error.code(), error.message()), (errno::EIO, Some("boom")));
                assert!(next(&mut consumer).is_none());
            }
            other => panic!("{other:?}"),
        }
        drop(consumer); // must not cancel: the producer is gone
        assert_eq!(counts.cancels.load(SeqCst), 0);
        assert_eq!(counts.requests.load(SeqCst), 3);
        counts.assert_balanced();
    }
}

/// (b) `cancel` calls `on_error` and `release` synchronously, from the consumer's `drop`.
#[test]
fn synchronous_error_and_release_inside_cancel() {
    let counts = Arc::new(Counts::default());
    let (mut consumer, handler) = AsyncConsumer::new();
    let script = Script {
        sync_request: true,
        release_in_cancel: true,
        tasks: 5,
        ..SCRIPT
    };
    let this = unsafe { start(handler, script, &counts) };
    assert!(!this.is_null());
    assert!(matches!(poll_once(&mut consumer), Poll::Ready(Some(Ok(_)))));
    drop(consumer); // cancel -> on_error -> release, all on this thread: no deadlock
    assert_eq!(counts.cancels.load(SeqCst), 1);
    counts.assert_balanced();
}

/// (c) A producer that never answers: `Pending` forever, one request only; dropping cancels
/// and returns at once. The producer releases much later, from another thread.
#[test]
fn silent_producer_stays_pending_and_drop_cancels() {
    let counts = Arc::new(Counts::default());
    let (mut consumer, handler) = AsyncConsumer::new();
    let this = unsafe { start(handler, SCRIPT, &counts) };
    for _ in 0..3 {
        assert!(poll_once(&mut consumer).is_pending());
    }
    assert_eq!(counts.requests.load(SeqCst), 1);
    drop(consumer);
    assert_eq!(counts.cancels.load(SeqCst), 1);
    assert_eq!(counts.handler_releases.load(SeqCst), 0);
    let this = Send_(this);
    thread::spawn(move || {
        let this = this;
        unsafe { finish(this.0, None) }
    })
    .join()
    .unwrap();
    counts.assert_balanced();
}

/// A `release` from another thread while `request` runs waits for `request` to return (the
/// producer checks that its `request` is over once the handler's `release` has returned).
#[test]
fn release_waits_for_a_request_in_flight() {
    for _ in 0..if cfg!(miri) { 2 } else { 50 } {
        let counts = Arc::new(Counts::default());
        let (mut consumer, handler) = AsyncConsumer::new();
        let script = Script {
            release_during_request: true,
            ..SCRIPT
        };
        let this = Send_(unsafe { start(handler, script, &counts) });
        let releaser = {
            let counts = counts.clone();
            thread::spawn(move || {
                let this = this;
                while !counts.request_started.load(SeqCst) {
                    thread::yield_now();
                }
                counts.release_started.store(true, SeqCst);
                unsafe { finish(this.0, Some((errno::EIO, c"racing"))) };
                assert!(
                    !counts.in_request.load(SeqCst),
                    "released under a running request"
                );
            })
        };
        let item = next(&mut consumer).unwrap();
        let Err(AsyncStreamError::Producer(error)) = item else {
            panic!("{item:?}")
        };
        assert_eq!(error.message(), Some("racing"));
        releaser.join().unwrap();
        drop(consumer);
        counts.assert_balanced();
    }
}

/// Arrays of another device type than the producer's are refused (and released).
#[test]
fn device_mismatch_is_refused_and_released() {
    let counts = Arc::new(Counts::default());
    let (mut consumer, handler) = AsyncConsumer::new();
    let script = Script {
        device_type: ARROW_DEVICE_CUDA,
        ..SCRIPT
    };
    let this = unsafe { start(handler, script, &counts) };
    let thread = drive_on_thread(this);
    let item = next(&mut consumer).unwrap();
    assert!(matches!(
        item,
        Err(AsyncStreamError::Invalid(
            ValidationError::DeviceMismatch { .. }
        ))
    ));
    assert!(next(&mut consumer).is_none());
    thread.join().unwrap(); // the refusal (non-zero on_next_task) stopped the producer
    drop(consumer);
    counts.assert_balanced();
}

/// Dropped before `on_schema`: the schema is refused, so the producer stops.
#[test]
fn dropped_before_the_schema_refuses_it() {
    let counts = Arc::new(Counts::default());
    let (consumer, handler) = AsyncConsumer::new();
    drop(consumer);
    let this = unsafe { start(handler, SCRIPT, &counts) };
    assert!(this.is_null());
    counts.assert_balanced();
}

#[cfg(feature = "futures-core")]
#[test]
fn futures_core_stream_yields_the_same_items() {
    use futures_core::{FusedStream, Stream};
    use std::pin::Pin;
    let (mut consumer, handler) = AsyncConsumer::new();
    let thread = spawn_producer(handler, vec![batch(vec![4])]);
    let waker = waker();
    let mut cx = Context::from_waker(&waker);
    let mut items = 0;
    loop {
        match Pin::new(&mut consumer).poll_next(&mut cx) {
            Poll::Pending => thread::park(),
            Poll::Ready(Some(item)) => items += item.unwrap().len(),
            Poll::Ready(None) => break,
        }
    }
    assert_eq!(items, 1);
    assert!(consumer.is_terminated());
    thread.join().unwrap();
}

/// A producer whose one task fails `extract_data`, and which ignores the consumer's stop and
/// ends the stream (then releases) from inside `request`: the failure is the stream's error
/// (never a clean end), and the consumer asks for nothing more, nor cancels.
#[test]
fn a_failed_extract_is_an_error_even_when_the_end_follows() {
    use dlpack_abi::raw::{
        ArrowAsyncDeviceStreamHandler, ArrowAsyncProducer, ArrowAsyncTask, ArrowDeviceArray,
    };
    use std::ffi::c_int;
    use std::ptr;
    use std::sync::atomic::AtomicUsize;

    #[repr(C)]
    struct Failing {
        producer: ArrowAsyncProducer,
        handler: *mut ArrowAsyncDeviceStreamHandler,
        requests: AtomicUsize,
        cancels: AtomicUsize,
    }
    unsafe extern "C" fn fail(_: *mut ArrowAsyncTask, _: *mut ArrowDeviceArray) -> c_int {
        errno::EIO
    }
    unsafe extern "C" fn request(producer: *mut ArrowAsyncProducer, _: i64) {
        let this = producer.cast::<Failing>();
        let handler = unsafe { (*this).handler };
        if unsafe { &(*this).requests }.fetch_add(1, SeqCst) == 0 {
            let mut task = ArrowAsyncTask {
                extract_data: Some(fail),
                private_data: ptr::null_mut(),
            };
            let code = unsafe { (*handler).on_next_task.unwrap()(handler, &mut task, ptr::null()) };
            assert_eq!(code, errno::EIO, "the consumer passes the failure back");
            // Ignores it: the end marker, then the release, synchronously.
            let end =
                unsafe { (*handler).on_next_task.unwrap()(handler, ptr::null_mut(), ptr::null()) };
            assert_eq!(end, 0);
            unsafe { (*handler).release.unwrap()(handler) };
        }
    }
    unsafe extern "C" fn cancel(producer: *mut ArrowAsyncProducer) {
        unsafe { &(*producer.cast::<Failing>()).cancels }.fetch_add(1, SeqCst);
    }

    let (mut consumer, handler) = AsyncConsumer::new();
    let handler = handler.into_raw();
    let this = Box::into_raw(Box::new(Failing {
        producer: ArrowAsyncProducer {
            device_type: ARROW_DEVICE_CPU,
            request: Some(request),
            cancel: Some(cancel),
            additional_metadata: ptr::null(),
            private_data: ptr::null_mut(),
        },
        handler,
        requests: AtomicUsize::new(0),
        cancels: AtomicUsize::new(0),
    }));
    unsafe { (*handler).producer = this.cast() };
    let mut schema = SchemaDef::new("i").unwrap().export().unwrap().into_raw();
    assert_eq!(
        unsafe { (*handler).on_schema.unwrap()(handler, &mut schema) },
        0
    );
    match next(&mut consumer) {
        Some(Err(AsyncStreamError::Producer(error))) => assert_eq!(error.code(), errno::EIO),
        other => panic!("expected the producer's code, got {other:?}"),
    }
    assert!(next(&mut consumer).is_none());
    drop(consumer);
    let this = unsafe { Box::from_raw(this) };
    assert_eq!(
        this.requests.load(SeqCst),
        1,
        "nothing asked for after the failure"
    );
    assert_eq!(this.cancels.load(SeqCst), 0);
}
