//! Arrow imports in the registry: every host buffer an imported array reaches (its children's
//! and dictionary's too, each sized by [`ArrayView::buffer_len`]) is one shared borrow, held
//! by the array itself until its `release` runs, so that a `ReadwriteTensor` of any of those
//! bytes is refused while Rust may read them.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::ffi::c_void;

use pyo3::prelude::*;

use super::Borrow;
use crate::arrow::arrow_error;
use dlpack_abi::arrow::{Array, ArrayView, DeviceArray, SchemaRef};
use dlpack_abi::dlpack::MemoryExtent;
use dlpack_abi::raw::ArrowArray;

/// The bytes of every buffer of `view`'s node and below, as byte ranges. A buffer whose size
/// cannot be known (a negative offset) reaches, as far as anyone can tell, to the end of
/// memory.
fn extents(view: ArrayView<'_>, out: &mut Vec<MemoryExtent>) {
    for index in 0..view.n_buffers() {
        let Some(start) = view.buffer(index).map(|buffer| buffer as usize) else {
            continue;
        };
        if start == 0 {
            continue;
        }
        let end = view
            .buffer_len(index)
            .map_or(usize::MAX, |len| start.saturating_add(len));
        out.push(MemoryExtent {
            start,
            end,
            first: start,
            stride_gcd: 0,
            element_bytes: 0, // a byte range: compared by range alone
        });
    }
    view.children().for_each(|child| extents(child, out));
    if let Some(dictionary) = view.dictionary() {
        extents(dictionary, out);
    }
}

/// What a registered array's `release` finds in `private_data`: the producer's own, and the
/// borrow, removed once the producer's `release` has run.
struct Registered {
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
    _borrow: Borrow,
}

/// The `release` of a registered array: puts the producer's back, calls it, then ends the
/// borrow.
///
/// # Safety
/// Called once, by the array's owner, with the array (C Data Interface).
unsafe extern "C" fn release_registered(array: *mut ArrowArray) {
    // SAFETY: the owner passes its live array, which no one else touches during `release`.
    let array = unsafe { &mut *array };
    // SAFETY: `private_data` is the box `register_raw` leaked, taken back once (here).
    let registered = unsafe { Box::from_raw(array.private_data.cast::<Registered>()) };
    array.release = registered.release;
    array.private_data = registered.private_data;
    if let Some(release) = array.release {
        // SAFETY: the producer's array, as it made it: its `release`, called once.
        unsafe { release(array) };
    }
    drop(registered);
}

/// Makes `raw`'s `release` end `borrow` after the producer's.
fn register_raw(raw: &mut ArrowArray, borrow: Borrow) {
    let registered = Box::new(Registered {
        release: raw.release,
        private_data: raw.private_data,
        _borrow: borrow,
    });
    raw.private_data = Box::into_raw(registered).cast();
    raw.release = Some(release_registered);
}

/// Registers a CPU import's buffers as a shared borrow until it is released.
///
/// # Errors
/// [`BorrowError::BorrowedMutably`](super::BorrowError) while a `ReadwriteTensor` may write a
/// byte of them (the array is released).
pub(crate) fn register_array(
    py: Python<'_>,
    schema: SchemaRef<'_>,
    array: Array,
) -> PyResult<Array> {
    let mut reached = Vec::new();
    extents(array.view(schema).map_err(arrow_error)?, &mut reached);
    let Some(borrow) = Borrow::new(py, reached, false)? else {
        return Ok(array);
    };
    let mut raw = array.into_raw();
    register_raw(&mut raw, borrow);
    // SAFETY: the array we owned, unchanged but for a `release` that calls its own.
    unsafe { Array::from_raw(&mut raw, schema) }.map_err(arrow_error)
}

/// Registers a device import's buffers as a shared borrow until it is released, when the host
/// can read them now (no pending event).
///
/// # Errors
/// As [`register_array`].
pub(crate) fn register_device_array(
    py: Python<'_>,
    schema: SchemaRef<'_>,
    array: DeviceArray,
) -> PyResult<DeviceArray> {
    if array.check_host_readable(false).is_err() {
        return Ok(array);
    }
    let mut reached = Vec::new();
    extents(array.view(schema).map_err(arrow_error)?, &mut reached);
    let Some(borrow) = Borrow::new(py, reached, false)? else {
        return Ok(array);
    };
    let mut raw = array.into_raw();
    register_raw(&mut raw.array, borrow);
    // SAFETY: the device array we owned, unchanged but for a `release` that calls its own.
    unsafe { DeviceArray::from_raw(&mut raw, schema) }.map_err(arrow_error)
}
