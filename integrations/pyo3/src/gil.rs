//! Dropping things that touch Python from threads that may not hold the GIL.
#![allow(unsafe_code)]

use core::mem::ManuallyDrop;
use core::ops::Deref;

use pyo3::Python;

use super::Live;

/// A value whose drop may run Python code (a NumPy deleter, a pyarrow `release`): it is dropped
/// attached to the interpreter, on whatever thread drops the wrapper, and leaked instead when
/// the interpreter is not initialized or is finalizing (attaching then would hang or crash the
/// thread, and the process is going away).
///
/// ```no_run
/// use dlpack_abi_pyo3::AttachedDrop;
///
/// let held = AttachedDrop::new(vec![1u8, 2, 3]);
/// assert_eq!(held.len(), 3);
/// std::thread::spawn(move || drop(held)); // attaches to Python to drop
/// ```
pub struct AttachedDrop<T> {
    value: ManuallyDrop<T>,
}

impl<T> AttachedDrop<T> {
    /// Wraps `value`.
    ///
    /// ```no_run
    /// use dlpack_abi_pyo3::AttachedDrop;
    ///
    /// // Whatever holds Python objects or buffers is dropped attached to the interpreter.
    /// let held = AttachedDrop::new(vec![0.5f32; 16]);
    /// assert_eq!(held[0], 0.5);
    /// ```
    pub fn new(value: T) -> Self {
        Self {
            value: ManuallyDrop::new(value),
        }
    }
}

impl<T> Deref for AttachedDrop<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> Drop for AttachedDrop<T> {
    fn drop(&mut self) {
        // SAFETY: `value` is taken once, here, and never used again.
        let value = unsafe { ManuallyDrop::take(&mut self.value) };
        drop_attached(value);
    }
}

/// Drops `value` attached to the interpreter, or leaks it if the interpreter cannot be attached
/// to (not initialized, finalizing).
pub(crate) fn drop_attached<T>(value: T) {
    let mut slot = Some(value);
    if Python::try_attach(|_| drop(slot.take())).is_none() {
        core::mem::forget(slot);
    }
}

/// A value shared by every export of one Python object: dropped attached to the interpreter
/// when it was imported from Python (its deleter or `release` may run Python code), normally
/// otherwise. Imported values are counted as live imports.
pub(crate) enum Held<T> {
    /// Made in Rust.
    Local(T),
    /// Imported from Python; the `Live` counts it while it exists.
    Imported(AttachedDrop<T>, #[allow(dead_code)] Live),
}

impl<T> Held<T> {
    /// A value made in Rust.
    pub(crate) fn local(value: T) -> Self {
        Self::Local(value)
    }

    /// A value imported from Python.
    pub(crate) fn imported(value: T) -> Self {
        Self::Imported(AttachedDrop::new(value), Live::import())
    }
}

impl<T> Deref for Held<T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self {
            Self::Local(value) => value,
            Self::Imported(value, _) => value,
        }
    }
}
