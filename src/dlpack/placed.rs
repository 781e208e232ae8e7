//! The one allocation of an export: the managed struct, the owner and the `shape`/`strides`
//! arrays in one heap block, whose deleter drops the owner in place and frees the block.
#![allow(unsafe_code)]

use alloc::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use core::marker::PhantomData;
use core::mem;
use core::ptr::{self, NonNull};

use super::description::{check_dims, check_inside, check_reach};
use super::validate::{self, Meta};
use super::{ExportError, ManagedStruct, ManagedTensor, TensorDescription, MAX_NDIM};
use crate::raw::DLTensor;

/// The one allocation of an export: the managed struct first (so that a pointer to it is a
/// pointer to the context), then the owner, then `2 * ndim` `i64`s (shape, then strides).
#[repr(C)]
struct Context<M, O> {
    header: M,
    /// The allocation's layout, for the deleter.
    layout: Layout,
    owner: O,
}

impl<M, O> Context<M, O> {
    /// Where `layout` is in the context at `ctx` (computed, nothing dereferenced).
    fn layout(ctx: *mut Self) -> *mut Layout {
        ctx.cast::<u8>()
            .wrapping_add(mem::offset_of!(Self, layout))
            .cast()
    }

    /// Where `owner` is in the context at `ctx` (computed, nothing dereferenced).
    fn owner(ctx: *mut Self) -> *mut O {
        ctx.cast::<u8>()
            .wrapping_add(mem::offset_of!(Self, owner))
            .cast()
    }
}

/// A host buffer in elements: the index of the tensor's first element, and the length.
#[cfg(feature = "fast-path")]
#[derive(Clone, Copy)]
pub(super) struct ElementRange {
    pub(super) first: usize,
    pub(super) len: usize,
}

#[cfg(feature = "fast-path")]
impl ElementRange {
    /// Whether `elements` elements from `first` lie in the buffer: `first + elements <= len`. For
    /// memory that exists (its bytes fit `usize`, as `TensorDescription::elements` says) this is
    /// the byte check `finish_compact` makes; that the tensor's own bytes fit `isize` is the
    /// compact pass's bound (`compact_meta_fast`), not this check's.
    #[inline(always)]
    fn holds(self, elements: usize) -> bool {
        self.first
            .checked_add(elements)
            .is_some_and(|end| end <= self.len)
    }
}

/// An allocated context whose owner is in place and whose header is not written yet. Dropping
/// it drops the owner and frees the allocation.
pub(super) struct Placed<M: ManagedStruct, O> {
    ctx: NonNull<Context<M, O>>,
    ndim: usize,
    dims_offset: usize,
    _owns: PhantomData<O>,
}

