//! The process-wide registry of memory imported from Python, shared by every extension built on
//! this crate: what makes [`ReadwriteTensor`](super::ReadwriteTensor)'s `&mut` safe.
//!
//! Every tensor that [`from_dlpack`](super::from_dlpack) imports, and every DLPack tensor made
//! of an Arrow import (`Tensor.from_arrow`, `ArrowArray.to_tensor`), is registered as a *shared*
//! borrow of the bytes it reaches ([`MemoryExtent`]) until it is dropped (or given away with
//! `into_raw`), when the host can read it (Rust can only reach such memory). A
//! [`ReadwriteTensor`](super::ReadwriteTensor) registers its import as *mutable*: refused while
//! any other registered tensor may share a byte with it; and while it lives, importing memory
//! that may share a byte with it is refused. Two tensors conflict when
//! [`MemoryExtent::may_overlap`] says they may share a byte: `a[::2]` and `a[1::2]` do not.
//!
//! **Across extensions.** The first extension that imports creates the registry and publishes
//! it as a capsule (`api`, of the module `_dlpack_abi_borrows` that it puts in `sys.modules`);
//! every other extension built on this crate (from the release that added it on) finds it there
//! and calls it through the versioned C table [`SharedApi`], so that two extensions built
//! separately refuse each other's overlapping borrows. The first extension's code decides for
//! the whole process. rust-numpy does the same for NumPy arrays through NumPy's module; the two
//! registries do not know each other.
//!
//! **Cost.** One spin lock: registering a shared import checks the live mutable borrows (usually
//! none) and inserts into a hash map; dropping one removes it; registering a mutable one checks
//! every live import. No Python call; the table is looked up once per extension.
#![allow(unsafe_code)]

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::ffi::{c_int, c_void, CStr};
use core::fmt;
use core::hash::{BuildHasherDefault, Hasher};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::collections::HashMap;

use pyo3::exceptions::{PyBufferError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyModule};
use pyo3::{ffi, intern};

use super::capsule::capsule_pointer;
use dlpack_abi::dlpack::ReleaseHook;
use dlpack_abi::dlpack::{MemoryExtent, VersionedTensor};

/// The name of the module that holds the registry's capsule in `sys.modules`.
const MODULE: &str = "_dlpack_abi_borrows";
/// The capsule's name (its attribute is `api`).
const CAPSULE: &CStr = c"_dlpack_abi_borrows.api";

