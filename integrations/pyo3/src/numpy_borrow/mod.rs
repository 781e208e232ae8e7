//! rust-numpy's run-time borrow checking, taken as well for the NumPy arrays this crate imports,
//! so that a `ReadwriteTensor` and a rust-numpy `PyReadwriteArray` (or `PyReadonlyArray`) of the
//! same memory refuse each other, in whichever extensions they live.
//!
//! **rust-numpy's table.** rust-numpy shares its borrow flags between extensions through a
//! capsule named `_RUST_NUMPY_BORROW_CHECKING_API`, an attribute of NumPy's
//! `numpy._core.multiarray` module (`numpy.core.multiarray` before NumPy 2: rust-numpy picks by
//! `numpy.__version__`'s major number). The capsule holds a C struct ([`Table`]): `version: u64`
//! (1; later versions may only append fields, and a reader accepts any version `>= 1`), an
//! opaque `flags` pointer, and four functions taking `(flags, array)`, called attached to the
//! interpreter: `acquire` and `acquire_mut` return 0 (taken), -1 (another borrow conflicts) or,
//! for `acquire_mut`, -2 (the array is not writeable); `release` and `release_mut` undo them
//! and recompute the borrow from the array, so they must be given the same, unchanged array. The
//! capsule is created lazily, by the first rust-numpy extension that borrows an array, and every
//! rust-numpy extension caches the first one it finds for the life of the process.
//!
//! **Why we publish one when it is absent.** Not finding the table only proves that no
//! rust-numpy borrow has been taken *yet*. A rust-numpy extension that borrows later, while one
//! of our borrows is live, would create an empty table and never see ours. So, like rust-numpy,
//! the first extension to need it (ours or rust-numpy's) publishes it (under the module dict's
//! critical section), and everyone else adopts that one. Ours ([`own::OWN`]) keeps
//! rust-numpy's meaning but keeps its borrows in this crate's borrow registry: each array
//! borrowed through it is a registry borrow of the bytes it reaches, so rust-numpy's borrows
//! meet every import this crate registers (of any producer), by
//! [`MemoryExtent::may_overlap`](dlpack_abi::dlpack::MemoryExtent::may_overlap). Its address
//! is marked in the interpreter's dict ([`REGISTRY_BACKED`]) when it is published: while it is
//! the table in use, our arguments take no rust-numpy borrow of their own (theirs is in the
//! registry already), and only when rust-numpy's own table is in use do they take one.
//!
//! **Caching, and what it costs.** The table is looked up (or published) once, at the first
//! call after NumPy is imported, and cached for the process, as rust-numpy itself does: a
//! published table is never replaced by a later extension. With our table in use an argument
//! pays two cached lookups; with rust-numpy's, a NumPy array argument pays its `acquire` (a
//! `Mutex`, two hash maps) and, when dropped, its `release` (`python/bench.py`: a
//! `ReadwriteTensor<f64>` argument 148 ns with ours in use, against about 180 ns when every
//! argument took the table's borrow).
//!
//! **Not covered.** With rust-numpy's own table in use (a rust-numpy extension borrowed
//! first): only arguments that are NumPy arrays (or subclasses) themselves take its borrow, so
//! an object that merely exports a NumPy array's memory (`torch.from_numpy(a)`, a
//! `dlpack_abi.Tensor` of it) is invisible to rust-numpy, and its rule (where elements start,
//! not the bytes they cover) misses views shifted into the middle of each other's elements.
//! With ours in use, both are in this crate's registry. Ours finds a release by the array
//! object, so a shape set from Python meanwhile (`a.shape = ...`) does not strand the borrow;
//! rust-numpy's own table recomputes it and panics. A rust-numpy table published a second time
//! (its attribute deleted and a new extension loaded), or overwritten by rust-numpy on a
//! free-threaded build while ours was being published, splits the process as it would between
//! two rust-numpy extensions.
#![allow(unsafe_code)]

#[cfg(not(any(PyPy, Py_GIL_DISABLED)))]
mod direct;
#[cfg(not(all(Py_LIMITED_API, Py_GIL_DISABLED)))]
mod layout;
mod own;

