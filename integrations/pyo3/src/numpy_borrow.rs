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
//! the first extension to need it (ours or rust-numpy's) publishes it, atomically
//! (`setdefault` on the module's dictionary), and everyone else adopts that one. Ours
//! ([`OWN`]) keeps rust-numpy's meaning: shared borrows of the same memory coexist, a mutable
//! one excludes every other that may share a byte. It compares the bytes the arrays reach
//! ([`MemoryExtent::may_overlap`], exact for interleaved views such as `a[::2]` and `a[1::2]`)
//! rather than rust-numpy's base object plus stride GCD: a refusal there is a real possible
//! overlap, never a distinct array of another base.
//!
//! **Caching, and what it costs.** The table is looked up (or published) once, at the first
//! NumPy array, and cached for the process, as rust-numpy itself does: a published table is
//! never replaced by a later extension, so no re-check is needed, and a module attribute lookup
//! per NumPy import (about 20-40 ns) is saved. NumPy's `ndarray` type is cached the first time
//! `numpy` is found in `sys.modules`; until then (a process that has not imported NumPy, where
//! no argument can be an array) each call costs one dictionary lookup. Afterwards, a non-NumPy
//! argument costs one type comparison (and a walk of its type's MRO, a tuple, for subclass
//! checking: no Python call); a NumPy argument costs the table's `acquire` (a lock, a scan of
//! the live borrows) and, when dropped, its `release`: measured on a `ReadwriteTensor<f64>`
//! argument (`tensor_ops.element_count_readwrite`, 125 ns without), about 40 ns more with this
//! crate's table in use and 75 ns with rust-numpy 0.30's (a `Mutex` and two hash maps).
//!
//! **Not covered.** Only arguments that are NumPy arrays (or subclasses) themselves take
//! rust-numpy's borrow: an object that merely exports a NumPy array's memory (a `memoryview`,
//! `torch.from_numpy(a)`, a `dlpack_abi.Tensor` of it) is invisible to rust-numpy, and
//! rust-numpy's own arguments never consult this crate's registry. The borrow lasts as long as
//! the [`NumpyBorrow`] is held. `release` recomputes the borrow from the array: an array whose
//! shape is set from Python meanwhile (`a.shape = ...`) leaves its borrow behind in our table
//! (the memory stays borrowed) and makes rust-numpy's panic. A rust-numpy table published
//! a second time (its attribute deleted and a new extension loaded) splits the process as it
//! would between two rust-numpy extensions.
#![allow(unsafe_code)]

use alloc::format;
use core::cell::UnsafeCell;
use core::ffi::{c_int, c_void, CStr};
use core::mem::ManuallyDrop;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use pyo3::exceptions::{PyBufferError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use pyo3::{ffi, intern};

use super::capsule::capsule_pointer;
use super::errors::IntoPyErr;
use dlpack_abi::dlpack::{AccessError, MemoryExtent};

/// The attribute of NumPy's `multiarray` module that holds rust-numpy's table.
const ATTRIBUTE: &str = "_RUST_NUMPY_BORROW_CHECKING_API";
/// The capsule's name (the attribute's, as rust-numpy names it).
const CAPSULE: &CStr = c"_RUST_NUMPY_BORROW_CHECKING_API";

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
    // SAFETY: attached; both objects live (the type is held for the process).
    let is_array =
        unsafe { ffi::PyObject_TypeCheck(source.as_ptr(), numpy.ndarray.as_ptr().cast()) };
    if is_array == 0 {
        return Ok(None);
    }
    let table = table(source.py(), numpy)?;
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
struct Numpy {
    /// `numpy.ndarray`.
    ndarray: Py<PyType>,
    /// `numpy._core.multiarray` (NumPy 2) or `numpy.core.multiarray` (NumPy 1).
    multiarray: Py<PyModule>,
    /// NumPy's major version, which fixes the layout of its dtype struct (unread where the
    /// buffer protocol reads arrays).
    #[cfg_attr(all(Py_LIMITED_API, Py_GIL_DISABLED), allow(dead_code))]
    major: u32,
}

static NUMPY: OnceLock<Numpy> = OnceLock::new();

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
    let major = version
        .split('.')
        .next()
        .and_then(|major| major.parse::<u32>().ok())
        .ok_or_else(|| PyRuntimeError::new_err(format!("numpy.__version__ is {version:?}")))?;
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
    });
    Ok(NUMPY.get())
}

/// The table in use, and its capsule, held so that the table lives for the process.
struct Found {
    table: NonNull<Table>,
    _capsule: Py<PyAny>,
}

// SAFETY: the table is `Sync` and lives for the process; the capsule is only held.
unsafe impl Send for Found {}
// SAFETY: as above.
unsafe impl Sync for Found {}

static FOUND: OnceLock<Found> = OnceLock::new();

