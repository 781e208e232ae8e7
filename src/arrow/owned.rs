//! Release-once ownership of the base structs: the one place that moves them and calls their
//! `release`.
#![allow(unsafe_code)]

use core::ffi::c_void;
use core::mem::ManuallyDrop;
use core::ptr;

use super::ValidationError;
use crate::raw::{
    ArrowArray, ArrowArrayStream, ArrowDeviceArray, ArrowDeviceArrayStream, ArrowSchema,
};

pub(crate) mod sealed {
    use core::ffi::c_void;

    /// A struct with a `release` callback (for `ArrowDeviceArray`, its `array.release`).
    pub trait Base {
        /// Whether `release` is NULL.
        fn is_released(&self) -> bool;
        /// Sets `release` to NULL without calling it (the source side of a move).
        fn mark_released(&mut self);
        /// `private_data` (for `ArrowDeviceArray`, `array.private_data`).
        fn private_data(&mut self) -> &mut *mut c_void;
        /// Calls `release` if it is set.
        ///
        /// # Safety
        /// The caller owns the struct (it is a base struct, not a child), and it follows the C
        /// Data Interface.
        unsafe fn release(&mut self);
    }
}
pub(crate) use sealed::Base;

macro_rules! base {
    ($ty:ty, $($release:ident).+, $($private:ident).+) => {
        impl Base for $ty {
            fn is_released(&self) -> bool {
                self.$($release).+.is_none()
            }
            fn mark_released(&mut self) {
                self.$($release).+ = None;
            }
            fn private_data(&mut self) -> &mut *mut c_void {
                &mut self.$($private).+
            }
            unsafe fn release(&mut self) {
                if let Some(release) = self.$($release).+ {
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
base!(ArrowSchema, release, private_data);
base!(ArrowArray, release, private_data);
base!(ArrowDeviceArray, array.release, array.private_data);
base!(ArrowArrayStream, release, private_data);
base!(ArrowDeviceArrayStream, release, private_data);

/// The `release` of every struct this crate produces: drops the `P` box in `private_data`
/// (whose `Drop` frees what the struct owns, releasing its children) and marks the struct
/// released. NULL and released structs are ignored, so a second call does nothing.
///
/// # Safety
/// `raw` is NULL, or a struct whose `private_data` is a `Box<P>` made by this crate (wherever
/// the struct was moved to), as C Data Interface consumers call `release`.
#[cfg(feature = "alloc")]
pub(crate) unsafe extern "C" fn release_produced<R: Base, P>(raw: *mut R) {
    // SAFETY: a base struct or NULL (contract).
    let Some(raw) = (unsafe { raw.as_mut() }) else {
        return;
    };
    if raw.is_released() || raw.private_data().is_null() {
        return;
    }
    // SAFETY: the `Box<P>` the producer made (contract), taken once: NULL and released below.
    drop(unsafe { alloc::boxed::Box::from_raw(raw.private_data().cast::<P>()) });
    *raw.private_data() = core::ptr::null_mut();
    raw.mark_released();
}

/// The children and dictionary of a struct this crate produced: released (unless a consumer
/// moved them out, leaving them released) and freed when dropped, by the parent's `release`.
/// The structs live in one allocation (children, then the dictionary), whatever their number.
#[cfg(feature = "alloc")]
pub(crate) struct Nodes<R: Base> {
    /// Pointers to the children, into `slab`: what the parent's `children` points at.
    pub(crate) children: alloc::boxed::Box<[*mut R]>,
    /// The dictionary (the slab's last struct), or NULL.
    pub(crate) dictionary: *mut R,
    /// The children and the dictionary, from `Box::into_raw`; freed only by `drop`.
    slab: *mut [R],
}

#[cfg(feature = "alloc")]
impl<R: Base> Nodes<R> {
    /// Moves the structs of `children` and `dictionary` into one allocation; the parent points
    /// at them.
    pub(crate) fn new(
        children: impl IntoIterator<Item = Owned<R>>,
        dictionary: Option<Owned<R>>,
    ) -> Self {
        let mut children = children.into_iter().peekable();
        if children.peek().is_none() && dictionary.is_none() {
            return Self {
                children: alloc::boxed::Box::new([]),
                dictionary: core::ptr::null_mut(),
                slab: core::ptr::slice_from_raw_parts_mut(
                    core::ptr::NonNull::dangling().as_ptr(),
                    0,
                ),
            };
        }
        let mut structs: alloc::vec::Vec<R> = children.map(Owned::into_raw).collect();
        let n_children = structs.len();
        let has_dictionary = dictionary.is_some();
        structs.extend(dictionary.map(Owned::into_raw));
        let slab = alloc::boxed::Box::into_raw(structs.into_boxed_slice());
        let first = slab.cast::<R>();
        Self {
            // In bounds of the slab: `i < n_children <= slab.len()`.
            children: (0..n_children).map(|i| first.wrapping_add(i)).collect(),
            dictionary: match has_dictionary {
                true => first.wrapping_add(n_children),
                false => core::ptr::null_mut(),
            },
            slab,
        }
    }
}

#[cfg(feature = "alloc")]
impl<R: Base> Drop for Nodes<R> {
    fn drop(&mut self) {
        // SAFETY: the slab `new` made, freed only here; no other reference to it is alive (the
        // parent is being released). A consumer may have moved a node out, leaving it released,
        // which `release` skips.
        let mut slab = unsafe { alloc::boxed::Box::from_raw(self.slab) };
        for node in slab.iter_mut() {
            // SAFETY: we produced this node: releasing it is its parent's job, done once.
            unsafe { node.release() };
        }
    }
}

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
    pub(crate) unsafe fn take(ptr: *mut R) -> Result<Self, ValidationError> {
        // SAFETY: non-NULL `ptr` points to a live `R` the caller owns (contract).
        let source = unsafe { ptr.as_mut() }.ok_or(ValidationError::NullPointer)?;
        if source.is_released() {
            return Err(ValidationError::Released);
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