impl<M: ManagedStruct, O: Send + 'static> Placed<M, O> {
    /// Allocates the context for `ndim <= MAX_NDIM` dimensions and moves `owner` into it. An
    /// allocation failure goes to [`handle_alloc_error`], as for `Box` and `Vec`.
    #[inline(always)]
    pub(super) fn new(owner: O, ndim: usize) -> Self {
        debug_assert!(ndim <= MAX_NDIM);
        let head = Layout::new::<Context<M, O>>();
        let Some((layout, dims_offset)) = Layout::array::<i64>(2 * ndim)
            .ok()
            .and_then(|dims| head.extend(dims).ok())
        else {
            // Only an owner within a few KiB of `isize::MAX` bytes gets here.
            handle_alloc_error(head)
        };
        let layout = layout.pad_to_align();
        // SAFETY: `layout` has a non-zero size (it holds the header).
        let raw = unsafe { alloc(layout) }.cast::<Context<M, O>>();
        let Some(ctx) = NonNull::new(raw) else {
            handle_alloc_error(layout)
        };
        // SAFETY: `ctx` is a fresh allocation of `layout`, which starts with a `Context<M, O>`;
        // the field is written in place, without a reference to the uninitialised header.
        unsafe { Context::layout(raw).write(layout) };
        // SAFETY: as above.
        unsafe { Context::owner(raw).write(owner) };
        Self {
            ctx,
            ndim,
            dims_offset,
            _owns: PhantomData,
        }
    }

    /// The owner, in its final place.
    ///
    /// # Safety
    /// The returned reference, and anything borrowed from it, must not be used after `self` is
    /// dropped or finished.
    #[inline(always)]
    pub(super) unsafe fn owner<'o>(&self) -> &'o mut O {
        // SAFETY: `new` initialised the owner; it stays there until `self` is dropped or the
        // deleter runs (the caller's contract), and only this reference accesses it.
        unsafe { &mut *Context::owner(self.ctx.as_ptr()) }
    }

    /// The first of the `2 * ndim` `i64`s after the context.
    #[inline(always)]
    fn dims_start(&self) -> *mut i64 {
        // SAFETY: `dims_offset` is inside the allocation (`Layout::extend` placed the array
        // there), and the pointer keeps the allocation's provenance.
        unsafe { self.ctx.as_ptr().cast::<u8>().add(self.dims_offset).cast() }
    }

    /// Checks `description`, writes the header and the dims, validates the result as an import
    /// would and checks that every byte it reaches lies in the description's buffer. On error
    /// the owner has been dropped and the allocation freed.
    pub(super) fn finish(
        self,
        description: &TensorDescription<'_>,
    ) -> Result<ManagedTensor<M>, ExportError> {
        let header = self.write(description)?;
        // SAFETY: we own the struct just built; its `shape` and `strides` point into our
        // allocation, which lives until the deleter. On error the deleter (which drops the
        // owner and frees everything) has run.
        let tensor = unsafe { ManagedTensor::from_raw(header.as_ptr()) }?;
        // On error `tensor` is dropped: the deleter runs once.
        check_reach(&tensor.view(), description.len)?;
        Ok(tensor)
    }

    /// Like [`finish`](Self::finish) for a description known to be valid, with its `meta`.
    ///
    /// # Safety
    /// `description` would pass import validation with `meta` as the result (exclusivity
    /// aside), every byte it reaches lies in its buffer, its flags are representable in `M`, and
    /// its shape (and strides, if any) have `ndim` entries, the dims' room.
    #[inline(always)]
    pub(super) unsafe fn finish_validated(
        self,
        description: &TensorDescription<'_>,
        meta: Meta,
    ) -> ManagedTensor<M> {
        // SAFETY: the caller's contract (shape and strides of `ndim` entries).
        let header = unsafe { self.write_unchecked(description) };
        // SAFETY: as in `finish`, and the caller vouches for `meta`.
        unsafe { ManagedTensor::from_validated(header, meta) }
    }

    /// Checks what the header cannot express, then writes it. Dropping `self` on error.
    fn write(self, description: &TensorDescription<'_>) -> Result<NonNull<M>, ExportError> {
        if description.shape.len() != self.ndim {
            return Err(ExportError::NdimChanged {
                announced: self.ndim,
                described: description.shape.len(),
            });
        }
        check_dims(description)?;
        M::representable(description.flags)?;
        // SAFETY: the shape and strides have `ndim` entries (checked above).
        Ok(unsafe { self.write_unchecked(description) })
    }

    /// Writes the dims (the given strides, or the compact row-major ones) and the header, and
    /// hands the context over to the deleter.
    ///
    /// # Safety
    /// `description.shape` (and `description.strides`, if any) have `ndim` entries: the dims
    /// have room for exactly that many.
    #[inline(always)]
    unsafe fn write_unchecked(self, description: &TensorDescription<'_>) -> NonNull<M> {
        let (shape, strides) = self.dims();
        let mut empty = false;
        for (dim, extent) in description.shape.iter().enumerate() {
            empty |= extent == 0;
            // SAFETY: `dim < ndim`: inside the shape array.
            unsafe { shape.wrapping_add(dim).write(extent) };
        }
        match description.strides {
            Some(given) => {
                for (dim, stride) in given.iter().enumerate() {
                    // SAFETY: `dim < ndim`: inside the strides array.
                    unsafe { strides.wrapping_add(dim).write(stride) };
                }
            }
            None => {
                // SAFETY: the `ndim` extents just written, initialised and ours.
                let written = unsafe { validate::i64_array(shape, self.ndim) };
                validate::write_row_major(written, |dim, stride| {
                    // SAFETY: `dim < ndim`: inside the strides array, which `written` does not
                    // cover.
                    unsafe { strides.wrapping_add(dim).write(stride) };
                });
            }
        }
        self.write_header(description, empty)
    }

    /// The export of a compact row-major description in one pass, for the common shape (every
    /// extent at least 1), its buffer checked in elements: `buffer.first + elements <=
    /// buffer.len`, which is what the byte check of [`finish_compact`](Self::finish_compact)
    /// decides for memory that exists (no product saturates). `Err(self)` for anything else,
    /// valid or not: `finish_compact` decides, and builds the error.
    ///
    /// # Safety
    /// As for [`finish_compact`](Self::finish_compact), and `buffer` is the description's buffer
    /// in elements of `storage`'s size: `first` the index of the tensor's first element (whose
    /// bytes `byte_offset` counts), `len` the buffer's length in elements, memory that exists
    /// (its bytes fit `usize`).
    #[cfg(feature = "fast-path")]
    #[inline(always)]
    pub(super) unsafe fn try_finish_compact(
        self,
        description: &TensorDescription<'_>,
        shape_i64: &[i64],
        storage: validate::Storage,
        exclusive: bool,
        buffer: ElementRange,
    ) -> Result<ManagedTensor<M>, Self> {
        if M::representable(description.flags).is_err() {
            return Err(self);
        }
        let meta = validate::compact_meta_fast(
            shape_i64,
            storage,
            description.device,
            description.flags,
            self.dims_writer(),
        );
        let Some(meta) = meta else {
            return Err(self);
        };
        // `meta.elements() >= 1`: no extent is 0.
        if !buffer.holds(meta.elements()) {
            return Err(self);
        }
        let header = self.write_header(description, false);
        // SAFETY: the struct just built, which validation would accept with `meta`: its shape and
        // size were checked above, its strides are compact, its dtype is `storage` (caller),
        // `data` is non-NULL and every element reached lies in the buffer (so no address
        // overflows).
        Ok(unsafe { ManagedTensor::from_validated(header, meta.with_exclusive(exclusive)) })
    }

    /// The export of a compact row-major description in one pass: the shape is checked as
    /// validation checks it while the dims are written, then the buffer and the header.
    ///
    /// # Safety
    /// `description.strides` is `None`, its shape is `shape_i64` with `ndim` entries (the dims'
    /// room), its dtype is `storage` under its flags (checked as validation checks it), and `data` is
    /// non-NULL, so that the result is what validation of the written struct would return
    /// (exclusivity aside, which `exclusive` says).
    #[inline(always)]
    pub(super) unsafe fn finish_compact(
        self,
        description: &TensorDescription<'_>,
        shape_i64: &[i64],
        storage: validate::Storage,
        exclusive: bool,
    ) -> Result<ManagedTensor<M>, ExportError> {
        M::representable(description.flags)?;
        let meta = validate::compact_meta(
            shape_i64,
            storage,
            description.device,
            description.flags,
            self.dims_writer(),
        )?;
        let meta = meta.with_exclusive(exclusive);
        if meta.elements() > 0 {
            let first = i128::from(description.byte_offset);
            check_inside(first, first + meta.byte_size() as i128, description.len)?;
        }
        let header = self.write_header(description, meta.elements() == 0);
        // SAFETY: the struct just built, which validation would accept with `meta`: its shape and
        // size were checked above, its strides are compact, its dtype is `storage` (caller),
        // `data` is non-NULL and every byte reached lies in the buffer (so no address
        // overflows).
        Ok(unsafe { ManagedTensor::from_validated(header, meta) })
    }

    /// Writes dimension `dim`'s extent and compact stride, for the compact passes
    /// (`validate::compact_meta` and its fast path), which visit only `dim < ndim`, the dims'
    /// room (their shape is the one `Placed::new` was given `ndim` for).
    #[inline(always)]
    fn dims_writer(&self) -> impl FnMut(usize, i64, usize) {
        let (shape, strides) = self.dims();
        move |dim, extent, stride| {
            // SAFETY: `dim < ndim` (above): inside both arrays.
            unsafe { shape.wrapping_add(dim).write(extent) };
            // SAFETY: as above; `stride <= isize::MAX` once the shape is accepted.
            unsafe { strides.wrapping_add(dim).write(stride as i64) };
        }
    }

    /// The shape and strides arrays after the context.
    #[inline(always)]
    fn dims(&self) -> (*mut i64, *mut i64) {
        let shape = self.dims_start();
        // SAFETY: `dims` has room for `2 * ndim` values (see `new`); `strides` follows `shape`.
        (shape, unsafe { shape.add(self.ndim) })
    }

    /// Writes the header over the dims already written and hands the context over to the
    /// deleter. `data` is NULL and `byte_offset` 0 for an `empty` tensor.
    #[inline(always)]
    fn write_header(self, description: &TensorDescription<'_>, empty: bool) -> NonNull<M> {
        let (shape, strides) = self.dims();
        let dl_tensor = DLTensor {
            data: if empty {
                ptr::null_mut()
            } else {
                description.data
            },
            device: description.device,
            // `ndim <= MAX_NDIM`.
            ndim: self.ndim as i32,
            dtype: description.dtype,
            shape,
            strides,
            byte_offset: if empty { 0 } else { description.byte_offset },
        };
        let ctx = self.ctx.as_ptr();
        let header = M::header(dl_tensor, ctx.cast(), delete::<M, O>, description.flags);
        // SAFETY: the header is the context's first field (offset 0, `repr(C)`), not yet
        // initialised; from here on the deleter owns the context.
        unsafe { ctx.cast::<M>().write(header) };
        mem::forget(self);
        header_of(ctx)
    }
}