/// A borrow that cannot be taken: another live tensor may share a byte with it.
///
/// Converts into `BufferError`.
///
/// ```
/// use dlpack_abi_pyo3::BorrowError;
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
    /// A `ReadwriteTensor` was given a copy (the producer set `IS_COPIED`): writes would not
    /// reach the caller's array.
    Copied,
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
                 through a ReadwriteTensor; drop (del) the other import first"
            }
            Self::Copied => {
                "the producer handed over a copy (IS_COPIED), so writes through a \
                 ReadwriteTensor would not reach the array"
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

impl crate::IntoPyErr for BorrowError {
    fn into_py_err(self) -> PyErr {
        self.into()
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
    /// Registers a borrow, shared (`0`) or mutable (`1`): `OK`, `CONFLICTS_MUTABLE` or
    /// `CONFLICTS_SHARED` (nothing registered then).
    track: unsafe extern "C" fn(*const c_void, usize, *const SharedExtent, c_int) -> c_int,
    /// Makes a mutable borrow shared: `OK` or `UNKNOWN_TOKEN`.
    make_shared: unsafe extern "C" fn(*const c_void, usize) -> c_int,
    /// Removes a borrow (nothing for an unknown token).
    untrack: unsafe extern "C" fn(*const c_void, usize),
}

// SAFETY: the table is immutable; its functions lock the registry they belong to, from any
// thread (a lock).
unsafe impl Sync for SharedApi {}

/// This extension's registry, used when it is the first one in the process.
#[derive(Default)]
struct Registry {
    /// Live imports that are only read, by token (every import from Python while it is held).
    shared: HashMap<usize, MemoryExtent, BuildHasherDefault<TokenHasher>>,
    /// Live imports written through a `ReadwriteTensor` (usually none or a few).
    mutable: Vec<(usize, MemoryExtent)>,
}

impl Registry {
    /// Whether a borrow other than `token`'s may share a byte with `extent`: `Some(true)` for a
    /// mutable one, `Some(false)` for a shared one (only asked when `shared_too`).
    fn conflict(&self, token: usize, extent: &MemoryExtent, shared_too: bool) -> Option<bool> {
        let overlaps = |(other, theirs): (&usize, &MemoryExtent)| {
            *other != token && theirs.may_overlap(extent)
        };
        if self.mutable.iter().map(|(t, e)| (t, e)).any(overlaps) {
            return Some(true);
        }
        (shared_too && self.shared.iter().any(overlaps)).then_some(false)
    }
}

/// Tokens are addresses of distinct live structs: one multiplication spreads them.
#[derive(Default)]
struct TokenHasher(u64);

impl Hasher for TokenHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, token: usize) {
        self.0 = (token as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A spin lock: one atomic read-modify-write to take it and a plain store to give it back,
/// half of what `std::sync::Mutex` pays (whose unlock swaps, to wake waiters), on a path every
/// import takes twice. Held only for a hash-map operation or one scan, never across a call out.
struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only by the thread holding the lock (`with`), and it moves
// between threads only as `T: Send` allows.
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    const fn new(value: T) -> Self {
        Self {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` on the value, with the lock held (given back on unwind too).
    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut spins = 0u32;
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            while self.locked.load(Ordering::Relaxed) {
                spins += 1;
                if spins < 64 {
                    core::hint::spin_loop();
                } else {
                    std::thread::yield_now(); // a holder that was descheduled
                }
            }
        }
        struct Unlock<'a>(&'a AtomicBool);
        impl Drop for Unlock<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _unlock = Unlock(&self.locked);
        // SAFETY: the lock is held until `_unlock` drops: this is the only access.
        f(unsafe { &mut *self.value.get() })
    }
}

static REGISTRY: SpinLock<Option<Registry>> = SpinLock::new(None);

/// Runs `f` on this extension's registry, locked. (The registry stays consistent if `f`
/// unwinds: nothing panics while it is changed.)
fn with_registry<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    REGISTRY.with(|registry| f(registry.get_or_insert_with(Registry::default)))
}

static OWN_API: SharedApi = SharedApi {
    version: 1,
    state: ptr::null(),
    track: own_track,
    make_shared: own_make_shared,
    untrack: own_untrack,
};

/// # Safety
/// `extent` points to a live `SharedExtent`.
unsafe extern "C" fn own_track(
    _: *const c_void,
    token: usize,
    extent: *const SharedExtent,
    mutable: c_int,
) -> c_int {
    // SAFETY: a live extent (caller).
    let extent = MemoryExtent::from(unsafe { *extent });
    with_registry(
        |registry| match registry.conflict(token, &extent, mutable != 0) {
            Some(true) => CONFLICTS_MUTABLE,
            Some(false) => CONFLICTS_SHARED,
            None if mutable != 0 => {
                registry.mutable.push((token, extent));
                OK
            }
            None => {
                registry.shared.insert(token, extent);
                OK
            }
        },
    )
}

/// # Safety
/// None beyond the table's contract (a token).
unsafe extern "C" fn own_make_shared(_: *const c_void, token: usize) -> c_int {
    with_registry(|registry| {
        let Some(index) = registry.mutable.iter().position(|(t, _)| *t == token) else {
            return UNKNOWN_TOKEN;
        };
        let (token, extent) = registry.mutable.swap_remove(index);
        registry.shared.insert(token, extent);
        OK
    })
}

/// # Safety
/// None beyond the table's contract (a token).
unsafe extern "C" fn own_untrack(_: *const c_void, token: usize) {
    with_registry(|registry| {
        if registry.shared.remove(&token).is_none() {
            registry.mutable.retain(|(t, _)| *t != token);
        }
    });
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

/// The release hook this crate's tensors are tracked with (dlpack-abi calls it when one is
/// dropped or given away).
static RELEASE_HOOK: ReleaseHook = ReleaseHook {
    released: untrack_hook,
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
    // SAFETY: as above: a table for the process.
    Ok(unsafe { table.as_ref() })
}

/// Registers an import as a borrow of what it reaches, shared or `mutable`, for as long as it
/// is held. Tensors the host cannot read (device memory, handles, unknown flags) are not
/// registered: no Rust reference can reach them. Nor are empty ones, which reach nothing.
///
/// Taken by reference, not moved: the struct is not copied through memory on the way in and out.
///
/// # Errors
/// [`BorrowError`] (the caller drops the tensor, which runs its deleter) when another live
/// import may share a byte with it: a mutable one, or, for a `mutable` borrow, any.
pub(crate) fn track(py: Python<'_>, tensor: &mut VersionedTensor, mutable: bool) -> PyResult<()> {
    if tensor.is_tracked() || !tensor.view().is_host_readable() {
        return Ok(());
    }
    let extent = tensor.view().memory_extent();
    if extent.is_empty() {
        return Ok(());
    }
    let api = api(py)?;
    let shared = SharedExtent::from(extent);
    // SAFETY: the table's contract: a token unique while registered (the managed struct's
    // address, held by `tensor`), a live extent.
    match unsafe { (api.track)(api.state, tensor.token(), &shared, c_int::from(mutable)) } {
        OK => match tensor.track(&RELEASE_HOOK) {
            Ok(()) => Ok(()),
            Err(other) => {
                // Another registry's hook is installed in this copy of dlpack-abi: it would
                // never tell ours that the tensor is gone, so the borrow is not kept.
                // SAFETY: the table's contract: any token, any thread.
                unsafe { (api.untrack)(api.state, tensor.token()) };
                Err(PyRuntimeError::new_err(format!(
                    "cannot register the import with the borrow registry: {other}"
                )))
            }
        },
        CONFLICTS_MUTABLE => Err(BorrowError::BorrowedMutably.into()),
        _ => Err(BorrowError::Shared.into()),
    }
}

/// Makes a registered tensor's mutable borrow shared (nothing for one never registered).
pub(crate) fn make_shared(tensor: &VersionedTensor) {
    if let Some(api) = loaded().filter(|_| tensor.is_tracked()) {
        // SAFETY: the table's contract: any token. Making a borrow shared cannot conflict.
        let _ = unsafe { (api.make_shared)(api.state, tensor.token()) };
    }
}
