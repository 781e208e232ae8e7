//! The consumer side of the async device stream (experimental upstream, `abi.h` layout):
//! [`AsyncConsumer`] hands a producer an `ArrowAsyncDeviceStreamHandler` ([`AsyncHandler`]) and
//! yields the device arrays it delivers, validated against the stream's schema, through
//! [`poll_next`](AsyncConsumer::poll_next) (any executor: only `core::task` is used).
//!
//! The lifetime and reentrancy rules it follows are in [`AsyncConsumer`]'s documentation.
//!
//! ```
//! use std::sync::Arc;
//! use std::task::{Context, Poll, Wake, Waker};
//! use dlpack_abi::arrow::{Array, AsyncConsumer, AsyncProducer, DeviceArray, ProducerError, SchemaDef};
//! use dlpack_abi::raw::ARROW_DEVICE_CPU;
//!
//! struct Noop;
//! impl Wake for Noop {
//!     fn wake(self: Arc<Self>) {}
//! }
//! let waker = Waker::from(Arc::new(Noop));
//! let mut cx = Context::from_waker(&waker);
//!
//! let (mut consumer, handler) = AsyncConsumer::new();
//! let items = [Ok::<_, ProducerError>(DeviceArray::from_cpu(Array::from_vec(vec![1i32, 2])?))];
//! // SAFETY: our handler follows the interface and lives until the producer releases it.
//! let mut producer = unsafe { AsyncProducer::start(handler.into_raw(), ARROW_DEVICE_CPU, &SchemaDef::new("i")?, items.into_iter()) };
//! assert!(consumer.poll_next(&mut cx).is_pending()); // request(1) sent
//! producer.drive(); // the producer answers (here on this thread)
//! let Poll::Ready(Some(Ok(array))) = consumer.poll_next(&mut cx) else { panic!() };
//! assert_eq!(array.view(consumer.schema().unwrap())?.values::<i32>()?, [1, 2]);
//! assert!(consumer.poll_next(&mut cx).is_pending());
//! producer.drive(); // end of stream, then release
//! assert!(matches!(consumer.poll_next(&mut cx), Poll::Ready(None)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![allow(unsafe_code)]

mod callbacks;

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::ffi::c_int;
use core::fmt;
use core::ptr::{self, NonNull};
use core::task::{Context, Poll, Waker};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::{self, ThreadId};

use callbacks::{on_error, on_next_task, on_schema, release};

use crate::arrow::{DeviceArray, ProducerError, Schema, SchemaRef, ValidationError};
use crate::raw::{ArrowAsyncDeviceStreamHandler, ArrowAsyncProducer, ArrowDeviceType};

/// Why an async stream yielded an error (after which it yields nothing more).
///
/// ```
/// use dlpack_abi::arrow::{errno, AsyncStreamError, ProducerError};
///
/// let error = AsyncStreamError::Producer(ProducerError::new(errno::EIO, Some("disk gone")));
/// assert_eq!(error.to_string(), format!("the producer returned error {}: disk gone", errno::EIO));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AsyncStreamError {
    /// The producer called `on_error` (its code and message), or a task's `extract_data`
    /// failed (its code) and no `on_error` followed.
    Producer(ProducerError),
    /// The schema or a device array was refused (already released by then).
    Invalid(ValidationError),
    /// The producer broke the interface in the way described.
    Protocol(&'static str),
}

wraps! {
    AsyncStreamError::Producer(ProducerError),
    AsyncStreamError::Invalid(ValidationError),
}

impl fmt::Display for AsyncStreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Producer(error) => error.fmt(f),
            Self::Invalid(error) => error.fmt(f),
            Self::Protocol(what) => write!(f, "the async producer broke the interface: {what}"),
        }
    }
}

impl std::error::Error for AsyncStreamError {}

/// An item of the stream.
type Item = Result<DeviceArray, AsyncStreamError>;

/// What the consumer and the handler's callbacks share (behind an `Arc`; the handler's
/// `private_data` holds one reference, given up in `release`).
struct Shared {
    state: Mutex<State>,
    /// Signalled when a call into the producer returns (a `release` on another thread waits).
    call_returned: Condvar,
    /// The stream's schema, set once by `on_schema`.
    schema: OnceLock<Schema>,
}

