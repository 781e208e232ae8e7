//! Capsules: raw `PyCapsule_New` over the bare C structs, the producer-side destructors, and the
//! consumer-side name checks.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use core::ffi::CStr;
use core::ptr::{self, NonNull};

use bytemuck::Zeroable;
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use dlpack_abi::dlpack::{call_deleter, ManagedStruct, ManagedTensor};
use dlpack_abi::raw::{
    ArrowArray, ArrowArrayStream, ArrowDeviceArray, ArrowDeviceArrayStream, ArrowSchema,
    DLManagedTensor, DLManagedTensorVersioned,
};

/// A DLPack managed struct and its capsule names.
pub(crate) trait DlpackCapsule: ManagedStruct + Sized + 'static {
    /// The name of an unconsumed capsule.
    const NAME: &'static CStr;
    /// The name a consumer gives the capsule when it takes ownership.
    const USED_NAME: &'static CStr;
    /// Whether the struct carries a version and flags.
    const VERSIONED: bool;

    /// `NAME` at one address for the life of the process (read from a `static`: each use of a
    /// `const` may have its own copy), the name [`dlpack_capsule`] gives its capsules, so that
    /// the destructor recognises an untouched one by the address alone.
    fn export_name() -> &'static CStr;
}

impl DlpackCapsule for DLManagedTensorVersioned {
    const NAME: &'static CStr = c"dltensor_versioned";
    const USED_NAME: &'static CStr = c"used_dltensor_versioned";
    const VERSIONED: bool = true;

    fn export_name() -> &'static CStr {
        static NAME: &CStr = DLManagedTensorVersioned::NAME;
        NAME
    }
}

impl DlpackCapsule for DLManagedTensor {
    const NAME: &'static CStr = c"dltensor";
    const USED_NAME: &'static CStr = c"used_dltensor";
    const VERSIONED: bool = false;

    fn export_name() -> &'static CStr {
        static NAME: &CStr = DLManagedTensor::NAME;
        NAME
    }
}

/// Hands `tensor` to Python in a capsule named `M::NAME`, whose destructor calls the deleter
/// unless a consumer renamed the capsule to `M::USED_NAME`. The capsule's context holds the
/// pointer too, for the destructor's fast path.
pub(crate) fn dlpack_capsule<M: DlpackCapsule>(
    py: Python<'_>,
    tensor: ManagedTensor<M>,
) -> PyResult<Bound<'_, PyCapsule>> {
    let raw = tensor.into_raw();
    // SAFETY: `into_raw` never returns NULL.
    let pointer = unsafe { NonNull::new_unchecked(raw) };
    // SAFETY: the pointer stays valid until the deleter runs, which only the destructor (or a
    // consumer that renamed the capsule) does; the name is static.
    let capsule = unsafe {
        PyCapsule::new_with_pointer_and_destructor(
            py,
            pointer.cast(),
            M::export_name(),
            Some(dlpack_destructor::<M>),
        )
    };
    match &capsule {
        Ok(made) => {
            // SAFETY: a live capsule (just made), attached; the context is ours to set, and
            // setting it cannot fail for a valid capsule.
            unsafe { ffi::PyCapsule_SetContext(made.as_ptr(), pointer.as_ptr().cast()) };
        }
        // SAFETY: no capsule was made, so the tensor is still ours: delete it once.
        Err(_) => unsafe { call_deleter(pointer) },
    }
    capsule
}

/// The tensor of a dying capsule of ours that no consumer took, found without comparing names
/// as strings: its name is still the very string [`dlpack_capsule`] gave it (a consumer that
/// takes the tensor renames the capsule, which gives it another string), and its context is
/// the pointer. `None` when the name is another string: the caller then checks by value. (A
/// third party that changed the context without renaming would be as far outside the protocol
/// as one that changed the pointer, which the check by value trusts.)
///
/// # Safety
/// Attached, with a live capsule.
unsafe fn unconsumed_export<M: DlpackCapsule>(capsule: *mut ffi::PyObject) -> Option<NonNull<M>> {
    // SAFETY: attached, a live capsule (caller); no exception is set for a valid capsule.
    let name = unsafe { ffi::PyCapsule_GetName(capsule) };
    if !ptr::eq(name, M::export_name().as_ptr()) {
        return None;
    }
    // SAFETY: as above; `dlpack_capsule` set the context to the capsule's pointer.
    let context = unsafe { ffi::PyCapsule_GetContext(capsule) };
    NonNull::new(context.cast::<M>())
}

