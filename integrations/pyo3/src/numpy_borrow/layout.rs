//! NumPy's C structs, as far as this crate reads them: the leading fields of `PyArrayObject`
//! (NumPy 1.7 to 2.x) and of `PyArray_Descr` (whose layout changed in NumPy 2), and the flag
//! and type numbers read from them. Read only, attached to the interpreter, from objects whose
//! type is `numpy.ndarray` (or that NumPy hands over as arrays). Builds whose stable ABI hides
//! object layouts (free-threaded `abi3t`) do not read them.

use core::ffi::c_int;

use pyo3::ffi;

/// `PyArrayObject`'s leading fields (`PyArrayObject_fields`).
#[repr(C)]
pub(crate) struct ArrayObject {
    _ob_base: ffi::PyObject,
    /// The first element (`PyArray_DATA`).
    pub(crate) data: *mut u8,
    /// The number of dimensions.
    pub(crate) nd: c_int,
    /// `nd` extents, owned by the array.
    dimensions: *const isize,
    /// `nd` strides in bytes, owned by the array.
    strides: *const isize,
    /// What owns the memory, for a view or an array made from another object; NULL for an array
    /// that owns it.
    #[cfg_attr(any(PyPy, Py_GIL_DISABLED), allow(dead_code))]
    pub(crate) base: *mut ffi::PyObject,
    /// The array's dtype (a `PyArray_Descr`).
    pub(crate) descr: *mut ffi::PyObject,
    /// `NPY_ARRAY_*` flags.
    pub(crate) flags: c_int,
}

/// `NPY_ARRAY_WRITEABLE`.
const WRITEABLE: c_int = 0x0400;

impl ArrayObject {
    /// The extents and the strides in bytes, `nd` of each (none for a 0-d array); `None` for a
    /// negative `nd`.
    ///
    /// # Safety
    /// A live array, read attached; the slices are used while it is unchanged (the GIL held).
    pub(crate) unsafe fn extents_and_strides(&self) -> Option<(&[isize], &[isize])> {
        let nd = usize::try_from(self.nd).ok()?;
        if nd == 0 {
            return Some((&[], &[]));
        }
        // SAFETY: `nd` extents, owned by the live array (caller).
        let extents = unsafe { core::slice::from_raw_parts(self.dimensions, nd) };
        // SAFETY: `nd` strides, owned by the live array (caller).
        let strides = unsafe { core::slice::from_raw_parts(self.strides, nd) };
        Some((extents, strides))
    }

    /// Whether the array may be written (`NPY_ARRAY_WRITEABLE`).
    pub(crate) fn writeable(&self) -> bool {
        self.flags & WRITEABLE != 0
    }
}

/// `PyArray_Descr`'s leading fields before NumPy 2.
#[repr(C)]
pub(crate) struct Descr1 {
    _ob_base: ffi::PyObject,
    _typeobj: *mut ffi::PyTypeObject,
    _kind: u8,
    _type_: u8,
    _byteorder: u8,
    _flags: u8,
    _type_num: c_int,
    /// The element's size in bytes.
    pub(crate) elsize: c_int,
}

/// `PyArray_Descr`'s leading fields from NumPy 2 on.
#[repr(C)]
pub(crate) struct Descr2 {
    _ob_base: ffi::PyObject,
    _typeobj: *mut ffi::PyTypeObject,
    _kind: u8,
    _type_: u8,
    /// `'='` native, `'|'` not applicable (one byte), `'<'`/`'>'` explicit.
    #[cfg_attr(any(PyPy, Py_GIL_DISABLED), allow(dead_code))]
    pub(crate) byteorder: u8,
    _former_flags: u8,
    /// `NPY_TYPES`: which built-in type (user types from `NPY_USERDEF`, 256, on).
    #[cfg_attr(any(PyPy, Py_GIL_DISABLED), allow(dead_code))]
    pub(crate) type_num: c_int,
    _flags: u64,
    /// The element's size in bytes.
    pub(crate) elsize: isize,
}

/// `NPY_TYPES` numbers of the built-in types a DLPack tensor can carry.
#[cfg(not(any(PyPy, Py_GIL_DISABLED)))]
pub(crate) mod type_num {
    use core::ffi::c_int;

    /// `NPY_BOOL`.
    pub(crate) const BOOL: c_int = 0;
    /// `NPY_BYTE`, `NPY_SHORT`, `NPY_INT`, `NPY_LONG`, `NPY_LONGLONG`.
    pub(crate) const SIGNED: [c_int; 5] = [1, 3, 5, 7, 9];
    /// `NPY_UBYTE`, `NPY_USHORT`, `NPY_UINT`, `NPY_ULONG`, `NPY_ULONGLONG`.
    pub(crate) const UNSIGNED: [c_int; 5] = [2, 4, 6, 8, 10];
    /// `NPY_HALF`, `NPY_FLOAT`, `NPY_DOUBLE` (not `NPY_LONGDOUBLE`, 13: not IEEE, or padded).
    pub(crate) const FLOAT: [c_int; 3] = [23, 11, 12];
    /// `NPY_CFLOAT`, `NPY_CDOUBLE` (not `NPY_CLONGDOUBLE`, 16).
    pub(crate) const COMPLEX: [c_int; 2] = [14, 15];
}