/// The mutable part of [`Shared`].
struct State {
    /// The producer, copied from the handler in `on_schema`; NULL before, and after `release`.
    producer: *mut ArrowAsyncProducer,
    /// The producer's device type (read in `on_schema`).
    device_type: Option<ArrowDeviceType>,
    /// Delivered items (an error is the last one).
    items: VecDeque<Item>,
    /// No item follows the queued ones (end marker, error, or a refusal of ours).
    ended: bool,
    /// The handler's `release` has run: the producer is gone.
    released: bool,
    /// The consumer was dropped: later items are released at once.
    dropped: bool,
    /// Tasks requested and not delivered yet.
    requested: usize,
    /// The code of a failed `extract_data`, reported if no `on_error` follows.
    failed_extract: Option<c_int>,
    /// The thread that is calling into the producer (`request` or `cancel`), if one is.
    calling: Option<ThreadId>,
    /// Woken when an item, the end or the release arrives.
    waker: Option<Waker>,
}

// SAFETY: `Send`: the producer pointer is only dereferenced while the interface keeps it
// valid (before `release`, which waits for calls in flight), and `request` and `cancel` may
// be called from any thread; everything else in `State` is `Send`.
unsafe impl Send for State {}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Never poisoned by our code (nothing in a critical section panics); tolerated anyway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// Ends the stream with `error`, unless it has ended already.
    fn fail(&mut self, error: AsyncStreamError) {
        if !self.ended {
            self.items.push_back(Err(error));
            self.ended = true;
        }
    }
}

/// The consumer of an async device stream: yields the producer's device arrays, validated, in
/// order, then `None` (or one error, then `None`). Made with its handler by
/// [`new`](Self::new).
///
/// **What goes in and out.** The producer delivers the schema (`on_schema`, moved out and
/// validated: [`AsyncConsumer::poll_schema`]), then tasks (`on_next_task`): each task's
/// `extract_data` is called exactly once, inside the callback, and the device array it gives is
/// validated against the schema and the producer's device type ([`DeviceArray::from_raw`]).
/// Nothing is copied. `on_error` becomes [`AsyncStreamError::Producer`] with the producer's code
/// and message; the end marker (a NULL task) ends the stream.
///
/// **Back-pressure.** `poll_next` asks for one task at a time (`request(1)`), and only when no
/// delivered item is waiting: never from inside a callback.
///
/// **Ownership and lifetime.** The handler is a heap struct whose `private_data` holds one
/// reference to the state it shares with the consumer; the producer's `release` (exactly once,
/// from any thread) frees both. The producer pointer is copied from the handler in `on_schema`
/// and used only while `release` has not run, checked under the state's mutex. The mutex is never
/// held while calling into the producer: a call (`request` from `poll_next`, `cancel` from
/// `Drop`) marks the state with the calling thread's id, and a `release` arriving from another
/// thread meanwhile waits on a condition variable until the call has returned, so the producer
/// cannot be freed under it. A `release` (or `on_error`, `on_next_task`) that the producer makes
/// synchronously from inside `request` or `cancel`, on the calling thread, does not wait and
/// cannot deadlock; the consumer sees `released` when the call returns and never touches the
/// producer again. A producer must therefore not block its `request` or `cancel` on a `release`
/// running on another thread.
///
/// **Cancellation.** Dropping the consumer calls `cancel` (when the stream is still running) and
/// returns at once; items delivered later are released as they arrive, and the shared state
/// lives until the producer's `release`. A producer that never releases leaks the handler.
///
/// ```
/// use std::sync::Arc;
/// use std::task::{Context, Wake, Waker};
/// use dlpack_abi::arrow::AsyncConsumer;
///
/// struct Noop;
/// impl Wake for Noop {
///     fn wake(self: Arc<Self>) {}
/// }
/// let waker = Waker::from(Arc::new(Noop));
/// let (mut consumer, handler) = AsyncConsumer::new();
/// let raw = handler.into_raw(); // handed to a producer, which has not answered yet
/// assert!(consumer.poll_next(&mut Context::from_waker(&waker)).is_pending());
/// drop(consumer); // no producer to cancel yet; returns at once
/// // SAFETY: the producer's side: `release` is its last call, made exactly once.
/// unsafe { (*raw).release.unwrap()(raw) };
/// ```
pub struct AsyncConsumer {
    shared: Arc<Shared>,
    /// An error or `None` was yielded: the stream is over for the caller.
    done: bool,
}