#[cfg(not(any(PyPy, Py_GIL_DISABLED)))]
pub(crate) use direct::{import as import_direct, note_type};

use alloc::format;
use core::ffi::{c_int, c_void, CStr};
use core::mem::ManuallyDrop;
use core::ptr::{self, NonNull};
use std::sync::OnceLock;

use pyo3::exceptions::{PyBufferError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::critical_section::with_critical_section;
use pyo3::types::{PyDict, PyType};
use pyo3::{ffi, intern};

use super::capsule::capsule_pointer;
use super::errors::IntoPyErr;
use dlpack_abi::dlpack::AccessError;
use own::OWN;

/// The attribute of NumPy's `multiarray` module that holds rust-numpy's table.
const ATTRIBUTE: &str = "_RUST_NUMPY_BORROW_CHECKING_API";
/// The capsule's name (the attribute's, as rust-numpy names it).
const CAPSULE: &CStr = c"_RUST_NUMPY_BORROW_CHECKING_API";

/// The key, in the interpreter's dict, of the address of the rust-numpy table a build of this
/// crate published over its borrow registry (with this meaning: `.v1`), so that every build
/// knows when rust-numpy's borrows are in its registry already.
const REGISTRY_BACKED: &str = "dlpack_abi.rust_numpy_table.v1";

/// The table's results.
const OK: c_int = 0;
const BORROWED: c_int = -1;
const NOT_WRITEABLE: c_int = -2;

/// rust-numpy's borrow-checking table, version 1 (its `Shared`): the layout every extension
/// using it agrees on. Arrays are passed as `PyArrayObject *` (here a `PyObject *`, the same
/// pointer).
#[repr(C)]
pub(crate) struct Table {
    /// 1 for this layout; later versions append fields.
    version: u64,
    /// Passed back to every function.
    flags: *mut c_void,
    /// Takes a shared borrow: `OK` or `BORROWED`.
    acquire: unsafe extern "C" fn(*mut c_void, *mut ffi::PyObject) -> c_int,
    /// Takes a mutable borrow: `OK`, `BORROWED` or `NOT_WRITEABLE`.
    acquire_mut: unsafe extern "C" fn(*mut c_void, *mut ffi::PyObject) -> c_int,
    /// Gives a shared borrow back.
    release: unsafe extern "C" fn(*mut c_void, *mut ffi::PyObject),
    /// Gives a mutable borrow back.
    release_mut: unsafe extern "C" fn(*mut c_void, *mut ffi::PyObject),
}

// SAFETY: a table is never changed once published; its functions may be called from any thread
// attached to the interpreter (rust-numpy's lock their flags, ours a spin lock).
unsafe impl Sync for Table {}

/// A borrow of a NumPy array taken in rust-numpy's registry: shared or mutable, given back when
/// dropped (attached to the interpreter, from any thread; leaked when the interpreter is
/// finalizing). Holds the array, so that the release recomputes the same borrow.
pub(crate) struct NumpyBorrow {
    array: ManuallyDrop<Py<PyAny>>,
    mutable: bool,
    table: &'static Table,
}

impl Drop for NumpyBorrow {
    fn drop(&mut self) {
        // SAFETY: `array` is taken once, here, and never used again.
        let array = unsafe { ManuallyDrop::take(&mut self.array) };
        let (table, mutable) = (self.table, self.mutable);
        let mut slot = Some(array);
        let released = Python::try_attach(|_| {
            if let Some(array) = slot.take() {
                let release = if mutable {
                    table.release_mut
                } else {
                    table.release
                };
                // SAFETY: the table's contract: attached, the array this borrow was taken for
                // (held alive since).
                unsafe { release(table.flags, array.as_ptr()) };
            }
        });
        if released.is_none() {
            core::mem::forget(slot); // finalizing: the borrow stays, and so does the array
        }
    }
}

/// Takes rust-numpy's borrow of `source`, shared or `mutable`, when it is a NumPy array (an
/// `ndarray` or a subclass); `None` for anything else.
///
/// Call it after the import is registered in this crate's registry, so that a refusal here is
/// rust-numpy's (a `PyReadonlyArray` or `PyReadwriteArray` of memory it may share, in some
/// extension) and says so.
///
/// # Errors
/// `BufferError` when rust-numpy refuses the borrow, or the array is not writeable (for
/// `mutable`); `TypeError` when the published table is of an unknown version; Python's, when
/// looking up NumPy fails.
pub(crate) fn acquire(source: &Bound<'_, PyAny>, mutable: bool) -> PyResult<Option<NumpyBorrow>> {
    let Some(numpy) = numpy(source.py())? else {
        return Ok(None);
    };
    let found = found(source.py(), numpy)?;
    if found.registry_backed {
        // rust-numpy's borrows are in the registry this import is registered with already.
        return Ok(None);
    }
    // SAFETY: attached; both objects live (the type is held for the process).
    let is_array =
        unsafe { ffi::PyObject_TypeCheck(source.as_ptr(), numpy.ndarray.as_ptr().cast()) };
    if is_array == 0 {
        return Ok(None);
    }
    // SAFETY: a table that lives for the process (its capsule is held by `FOUND`).
    let table = unsafe { found.table.as_ref() };
    let take = if mutable {
        table.acquire_mut
    } else {
        table.acquire
    };
    // SAFETY: the table's contract: attached, a live NumPy array.
    match unsafe { take(table.flags, source.as_ptr()) } {
        OK => Ok(Some(NumpyBorrow {
            array: ManuallyDrop::new(source.clone().unbind()),
            mutable,
            table,
        })),
        BORROWED if mutable => Err(PyBufferError::new_err(
            "the NumPy array is borrowed through rust-numpy (a PyReadonlyArray or \
             PyReadwriteArray of memory it may share, in a rust-numpy extension), so it cannot \
             be written through a ReadwriteTensor until that borrow ends",
        )),
        BORROWED => Err(PyBufferError::new_err(
            "the NumPy array's memory is being written through rust-numpy (a PyReadwriteArray \
             in a rust-numpy extension); it cannot be borrowed until that borrow ends",
        )),
        NOT_WRITEABLE => Err(AccessError::ReadOnly.into_py_err()),
        code => Err(PyRuntimeError::new_err(format!(
            "rust-numpy's borrow-checking table returned {code}, which this build does not know"
        ))),
    }
}

/// What is cached of NumPy once it is imported.
pub(super) struct Numpy {
    /// `numpy.ndarray`.
    ndarray: Py<PyType>,
    /// `numpy._core.multiarray` (NumPy 2) or `numpy.core.multiarray` (NumPy 1).
    multiarray: Py<PyModule>,
    /// NumPy's major version, which fixes the layout of its dtype struct (unread where the
    /// buffer protocol reads arrays).
    #[cfg_attr(all(Py_LIMITED_API, Py_GIL_DISABLED), allow(dead_code))]
    pub(super) major: u32,
    /// NumPy's minor version: 2.1 made `__dlpack__` take `max_version` (versioned tensors, whose
    /// `READ_ONLY` flag lets read-only arrays be exported).
    #[cfg_attr(any(PyPy, Py_GIL_DISABLED), allow(dead_code))]
    pub(super) minor: u32,
}

pub(super) static NUMPY: OnceLock<Numpy> = OnceLock::new();

/// NumPy, once `numpy` is in `sys.modules` (before, no argument can be one of its arrays).
fn numpy(py: Python<'_>) -> PyResult<Option<&'static Numpy>> {
    match NUMPY.get() {
        Some(numpy) => Ok(Some(numpy)),
        None => find_numpy(py),
    }
}

#[cold]
fn find_numpy(py: Python<'_>) -> PyResult<Option<&'static Numpy>> {
    // SAFETY: attached; a borrowed reference to the interpreter's `sys.modules`.
    let modules = unsafe { ffi::PyImport_GetModuleDict() };
    // SAFETY: a live object (or NULL with an exception set), borrowed while attached.
    let modules = unsafe { Bound::from_borrowed_ptr_or_err(py, modules) }?;
    let Some(module) = modules
        .cast_into::<PyDict>()?
        .get_item(intern!(py, "numpy"))?
    else {
        return Ok(None);
    };
    // A `numpy` still being imported has no `__version__` yet, and no array has left it.
    let Ok(version) = module.getattr(intern!(py, "__version__")) else {
        return Ok(None);
    };
    let version: String = version.extract()?;
    let mut parts = version.split('.').map(|part| {
        // "1rc1", "0dev0": the number's leading digits.
        let digits = part.bytes().take_while(u8::is_ascii_digit).count();
        part[..digits].parse::<u32>().ok()
    });
    let (Some(Some(major)), Some(Some(minor))) = (parts.next(), parts.next()) else {
        return Err(PyRuntimeError::new_err(format!(
            "numpy.__version__ is {version:?}"
        )));
    };
    let name = if major >= 2 {
        "numpy._core.multiarray"
    } else {
        "numpy.core.multiarray"
    };
    let multiarray = PyModule::import(py, name)?;
    let ndarray = multiarray
        .getattr(intern!(py, "ndarray"))?
        .cast_into::<PyType>()?;
    let _ = NUMPY.set(Numpy {
        ndarray: ndarray.unbind(),
        multiarray: multiarray.unbind(),
        major,
        minor,
    });
    Ok(NUMPY.get())
}

/// The table in use, and its capsule, held so that the table lives for the process.
struct Found {
    table: NonNull<Table>,
    /// A table of this crate's over its borrow registry ([`REGISTRY_BACKED`]).
    registry_backed: bool,
    _capsule: Py<PyAny>,
}

// SAFETY: the table is `Sync` and lives for the process; the capsule is only held.
unsafe impl Send for Found {}
// SAFETY: as above.
unsafe impl Sync for Found {}

static FOUND: OnceLock<Found> = OnceLock::new();

/// rust-numpy's table: found in NumPy's module, or published there (ours) when absent.
fn found(py: Python<'_>, numpy: &Numpy) -> PyResult<&'static Found> {
    match FOUND.get() {
        Some(found) => Ok(found),
        None => find_table(py, numpy),
    }
}

#[cold]
fn find_table(py: Python<'_>, numpy: &Numpy) -> PyResult<&'static Found> {
    let ours = crate::capsule::static_capsule(py, &OWN, CAPSULE)?;
    // Publishing (when the attribute is missing) and marking ours as registry-backed are one
    // step for every build of this crate: the module dict's critical section (the GIL on other
    // builds). rust-numpy publishes its own table the same way, without marking it.
    let module = numpy.multiarray.bind(py).dict();
    let home = crate::borrows::interpreter_dict(py)?;
    let (capsule, registry_backed) = with_critical_section(module.as_any(), || {
        if let Some(capsule) = module.get_item(ATTRIBUTE)? {
            let address = capsule_pointer::<Table>(&capsule, CAPSULE)?.as_ptr() as usize;
            let backed = match home.get_item(REGISTRY_BACKED)? {
                Some(marked) => marked.extract::<usize>()? == address,
                None => false,
            };
            return PyResult::Ok((capsule, backed));
        }
        module.set_item(ATTRIBUTE, &ours)?;
        home.set_item(REGISTRY_BACKED, ptr::from_ref(&OWN) as usize)?;
        Ok((ours.into_any(), true))
    })?;
    let table: NonNull<Table> = capsule_pointer(&capsule, CAPSULE)?;
    // SAFETY: a capsule of this name holds a table; `version` is the first field of each one.
    let version = unsafe { table.cast::<u64>().read() };
    if version < 1 {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{ATTRIBUTE} is version {version}; this build knows version 1 and later"
        )));
    }
    let _ = FOUND.set(Found {
        table,
        registry_backed,
        _capsule: capsule.unbind(),
    });
    FOUND
        .get()
        .ok_or_else(|| PyRuntimeError::new_err("rust-numpy's table was not cached"))
}
