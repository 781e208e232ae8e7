//! The hook that tells the Python borrow registry (`python::borrows`) that a tensor registered
//! there is no longer held: the core owns the tensors, the Python glue installs the hook, so
//! nothing here depends on the layer above.
#![allow(unsafe_code)]

use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

/// What a registry does when a tracked tensor stops being held.
pub(crate) struct Tracker {
    /// Called with the tensor's token (its managed struct's address), before its deleter runs.
    pub(crate) untrack: fn(usize),
}

static TRACKER: AtomicPtr<Tracker> = AtomicPtr::new(ptr::null_mut());

/// Installs the registry's hook (the same one every time).
pub(crate) fn install(tracker: &'static Tracker) {
    TRACKER.store(ptr::from_ref(tracker).cast_mut(), Ordering::Release);
}

/// Tells the registry that the tensor with `token` is no longer held.
#[inline]
pub(crate) fn untrack(token: usize) {
    let tracker = TRACKER.load(Ordering::Acquire);
    // SAFETY: NULL, or a `&'static Tracker` stored by `install`: valid for the program's life.
    if let Some(tracker) = unsafe { tracker.as_ref() } {
        (tracker.untrack)(token);
    }
}
