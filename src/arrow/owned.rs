//! Release-once ownership of the base structs: the one place that moves them and calls their
//! `release`.
#![allow(unsafe_code)]

use core::mem::ManuallyDrop;
use core::ptr;

use super::ArrowError;
use crate::raw::{
    ArrowArray, ArrowArrayStream, ArrowDeviceArray, ArrowDeviceArrayStream, ArrowSchema,
};

pub(crate) mod sealed {
    /// A struct with a `release` callback (for `ArrowDeviceArray`, its `array.release`).
    pub trait Base {
        /// Whether `release` is NULL.
        fn is_released(&self) -> bool;
        /// Sets `release` to NULL without calling it (the source side of a move).
        fn mark_released(&mut self);
        /// Calls `release` if it is set.
        ///
        /// # Safety
        /// The caller owns the struct (it is a base struct, not a child), and it follows the C
        /// Data Interface.
        unsafe fn release(&mut self);
    }
}
use sealed::Base;

macro_rules! base {
    ($ty:ty, $($field:ident).+) => {
        impl Base for $ty {
            fn is_released(&self) -> bool {
                self.$($field).+.is_none()
            }
            fn mark_released(&mut self) {
                self.$($field).+ = None;
            }
            unsafe fn release(&mut self) {
                if let Some(release) = self.$($field).+ {
                    // SAFETY: the caller owns this base struct, so calling its producer's
                    // `release` once is the consumer's right; `is_released` is true afterwards
                    // (the producer sets it to NULL, and we make sure in case it did not).
                    unsafe { release(ptr::addr_of_mut!(*self).cast()) };
                    self.mark_released();
                }
            }
        }
    };
}
base!(ArrowSchema, release);
base!(ArrowArray, release);
base!(ArrowDeviceArray, array.release);
base!(ArrowArrayStream, release);
base!(ArrowDeviceArrayStream, release);

/// An owned base struct, released exactly once when dropped unless given away.
pub(crate) struct Owned<R: Base> {
    raw: R,
}

impl<R: Base> Owned<R> {
    /// Moves a base struct out of `ptr` as the spec says: a bitwise copy, then the source's
    /// `release` set to NULL without calling it.
    ///
    /// # Safety
    /// `ptr` is NULL or points to a readable and writable `R` that the caller owns.
    pub(crate) unsafe fn take(ptr: *mut R) -> Result<Self, ArrowError> {
        // SAFETY: non-NULL `ptr` points to a live `R` the caller owns (contract).
        let source = unsafe { ptr.as_mut() }.ok_or(ArrowError::NullPointer)?;
        if source.is_released() {
            return Err(ArrowError::Released);
        }
        // SAFETY: `source` is a valid `R`; the copy becomes the owner, and the source is marked
        // released below so that nobody releases it twice.
        let raw = unsafe { ptr::read(source) };
        source.mark_released();
        Ok(Self { raw })
    }

    /// Wraps a struct this crate produced (unreleased).
    pub(crate) fn new(raw: R) -> Self {
        Self { raw }
    }

    pub(crate) fn raw(&self) -> &R {
        &self.raw
    }

    pub(crate) fn raw_mut(&mut self) -> &mut R {
        &mut self.raw
    }

    /// Gives the struct away without releasing it.
    pub(crate) fn into_raw(self) -> R {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the struct moves out exactly once.
        unsafe { ptr::read(&this.raw) }
    }

    /// Moves the struct into caller-provided memory, without releasing it and without reading
    /// what `out` held.
    ///
    /// # Safety
    /// `out` is valid for writes of an `R`.
    pub(crate) unsafe fn export_to(self, out: *mut R) {
        // SAFETY: `out` is writable (contract); `ptr::write` does not drop the old content.
        unsafe { ptr::write(out, self.into_raw()) }
    }
}

impl<R: Base> Drop for Owned<R> {
    fn drop(&mut self) {
        // SAFETY: an `Owned` is a base struct that this wrapper owns: releasing it once is ours.
        unsafe { self.raw.release() }
    }
}