/// The header of a context, as the pointer handed to consumers.
#[inline(always)]
fn header_of<M, O>(ctx: *mut Context<M, O>) -> NonNull<M> {
    // SAFETY: `ctx` came from a successful allocation (`Placed::new`), so it is non-NULL; the
    // header is at offset 0 (`repr(C)`), and the cast keeps the whole allocation's provenance,
    // which the deleter needs to free it.
    unsafe { NonNull::new_unchecked(ctx.cast::<M>()) }
}

impl<M: ManagedStruct, O> Drop for Placed<M, O> {
    fn drop(&mut self) {
        // SAFETY: the owner and the layout were written in `new`; the header was never
        // finished (finishing forgets `self`), so this is the only owner of the allocation.
        unsafe { destroy(self.ctx.as_ptr()) }
    }
}

/// The deleter of every export: drops the owner in place and frees the one allocation.
///
/// A panic in the owner's `Drop` cannot unwind into the C caller: it would leave an
/// `extern "C"` function, so the process aborts instead (Rust 1.81 and later).
///
/// # Safety
/// `header` is NULL (nothing happens) or a pointer this crate's export handed out, and this is
/// the only call for it.
unsafe extern "C" fn delete<M, O>(header: *mut M) {
    if header.is_null() {
        return;
    }
    // SAFETY: by the DLPack contract the consumer passes back the pointer we handed out, once;
    // it points to a context built by `Placed` whose provenance covers the whole allocation.
    unsafe { destroy(header.cast::<Context<M, O>>()) }
}

