//! The process-wide registry of memory imported from Python, shared by every extension built on
//! this crate: what makes [`ReadwriteTensor`](super::ReadwriteTensor)'s `&mut` safe.
//!
//! Every tensor that [`from_dlpack`](super::from_dlpack) imports is registered as a *shared*
//! borrow of the bytes it reaches ([`MemoryExtent`]) until it is dropped (or given away with
//! `into_raw`). A `ReadwriteTensor` turns its import's borrow *mutable*, which is refused while
//! any other registered tensor may share a byte with it; and while it lives, importing memory
//! that may share a byte with it is refused. Two tensors conflict when
//! [`MemoryExtent::may_overlap`] says they may share a byte: `a[::2]` and `a[1::2]` do not.
//!
//! **Across extensions.** The first extension that imports creates the registry and publishes
//! it as a capsule (`api`, of the module `_dlpack_abi_borrows` that it puts in `sys.modules`);
//! every other extension built on this crate, whatever its version, finds it there and calls it
//! through the versioned C table [`SharedApi`], so that two extensions built separately refuse
//! each other's overlapping borrows. (rust-numpy does the same for NumPy arrays through NumPy's
//! module; the two registries do not know each other.)
//!
//! **Cost.** A mutex around two vectors: registering an import checks the live mutable borrows
//! (usually none) and appends; dropping one searches from the newest (arguments go first);
//! making a borrow mutable checks every live import. No Python call; the table is looked up
//! once per extension.
#![allow(unsafe_code)]

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::ffi::{c_int, c_void, CStr};
use core::fmt;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyModule};
use pyo3::{ffi, intern};

use super::capsule::capsule_pointer;
use crate::dlpack::tracking::{self, Tracker};
use crate::dlpack::{MemoryExtent, VersionedTensor};

/// The name of the module that holds the registry's capsule in `sys.modules`.
const MODULE: &str = "_dlpack_abi_borrows";
/// The capsule's name (its attribute is `api`).
const CAPSULE: &CStr = c"_dlpack_abi_borrows.api";

/// A borrow that cannot be taken: another live tensor may share a byte with it.
///
/// Converts into `BufferError`.
///
/// ```
/// use dlpack_abi::python::BorrowError;
///
/// let message = BorrowError::BorrowedMutably.to_string();
/// assert!(message.contains("ReadwriteTensor"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BorrowError {
    /// The memory is being written through a live `ReadwriteTensor` (of this extension or
    /// another built on this crate): it cannot be imported or borrowed until that one is gone.
    BorrowedMutably,
    /// A `ReadwriteTensor` was asked for memory that another live import (an argument, a
    /// `dlpack_abi.Tensor`, another extension's tensor) may also read.
    Shared,
}

impl fmt::Display for BorrowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::BorrowedMutably => {
                "the array's memory is being written through a live ReadwriteTensor (in this or \
                 another extension built on dlpack-abi); it cannot be borrowed again until that \
                 borrow ends"
            }
            Self::Shared => {
                "the array's memory is also held by another live import (another argument, a \
                 dlpack_abi.Tensor, or another extension's tensor), so it cannot be written \
                 through a ReadwriteTensor"
            }
        })
    }
}

impl std::error::Error for BorrowError {}

impl From<BorrowError> for PyErr {
    fn from(error: BorrowError) -> Self {
        PyBufferError::new_err(error.to_string())
    }
}

