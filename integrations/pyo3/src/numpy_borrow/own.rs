//! The rust-numpy table this crate publishes when no rust-numpy extension has yet ([`OWN`]):
//! rust-numpy's meaning, kept in this crate's own borrow registry. Each distinct array borrowed
//! through it is one registry borrow (shared ones counted), so rust-numpy's borrows and this
//! crate's imports of any producer refuse each other where they may share a byte, and this
//! crate's own arguments need not take rust-numpy's borrow as well while this table is in use.
#![allow(unsafe_code)]

use alloc::vec::Vec;
use core::ffi::{c_int, c_void};
use core::ptr;

use pyo3::ffi;
use pyo3::prelude::*;

#[cfg(not(all(Py_LIMITED_API, Py_GIL_DISABLED)))]
use super::layout::{ArrayObject, Descr1, Descr2};
use super::{Table, BORROWED, NOT_WRITEABLE, NUMPY, OK};
use crate::borrows::{process_table, Borrow, SharedApi};
use crate::spin::SpinLock;
use dlpack_abi::dlpack::{MemoryExtent, TensorView, MAX_NDIM};
use dlpack_abi::raw::{kDLCPU, kDLUInt, DLDataType, DLDevice, DLTensor};

/// The table this crate publishes when no rust-numpy extension has yet.
pub(super) static OWN: Table = Table {
    version: 1,
    flags: ptr::null_mut(),
    acquire: own_acquire,
    acquire_mut: own_acquire_mut,
    release: own_release,
    release_mut: own_release_mut,
};

/// The arrays borrowed through [`OWN`], by array object, each with its registry borrow (`None`
/// for an empty array, which reaches nothing): shared ones counted (rust-numpy may borrow one
/// array many times), mutable ones listed. Few live at once, so both are scanned. An entry
/// keeps the extent it was registered with, so that a release finds it even if the array's
/// shape was set from Python meanwhile.
struct Borrows {
    shared: Vec<(usize, MemoryExtent, usize, Option<Borrow>)>,
    mutable: Vec<(usize, Option<Borrow>)>,
}

static BORROWS: SpinLock<Borrows> = SpinLock::new(Borrows {
    shared: Vec::new(),
    mutable: Vec::new(),
});

/// The process's registry table (attached: rust-numpy calls its table so). Looked up before
/// [`BORROWS`] is locked: finding it the first time may run Python code.
fn registry() -> Result<&'static SharedApi, c_int> {
    // SAFETY: the table's contract: its functions are called attached to the interpreter.
    let py = unsafe { Python::assume_attached() };
    process_table(py).map_err(|_| BORROWED)
}

/// # Safety
/// The table's contract: attached, `array` a live NumPy array.
unsafe extern "C" fn own_acquire(_: *mut c_void, array: *mut ffi::PyObject) -> c_int {
    // SAFETY: the caller's.
    let Some((extent, _)) = (unsafe { read_array(array) }) else {
        return BORROWED;
    };
    let api = match registry() {
        Ok(api) => api,
        Err(code) => return code,
    };
    let key = array as usize;
    BORROWS.with(|borrows| {
        let same = |(a, e, _, _): &&mut (usize, MemoryExtent, usize, Option<Borrow>)| {
            *a == key && *e == extent
        };
        if let Some((_, _, count, _)) = borrows.shared.iter_mut().find(same) {
            *count += 1; // registered already: nothing may write it meanwhile
            return OK;
        }
        match Borrow::in_table(api, [extent], false) {
            Ok(borrow) => {
                borrows.shared.push((key, extent, 1, borrow));
                OK
            }
            Err(_) => BORROWED,
        }
    })
}

/// # Safety
/// The table's contract: attached, `array` a live NumPy array.
unsafe extern "C" fn own_acquire_mut(_: *mut c_void, array: *mut ffi::PyObject) -> c_int {
    // SAFETY: the caller's.
    let Some((extent, writeable)) = (unsafe { read_array(array) }) else {
        return BORROWED;
    };
    if !writeable {
        return NOT_WRITEABLE;
    }
    let api = match registry() {
        Ok(api) => api,
        Err(code) => return code,
    };
    BORROWS.with(|borrows| match Borrow::in_table(api, [extent], true) {
        Ok(borrow) => {
            borrows.mutable.push((array as usize, borrow));
            OK
        }
        Err(_) => BORROWED,
    })
}

/// # Safety
/// The table's contract: attached, `array` the live NumPy array a shared borrow was taken for.
unsafe extern "C" fn own_release(_: *mut c_void, array: *mut ffi::PyObject) {
    // SAFETY: the caller's.
    let now = unsafe { read_array(array) }.map(|(extent, _)| extent);
    let key = array as usize;
    // The registry borrow ends after the lock is given back.
    let _ended = BORROWS.with(|borrows| {
        let index = borrows
            .shared
            .iter()
            .position(|(a, e, _, _)| *a == key && Some(*e) == now)
            .or_else(|| borrows.shared.iter().position(|(a, _, _, _)| *a == key))?;
        borrows.shared[index].2 -= 1;
        (borrows.shared[index].2 == 0).then(|| borrows.shared.swap_remove(index))
    });
}

