//! The registry's C table, shared by every extension built on this crate, and where it lives.
//!
//! **Where.** The first extension to need the registry publishes a capsule of its table in the
//! interpreter's own dict (`PyInterpreterState_GetDict`, stable ABI since 3.8), under
//! [`HOME_KEY`], with `dict.setdefault`, so that of two extensions racing there one table wins
//! for both. Python code cannot reach that dict (`sys.modules` and module attributes, which
//! test harnesses and reloaders clear, are not used): every extension finds the same table for
//! the process's life. The first extension's code (its copy of this crate) then decides for
//! the process: every other extension calls into it.
//!
//! **Versions.** The capsule's name carries the table's *major* version ([`CAPSULE`]): a table
//! whose meaning changes gets a new major, a new name, so a reader of another major finds the
//! key taken by a capsule it cannot open and refuses, whichever extension was loaded first.
//! Within a major, fields are only appended: `size` says how many bytes the publisher's table
//! has, and a reader refuses a table smaller than the fields it calls.
//!
//! **The pre-release table** (major 1: `track(state, token, extent)` and `set_mutable`, then
//! `track(..., mutable)` and `make_shared`, both `version: 1` in `sys.modules
//! ["_dlpack_abi_borrows"].api`) had no major in its name. It is refused in both orders: an
//! extension of this major finds its module and refuses to start a second registry, and
//! leaves a module of that name without `api` behind, which such an extension fails to read.
#![allow(unsafe_code)]

use alloc::format;
use core::ffi::{c_int, c_void, CStr};
use core::mem::{offset_of, size_of};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyModule};
use pyo3::{ffi, intern};

use super::registry::{
    own_make_shared, own_track, own_track_attached, own_untrack, track_attached, untrack,
};
use crate::capsule::{static_capsule, type_name};
use dlpack_abi::dlpack::MemoryExtent;

/// The key of the registry's capsule in the interpreter's dict.
pub(super) const HOME_KEY: &str = "dlpack_abi.borrow_registry";
/// The capsule's name: the table's major version is part of it.
pub(super) const CAPSULE: &CStr = c"dlpack_abi.borrow_registry.v2";
/// Where the pre-release table lived (`sys.modules`), with its attribute.
const LEGACY_MODULE: &str = "_dlpack_abi_borrows";
const LEGACY_ATTRIBUTE: &str = "api";

/// The bytes a registered borrow reaches, as the table passes them (`MemoryExtent`'s fields).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct SharedExtent {
    start: usize,
    end: usize,
    first: usize,
    stride_gcd: usize,
    element_bytes: usize,
}

impl From<MemoryExtent> for SharedExtent {
    fn from(extent: MemoryExtent) -> Self {
        let MemoryExtent {
            start,
            end,
            first,
            stride_gcd,
            element_bytes,
        } = extent;
        Self {
            start,
            end,
            first,
            stride_gcd,
            element_bytes,
        }
    }
}

impl From<SharedExtent> for MemoryExtent {
    fn from(extent: SharedExtent) -> Self {
        Self {
            start: extent.start,
            end: extent.end,
            first: extent.first,
            stride_gcd: extent.stride_gcd,
            element_bytes: extent.element_bytes,
        }
    }
}

/// Results of `track` and `make_shared`.
pub(super) const OK: c_int = 0;
pub(super) const CONFLICTS_MUTABLE: c_int = 1;
pub(super) const CONFLICTS_SHARED: c_int = 2;
pub(super) const UNKNOWN_TOKEN: c_int = 3;

/// The registry's C table, major version 2 ([`CAPSULE`]): the fields every table of this major
/// has (a reference to a table is one to these; fields appended later are read by size,
/// [`Appended`]). Tokens are addresses of live objects the borrower keeps (a managed struct, a
/// boxed byte): unique while they are registered. Every function may be called from any thread,
/// attached to Python or not. A *mutable* registration holds the GIL while it is made (builds
/// with one): the registry takes it for a caller that does not hold it (this thread's own thread
/// state is not the one running; the stable ABI's build always asks `PyGILState_Ensure`).
#[repr(C)]
pub(crate) struct SharedApi {
    /// The table's size in bytes as its publisher built it (fields are only appended).
    pub(super) size: usize,
    /// Passed back to every function.
    pub(super) state: *const c_void,
    /// Registers a borrow of `count` extents under a token, shared (`0`) or mutable (`1`):
    /// `OK`, or `CONFLICTS_MUTABLE` / `CONFLICTS_SHARED` with nothing registered. A borrow
    /// conflicts with another token's that may share a byte with it: a mutable one always, a
    /// shared one when the new borrow is mutable.
    pub(super) track:
        unsafe extern "C" fn(*const c_void, usize, *const SharedExtent, usize, c_int) -> c_int,
    /// Makes a mutable borrow shared: `OK` or `UNKNOWN_TOKEN`.
    pub(super) make_shared: unsafe extern "C" fn(*const c_void, usize) -> c_int,
    /// Removes a borrow (nothing for an unknown token).
    pub(super) untrack: unsafe extern "C" fn(*const c_void, usize),
}

