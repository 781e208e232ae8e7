//! The producer side of the async device stream (experimental upstream, `abi.h` layout):
//! [`AsyncProducer`] drives a consumer's `ArrowAsyncDeviceStreamHandler` with the device arrays
//! of a Rust iterator, honouring `request` (back-pressure) and `cancel`.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use core::ffi::{c_int, c_void};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::error::c_message;
use crate::arrow::{errno, DeviceArray, ProducerError, SchemaDef};
use crate::raw::{
    ArrowAsyncDeviceStreamHandler, ArrowAsyncProducer, ArrowAsyncTask, ArrowDeviceArray,
    ArrowDeviceType,
};

/// What the consumer may touch from its callbacks, on any thread: the producer struct it was
/// given, and the request and cancel counters behind it.
#[repr(C)]
struct Shared {
    producer: ArrowAsyncProducer,
    /// Tasks requested and not yet delivered (saturating: 32-bit targets lack 64-bit atomics).
    requested: AtomicUsize,
    cancelled: AtomicBool,
    bad_request: AtomicBool,
}

/// The `Shared` behind a producer pointer the consumer passes back.
///
/// # Safety
/// `producer` is NULL or the producer an `AsyncProducer` gave the consumer, alive until the
/// handler is released.
unsafe fn shared<'a>(producer: *mut ArrowAsyncProducer) -> Option<&'a Shared> {
    // SAFETY: see the contract; read-only access to a struct nobody writes after `start`.
    let producer = unsafe { producer.as_ref() }?;
    // SAFETY: `private_data` is the `Shared` box `start` made; shared references only (atomics).
    unsafe { producer.private_data.cast::<Shared>().as_ref() }
}

/// `request` of our producers: records that the consumer asks for `n` more tasks.
///
/// # Safety
/// `producer` is NULL or the producer an `AsyncProducer` gave the consumer, alive until the
/// handler is released (the async interface's rule for callers).
unsafe extern "C" fn request(producer: *mut ArrowAsyncProducer, n: i64) {
    // SAFETY: the consumer calls us with the producer we gave it (interface rule).
    let Some(shared) = (unsafe { shared(producer) }) else {
        return;
    };
    if n <= 0 {
        shared.bad_request.store(true, Ordering::Release);
    } else {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let _ = shared
            .requested
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                Some(r.saturating_add(n))
            });
    }
}

/// `cancel` of our producers: records that the consumer wants no more.
///
/// # Safety
/// As for [`request`].
unsafe extern "C" fn cancel(producer: *mut ArrowAsyncProducer) {
    // SAFETY: as for `request`.
    if let Some(shared) = unsafe { shared(producer) } {
        shared.cancelled.store(true, Ordering::Release);
    }
}

/// `extract_data` of our tasks: moves the device array out (or releases it when `out` is NULL)
/// and frees the task's box. Called exactly once per task by the consumer.
///
/// # Safety
/// `task` is NULL or a task this producer delivered (or a copy of it), and `out` is NULL or
/// writable.
unsafe extern "C" fn extract_data(task: *mut ArrowAsyncTask, out: *mut ArrowDeviceArray) -> c_int {
    // SAFETY: the consumer calls us with a task we made (or a copy of it).
    let Some(task) = (unsafe { task.as_mut() }) else {
        return errno::EINVAL;
    };
    if task.private_data.is_null() {
        return errno::EINVAL;
    }
    // SAFETY: `private_data` is the `DeviceArray` box `deliver` made; taken once (NULL below).
    let array = unsafe { Box::from_raw(task.private_data.cast::<DeviceArray>()) };
    task.private_data = ptr::null_mut();
    if !out.is_null() {
        // SAFETY: `out` is the consumer's writable struct.
        unsafe { array.export_to(out) };
    }
    0
}