/// The `ArrowAsyncDeviceStreamHandler` of an [`AsyncConsumer`], not yet given to a producer.
/// Dropped without [`into_raw`](Self::into_raw), it releases itself (the consumer then sees a
/// protocol error: no producer).
///
/// ```
/// use std::sync::Arc;
/// use std::task::{Context, Poll, Wake, Waker};
/// use dlpack_abi::arrow::{AsyncConsumer, AsyncStreamError};
///
/// struct Noop;
/// impl Wake for Noop {
///     fn wake(self: Arc<Self>) {}
/// }
/// let waker = Waker::from(Arc::new(Noop));
/// let (mut consumer, handler) = AsyncConsumer::new();
/// drop(handler);
/// let item = consumer.poll_next(&mut Context::from_waker(&waker));
/// assert!(matches!(item, Poll::Ready(Some(Err(AsyncStreamError::Protocol(_))))));
/// ```
pub struct AsyncHandler {
    raw: NonNull<ArrowAsyncDeviceStreamHandler>,
}

// SAFETY: the handler's callbacks may run on any thread (they only touch `Shared`, which is
// `Send + Sync`), and the struct is a heap allocation nobody else uses before `into_raw`.
unsafe impl Send for AsyncHandler {}

impl AsyncHandler {
    /// The handler, for a producer's start function. The producer must set `producer` before
    /// its first callback and call `release` exactly once, last (the interface's rules); the
    /// handler and its share of the consumer's state are freed then.
    ///
    /// ```
    /// use dlpack_abi::arrow::AsyncConsumer;
    ///
    /// let (_consumer, handler) = AsyncConsumer::new();
    /// let raw = handler.into_raw();
    /// // SAFETY: the producer's side: `release` exactly once, and nothing after it.
    /// unsafe { (*raw).release.unwrap()(raw) };
    /// ```
    pub fn into_raw(self) -> *mut ArrowAsyncDeviceStreamHandler {
        let raw = self.raw.as_ptr();
        core::mem::forget(self);
        raw
    }
}

impl Drop for AsyncHandler {
    fn drop(&mut self) {
        // SAFETY: our handler, never handed out; its `release` runs once, here.
        unsafe { release(self.raw.as_ptr()) };
    }
}

impl fmt::Debug for AsyncHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncHandler").finish_non_exhaustive()
    }
}

