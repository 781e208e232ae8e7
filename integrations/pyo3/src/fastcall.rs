//! `__dlpack__` as a `METH_FASTCALL | METH_KEYWORDS` method descriptor whose keywords are parsed
//! here, matched by pointer against interned names first: the export is the hottest call of the
//! protocol (NumPy passes three keywords to every producer), and generic argument extraction
//! cost about a quarter of it.
#![allow(unsafe_code)]

use alloc::format;
use core::ffi::CStr;
use core::marker::PhantomData;
use core::ptr;

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyCapsule, PyString, PyTuple};
use pyo3::{ffi, intern, Borrowed, PyClass};

/// The keyword-only arguments of `__dlpack__` (array API 2023.12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DlpackArgs {
    /// `stream`: the consumer's stream, `None` if not given or `None`.
    pub(crate) stream: Option<i64>,
    /// `max_version`: `(major, minor)`, `None` for a legacy consumer.
    pub(crate) max_version: Option<(i64, i64)>,
    /// `dl_device`: `(device_type, device_id)`.
    pub(crate) dl_device: Option<(i32, i32)>,
    /// `copy`: `True`, `False` or `None`.
    pub(crate) copy: Option<bool>,
}

/// What the parse reads once per process: the four keyword names, interned (call sites pass
/// interned names, so a pointer comparison finds them; equality is the fallback), in
/// [`DlpackArgs::set`]'s order, and the small ints.
struct Known {
    names: [Py<PyString>; 4],
    small: SmallInts,
}

fn known(py: Python<'_>) -> PyResult<&Known> {
    static KNOWN: PyOnceLock<Known> = PyOnceLock::new();
    KNOWN.get_or_try_init(py, || {
        Ok(Known {
            names: [
                intern!(py, "stream").clone().unbind(),
                intern!(py, "max_version").clone().unbind(),
                intern!(py, "dl_device").clone().unbind(),
                intern!(py, "copy").clone().unbind(),
            ],
            small: SmallInts::new(py)?,
        })
    })
}

/// The ints `0..SMALL_INTS`, read from an argument's address: CPython keeps one object per small
/// int in one array, so `max_version=(1, 3)`, `dl_device=(1, 0)` and `stream=2` pass objects at
/// known, evenly spaced addresses. The objects are held here, so no other object can take their
/// addresses; an interpreter that does not space them evenly by a power of two gets no match
/// (`limit` 0), and every value goes through `PyLong_AsLongLong`.
struct SmallInts {
    _held: Vec<Py<PyAny>>,
    /// The address of `0`.
    first: usize,
    /// log2 of the spacing.
    shift: u32,
    /// `SMALL_INTS` spacings, or 0 when the objects are not evenly spaced.
    limit: usize,
}

/// How many small ints are read from their address: more than DLPack's versions, CPU devices
/// and CUDA's named streams need.
const SMALL_INTS: usize = 16;

impl SmallInts {
    fn new(py: Python<'_>) -> PyResult<Self> {
        let held = (0..SMALL_INTS)
            .map(|value| Ok(value.into_pyobject(py)?.into_any().unbind()))
            .collect::<PyResult<Vec<Py<PyAny>>>>()?;
        let address = |value: usize| held[value].as_ptr() as usize;
        let spacing = address(1).wrapping_sub(address(0));
        let even = spacing.is_power_of_two()
            && spacing.checked_mul(SMALL_INTS).is_some()
            && (1..SMALL_INTS)
                .all(|value| address(value) == address(0).wrapping_add(value * spacing));
        // Not evenly spaced: no address matches (`limit` 0).
        let shift = if even { spacing.trailing_zeros() } else { 0 };
        Ok(Self {
            first: address(0),
            shift,
            limit: if even { SMALL_INTS << shift } else { 0 },
            _held: held,
        })
    }

    /// The value of `object` if it is one of the held ints.
    #[inline(always)]
    fn value(&self, object: *mut ffi::PyObject) -> Option<i64> {
        let offset = (object as usize).wrapping_sub(self.first);
        let at_one = offset < self.limit && offset & ((1 << self.shift) - 1) == 0;
        // At most `SMALL_INTS - 1`: fits.
        at_one.then_some((offset >> self.shift) as i64)
    }
}

/// Why a value is not an `i64`.
enum NotInt {
    /// Not an int (a `bool` is not taken for one), nor an object with `__index__`.
    Type,
    /// An int outside `i64`.
    Range,
}