/// The bytes a registered tensor reaches, as the shared table passes them (`MemoryExtent`'s
/// fields, in a layout fixed by the table's version).
#[repr(C)]
#[derive(Clone, Copy)]
struct SharedExtent {
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
            ..
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

/// Results of the table's functions.
const OK: c_int = 0;
const CONFLICTS_MUTABLE: c_int = 1;
const CONFLICTS_SHARED: c_int = 2;
const UNKNOWN_TOKEN: c_int = 3;

/// The registry's C table, version 1, shared between extensions through the capsule. Later
/// versions only append fields; a reader checks `version >= 1`. Tokens are the addresses of
/// the registered tensors' managed structs (unique while they are registered).
#[repr(C)]
pub(crate) struct SharedApi {
    /// 1 for this layout.
    version: u64,
    /// Passed back to every function.
    state: *const c_void,
    /// Registers a shared borrow: `OK`, or `CONFLICTS_MUTABLE`.
    track: unsafe extern "C" fn(*const c_void, usize, *const SharedExtent) -> c_int,
    /// Makes a borrow mutable (`1`) or shared (`0`): `OK`, `CONFLICTS_MUTABLE`,
    /// `CONFLICTS_SHARED` or `UNKNOWN_TOKEN`.
    set_mutable: unsafe extern "C" fn(*const c_void, usize, c_int) -> c_int,
    /// Removes a borrow (nothing for an unknown token).
    untrack: unsafe extern "C" fn(*const c_void, usize),
}

// SAFETY: the table is immutable; its functions lock the registry they belong to, from any
// thread (the registry is a `Mutex`).
unsafe impl Sync for SharedApi {}

struct Entry {
    token: usize,
    extent: MemoryExtent,
}

/// This extension's registry, used when it is the first one in the process.
#[derive(Default)]
struct Registry {
    /// Live imports that are only read.
    shared: Vec<Entry>,
    /// Live imports written through a `ReadwriteTensor` (usually none).
    mutable: Vec<Entry>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    shared: Vec::new(),
    mutable: Vec::new(),
});

fn registry() -> MutexGuard<'static, Registry> {
    // The vectors are consistent after any panic (nothing panics while they are changed).
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

static OWN_API: SharedApi = SharedApi {
    version: 1,
    state: ptr::null(),
    track: own_track,
    set_mutable: own_set_mutable,
    untrack: own_untrack,
};

fn conflicts(entries: &[Entry], extent: &MemoryExtent, except: usize) -> bool {
    entries
        .iter()
        .any(|entry| entry.token != except && entry.extent.may_overlap(extent))
}

/// # Safety
/// `extent` points to a live `SharedExtent`.
unsafe extern "C" fn own_track(
    _: *const c_void,
    token: usize,
    extent: *const SharedExtent,
) -> c_int {
    // SAFETY: a live extent (caller).
    let extent = MemoryExtent::from(unsafe { *extent });
    let mut registry = registry();
    if conflicts(&registry.mutable, &extent, 0) {
        return CONFLICTS_MUTABLE;
    }
    registry.shared.push(Entry { token, extent });
    OK
}

/// # Safety
/// None beyond the table's contract (a token, a flag).
unsafe extern "C" fn own_set_mutable(_: *const c_void, token: usize, mutable: c_int) -> c_int {
    let mut registry = registry();
    let registry = &mut *registry;
    let (from, to) = if mutable != 0 {
        (&mut registry.shared, &mut registry.mutable)
    } else {
        (&mut registry.mutable, &mut registry.shared)
    };
    let Some(index) = from.iter().rposition(|entry| entry.token == token) else {
        return UNKNOWN_TOKEN;
    };
    let extent = from[index].extent;
    if mutable != 0 {
        if conflicts(to, &extent, token) {
            return CONFLICTS_MUTABLE;
        }
        if conflicts(from, &extent, token) {
            return CONFLICTS_SHARED;
        }
    }
    let entry = from.swap_remove(index);
    to.push(entry);
    OK
}

/// # Safety
/// None beyond the table's contract (a token).
unsafe extern "C" fn own_untrack(_: *const c_void, token: usize) {
    let mut registry = registry();
    let registry = &mut *registry;
    for entries in [&mut registry.shared, &mut registry.mutable] {
        if let Some(index) = entries.iter().rposition(|entry| entry.token == token) {
            entries.swap_remove(index);
            return;
        }
    }
}

/// The table in use (the process's first registry), once found.
static API: AtomicPtr<SharedApi> = AtomicPtr::new(ptr::null_mut());

/// Unregisters through the table in use: the core's hook, called when a tracked tensor stops
/// being held (on any thread, attached or not).
fn untrack_hook(token: usize) {
    if let Some(api) = loaded() {
        // SAFETY: the table's contract: any token, any thread.
        unsafe { (api.untrack)(api.state, token) }
    }
}

