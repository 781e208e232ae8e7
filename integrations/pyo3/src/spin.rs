//! A spin lock for the registries' short critical sections.
#![allow(unsafe_code)]

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

/// A spin lock: one atomic read-modify-write to take it and a plain store to give it back,
/// half of what `std::sync::Mutex` pays (whose unlock swaps, to wake waiters), on a path every
/// import takes twice. Held only for a hash-map operation or one scan, never across a call out
/// to code that could take it again.
pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only by the thread holding the lock (`with`), and it moves
// between threads only as `T: Send` allows.
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` on the value, with the lock held (given back on unwind too).
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut spins = 0u32;
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            while self.locked.load(Ordering::Relaxed) {
                spins += 1;
                if spins < 64 {
                    core::hint::spin_loop();
                } else {
                    std::thread::yield_now(); // a holder that was descheduled
                }
            }
        }
        struct Unlock<'a>(&'a AtomicBool);
        impl Drop for Unlock<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _unlock = Unlock(&self.locked);
        // SAFETY: the lock is held until `_unlock` drops: this is the only access.
        f(unsafe { &mut *self.value.get() })
    }
}
