//! The tensor behind one or more `Tensor` handles and their exports: an `Arc` whose exports
//! made holding the GIL are counted without a locked instruction.
//!
//! `__dlpack__` is the hottest call of the protocol, and the `Arc` clone of each export (a
//! locked increment, draining the store buffer the interpreter has just filled) was the largest
//! line of its profile, a tenth of the call. Here:
//!
//! - **handles** ([`SharedTensor`], each `Tensor` value) are counted as an `Arc` counts them;
//! - **exports made holding the GIL** ([`SharedTensor::share_attached`]) add one to a count that
//!   only GIL holders write (a load and a store: the GIL orders them);
//! - **their releases** (a deleter, on any thread, holding the GIL or not) add one to an atomic
//!   count;
//! - **when the last handle goes**, the count of exports is final (every export was made through
//!   a handle, before that handle's release-ordered drop) and is taken from the releases in one
//!   atomic step: the memory goes with the last of the handles and the exports.
//!
//! The counts are 64-bit, so neither wraps in a process's life. Free-threaded builds (an
//! attached thread excludes nobody) and targets without 64-bit atomics count exports as
//! handles.
//!
//! A release without the locked instruction as well (a count only GIL holders touch, for
//! deleters that run holding the GIL) was measured and left out: asking whether this thread
//! holds the GIL (`PyGILState_GetThisThreadState` against the running thread state) costs more
//! than the locked instruction it saves (BENCHMARKS.md, issue 37).
#![allow(unsafe_code)]

use alloc::boxed::Box;
use core::ops::Deref;
use core::ptr::NonNull;
#[cfg(target_has_atomic = "64")]
use core::sync::atomic::AtomicU64;
use core::sync::atomic::{fence, AtomicUsize, Ordering};

use pyo3::Python;

use super::gil::Held;
use dlpack_abi::dlpack::VersionedTensor;

/// The one allocation: the counts and the tensor.
struct Inner {
    /// Live handles, and exports counted as handles.
    handles: AtomicUsize,
    /// The counts of exports made holding the GIL.
    #[cfg(target_has_atomic = "64")]
    attached: AttachedCounts,
    tensor: Held<VersionedTensor>,
}

/// The counts of exports made holding the GIL.
#[cfg(target_has_atomic = "64")]
struct AttachedCounts {
    /// Exports made so far: written only by threads holding the GIL, with a load and a store;
    /// read once the last handle is gone.
    made: AtomicU64,
    /// Exports released so far; once the last handle is gone, less the exports made: a wrapped
    /// negative count that reaches zero with the last release.
    released: AtomicU64,
}

/// One handle of a shared tensor (a `Tensor` value): what `Arc<Held<VersionedTensor>>` was.
pub(crate) struct SharedTensor {
    inner: NonNull<Inner>,
}

/// What keeps the tensor alive for one export: dropped by the export's deleter, on any thread.
pub(crate) struct Share {
    inner: NonNull<Inner>,
    /// Counted among the exports made holding the GIL, not the handles.
    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))]
    attached: bool,
}

// SAFETY: `Inner` is shared between threads only through its atomics and through `&Held<..>`,
// which is `Send + Sync` (checked below), as `Arc<Held<VersionedTensor>>` is.
unsafe impl Send for SharedTensor {}
// SAFETY: as above.
unsafe impl Sync for SharedTensor {}
// SAFETY: as above; its drop may run on any thread.
unsafe impl Send for Share {}
// SAFETY: as above.
unsafe impl Sync for Share {}

const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Held<VersionedTensor>>();
};

/// More handles than `Arc` allows (its `isize::MAX` overflow guard): abort.
const MAX_HANDLES: usize = isize::MAX as usize;

impl SharedTensor {
    /// The first handle of `tensor`.
    pub(crate) fn new(tensor: Held<VersionedTensor>) -> Self {
        let inner = Box::new(Inner {
            handles: AtomicUsize::new(1),
            #[cfg(target_has_atomic = "64")]
            attached: AttachedCounts {
                made: AtomicU64::new(0),
                released: AtomicU64::new(0),
            },
            tensor,
        });
        Self {
            inner: NonNull::from(Box::leak(inner)),
        }
    }

    fn inner(&self) -> &Inner {
        // SAFETY: a handle keeps the allocation alive (`handles` counts it).
        unsafe { self.inner.as_ref() }
    }

    /// Counts one more handle (for a handle or an export counted as one).
    fn count_handle(&self) {
        // Relaxed, as `Arc::clone`: a new reference is made from one held, which keeps the
        // allocation alive; the release side orders the drop.
        if self.inner().handles.fetch_add(1, Ordering::Relaxed) > MAX_HANDLES {
            std::process::abort();
        }
    }

    /// What keeps the tensor alive for one export, made on any thread: counted as a handle.
    pub(crate) fn share(&self) -> Share {
        self.count_handle();
        Share {
            inner: self.inner,
            attached: false,
        }
    }