/// rust-numpy's table: found in NumPy's module, or published there (ours) when absent.
fn table(py: Python<'_>, numpy: &Numpy) -> PyResult<&'static Table> {
    let found = match FOUND.get() {
        Some(found) => found,
        None => find_table(py, numpy)?,
    };
    // SAFETY: a table that lives for the process (its capsule is held by `FOUND`).
    Ok(unsafe { found.table.as_ref() })
}

#[cold]
fn find_table(py: Python<'_>, numpy: &Numpy) -> PyResult<&'static Found> {
    // SAFETY: attached; the table and the name are statics, valid for the capsule's life; no
    // destructor (nothing to free).
    let ours = unsafe {
        ffi::PyCapsule_New(
            ptr::from_ref(&OWN).cast_mut().cast(),
            CAPSULE.as_ptr(),
            None,
        )
    };
    // SAFETY: a new reference, or NULL with an exception set.
    let ours = unsafe { Bound::from_owned_ptr_or_err(py, ours) }?;
    // `setdefault` is atomic: of two extensions racing here, one table wins for both (rust-numpy
    // itself looks the attribute up, and sets it when missing).
    let capsule = numpy
        .multiarray
        .bind(py)
        .dict()
        .call_method1(intern!(py, "setdefault"), (ATTRIBUTE, ours))?;
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
        _capsule: capsule.unbind(),
    });
    FOUND
        .get()
        .ok_or_else(|| PyRuntimeError::new_err("rust-numpy's table was not cached"))
}

/// The table this crate publishes when no rust-numpy extension has yet: rust-numpy's meaning,
/// over the bytes each array reaches.
static OWN: Table = Table {
    version: 1,
    flags: ptr::null_mut(),
    acquire: own_acquire,
    acquire_mut: own_acquire_mut,
    release: own_release,
    release_mut: own_release_mut,
};

/// The live borrows of [`OWN`]: shared ones counted by extent, mutable ones listed. Few live at
/// once (one per array argument of the calls running), so both are scanned.
struct Borrows {
    shared: Vec<(MemoryExtent, usize)>,
    mutable: Vec<MemoryExtent>,
}

/// [`OWN`]'s borrows behind a spin lock: one atomic read-modify-write to take it and a store
/// to give it back (a `Mutex` pays two read-modify-writes), held only for a scan.
struct Locked {
    locked: AtomicBool,
    borrows: UnsafeCell<Borrows>,
}

// SAFETY: `borrows` is reached only by the thread holding `locked` (`with_borrows`).
unsafe impl Sync for Locked {}

static BORROWS: Locked = Locked {
    locked: AtomicBool::new(false),
    borrows: UnsafeCell::new(Borrows {
        shared: Vec::new(),
        mutable: Vec::new(),
    }),
};

/// Runs `f` on [`OWN`]'s borrows, locked (given back on unwind too, though nothing in `f`
/// panics).
fn with_borrows<R>(f: impl FnOnce(&mut Borrows) -> R) -> R {
    let mut spins = 0u32;
    while BORROWS
        .locked
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        while BORROWS.locked.load(Ordering::Relaxed) {
            spins += 1;
            if spins < 64 {
                core::hint::spin_loop();
            } else {
                std::thread::yield_now(); // a holder that was descheduled
            }
        }
    }
    struct Unlock;
    impl Drop for Unlock {
        fn drop(&mut self) {
            BORROWS.locked.store(false, Ordering::Release);
        }
    }
    let _unlock = Unlock;
    // SAFETY: the lock is held until `_unlock` drops: this is the only access.
    f(unsafe { &mut *BORROWS.borrows.get() })
}