impl AsyncConsumer {
    /// A consumer and the handler to give its producer ([`AsyncHandler::into_raw`]).
    ///
    /// ```
    /// use dlpack_abi::arrow::AsyncConsumer;
    ///
    /// let (consumer, handler) = AsyncConsumer::new();
    /// assert!(consumer.schema().is_none()); // no `on_schema` yet
    /// drop(handler); // never handed out: released here
    /// ```
    pub fn new() -> (Self, AsyncHandler) {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                producer: ptr::null_mut(),
                device_type: None,
                items: VecDeque::new(),
                ended: false,
                released: false,
                dropped: false,
                requested: 0,
                failed_extract: None,
                calling: None,
                waker: None,
            }),
            call_returned: Condvar::new(),
            schema: OnceLock::new(),
        });
        let handler = Box::new(ArrowAsyncDeviceStreamHandler {
            on_schema: Some(on_schema),
            on_next_task: Some(on_next_task),
            on_error: Some(on_error),
            release: Some(release),
            producer: ptr::null_mut(),
            private_data: Arc::into_raw(Arc::clone(&shared)).cast_mut().cast(),
        });
        let raw = NonNull::from(Box::leak(handler));
        (
            Self {
                shared,
                done: false,
            },
            AsyncHandler { raw },
        )
    }

    /// The stream's schema, once `on_schema` has delivered it.
    ///
    /// ```
    /// use dlpack_abi::arrow::AsyncConsumer;
    ///
    /// let (consumer, _handler) = AsyncConsumer::new();
    /// assert!(consumer.schema().is_none());
    /// ```
    pub fn schema(&self) -> Option<SchemaRef<'_>> {
        self.shared.schema.get().map(Schema::view)
    }

    /// The stream's schema: `Pending` until `on_schema` arrives, or the error that ended the
    /// stream before it (which [`poll_next`](Self::poll_next) then yields too).
    ///
    /// # Errors
    /// [`AsyncStreamError::Invalid`] when the schema was refused, [`AsyncStreamError::Producer`]
    /// when the producer failed first, [`AsyncStreamError::Protocol`] when it released the
    /// handler without a schema.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Wake, Waker};
    /// use dlpack_abi::arrow::{AsyncConsumer, AsyncProducer, DeviceArray, ProducerError, SchemaDef};
    /// use dlpack_abi::raw::ARROW_DEVICE_CPU;
    ///
    /// struct Noop;
    /// impl Wake for Noop {
    ///     fn wake(self: Arc<Self>) {}
    /// }
    /// let waker = Waker::from(Arc::new(Noop));
    /// let (mut consumer, handler) = AsyncConsumer::new();
    /// let items = core::iter::empty::<Result<DeviceArray, ProducerError>>();
    /// // SAFETY: our handler follows the interface and lives until the producer releases it.
    /// let _producer = unsafe { AsyncProducer::start(handler.into_raw(), ARROW_DEVICE_CPU, &SchemaDef::new("u")?, items) };
    /// let Poll::Ready(Ok(schema)) = consumer.poll_schema(&mut Context::from_waker(&waker)) else { panic!() };
    /// assert_eq!(schema.format(), b"u");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn poll_schema(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<SchemaRef<'_>, AsyncStreamError>> {
        let mut state = self.shared.lock();
        if let Some(schema) = self.shared.schema.get() {
            return Poll::Ready(Ok(schema.view()));
        }
        settle(&mut state);
        if let Some(Err(error)) = state.items.front() {
            return Poll::Ready(Err(error.clone()));
        }
        register(&mut state, cx.waker());
        Poll::Pending
    }

    /// The next device array: `Ready(Some(Ok(_)))` in the producer's order, `Ready(None)` at
    /// the end, `Ready(Some(Err(_)))` once when the stream failed (then `None`), `Pending`
    /// while waiting (after asking the producer for one more task; `cx`'s waker is woken when
    /// something arrives).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Wake, Waker};
    /// use dlpack_abi::arrow::{errno, AsyncConsumer, AsyncProducer, AsyncStreamError, DeviceArray, ProducerError, SchemaDef};
    /// use dlpack_abi::raw::ARROW_DEVICE_CPU;
    ///
    /// struct Noop;
    /// impl Wake for Noop {
    ///     fn wake(self: Arc<Self>) {}
    /// }
    /// let waker = Waker::from(Arc::new(Noop));
    /// let mut cx = Context::from_waker(&waker);
    /// let (mut consumer, handler) = AsyncConsumer::new();
    /// let items = [Err::<DeviceArray, _>(ProducerError::new(errno::EIO, Some("gone")))];
    /// // SAFETY: our handler follows the interface and lives until the producer releases it.
    /// let mut producer = unsafe { AsyncProducer::start(handler.into_raw(), ARROW_DEVICE_CPU, &SchemaDef::new("i")?, items.into_iter()) };
    /// assert!(consumer.poll_next(&mut cx).is_pending());
    /// producer.drive(); // on_error, then release
    /// let Poll::Ready(Some(Err(AsyncStreamError::Producer(error)))) = consumer.poll_next(&mut cx) else { panic!() };
    /// assert_eq!((error.code(), error.message()), (errno::EIO, Some("gone")));
    /// assert!(matches!(consumer.poll_next(&mut cx), Poll::Ready(None)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        let mut state = self.shared.lock();
        loop {
            settle(&mut state);
            if let Some(item) = state.items.pop_front() {
                self.done = item.is_err();
                return Poll::Ready(Some(item));
            }
            if state.ended {
                self.done = true;
                return Poll::Ready(None);
            }
            register(&mut state, cx.waker());
            // After a failed `extract_data` the producer was told to stop: wait for its
            // `on_error` or `release`, asking for nothing more.
            let stopped = state.failed_extract.is_some();
            if state.producer.is_null() || state.released || state.requested > 0 || stopped {
                return Poll::Pending;
            }
            state.requested = 1;
            drop(state);
            state = call_producer(&self.shared, Call::Request);
        }
    }
}