/// Drops the owner in place and frees the context's allocation, also when the owner's `Drop`
/// panics (the block is freed while the panic unwinds).
///
/// # Safety
/// `ctx` points to a context allocated by [`Placed::new`] (layout and owner initialised), with
/// the whole allocation's provenance, and nothing uses it afterwards.
#[inline(always)]
unsafe fn destroy<M, O>(ctx: *mut Context<M, O>) {
    /// Frees the block when dropped: after the owner, or while its panic unwinds.
    struct Free(*mut u8, Layout);
    impl Drop for Free {
        #[inline(always)]
        fn drop(&mut self) {
            // SAFETY: the block `Placed::new` allocated with this layout, freed only here.
            unsafe { dealloc(self.0, self.1) }
        }
    }
    // SAFETY: the layout was written by `new` (caller's contract); read before the block is freed.
    let layout = unsafe { Context::layout(ctx).read() };
    let _free = Free(ctx.cast(), layout);
    // SAFETY: the owner is initialised and dropped exactly once, here (caller's contract).
    unsafe { ptr::drop_in_place(Context::owner(ctx)) };
}

#[cfg(all(test, feature = "fast-path"))]
mod tests {
    use core::ptr::NonNull;

    use super::{check_inside, ElementRange, TensorDescription};
    use crate::dlpack::Element;
    use crate::raw::{kDLCPU, DLDevice};

    /// The element check against the byte check it stands for, as the general path makes it
    /// (`TensorDescription::elements`' saturated byte fields, then `check_inside`), at the edges,
    /// for buffers whose bytes fit `usize` (memory that exists): lengths at and past `isize::MAX`
    /// bytes, first elements that overflow, and ends at and past the buffer's.
    #[test]
    fn the_element_check_is_the_byte_check_for_memory_that_exists() {
        agree::<u8>();
        agree::<u16>();
        agree::<f32>();
        agree::<u64>();
        agree::<u128>();
    }

    fn agree<T: Element>() {
        let element_bytes = core::mem::size_of::<T>();
        let cpu = DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        };
        let most = isize::MAX as usize / element_bytes;
        let largest = usize::MAX / element_bytes;
        let lens = [0, 1, 7, most - 1, most, most + 1, largest];
        let firsts = [0, 1, 6, most - 1, most, largest, usize::MAX - 1, usize::MAX];
        for len in lens {
            for first in firsts {
                let start = NonNull::<T>::dangling().as_ptr();
                let description = TensorDescription::elements(start, len, cpu, &[], first);
                for elements in [1usize, 2, 7, most, largest, usize::MAX] {
                    let holds = ElementRange { first, len }.holds(elements);
                    let first_byte = i128::from(description.byte_offset);
                    let end = first_byte + elements as i128 * element_bytes as i128;
                    assert_eq!(
                        holds,
                        check_inside(first_byte, end, description.len).is_ok(),
                        "{element_bytes} B: {elements} from {first} in {len}"
                    );
                }
            }
        }
    }
}