/// # Safety
/// The table's contract: attached, `array` the live NumPy array a mutable borrow was taken for.
unsafe extern "C" fn own_release_mut(_: *mut c_void, array: *mut ffi::PyObject) {
    let key = array as usize;
    let _ended = BORROWS.with(|borrows| {
        let index = borrows.mutable.iter().position(|(a, _)| *a == key)?;
        Some(borrows.mutable.swap_remove(index))
    });
}

/// The bytes an array of `element_bytes`-byte elements at `first` reaches, `byte_strides`
/// apart: measured by the core ([`TensorView::memory_extent`]) on a `DLTensor` of it, in whole
/// elements when the strides are, else in bytes (a last dimension of the element's bytes:
/// interleaved parts are then not told apart). `None` when no `DLTensor` can describe it.
fn extent(
    first: usize,
    shape: &[isize],
    byte_strides: &[isize],
    element_bytes: usize,
) -> Option<MemoryExtent> {
    let size = isize::try_from(element_bytes)
        .ok()
        .filter(|&size| size > 0)?;
    let whole = byte_strides.iter().all(|stride| stride % size == 0);
    let ndim = shape.len() + usize::from(!whole);
    if ndim > MAX_NDIM || shape.len() != byte_strides.len() {
        return None;
    }
    let (mut dims, mut steps) = ([0i64; MAX_NDIM], [0i64; MAX_NDIM]);
    for (dim, (&extent, &stride)) in shape.iter().zip(byte_strides).enumerate() {
        dims[dim] = i64::try_from(extent).ok()?;
        steps[dim] = i64::try_from(if whole { stride / size } else { stride }).ok()?;
    }
    let dtype = if whole {
        // Any type of the element's size: only its bytes matter here.
        match element_bytes {
            1 | 2 | 4 | 8 => DLDataType {
                code: kDLUInt,
                bits: u8::try_from(element_bytes * 8).ok()?,
                lanes: 1,
            },
            _ => DLDataType {
                code: kDLUInt,
                bits: 8,
                lanes: u16::try_from(element_bytes).ok()?,
            },
        }
    } else {
        dims[ndim - 1] = i64::try_from(element_bytes).ok()?;
        steps[ndim - 1] = 1;
        DLDataType {
            code: kDLUInt,
            bits: 8,
            lanes: 1,
        }
    };
    let tensor = DLTensor {
        data: first as *mut c_void,
        device: DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        },
        ndim: i32::try_from(ndim).ok()?,
        dtype,
        shape: dims.as_mut_ptr(),
        strides: steps.as_mut_ptr(),
        byte_offset: 0,
    };
    // SAFETY: a `DLTensor` on this stack frame, with `ndim` extents and strides beside it, not
    // written while the view lives; its memory is not read.
    let view = unsafe { TensorView::from_raw(&tensor) }.ok()?;
    Some(view.memory_extent())
}

/// The bytes a NumPy array reaches, and whether it is writeable; `None` when it cannot be read.
///
/// # Safety
/// Attached; `array` a live NumPy array (its struct is read, not changed).
#[cfg(not(all(Py_LIMITED_API, Py_GIL_DISABLED)))]
unsafe fn read_array(array: *mut ffi::PyObject) -> Option<(MemoryExtent, bool)> {
    // SAFETY: a live `PyArrayObject` (the caller's), whose leading fields these are.
    let fields = unsafe { &*array.cast::<ArrayObject>() };
    // SAFETY: a live array, read attached (the caller's), unchanged while it is read here.
    let (shape, strides) = unsafe { fields.extents_and_strides() }?;
    let element_bytes = if NUMPY.get().is_none_or(|numpy| numpy.major >= 2) {
        // SAFETY: the array's live dtype, in NumPy 2's layout.
        let elsize = unsafe { (*fields.descr.cast::<Descr2>()).elsize };
        usize::try_from(elsize).ok()?
    } else {
        // SAFETY: the array's live dtype, in NumPy 1's layout.
        let elsize = unsafe { (*fields.descr.cast::<Descr1>()).elsize };
        usize::try_from(elsize).ok()?
    };
    let first = fields.data as usize;
    Some((
        extent(first, shape, strides, element_bytes)?,
        fields.writeable(),
    ))
}

/// The bytes a NumPy array reaches, and whether it is writeable; `None` when it cannot be read.
/// (The stable ABI of free-threaded builds hides object layouts: the buffer protocol instead.)
///
/// # Safety
/// Attached; `array` a live NumPy array.
#[cfg(all(Py_LIMITED_API, Py_GIL_DISABLED))]
unsafe fn read_array(array: *mut ffi::PyObject) -> Option<(MemoryExtent, bool)> {
    // SAFETY: attached (the caller's).
    let py = unsafe { Python::assume_attached() };
    // SAFETY: a live object, borrowed while attached.
    let array = unsafe { Bound::from_borrowed_ptr(py, array) };
    let buffer = match pyo3::buffer::PyUntypedBuffer::get(&array) {
        Ok(buffer) => buffer,
        Err(_) => return None,
    };
    let shape: Vec<isize> = buffer
        .shape()
        .iter()
        .map(|&n| isize::try_from(n).ok())
        .collect::<Option<_>>()?;
    let first = buffer.buf_ptr() as usize;
    Some((
        extent(first, &shape, buffer.strides(), buffer.item_size())?,
        !buffer.readonly(),
    ))
}