/// Where an [`AsyncProducer`] stands after [`drive`](AsyncProducer::drive).
///
/// ```
/// use core::ffi::c_int;
/// use dlpack_abi::arrow::{AsyncProducer, AsyncState, DeviceArray, ProducerError, SchemaDef};
/// use dlpack_abi::raw::{ArrowAsyncDeviceStreamHandler as Handler, ArrowSchema, ARROW_DEVICE_CPU};
///
/// unsafe extern "C" fn on_schema(handler: *mut Handler, _schema: *mut ArrowSchema) -> c_int {
///     let _ = handler;
///     0
/// }
/// unsafe extern "C" fn release(handler: *mut Handler) {
///     // SAFETY: `private_data` is the flag below; this is the producer's last call.
///     unsafe { *(*handler).private_data.cast::<bool>() = true };
/// }
///
/// let mut released = false;
/// let mut handler = Handler {
///     on_schema: Some(on_schema),
///     on_next_task: None,
///     on_error: None,
///     release: Some(release),
///     producer: core::ptr::null_mut(),
///     private_data: core::ptr::addr_of_mut!(released).cast(),
/// };
/// let items = core::iter::empty::<Result<DeviceArray, ProducerError>>();
/// // SAFETY: `handler` follows the interface and outlives the producer.
/// let mut producer = unsafe { AsyncProducer::start(core::ptr::addr_of_mut!(handler), ARROW_DEVICE_CPU, &SchemaDef::new("f")?, items) };
/// // The consumer has requested nothing yet: the producer waits.
/// assert_eq!(producer.drive(), AsyncState::Waiting);
/// drop(producer); // dropping an unfinished producer cancels: `release` only
/// assert!(released);
/// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsyncState {
    /// The consumer has no outstanding `request`: call `drive` again after it asks for more.
    Waiting,
    /// The handler has been released (end of stream, error, refusal or cancel): nothing more
    /// will be delivered.
    Finished,
}

/// The producer of an async device stream, delivering the items of a Rust iterator to a
/// consumer's handler.
///
/// [`start`](Self::start) sets `handler.producer` and delivers the schema through
/// `on_schema`; [`drive`](Self::drive) then delivers one task per requested item through
/// `on_next_task` (the task's `extract_data` moves the device array out), `on_next_task` with a
/// NULL task at the end, or `on_error` with the iterator's error, and finally `release`. It
/// never calls the handler re-entrantly: `request` and `cancel` only record what the consumer
/// asked for. Dropping a producer that has not finished cancels the stream (`release` only).
///
/// The iterator and the handler's callbacks run on the thread that calls `drive`; a panic in
/// the iterator unwinds to that caller, and dropping the producer then releases the handler.
///
/// ```
/// use core::ffi::{c_char, c_int};
/// use core::mem::MaybeUninit;
/// use dlpack_abi::arrow::{errno, Array, AsyncProducer, AsyncState, DeviceArray, ProducerError, SchemaDef};
/// use dlpack_abi::raw::{ArrowAsyncDeviceStreamHandler as Handler, ArrowAsyncTask, ArrowDeviceArray};
/// use dlpack_abi::raw::{ArrowSchema, ARROW_DEVICE_CPU};
///
/// /// What this consumer saw, behind `private_data`.
/// #[derive(Default)]
/// struct Seen { rows: i64, ended: bool, released: bool }
///
/// unsafe extern "C" fn on_schema(handler: *mut Handler, _schema: *mut ArrowSchema) -> c_int {
///     // The schema is left in place: the producer releases it. Ask for two tasks.
///     // SAFETY: `producer` is set before `on_schema` is called, and valid until `release`.
///     let producer = unsafe { (*handler).producer };
///     // SAFETY: as above.
///     unsafe { (*producer).request.unwrap()(producer, 2) };
///     0
/// }
/// unsafe extern "C" fn on_next_task(handler: *mut Handler, task: *mut ArrowAsyncTask, _: *const c_char) -> c_int {
///     // SAFETY: `private_data` is the `Seen` below, used by one thread at a time.
///     let seen = unsafe { &mut *(*handler).private_data.cast::<Seen>() };
///     if task.is_null() {
///         seen.ended = true; // end of stream
///         return 0;
///     }
///     let mut out = MaybeUninit::<ArrowDeviceArray>::uninit();
///     // SAFETY: a live task; `extract_data` is called exactly once and fills `out`.
///     assert_eq!(unsafe { (*task).extract_data.unwrap()(task, out.as_mut_ptr()) }, 0);
///     // SAFETY: filled above; ours to release.
///     let mut array = unsafe { out.assume_init() };
///     seen.rows += array.array.length;
///     // SAFETY: live and owned here; released exactly once.
///     unsafe { array.array.release.unwrap()(&mut array.array) };
///     0
/// }
/// unsafe extern "C" fn release(handler: *mut Handler) {
///     // SAFETY: as in `on_next_task`; this is the producer's last call.
///     unsafe { (*(*handler).private_data.cast::<Seen>()).released = true };
/// }
///
/// let mut seen = Seen::default();
/// let handler: *mut Handler = Box::into_raw(Box::new(Handler {
///     on_schema: Some(on_schema),
///     on_next_task: Some(on_next_task),
///     on_error: None,
///     release: Some(release),
///     producer: core::ptr::null_mut(),
///     private_data: core::ptr::addr_of_mut!(seen).cast(),
/// }));
/// let batch = |n: usize| -> Result<DeviceArray, ProducerError> {
///     let array = Array::from_vec(vec![0u8; n]).map_err(|_| ProducerError::code_only(errno::ENOMEM))?;
///     Ok(DeviceArray::from_cpu(array))
/// };
/// let items = (1..=3).map(batch);
/// // SAFETY: `handler` follows the interface and outlives the producer.
/// let mut producer = unsafe { AsyncProducer::start(handler, ARROW_DEVICE_CPU, &SchemaDef::new("C")?, items) };
/// assert_eq!(producer.drive(), AsyncState::Waiting); // 2 delivered; the third not requested yet
/// // Later, the consumer asks for more (from any thread), and the producer drives again.
/// // SAFETY: the producer is valid until the handler's `release`.
/// unsafe { (*(*handler).producer).request.unwrap()((*handler).producer, 8) };
/// assert_eq!(producer.drive(), AsyncState::Finished);
/// drop(producer);
/// // SAFETY: released; nothing uses the handler any more.
/// drop(unsafe { Box::from_raw(handler) });
/// assert_eq!((seen.rows, seen.ended, seen.released), (1 + 2 + 3, true, true));
/// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
/// ```
pub struct AsyncProducer<I> {
    shared: *mut Shared,
    handler: *mut ArrowAsyncDeviceStreamHandler,
    items: I,
    finished: bool,
}