/// The producer's capsule destructor (python_spec): nothing if the capsule was consumed,
/// otherwise the deleter, keeping any exception in flight and reporting failures as unraisable.
///
/// # Safety
/// Called by CPython, attached, with a dying capsule made by [`dlpack_capsule`].
unsafe extern "C" fn dlpack_destructor<M: DlpackCapsule>(capsule: *mut ffi::PyObject) {
    // SAFETY: CPython calls capsule destructors with a live capsule, attached to the interpreter.
    let fast = unsafe { unconsumed_export::<M>(capsule) };
    // SAFETY: as above.
    if fast.is_none() && unsafe { ffi::PyCapsule_IsValid(capsule, M::USED_NAME.as_ptr()) } == 1 {
        return;
    }
    // Only an exception in flight needs saving (the common case has none, and saves two calls).
    // SAFETY: attached (above).
    let saved = (!unsafe { ffi::PyErr_Occurred() }.is_null()).then(|| {
        // SAFETY: attached (above).
        unsafe { SavedError::fetch() }
    });
    let pointer = fast.or_else(|| {
        // SAFETY: a live capsule; a wrong name gives NULL and sets an exception.
        let pointer = unsafe { ffi::PyCapsule_GetPointer(capsule, M::NAME.as_ptr()) };
        NonNull::new(pointer.cast::<M>())
    });
    match pointer {
        // SAFETY: attached, with the exception `PyCapsule_GetPointer` set.
        None => unsafe { report_unraisable(c"a DLPack capsule's destructor") },
        // SAFETY: an unconsumed capsule of ours holds a live tensor whose deleter has not run.
        Some(tensor) => unsafe { call_deleter(tensor) },
    }
    match saved {
        // SAFETY: attached; gives back the exception that was in flight.
        Some(saved) => unsafe { saved.restore() },
        // A deleter that left an exception set is reported, not passed to the caller.
        // SAFETY: attached.
        None if !unsafe { ffi::PyErr_Occurred() }.is_null() => {
            // SAFETY: attached, with an exception set.
            unsafe { report_unraisable(c"a DLPack capsule's destructor") }
        }
        None => {}
    }
}

/// Reports the exception set as unraisable, naming `site`: never with the dying capsule as the
/// object (the python_spec reference code passes it), because the hook's arguments take a
/// reference to it, and a capsule is destroyed with no references left: giving that one back
/// destroys it again, recursively, or, if the hook keeps it, frees it while it is held.
///
/// # Safety
/// Attached to the interpreter, with an exception set.
unsafe fn report_unraisable(site: &CStr) {
    // The string is made with no exception set, and the exception put back for the report.
    // SAFETY: attached (caller).
    let error = unsafe { SavedError::fetch() };
    // SAFETY: attached (caller); a NUL-terminated string. On failure (NULL) its own exception
    // is replaced by ours below.
    let site = unsafe { ffi::PyUnicode_FromString(site.as_ptr()) };
    // SAFETY: attached.
    unsafe { error.restore() };
    // SAFETY: attached, with the exception set; `site` is a new string, or NULL (then only the
    // traceback is reported).
    unsafe { ffi::PyErr_WriteUnraisable(site) };
    if !site.is_null() {
        // SAFETY: our reference, given back once.
        unsafe { ffi::Py_DecRef(site) };
    }
}

/// The exception in flight, taken out and put back.
struct SavedError([*mut ffi::PyObject; 3]);

impl SavedError {
    /// # Safety
    /// Attached to the interpreter.
    #[allow(deprecated)] // `PyErr_GetRaisedException` is 3.12+ only; these are stable ABI.
    unsafe fn fetch() -> Self {
        let mut parts = [ptr::null_mut(); 3];
        // SAFETY: attached (caller); three valid out-pointers.
        unsafe { ffi::PyErr_Fetch(&mut parts[0], &mut parts[1], &mut parts[2]) };
        Self(parts)
    }

    /// # Safety
    /// Attached to the interpreter.
    #[allow(deprecated)]
    unsafe fn restore(self) {
        let [kind, value, traceback] = self.0;
        // SAFETY: attached (caller); gives back the references `fetch` took.
        unsafe { ffi::PyErr_Restore(kind, value, traceback) };
    }
}

/// An Arrow base struct and its capsule name.
pub(crate) trait ArrowCapsule: Zeroable + 'static {
    /// The capsule name of the PyCapsule interface.
    const NAME: &'static CStr;

    /// Calls `release` unless the struct is released (NULL `release`).
    ///
    /// # Safety
    /// `ptr` is a live struct that is ours to release.
    unsafe fn release(ptr: *mut Self);
}

macro_rules! arrow_capsule {
    ($ty:ty, $name:literal) => {
        impl ArrowCapsule for $ty {
            const NAME: &'static CStr = $name;

            unsafe fn release(ptr: *mut Self) {
                // SAFETY: live and ours (caller).
                if let Some(release) = unsafe { (*ptr).release } {
                    // SAFETY: the C Data Interface: the owner calls `release` once.
                    unsafe { release(ptr) }
                }
            }
        }
    };
}

arrow_capsule!(ArrowSchema, c"arrow_schema");
arrow_capsule!(ArrowArray, c"arrow_array");
arrow_capsule!(ArrowArrayStream, c"arrow_array_stream");
arrow_capsule!(ArrowDeviceArrayStream, c"arrow_device_array_stream");