/// A table with the fields appended to the first ones: this build's own ([`OWN_API`]). Another
/// publisher's table may end before them: they are read only through a raw pointer, after its
/// `size` says it has them.
#[repr(C)]
struct Appended {
    first: SharedApi,
    /// `track` of one shared extent, for a caller attached to Python (on builds with a GIL,
    /// holding it): the cheapest registration, with no fence.
    track_attached: TrackAttached,
}

/// The signature of [`Appended::track_attached`].
type TrackAttached = unsafe extern "C" fn(*const c_void, usize, *const SharedExtent) -> c_int;

/// The bytes every table of this major has.
const FIRST_FIELDS: usize = size_of::<SharedApi>();

impl SharedApi {
    /// Registers `token`'s shared borrow of `extent` for a caller attached to Python: through
    /// `track_attached` when the table has it (inlined when it is this extension's own), else
    /// `track`. The table's answer (`OK` or `CONFLICTS_MUTABLE`).
    #[inline]
    pub(super) fn track_shared_attached(
        &'static self,
        _: Python<'_>,
        token: usize,
        extent: &MemoryExtent,
    ) -> c_int {
        if self.is_own() {
            // SAFETY: attached (we hold `Python`, so the GIL on builds with one).
            return unsafe { track_attached(token, extent) };
        }
        let shared = SharedExtent::from(*extent);
        // The table's pointer as it was found (valid for the publisher's whole table), not one
        // derived from `self` (valid for the first fields only).
        let found = API.load(Ordering::Acquire);
        let offset = offset_of!(Appended, track_attached);
        if ptr::eq(found.cast_const(), self) && self.size >= offset + size_of::<TrackAttached>() {
            let field = found
                .cast::<u8>()
                .wrapping_add(offset)
                .cast::<TrackAttached>();
            // SAFETY: the publisher's table is `size` bytes long (its contract), so the field
            // lies inside it, aligned as in `Appended` (`repr(C)`), and holds a function of
            // this signature; read through the pointer the table was found by.
            let track_attached = unsafe { field.read() };
            // SAFETY: the table's contract for this field: attached (as above); a token unique
            // while registered, a live extent.
            return unsafe { track_attached(self.state, token, &shared) };
        }
        // SAFETY: the table's contract: a token unique while registered, one live extent.
        unsafe { (self.track)(self.state, token, &shared, 1, 0) }
    }

    /// Removes `token`'s borrow (inlined when the table is this extension's own).
    #[inline]
    pub(super) fn untrack(&'static self, token: usize) {
        if self.is_own() {
            untrack(token);
        } else {
            // SAFETY: the table's contract: any token, any thread.
            unsafe { (self.untrack)(self.state, token) }
        }
    }

    /// Whether this is this extension's own table ([`OWN_API`]).
    #[inline]
    fn is_own(&'static self) -> bool {
        ptr::eq(self, &OWN_API.first)
    }
}

// SAFETY: the table is immutable; its functions lock the registry they belong to, from any
// thread.
unsafe impl Sync for SharedApi {}

/// This extension's table, published when it is the first one in the process.
static OWN_API: Appended = Appended {
    first: SharedApi {
        size: size_of::<Appended>(),
        state: ptr::null(),
        track: own_track,
        make_shared: own_make_shared,
        untrack: own_untrack,
    },
    track_attached: own_track_attached,
};

/// The table in use (the process's first), once found.
static API: AtomicPtr<SharedApi> = AtomicPtr::new(ptr::null_mut());

/// The table in use, if this extension has found it.
#[inline]
pub(super) fn loaded() -> Option<&'static SharedApi> {
    let api = API.load(Ordering::Acquire);
    // SAFETY: NULL, or a table that lives for the process (a static of the extension that
    // published it: CPython never unloads extension modules).
    unsafe { api.cast_const().as_ref() }
}