static TRACKER: Tracker = Tracker {
    untrack: untrack_hook,
};

fn loaded() -> Option<&'static SharedApi> {
    let api = API.load(Ordering::Acquire);
    // SAFETY: NULL, or a table that lives for the process (a static of the extension that
    // published it: CPython never unloads extension modules).
    unsafe { api.cast_const().as_ref() }
}

/// The process's registry table: found in `sys.modules`, or published there by this extension.
fn api(py: Python<'_>) -> PyResult<&'static SharedApi> {
    if let Some(api) = loaded() {
        return Ok(api);
    }
    let modules = PyModule::import(py, intern!(py, "sys"))?
        .getattr(intern!(py, "modules"))?
        .cast_into::<PyDict>()?;
    let module = match modules.get_item(MODULE)? {
        Some(module) => module,
        None => {
            let ours = PyModule::new(py, MODULE)?;
            // SAFETY: attached; the pointer and the name are statics, valid for the capsule's
            // life; no destructor (nothing to free).
            let capsule = unsafe {
                ffi::PyCapsule_New(
                    ptr::from_ref(&OWN_API).cast_mut().cast(),
                    CAPSULE.as_ptr(),
                    None,
                )
            };
            // SAFETY: a new reference, or NULL with an exception set.
            let capsule = unsafe { Bound::from_owned_ptr_or_err(py, capsule) }?;
            ours.add(intern!(py, "api"), capsule)?;
            // `setdefault` is atomic: of two extensions racing here, one module wins for both.
            modules.call_method1(intern!(py, "setdefault"), (MODULE, ours))?
        }
    };
    let capsule = module.getattr(intern!(py, "api"))?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let table: NonNull<SharedApi> = capsule_pointer(capsule.as_any(), CAPSULE)?;
    // SAFETY: a capsule of this name holds a table that lives for the process; `version` is
    // the first field of every version.
    let version = unsafe { table.as_ref() }.version;
    if version < 1 {
        return Err(PyBufferError::new_err(format!(
            "{MODULE}.api is version {version}; this build needs version 1 or later"
        )));
    }
    API.store(table.as_ptr(), Ordering::Release);
    tracking::install(&TRACKER);
    // SAFETY: as above: a table for the process.
    Ok(unsafe { table.as_ref() })
}

/// Registers an import as a shared borrow of what it reaches, for as long as it is held.
/// Empty tensors reach nothing and are not registered.
///
/// # Errors
/// [`BorrowError::BorrowedMutably`] (the tensor is dropped, its deleter run) when a live
/// `ReadwriteTensor` may share a byte with it.
pub(crate) fn track(py: Python<'_>, mut tensor: VersionedTensor) -> PyResult<VersionedTensor> {
    let extent = tensor.view().memory_extent();
    if extent.is_empty() {
        return Ok(tensor);
    }
    let api = api(py)?;
    let shared = SharedExtent::from(extent);
    // SAFETY: the table's contract: a token unique while registered (the managed struct's
    // address, held by `tensor`), a live extent.
    match unsafe { (api.track)(api.state, tensor.token(), &shared) } {
        OK => {
            tensor.set_tracked();
            Ok(tensor)
        }
        _ => Err(BorrowError::BorrowedMutably.into()),
    }
}

/// Makes a registered tensor's borrow mutable (`true`) or shared again (`false`). An empty
/// tensor (never registered) needs neither.
pub(crate) fn set_mutable(tensor: &VersionedTensor, mutable: bool) -> Result<(), BorrowError> {
    let Some(api) = loaded().filter(|_| tensor.is_tracked()) else {
        return Ok(());
    };
    // SAFETY: the table's contract: a registered token.
    match unsafe { (api.set_mutable)(api.state, tensor.token(), c_int::from(mutable)) } {
        OK => Ok(()),
        CONFLICTS_MUTABLE => Err(BorrowError::BorrowedMutably),
        // CONFLICTS_SHARED, or a token the registry lost: never writable then.
        _ => Err(BorrowError::Shared),
    }
}