// SAFETY: the shared part is atomics plus a struct nobody writes; the handler belongs to the
// consumer, who accepts calls from any thread (the async interface serialises them, which
// `&mut self` does).
unsafe impl<I: Send> Send for AsyncProducer<I> {}

impl<I> AsyncProducer<I>
where
    I: Iterator<Item = Result<DeviceArray, ProducerError>>,
{
    /// Starts a stream: sets `handler.producer`, exports `schema` and calls `on_schema` with
    /// it (releasing it if the consumer did not move it out). A failed export ends the stream
    /// with `on_error(EINVAL, ...)`; a non-zero `on_schema` ends it quietly.
    ///
    /// # Safety
    /// `handler` points to a consumer's handler following the async device stream interface,
    /// which stays valid until its `release` is called (by this producer, exactly once).
    ///
    /// ```
    /// use core::ffi::c_int;
    /// use dlpack_abi::arrow::{AsyncProducer, AsyncState, DeviceArray, ProducerError, SchemaDef};
    /// use dlpack_abi::raw::{ArrowAsyncDeviceStreamHandler as Handler, ArrowSchema, ARROW_DEVICE_CPU};
    ///
    /// unsafe extern "C" fn on_schema(handler: *mut Handler, _schema: *mut ArrowSchema) -> c_int {
    ///     let _ = handler;
    ///     dlpack_abi::arrow::errno::EINVAL // a type this consumer cannot take
    /// }
    /// unsafe extern "C" fn release(handler: *mut Handler) {
    ///     // SAFETY: `private_data` is the flag below; this is the producer's last call.
    ///     unsafe { *(*handler).private_data.cast::<bool>() = true };
    /// }
    ///
    /// let mut released = false;
    /// let mut handler = Handler {
    ///     on_schema: Some(on_schema),
    ///     on_next_task: None,
    ///     on_error: None,
    ///     release: Some(release),
    ///     producer: core::ptr::null_mut(),
    ///     private_data: core::ptr::addr_of_mut!(released).cast(),
    /// };
    /// let items = core::iter::empty::<Result<DeviceArray, ProducerError>>();
    /// // SAFETY: `handler` follows the interface and outlives the producer.
    /// let mut producer = unsafe { AsyncProducer::start(core::ptr::addr_of_mut!(handler), ARROW_DEVICE_CPU, &SchemaDef::new("f")?, items) };
    /// // The consumer refused the schema: the stream ended, and the handler was released.
    /// assert_eq!(producer.drive(), AsyncState::Finished);
    ///
    /// assert!(released);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub unsafe fn start(
        handler: *mut ArrowAsyncDeviceStreamHandler,
        device_type: ArrowDeviceType,
        schema: &SchemaDef,
        items: I,
    ) -> Self {
        let shared = Box::into_raw(Box::new(Shared {
            producer: ArrowAsyncProducer {
                device_type,
                request: Some(request),
                cancel: Some(cancel),
                additional_metadata: ptr::null(),
                private_data: ptr::null_mut(),
            },
            requested: AtomicUsize::new(0),
            cancelled: AtomicBool::new(false),
            bad_request: AtomicBool::new(false),
        }));
        // SAFETY: just allocated; the consumer only reads it.
        unsafe { (*shared).producer.private_data = shared.cast() };
        let mut this = Self {
            shared,
            handler,
            items,
            finished: false,
        };
        // `Shared` is `repr(C)` with `producer` first: the box's address is the producer's.
        let producer = shared.cast::<ArrowAsyncProducer>();
        // SAFETY: the handler is valid (caller); `producer` is set before any other callback.
        unsafe { (*handler).producer = producer };
        match schema.export() {
            Err(error) => this.fail(errno::EINVAL, Some(&alloc::format!("{error}"))),
            Ok(schema) => {
                let mut raw = schema.into_raw();
                // SAFETY: a live handler (contract).
                let code = match unsafe { (*handler).on_schema } {
                    // SAFETY: `producer` is set; `raw` is ours for the consumer to move out.
                    Some(on_schema) => unsafe { on_schema(handler, &mut raw) },
                    None => errno::EINVAL,
                };
                // A schema the consumer did not move out is still ours to release.
                // SAFETY: `raw` is a base struct we own (released if moved).
                unsafe { crate::arrow::owned::sealed::Base::release(&mut raw) };
                if code != 0 {
                    this.finish();
                }
            }
        }
        this
    }

    /// Delivers as many items as the consumer has requested (see [`AsyncState`]).
    ///
    /// ```
    /// use core::ffi::c_int;
    /// use dlpack_abi::arrow::{AsyncProducer, AsyncState, DeviceArray, ProducerError, SchemaDef};
    /// use dlpack_abi::raw::{ArrowAsyncDeviceStreamHandler as Handler, ArrowSchema, ARROW_DEVICE_CPU};
    ///
    /// unsafe extern "C" fn on_schema(handler: *mut Handler, _schema: *mut ArrowSchema) -> c_int {
    ///     // SAFETY: `producer` is set before `on_schema` is called.
    ///     let producer = unsafe { (*handler).producer };
    ///     // SAFETY: as above.
    ///     unsafe { (*producer).cancel.unwrap()(producer) };
    ///     0
    /// }
    /// unsafe extern "C" fn release(handler: *mut Handler) {
    ///     // SAFETY: `private_data` is the flag below; this is the producer's last call.
    ///     unsafe { *(*handler).private_data.cast::<bool>() = true };
    /// }
    ///
    /// let mut released = false;
    /// let mut handler = Handler {
    ///     on_schema: Some(on_schema),
    ///     on_next_task: None,
    ///     on_error: None,
    ///     release: Some(release),
    ///     producer: core::ptr::null_mut(),
    ///     private_data: core::ptr::addr_of_mut!(released).cast(),
    /// };
    /// let items = core::iter::empty::<Result<DeviceArray, ProducerError>>();
    /// // SAFETY: `handler` follows the interface and outlives the producer.
    /// let mut producer = unsafe { AsyncProducer::start(core::ptr::addr_of_mut!(handler), ARROW_DEVICE_CPU, &SchemaDef::new("f")?, items) };
    /// // The consumer cancelled before asking for anything: `drive` ends the stream.
    /// assert_eq!(producer.drive(), AsyncState::Finished);
    ///
    /// assert!(released);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn drive(&mut self) -> AsyncState {
        while !self.finished {
            // SAFETY: `shared` lives until `self` is dropped; shared references only.
            let shared = unsafe { &*self.shared };
            if shared.cancelled.load(Ordering::Acquire) {
                self.finish();
            } else if shared.bad_request.load(Ordering::Acquire) {
                self.fail(errno::EINVAL, Some("request(n) with n <= 0"));
            } else if shared.requested.load(Ordering::Acquire) == 0 {
                return AsyncState::Waiting;
            } else {
                shared.requested.fetch_sub(1, Ordering::AcqRel);
                self.deliver();
            }
        }
        AsyncState::Finished
    }

    fn deliver(&mut self) {
        let handler = self.handler;
        // SAFETY: the handler is valid until we release it (contract of `start`).
        let Some(on_next_task) = (unsafe { (*handler).on_next_task }) else {
            return self.fail(errno::EINVAL, Some("on_next_task is NULL"));
        };
        match self.items.next() {
            None => {
                // SAFETY: a live handler; a NULL task is the end of the stream.
                unsafe { on_next_task(handler, ptr::null_mut(), ptr::null()) };
                self.finish();
            }
            Some(Err(error)) => self.fail(error.code(), error.message()),
            Some(Ok(array)) => {
                // SAFETY: `shared` lives as long as `self`.
                let device_type = unsafe { (*self.shared).producer.device_type };
                let same_device =
                    crate::arrow::device::check_stream_device(device_type, array.device_type());
                if let Err(error) = same_device {
                    return self.fail(errno::EINVAL, Some(&alloc::format!("{error}")));
                }
                let mut task = ArrowAsyncTask {
                    extract_data: Some(extract_data),
                    private_data: Box::into_raw(Box::new(array)).cast::<c_void>(),
                };
                // SAFETY: a live handler; the task is valid during the call and the consumer
                // calls `extract_data` exactly once (interface rule), which frees the box.
                let code = unsafe { on_next_task(handler, &mut task, ptr::null()) };
                if code != 0 {
                    self.finish();
                }
            }
        }
    }

    /// Reports an error (a NULL message when there is none), then releases the handler.
    fn fail(&mut self, code: c_int, message: Option<&str>) {
        let message = message.and_then(c_message);
        let message_ptr = message.as_ref().map_or(ptr::null(), |m| m.as_ptr());
        // SAFETY: a live handler; strings valid during the call.
        if let Some(on_error) = unsafe { (*self.handler).on_error } {
            // SAFETY: as above.
            unsafe { on_error(self.handler, code, message_ptr, ptr::null()) };
        }
        self.finish();
    }

    /// Releases the handler: always the last call.
    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        // SAFETY: a live handler, released exactly once (guarded by `finished`).
        if let Some(release) = unsafe { (*self.handler).release } {
            // SAFETY: as above.
            unsafe { release(self.handler) };
        }
    }
}

impl<I> Drop for AsyncProducer<I> {
    fn drop(&mut self) {
        if !self.finished {
            self.finished = true;
            // SAFETY: a live handler, released exactly once (cancel: no `on_error`).
            if let Some(release) = unsafe { (*self.handler).release } {
                // SAFETY: as above.
                unsafe { release(self.handler) };
            }
        }
        // SAFETY: the box `start` made; the handler (released above) no longer uses it.
        drop(unsafe { Box::from_raw(self.shared) });
    }
}

impl<I> core::fmt::Debug for AsyncProducer<I> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AsyncProducer")
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}