/// The process's table: found in the interpreter's dict, or published there by this extension.
///
/// # Errors
/// `RuntimeError` when the key holds another major's table (or something else), when an
/// extension with the pre-release table is loaded, or when the interpreter has no dict.
#[inline]
pub(crate) fn api(py: Python<'_>) -> PyResult<&'static SharedApi> {
    match loaded() {
        Some(api) => Ok(api),
        None => find_or_publish(py),
    }
}

/// [`api`] the first time: the table found in the interpreter's dict, or ours published there.
#[inline(never)]
fn find_or_publish(py: Python<'_>) -> PyResult<&'static SharedApi> {
    refuse_legacy(py)?;
    let home = interpreter_dict(py)?;
    let ours = static_capsule(py, &OWN_API, CAPSULE)?;
    // `setdefault` is atomic: of two extensions racing here, one table wins for both.
    let found = home.call_method1(intern!(py, "setdefault"), (HOME_KEY, ours))?;
    let table = open(&found)?;
    API.store(table.as_ptr(), Ordering::Release);
    // SAFETY: a table for the process (`open`).
    Ok(unsafe { table.as_ref() })
}

/// The interpreter's own dict (`PyInterpreterState_GetDict`), which Python code cannot reach:
/// where the registry's table, and what builds of this crate share beside it, live.
///
/// # Errors
/// `RuntimeError` when the interpreter has none.
pub(crate) fn interpreter_dict(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    // SAFETY: attached (we hold `py`): the current interpreter.
    let interpreter = unsafe { ffi::PyInterpreterState_Get() };
    // SAFETY: a live interpreter; a borrowed reference, or NULL (no exception) when there is
    // no dict.
    let home = unsafe { ffi::PyInterpreterState_GetDict(interpreter) };
    // SAFETY: a borrowed reference to the dict, valid while the interpreter lives.
    let home = unsafe { Borrowed::from_ptr_or_opt(py, home) }.ok_or_else(|| {
        PyRuntimeError::new_err("the interpreter has no dict for the borrow registry")
    })?;
    Ok(home.cast::<PyDict>()?.to_owned())
}

/// The table in a capsule found under [`HOME_KEY`], if it is one this build can call.
fn open(found: &Bound<'_, PyAny>) -> PyResult<NonNull<SharedApi>> {
    let other = || {
        let name = found.cast::<PyCapsule>().ok().and_then(|capsule| {
            // SAFETY: a live capsule, attached; NULL or a C string that lives with the capsule.
            let name = unsafe { ffi::PyCapsule_GetName(capsule.as_ptr()) };
            (!name.is_null()).then(|| {
                // SAFETY: non-NULL: a NUL-terminated name, read while we hold the capsule.
                let name = unsafe { CStr::from_ptr(name) };
                name.to_string_lossy().into_owned()
            })
        });
        PyErr::take(found.py()); // a nameless capsule's exception, if any
        PyRuntimeError::new_err(format!(
            "another extension in this process uses a borrow registry this build cannot call \
             ({}, not {CAPSULE:?}): it was built with a dlpack-abi-pyo3 of another major \
             registry version; build both with the same one",
            name.map_or_else(|| type_name(found), |name| format!("{name:?}")),
        ))
    };
    let capsule = found.cast::<PyCapsule>().map_err(|_| other())?;
    // SAFETY: a live capsule, attached; a static name (compared, not kept).
    let table = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), CAPSULE.as_ptr()) };
    let Some(table) = NonNull::new(table.cast::<SharedApi>()) else {
        return Err(other());
    };
    // SAFETY: a capsule of this name holds a table of this major that lives for the process;
    // `size` is its first field in every minor.
    let size = unsafe { table.as_ref() }.size;
    if size < FIRST_FIELDS {
        return Err(PyRuntimeError::new_err(format!(
            "the process's borrow registry table has {size} bytes; this build calls at least \
             {FIRST_FIELDS}: build the extension loaded first with this dlpack-abi-pyo3 or a \
             later one"
        )));
    }
    Ok(table)
}

/// Refuses to start while an extension with the pre-release table is loaded, and leaves the
/// module that table lived in without it, so that such an extension loaded later refuses.
fn refuse_legacy(py: Python<'_>) -> PyResult<()> {
    let modules = PyModule::import(py, intern!(py, "sys"))?
        .getattr(intern!(py, "modules"))?
        .cast_into::<PyDict>()?;
    let module = match modules.get_item(LEGACY_MODULE)? {
        Some(module) => module,
        None => {
            let retired = PyModule::new(py, LEGACY_MODULE)?;
            retired.setattr(
                intern!(py, "__doc__"),
                "Retired home of dlpack-abi-pyo3's pre-release borrow registry (major 1): its \
                 absent `api` makes extensions built with it refuse to start.",
            )?;
            modules.call_method1(intern!(py, "setdefault"), (LEGACY_MODULE, retired))?
        }
    };
    if module.hasattr(LEGACY_ATTRIBUTE)? {
        return Err(PyRuntimeError::new_err(
            "an extension built with a pre-release dlpack-abi-pyo3 (borrow registry major 1, \
             `_dlpack_abi_borrows.api`) is loaded in this process; the two cannot see each \
             other's borrows: rebuild it with this dlpack-abi-pyo3",
        ));
    }
    Ok(())
}