    /// What keeps the tensor alive for one export made while `py` proves this thread holds the
    /// GIL: counted without a locked instruction where the GIL orders such exports.
    #[inline]
    pub(crate) fn share_attached(&self, py: Python<'_>) -> Share {
        let _ = py;
        if cfg!(Py_GIL_DISABLED) {
            return self.share();
        }
        // SAFETY: `py` proves this thread is attached, which in a build with a GIL is holding the
        // one GIL every caller holds: pyo3 refuses to load the module in a subinterpreter, so no
        // `Tensor` reaches an interpreter with a GIL of its own.
        unsafe { self.share_holding_gil() }
    }

    /// [`share_attached`](Self::share_attached) without the proof.
    ///
    /// # Safety
    /// Every call of this function for the tensor's handles is ordered with every other one (one
    /// happens before the other): holding the GIL, as every caller does, orders them (the unit
    /// tests hold a lock in its place).
    #[inline]
    unsafe fn share_holding_gil(&self) -> Share {
        #[cfg(target_has_atomic = "64")]
        {
            let made = &self.inner().attached.made;
            // Not a read-modify-write: only GIL holders write the count, so none writes between
            // this load and this store. A 64-bit count does not wrap.
            made.store(made.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            Share {
                inner: self.inner,
                attached: true,
            }
        }
        #[cfg(not(target_has_atomic = "64"))]
        self.share()
    }
}

impl Clone for SharedTensor {
    fn clone(&self) -> Self {
        self.count_handle();
        Self { inner: self.inner }
    }
}

impl Deref for SharedTensor {
    type Target = Held<VersionedTensor>;

    fn deref(&self) -> &Held<VersionedTensor> {
        &self.inner().tensor
    }
}

impl Deref for Share {
    type Target = VersionedTensor;

    fn deref(&self) -> &VersionedTensor {
        // SAFETY: an export's share keeps the allocation alive (counted among the handles or
        // among the attached exports not yet released).
        unsafe { &self.inner.as_ref().tensor }
    }
}

/// Frees the allocation.
///
/// # Safety
/// Nothing counts it any more: no handle, no export not yet released.
unsafe fn free(inner: NonNull<Inner>) {
    // SAFETY: made by `Box::leak` in `SharedTensor::new`, unreachable (caller).
    drop(unsafe { Box::from_raw(inner.as_ptr()) });
}

/// Drops one handle (or an export counted as one); the last one takes the exports made
/// holding the GIL from their releases, and frees the allocation when none is live.
///
/// # Safety
/// `inner` is a live allocation of [`SharedTensor::new`] whose handle count includes one the
/// caller gives up here.
unsafe fn release_handle(inner: NonNull<Inner>) {
    // SAFETY: live until this handle is given up (caller).
    let counts = unsafe { inner.as_ref() };
    if counts.handles.fetch_sub(1, Ordering::Release) != 1 {
        return;
    }
    // Everything done through any handle happens before this point (their drops released, this
    // acquires), as in `Arc`'s drop: every export's count included, so `made` is final.
    fence(Ordering::Acquire);
    #[cfg(target_has_atomic = "64")]
    {
        let made = counts.attached.made.load(Ordering::Relaxed);
        // Released so far, less all that were made: zero when every one has been released,
        // else the (wrapped) negative count the last release brings to zero.
        if made != 0 && counts.attached.released.fetch_sub(made, Ordering::AcqRel) != made {
            return;
        }
    }
    // SAFETY: no handle is left, and every export has been released.
    unsafe { free(inner) }
}

impl Drop for SharedTensor {
    fn drop(&mut self) {
        // SAFETY: this handle is counted, and given up here.
        unsafe { release_handle(self.inner) }
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        #[cfg(target_has_atomic = "64")]
        if self.attached {
            // SAFETY: this export is counted among the attached ones and not yet released.
            unsafe { release_attached(self.inner) };
            return;
        }
        // SAFETY: counted as a handle, given up here.
        unsafe { release_handle(self.inner) }
    }
}

/// Releases one export counted as attached, on any thread; the last one, once the last handle
/// is gone, frees the allocation.
///
/// # Safety
/// `inner` is live, with this export counted as attached and not yet released.
#[cfg(target_has_atomic = "64")]
#[inline]
unsafe fn release_attached(inner: NonNull<Inner>) {
    // SAFETY: live until this export is released (caller).
    let counts = unsafe { &inner.as_ref().attached };
    // Before the last handle goes the count rises from zero and is never zero after an
    // increment; after it, it reaches zero with the last release.
    if counts.released.fetch_add(1, Ordering::AcqRel) == u64::MAX {
        // SAFETY: the last handle is gone, and this was the last export.
        unsafe { free(inner) };
    }
}

#[cfg(test)]
mod tests;