/// # Safety
/// The table's contract: attached, `array` a live NumPy array.
unsafe extern "C" fn own_acquire(_: *mut c_void, array: *mut ffi::PyObject) -> c_int {
    // SAFETY: the caller's.
    let Some((extent, _)) = (unsafe { read_array(array) }) else {
        return BORROWED;
    };
    with_borrows(|borrows| {
        if borrows.mutable.iter().any(|m| m.may_overlap(&extent)) {
            return BORROWED;
        }
        match borrows.shared.iter_mut().find(|(e, _)| *e == extent) {
            Some((_, count)) => *count += 1,
            None => borrows.shared.push((extent, 1)),
        }
        OK
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
    with_borrows(|borrows| {
        let overlaps = |other: &MemoryExtent| other.may_overlap(&extent);
        if borrows.mutable.iter().any(overlaps) || borrows.shared.iter().any(|(e, _)| overlaps(e)) {
            return BORROWED;
        }
        borrows.mutable.push(extent);
        OK
    })
}

/// # Safety
/// The table's contract: attached, `array` the live NumPy array a shared borrow was taken for.
unsafe extern "C" fn own_release(_: *mut c_void, array: *mut ffi::PyObject) {
    // SAFETY: the caller's.
    let Some((extent, _)) = (unsafe { read_array(array) }) else {
        return;
    };
    with_borrows(|borrows| {
        if let Some(index) = borrows.shared.iter().position(|(e, _)| *e == extent) {
            borrows.shared[index].1 -= 1;
            if borrows.shared[index].1 == 0 {
                borrows.shared.swap_remove(index);
            }
        }
    });
}

/// # Safety
/// The table's contract: attached, `array` the live NumPy array a mutable borrow was taken for.
unsafe extern "C" fn own_release_mut(_: *mut c_void, array: *mut ffi::PyObject) {
    // SAFETY: the caller's.
    let Some((extent, _)) = (unsafe { read_array(array) }) else {
        return;
    };
    with_borrows(|borrows| {
        if let Some(index) = borrows.mutable.iter().position(|e| *e == extent) {
            borrows.mutable.swap_remove(index);
        }
    });
}

/// The greatest common divisor; `gcd(0, x) == x`.
fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The bytes an array of `element_bytes`-byte elements at `first` reaches.
fn extent(first: usize, shape: &[isize], strides: &[isize], element_bytes: usize) -> MemoryExtent {
    let (mut low, mut high, mut stride_gcd) = (0isize, 0isize, 0usize);
    if shape.iter().any(|&n| n <= 0) {
        return MemoryExtent {
            start: first,
            end: first,
            first,
            stride_gcd: 0,
            element_bytes,
        };
    }
    for (&n, &stride) in shape.iter().zip(strides) {
        if n > 1 {
            let reach = (n - 1).saturating_mul(stride);
            if reach < 0 {
                low = low.saturating_add(reach);
            } else {
                high = high.saturating_add(reach);
            }
            stride_gcd = gcd(stride_gcd, stride.unsigned_abs());
        }
    }
    MemoryExtent {
        start: first.wrapping_add_signed(low),
        end: first
            .wrapping_add_signed(high)
            .saturating_add(element_bytes),
        first,
        stride_gcd,
        element_bytes,
    }
}

/// `PyArrayObject`'s leading fields (NumPy 1.7 to 2.x).
#[cfg(not(all(Py_LIMITED_API, Py_GIL_DISABLED)))]
#[repr(C)]
struct ArrayObject {
    _ob_base: ffi::PyObject,
    data: *mut u8,
    nd: c_int,
    dimensions: *const isize,
    strides: *const isize,
    _base: *mut ffi::PyObject,
    descr: *mut ffi::PyObject,
    flags: c_int,
}

/// `NPY_ARRAY_WRITEABLE`.
#[cfg(not(all(Py_LIMITED_API, Py_GIL_DISABLED)))]
const WRITEABLE: c_int = 0x0400;

/// `PyArray_Descr`'s leading fields before NumPy 2.
#[cfg(not(all(Py_LIMITED_API, Py_GIL_DISABLED)))]
#[repr(C)]
struct Descr1 {
    _ob_base: ffi::PyObject,
    _typeobj: *mut ffi::PyTypeObject,
    _kind: u8,
    _type_: u8,
    _byteorder: u8,
    _flags: u8,
    _type_num: c_int,
    elsize: c_int,
}

/// `PyArray_Descr`'s leading fields from NumPy 2 on.
#[cfg(not(all(Py_LIMITED_API, Py_GIL_DISABLED)))]
#[repr(C)]
struct Descr2 {
    _ob_base: ffi::PyObject,
    _typeobj: *mut ffi::PyTypeObject,
    _kind: u8,
    _type_: u8,
    _byteorder: u8,
    _former_flags: u8,
    _type_num: c_int,
    _flags: u64,
    elsize: isize,
}

/// The bytes a NumPy array reaches, and whether it is writeable; `None` when it cannot be read.
///
/// # Safety
/// Attached; `array` a live NumPy array (its struct is read, not changed).
#[cfg(not(all(Py_LIMITED_API, Py_GIL_DISABLED)))]
unsafe fn read_array(array: *mut ffi::PyObject) -> Option<(MemoryExtent, bool)> {
    // SAFETY: a live `PyArrayObject` (the caller's), whose leading fields these are.
    let fields = unsafe { &*array.cast::<ArrayObject>() };
    let nd = usize::try_from(fields.nd).ok()?;
    let (shape, strides): (&[isize], &[isize]) = if nd == 0 {
        (&[], &[])
    } else {
        // SAFETY: `nd` dimensions, owned by the live array.
        let shape = unsafe { core::slice::from_raw_parts(fields.dimensions, nd) };
        // SAFETY: `nd` strides, owned by the live array.
        let strides = unsafe { core::slice::from_raw_parts(fields.strides, nd) };
        (shape, strides)
    };
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
        extent(first, shape, strides, element_bytes),
        fields.flags & WRITEABLE != 0,
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
        extent(first, &shape, buffer.strides(), buffer.item_size()),
        !buffer.readonly(),
    ))
}