/// An int's value (or an object's `__index__`), with no exception left set on failure: a small
/// int read from its address, any other value asked.
#[inline(always)]
fn int(value: Borrowed<'_, '_, PyAny>, small: &SmallInts) -> Result<i64, NotInt> {
    match small.value(value.as_ptr()) {
        Some(number) => Ok(number),
        None => any_int(value),
    }
}

/// [`int`] of a value that is not one of the small ints.
fn any_int(value: Borrowed<'_, '_, PyAny>) -> Result<i64, NotInt> {
    if value.is_instance_of::<PyBool>() {
        return Err(NotInt::Type);
    }
    // SAFETY: attached (a `Borrowed` proves it), a live object.
    let number = unsafe { ffi::PyLong_AsLongLong(value.as_ptr()) };
    if number == -1 {
        // `take` clears the exception that marks a failure (and `-1` may be the value).
        if let Some(error) = PyErr::take(value.py()) {
            let overflow = error.is_instance_of::<PyOverflowError>(value.py());
            return Err(if overflow {
                NotInt::Range
            } else {
                NotInt::Type
            });
        }
    }
    Ok(number)
}

/// `(a, b)` from a tuple of two ints, read without new references.
fn pair<T: TryFrom<i64>>(value: Borrowed<'_, '_, PyAny>, small: &SmallInts) -> Option<(T, T)> {
    let tuple = value.cast::<PyTuple>().ok()?;
    if tuple.len() != 2 {
        return None;
    }
    // SAFETY: indices below the tuple's length; the items are borrowed from the live tuple.
    let item = |index| int(unsafe { tuple.get_borrowed_item_unchecked(index) }, small).ok();
    Some((T::try_from(item(0)?).ok()?, T::try_from(item(1)?).ok()?))
}

impl DlpackArgs {
    /// Sets keyword `index` (of [`names`]) to `value`, `None` meaning not given.
    fn set(
        &mut self,
        index: usize,
        value: Borrowed<'_, '_, PyAny>,
        small: &SmallInts,
    ) -> PyResult<()> {
        if value.is_none() {
            return Ok(());
        }
        let wrong = |name: &str, expected: &str| {
            PyTypeError::new_err(format!(
                "__dlpack__() argument '{name}' must be {expected}, not {}",
                super::capsule::type_name(&value)
            ))
        };
        match index {
            0 => {
                self.stream = Some(int(value, small).map_err(|error| match error {
                    NotInt::Type => wrong("stream", "an int or None"),
                    NotInt::Range => PyValueError::new_err(
                        "__dlpack__() argument 'stream' is out of range for a stream handle",
                    ),
                })?);
            }
            1 => {
                let version = pair(value, small);
                self.max_version =
                    Some(version.ok_or_else(|| wrong("max_version", "a tuple of two ints"))?);
            }
            2 => {
                let device = pair(value, small);
                self.dl_device =
                    Some(device.ok_or_else(|| wrong("dl_device", "a tuple of two ints"))?);
            }
            _ => {
                let copy = value.extract::<bool>();
                self.copy = Some(copy.map_err(|_| wrong("copy", "a bool or None"))?);
            }
        }
        Ok(())
    }

    /// Parses a vectorcall's arguments: none positional, and only the four keywords. Inlined
    /// into [`call`]: returned through memory, its result cost a stalled load per export
    /// (`perf`: 15% of a `__dlpack__` call, issue 31).
    ///
    /// # Safety
    /// Attached; `args` holds `nargs` positional values followed by one value per name in
    /// `kwnames` (NULL or a tuple of strings), all borrowed for the call (the vectorcall
    /// protocol).
    #[inline(always)]
    unsafe fn parse(
        py: Python<'_>,
        args: *const *mut ffi::PyObject,
        nargs: ffi::Py_ssize_t,
        kwnames: *mut ffi::PyObject,
    ) -> PyResult<Self> {
        if nargs != 0 {
            return Err(PyTypeError::new_err(
                "__dlpack__() takes no positional arguments",
            ));
        }
        let mut parsed = Self::default();
        if kwnames.is_null() {
            return Ok(parsed);
        }
        // SAFETY: a live tuple of names, borrowed for the call (vectorcall protocol).
        let kwnames = unsafe { Borrowed::from_ptr(py, kwnames) };
        // SAFETY: as above.
        let kwnames = unsafe { kwnames.cast_unchecked::<PyTuple>() };
        let known = known(py)?;
        for (index, name) in kwnames.iter_borrowed().enumerate() {
            let which = match known
                .names
                .iter()
                .position(|known| known.as_ptr() == name.as_ptr())
            {
                Some(which) => which,
                None => known
                    .names
                    .iter()
                    .position(|known| name.eq(known).unwrap_or(false))
                    .ok_or_else(|| {
                        PyTypeError::new_err(format!(
                            "__dlpack__() got an unexpected keyword argument '{}'",
                            *name
                        ))
                    })?,
            };
            // SAFETY: the value of keyword `index` follows the `nargs` (zero) positional values
            // (vectorcall protocol); `index` is below the tuple's length.
            let slot = unsafe { args.add(index) };
            // SAFETY: as above: a readable slot.
            let value = unsafe { *slot };
            // SAFETY: a live value, borrowed for the call.
            let value = unsafe { Borrowed::from_ptr(py, value) };
            parsed.set(which, value, &known.small)?;
        }
        Ok(parsed)
    }
}

