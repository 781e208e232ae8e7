//! The handler's C callbacks: `on_schema`, `on_next_task`, `on_error` and `release`, on the
//! producer's threads (see the parent module for the lifetime rules).
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::string::ToString;
use alloc::sync::Arc;
use core::ffi::{c_char, c_int, CStr};
use core::ptr;
use std::sync::{MutexGuard, PoisonError};
use std::thread;

use super::{AsyncStreamError, Shared, State};
use crate::arrow::device::check_stream_device;
use crate::arrow::{errno, DeviceArray, ProducerError, Schema};
use crate::raw::{ArrowAsyncDeviceStreamHandler, ArrowAsyncTask, ArrowDeviceArray, ArrowSchema};

/// The shared state behind one of our handlers.
///
/// # Safety
/// `handler` is a handler [`AsyncConsumer::new`] made, not yet released.
unsafe fn shared<'a>(handler: *mut ArrowAsyncDeviceStreamHandler) -> &'a Shared {
    // SAFETY: our live handler (contract).
    let private = unsafe { (*handler).private_data };
    // SAFETY: `private_data` holds a reference to the `Arc` until `release`, so the `Shared`
    // outlives this call.
    unsafe { &*private.cast::<Shared>() }
}

/// Unlocks, then wakes the consumer if it waits.
fn wake(mut state: MutexGuard<'_, State>) {
    let waker = state.waker.take();
    drop(state);
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// `on_schema`: moves the schema out, validates it, and keeps the producer pointer.
///
/// # Safety
/// The producer's side of the interface: `handler` is ours and live, `handler.producer` is
/// set, `schema` is a live schema for us to move out.
pub(super) unsafe extern "C" fn on_schema(
    handler: *mut ArrowAsyncDeviceStreamHandler,
    schema: *mut ArrowSchema,
) -> c_int {
    // SAFETY: our live handler (contract).
    let shared = unsafe { shared(handler) };
    // SAFETY: as above; `producer` was set before this callback.
    let producer = unsafe { (*handler).producer };
    // SAFETY: the producer is valid until `release` (interface rule); NULL is refused below.
    let device_type = unsafe { producer.as_ref() }.map(|producer| producer.device_type);
    // SAFETY: a live schema the consumer must move out (interface rule).
    let imported = unsafe { Schema::from_raw(schema) };
    let refused = match imported {
        Err(error) => Some(AsyncStreamError::Invalid(error)),
        Ok(_) if device_type.is_none() => Some(AsyncStreamError::Protocol("producer is NULL")),
        Ok(schema) => match shared.schema.set(schema) {
            Ok(()) => None,
            Err(_twice) => Some(AsyncStreamError::Protocol("on_schema called twice")),
        },
    };
    let mut state = shared.lock();
    let code = match refused {
        Some(error) => {
            state.fail(error);
            errno::EINVAL
        }
        None if state.dropped => errno::EINVAL, // nobody wants the stream: stop it
        None => {
            state.producer = producer;
            state.device_type = device_type;
            0
        }
    };
    wake(state);
    code
}

/// `on_next_task`: extracts the task's data (exactly once) and queues it, validated; a NULL
/// task ends the stream.
///
/// # Safety
/// The producer's side of the interface: `handler` is ours and live; `task` is NULL or a live
/// task.
pub(super) unsafe extern "C" fn on_next_task(
    handler: *mut ArrowAsyncDeviceStreamHandler,
    task: *mut ArrowAsyncTask,
    _metadata: *const c_char,
) -> c_int {
    // SAFETY: our live handler (contract).
    let shared = unsafe { shared(handler) };
    if task.is_null() {
        let mut state = shared.lock();
        match state.failed_extract {
            // The end after a failed `extract_data` and no `on_error`: the code is the error,
            // never a clean end.
            Some(code) => state.fail(AsyncStreamError::Producer(ProducerError::code_only(code))),
            None => state.ended = true,
        }
        wake(state);
        return 0;
    }
    // SAFETY: a live task (contract), read during the call.
    let Some(extract_data) = (unsafe { (*task).extract_data }) else {
        let mut state = shared.lock();
        state.fail(AsyncStreamError::Protocol("extract_data is NULL"));
        wake(state);
        return errno::EINVAL;
    };
    let mut out: ArrowDeviceArray = bytemuck::Zeroable::zeroed();
    // SAFETY: the one call of `extract_data` for this live task; `out` is ours, zeroed.
    let code = unsafe { extract_data(task, &mut out) };
    if code != 0 {
        // The producer should follow with `on_error`; if it does not, the code is the error.
        let mut state = shared.lock();
        state.requested = state.requested.saturating_sub(1);
        state.failed_extract.get_or_insert(code);
        wake(state);
        return code;
    }
    let device_type = shared.lock().device_type;
    let item = match (shared.schema.get(), device_type) {
        (Some(schema), Some(device_type)) => {
            // SAFETY: `extract_data` succeeded: `out` is an owned device array of the
            // producer's device type (interface rule); moved out here.
            let imported = unsafe { DeviceArray::from_raw(&mut out, schema.view()) };
            imported
                .and_then(|array| {
                    check_stream_device(device_type, array.device_type())?;
                    Ok(array)
                })
                .map_err(AsyncStreamError::Invalid)
        }
        _ => {
            if let Some(release) = out.array.release {
                // SAFETY: an owned array (extract_data succeeded), released once, here.
                unsafe { release(&mut out.array) };
            }
            Err(AsyncStreamError::Protocol("on_next_task before on_schema"))
        }
    };
    let mut state = shared.lock();
    state.requested = state.requested.saturating_sub(1);
    let (discard, result) = match item {
        Err(error) => {
            state.fail(error);
            (None, errno::EINVAL)
        }
        Ok(array) if state.dropped || state.ended || state.failed_extract.is_some() => {
            (Some(array), 0)
        }
        Ok(array) => {
            state.items.push_back(Ok(array));
            (None, 0)
        }
    };
    wake(state);
    drop(discard); // released outside the lock
    result
}

/// `on_error`: ends the stream with the producer's code and message (copied now).
///
/// # Safety
/// The producer's side of the interface: `handler` is ours and live; `message` is NULL or a
/// NUL-terminated string valid during the call.
pub(super) unsafe extern "C" fn on_error(
    handler: *mut ArrowAsyncDeviceStreamHandler,
    code: c_int,
    message: *const c_char,
    _metadata: *const c_char,
) {
    // SAFETY: our live handler (contract).
    let shared = unsafe { shared(handler) };
    let message = (!message.is_null()).then(|| {
        // SAFETY: non-NULL, NUL-terminated and valid during the call (contract).
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .to_string()
    });
    let mut state = shared.lock();
    state.fail(AsyncStreamError::Producer(ProducerError::new(
        code,
        message.as_deref(),
    )));
    wake(state);
}

/// `release`: the producer's last call. Waits for a call into the producer from another
/// thread to return, marks the stream released, and frees the handler and its share of the
/// state.
///
/// # Safety
/// `handler` is ours, live, and released exactly once.
pub(super) unsafe extern "C" fn release(handler: *mut ArrowAsyncDeviceStreamHandler) {
    // SAFETY: our live handler (contract).
    let private = unsafe { (*handler).private_data }
        .cast_const()
        .cast::<Shared>();
    // SAFETY: the reference `new` gave the handler; given up once, here.
    let shared = unsafe { Arc::from_raw(private) };
    let me = thread::current().id();
    let mut state = shared.lock();
    while state.calling.is_some_and(|caller| caller != me) {
        state = shared
            .call_returned
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner);
    }
    state.released = true;
    state.producer = ptr::null_mut();
    let items = if state.dropped {
        core::mem::take(&mut state.items)
    } else {
        VecDeque::new()
    };
    wake(state);
    drop(items);
    // SAFETY: the box `new` made; nothing uses the handler after its `release`.
    drop(unsafe { Box::from_raw(handler) });
}