impl ArrowCapsule for ArrowDeviceArray {
    const NAME: &'static CStr = c"arrow_device_array";

    unsafe fn release(ptr: *mut Self) {
        // SAFETY: live and ours (caller).
        let array = unsafe { ptr::addr_of_mut!((*ptr).array) };
        // SAFETY: as above.
        if let Some(release) = unsafe { (*array).release } {
            // SAFETY: the C Device Data Interface: `array.release` with the array, once.
            unsafe { release(array) }
        }
    }
}

/// A capsule over a zeroed (released) `R` on the heap, into which `fill` then moves the value:
/// if making the capsule fails, `fill` is not called and drops (releasing) what it holds.
pub(crate) fn arrow_capsule<R: ArrowCapsule>(
    py: Python<'_>,
    fill: impl FnOnce(*mut R),
) -> PyResult<Bound<'_, PyCapsule>> {
    let raw = Box::into_raw(Box::new(R::zeroed()));
    // SAFETY: `Box::into_raw` is non-NULL.
    let pointer = unsafe { NonNull::new_unchecked(raw) };
    // SAFETY: the box lives until the destructor frees it; the name is static.
    let capsule = unsafe {
        PyCapsule::new_with_pointer_and_destructor(
            py,
            pointer.cast(),
            R::NAME,
            Some(arrow_destructor::<R>),
        )
    };
    match capsule {
        Ok(capsule) => {
            fill(raw);
            Ok(capsule)
        }
        Err(error) => {
            // SAFETY: no capsule took the box; it holds a released struct.
            drop(unsafe { Box::from_raw(raw) });
            Err(error)
        }
    }
}

/// The PyCapsule interface's destructor: `release` unless a consumer moved the struct out (or
/// it was never filled), then free the box.
///
/// # Safety
/// Called by CPython, attached, with a dying capsule made by [`arrow_capsule()`](fn@arrow_capsule).
unsafe extern "C" fn arrow_destructor<R: ArrowCapsule>(capsule: *mut ffi::PyObject) {
    // SAFETY: attached (capsule destructor).
    let saved = unsafe { SavedError::fetch() };
    // SAFETY: a live capsule; a wrong name gives NULL and sets an exception.
    let pointer = unsafe { ffi::PyCapsule_GetPointer(capsule, R::NAME.as_ptr()) };
    if pointer.is_null() {
        // SAFETY: attached, with the exception set.
        unsafe { report_unraisable(c"an Arrow PyCapsule's destructor") };
    } else {
        let raw = pointer.cast::<R>();
        // SAFETY: the box `arrow_capsule` made; its struct is ours unless moved out (released).
        unsafe { R::release(raw) };
        // SAFETY: freed once, here.
        drop(unsafe { Box::from_raw(raw) });
    }
    // SAFETY: attached.
    unsafe { saved.restore() };
}

/// Runs `take` (reading a capsule's struct, then moving it out or renaming the capsule) as one
/// step for every thread: under the capsule's critical section on free-threaded builds, where
/// two threads could otherwise both take the struct and release it twice; the GIL makes it one
/// step elsewhere (nothing in `take` may call Python code, which could let another thread in).
pub(crate) fn consuming<R>(capsule: &Bound<'_, PyAny>, take: impl FnOnce() -> R) -> R {
    pyo3::sync::critical_section::with_critical_section(capsule, take)
}

/// The pointer of a capsule named `name`, without consuming it; `ValueError` otherwise.
pub(crate) fn capsule_pointer<T>(object: &Bound<'_, PyAny>, name: &CStr) -> PyResult<NonNull<T>> {
    let capsule = object.cast::<PyCapsule>().map_err(|_| {
        PyValueError::new_err(format!(
            "expected a PyCapsule named {name:?}, got {}",
            type_name(object)
        ))
    })?;
    // SAFETY: a live capsule, attached (we hold a `Bound`).
    let pointer = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), name.as_ptr()) };
    NonNull::new(pointer.cast()).ok_or_else(|| {
        PyErr::take(object.py()).unwrap_or_else(|| PyValueError::new_err("NULL capsule"))
    })
}

/// A capsule over a process-lifetime `table` named `name`, without a destructor (nothing to
/// free): how this crate publishes its tables (the borrow registry's, rust-numpy's).
pub(crate) fn static_capsule<'py, T>(
    py: Python<'py>,
    table: &'static T,
    name: &'static CStr,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: attached; the table and the name are statics, valid for the capsule's life; no
    // destructor.
    let capsule =
        unsafe { ffi::PyCapsule_New(ptr::from_ref(table).cast_mut().cast(), name.as_ptr(), None) };
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, capsule) }
}

/// `type(object).__name__`, for messages.
pub(crate) fn type_name(object: &Bound<'_, PyAny>) -> String {
    object
        .get_type()
        .name()
        .map_or_else(|_| "?".into(), |name| name.to_string())
}