/// A `__dlpack__` export of an object of type `T`.
pub(crate) type Export<T> =
    for<'py> fn(&Bound<'py, T>, DlpackArgs) -> PyResult<Bound<'py, PyCapsule>>;

/// The `METH_FASTCALL | METH_KEYWORDS` body of `__dlpack__` for `T`: parses, exports, and turns
/// an error (or a panic) into a raised exception.
///
/// # Safety
/// Called by CPython through a method descriptor of `T` (which checked that `slf` is a `T`),
/// attached, with vectorcall arguments.
pub(crate) unsafe fn call<T: PyClass>(
    export: Export<T>,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls methods attached.
    let py = unsafe { Python::assume_attached() };
    let body = || {
        // SAFETY: vectorcall arguments (caller).
        let parsed = unsafe { DlpackArgs::parse(py, args, nargs, kwnames) }?;
        // SAFETY: a live object, borrowed for the call.
        let object = unsafe { Bound::from_borrowed_ptr(py, slf) };
        // SAFETY: the method descriptor of `T` only calls this with a `T` (caller).
        let object = unsafe { object.cast_into_unchecked::<T>() };
        export(&object, parsed)
    };
    match super::errors::catching_panics("__dlpack__", body) {
        Ok(capsule) => capsule.into_ptr(),
        Err(error) => {
            error.restore(py);
            ptr::null_mut()
        }
    }
}

/// A method definition of class `T` that CPython keeps for the life of the process.
pub struct MethodDef<T>(ffi::PyMethodDef, PhantomData<fn() -> T>);

// SAFETY: never written after it is made; CPython only reads it.
unsafe impl<T> Sync for MethodDef<T> {}

/// The signature (for `inspect` and stub checks) and docstring of every `__dlpack__`.
const DLPACK_DOC: &CStr =
    c"__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)
--

The DLPack export (array API 2023.12): a versioned capsule for max_version 1.x, a legacy
one otherwise; stream, dl_device and copy per the array API.";

impl<T: PyClass> MethodDef<T> {
    /// `__dlpack__` calling `function` (a `METH_FASTCALL | METH_KEYWORDS` function).
    ///
    /// # Safety
    /// `function` takes its `self` for a `T` (the descriptor checks that it is one).
    pub(crate) const unsafe fn dlpack(function: ffi::PyCFunctionFastWithKeywords) -> Self {
        Self(
            ffi::PyMethodDef {
                ml_name: c"__dlpack__".as_ptr(),
                ml_meth: ffi::PyMethodDefPointer {
                    PyCFunctionFastWithKeywords: function,
                },
                ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
                ml_doc: DLPACK_DOC.as_ptr(),
            },
            PhantomData,
        )
    }

    /// The method descriptor of `T` for this definition, as a class attribute.
    pub(crate) fn descriptor(&'static self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let class = T::type_object(py);
        let definition = ptr::from_ref(&self.0).cast_mut();
        // SAFETY: attached; a live type and a static definition that CPython only reads.
        let descriptor = unsafe { ffi::PyDescr_NewMethod(class.as_type_ptr(), definition) };
        // SAFETY: a new reference, or NULL with an exception set.
        unsafe { Bound::from_owned_ptr_or_err(py, descriptor) }.map(Bound::unbind)
    }
}
