//! A capsule destructor for the conformance checker's own capsules (`dlpack_abi.conformance`,
//! made with ctypes): it runs the checker's Python destructor with any exception the destroying
//! code has pending set aside, and puts it back after.
//!
//! A consumer that refuses a capsule raises, then drops the capsule with its error set. A
//! destructor written in Python (a ctypes callback) cannot run then: its first C call through
//! ctypes sees the pending error and fails, "Exception ignored" clears it, and the consumer
//! returns NULL with no exception: `SystemError`, blamed on the consumer (NumPy, CuPy) although
//! the checker's destructor lost the error. In C the error is fetched first, as CPython's own
//! destructors do.
#![allow(unsafe_code)]

use pyo3::ffi;
use pyo3::prelude::*;

/// The capsule destructor: calls the capsule's context, a Python callable the checker keeps
/// alive, with the capsule's address, while any pending exception is set aside.
///
/// # Safety
/// Called by CPython as a capsule's destructor (attached), for a capsule whose context is NULL
/// or a live callable.
unsafe extern "C" fn guarded_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: a capsule destructor runs attached.
    let py = unsafe { Python::assume_attached() };
    let pending = PyErr::take(py);
    // SAFETY: a live capsule (CPython is destroying it); NULL or its context.
    let context = unsafe { ffi::PyCapsule_GetContext(capsule) };
    if context.is_null() {
        PyErr::take(py); // a context of NULL is no error; clear what GetContext may have set
    } else {
        // SAFETY: the context is a live callable the checker keeps alive (its contract).
        let hook = unsafe { Bound::from_borrowed_ptr(py, context.cast()) };
        if let Err(error) = hook.call1((capsule as usize,)) {
            error.write_unraisable(py, Some(&hook));
        }
    }
    if let Some(pending) = pending {
        pending.restore(py);
    }
}

/// Return the address of a capsule destructor that calls the capsule's context (a callable)
/// with the capsule's address, with any pending exception set aside meanwhile (for the
/// conformance checker's ctypes capsules; not public API).
///
/// >>> dlpack_abi.dlpack_abi._guarded_capsule_destructor() != 0
/// True
#[pyfunction]
pub(crate) fn _guarded_capsule_destructor() -> usize {
    guarded_destructor as *const () as usize
}