impl Drop for AsyncConsumer {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.dropped = true;
        state.waker = None;
        let running = !state.ended
            && !state.released
            && !state.producer.is_null()
            && state.failed_extract.is_none();
        let mut items = core::mem::take(&mut state.items);
        drop(state);
        if running {
            let mut state = call_producer(&self.shared, Call::Cancel);
            items.append(&mut state.items);
        }
        drop(items); // released outside the lock
    }
}

impl fmt::Debug for AsyncConsumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncConsumer")
            .field("schema", &self.schema())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

/// With feature `futures-core`: the consumer is a `futures_core::Stream` (and a
/// `FusedStream`), polled through [`AsyncConsumer::poll_next`].
///
/// ```
/// use std::pin::Pin;
/// use std::sync::Arc;
/// use std::task::{Context, Poll, Wake, Waker};
/// use futures_core::Stream;
/// use dlpack_abi::arrow::{AsyncConsumer, AsyncStreamError};
///
/// struct Noop;
/// impl Wake for Noop {
///     fn wake(self: Arc<Self>) {}
/// }
/// let waker = Waker::from(Arc::new(Noop));
/// let (mut consumer, handler) = AsyncConsumer::new();
/// drop(handler); // never given to a producer
/// let item = Pin::new(&mut consumer).poll_next(&mut Context::from_waker(&waker));
/// assert!(matches!(item, Poll::Ready(Some(Err(AsyncStreamError::Protocol(_))))));
/// ```
#[cfg(feature = "futures-core")]
impl futures_core::Stream for AsyncConsumer {
    type Item = Item;

    fn poll_next(self: core::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        AsyncConsumer::poll_next(self.get_mut(), cx)
    }
}

/// With feature `futures-core`: terminated once `None` or an error was yielded.
///
/// ```
/// use futures_core::FusedStream;
/// use dlpack_abi::arrow::AsyncConsumer;
///
/// let (consumer, _handler) = AsyncConsumer::new();
/// assert!(!consumer.is_terminated());
/// ```
#[cfg(feature = "futures-core")]
impl futures_core::FusedStream for AsyncConsumer {
    fn is_terminated(&self) -> bool {
        self.done
    }
}

/// A call into the producer.
#[derive(Clone, Copy)]
enum Call {
    /// `request(1)`, from `poll_next`.
    Request,
    /// `cancel()`, from `Drop`.
    Cancel,
}

/// Calls into the producer, if it is still there, without holding the lock, marked as in
/// flight so that a `release` from another thread waits for the call to return; returns the
/// lock, taken again.
fn call_producer(shared: &Shared, call: Call) -> MutexGuard<'_, State> {
    let mut state = shared.lock();
    if state.released || state.producer.is_null() {
        return state;
    }
    let producer = state.producer;
    state.calling = Some(thread::current().id());
    drop(state);
    // SAFETY: not released (checked under the lock), and a `release` from another thread waits
    // until `calling` is cleared below: the producer is alive during this call.
    let live = unsafe { &*producer };
    let (request, cancel) = (live.request, live.cancel);
    let called = match (call, request, cancel) {
        (Call::Request, Some(request), _) => {
            // SAFETY: a live producer (above); `request` may be called from any thread, and
            // may call back into the handler on this thread (no lock is held).
            unsafe { request(producer, 1) };
            true
        }
        (Call::Cancel, _, Some(cancel)) => {
            // SAFETY: as above; `cancel` is idempotent and thread-safe.
            unsafe { cancel(producer) };
            true
        }
        _ => false,
    };
    let mut state = shared.lock();
    state.calling = None;
    shared.call_returned.notify_all();
    if !called {
        state.fail(AsyncStreamError::Protocol("request or cancel is NULL"));
    }
    state
}

/// A `release` without the end marker or an error ends the stream with a protocol error.
fn settle(state: &mut State) {
    if state.released && !state.ended {
        let error = match state.failed_extract {
            Some(code) => AsyncStreamError::Producer(ProducerError::code_only(code)),
            None => AsyncStreamError::Protocol("released the handler before the end of the stream"),
        };
        state.fail(error);
    }
}

/// Keeps `waker` to wake when something arrives.
fn register(state: &mut State, waker: &Waker) {
    match &state.waker {
        Some(kept) if kept.will_wake(waker) => {}
        _ => state.waker = Some(waker.clone()),
    }
}
