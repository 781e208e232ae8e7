//! NumPy arrays imported without calling `ndarray.__dlpack__`: the array's own struct is read
//! (as rust-numpy reads it) into a managed tensor that holds a reference to the array, which the
//! core then validates like any producer's. What NumPy's `__dlpack__(max_version=(1, 3))` would
//! hand over, without the method call, its keyword parsing, the capsule and NumPy's deleter (which
//! takes the GIL state every time): issue 37's argument rows.
//!
//! Only for objects whose type is exactly `numpy.ndarray` of NumPy 2.1 or later (its dtype
//! struct's layout, [`Descr2`]; versioned exports), with a native-order dtype of a built-in bool,
//! integer, float or complex type, at most [`INLINE_NDIM`] dimensions, and strides that are whole
//! elements, whose memory does not come from a DLPack capsule (NumPy asks the capsule for the
//! device). Anything else (a subclass, big-endian data, `longdouble`, objects, more dimensions,
//! `np.from_dlpack`'s arrays, a refusal by the core's validation) goes through `__dlpack__`,
//! which decides as before, as do NumPy 1 and 2.0 (whose exports refuse read-only arrays), PyPy
//! (whose objects are not CPython's structs) and free-threaded builds (where another thread could
//! change the array while it is read). Python's own tests hold
//! this path to NumPy's export, field by field (`test_numpy_direct.py`).
#![allow(unsafe_code)]

use alloc::boxed::Box;
use core::cell::UnsafeCell;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

use super::layout::{type_num, ArrayObject, Descr2};
use super::numpy;
use crate::NUMPY_DIRECT_IMPORTS;
use dlpack_abi::dlpack::VersionedTensor;
use dlpack_abi::raw::{
    kDLBool, kDLCPU, kDLComplex, kDLFloat, kDLInt, kDLUInt, DLDataType, DLDevice,
    DLManagedTensorVersioned, DLPackFlags, DLPackVersion, DLTensor, DLPACK_MAJOR_VERSION,
    DLPACK_MINOR_VERSION,
};

/// Dimensions held in the managed tensor's own allocation; arrays with more take `__dlpack__`.
const INLINE_NDIM: usize = 4;

/// `numpy.ndarray`, once NumPy 2.1 or later is found imported (NULL before): written and read by
/// the GIL's holder only (builds with a GIL), and held by the NumPy cache for the process.
static NDARRAY: AtomicPtr<ffi::PyTypeObject> = AtomicPtr::new(ptr::null_mut());

/// Called once per type an import meets: remembers `ty` when it is the `ndarray` of NumPy 2.1 or
/// later (the first whose `__dlpack__` exports versioned tensors, read-only arrays included), and
/// the static type NumPy defines (not a class put in its place as `numpy._core.multiarray.ndarray`).
pub(crate) fn note_type(ty: &Bound<'_, PyType>) {
    let py = ty.py();
    let Ok(Some(numpy)) = numpy(py) else {
        return;
    };
    // SAFETY: a live type object, attached.
    let heap_type = unsafe { ffi::PyType_GetFlags(ty.as_type_ptr()) } & ffi::Py_TPFLAGS_HEAPTYPE;
    if (numpy.major, numpy.minor) >= (2, 1) && heap_type == 0 && numpy.ndarray.bind(py).is(ty) {
        NDARRAY.store(ty.as_type_ptr(), Ordering::Relaxed);
    }
}

/// The tensor NumPy's `__dlpack__` would hand over for `source`, when `source` is a NumPy 2
/// array this path takes (see the module docs); `None` sends the caller to `__dlpack__`.
#[inline]
pub(crate) fn import(source: &Bound<'_, PyAny>) -> Option<VersionedTensor> {
    // A NULL `NDARRAY` is no object's type.
    let ndarray = NDARRAY.load(Ordering::Relaxed);
    if source.get_type_ptr() != ndarray {
        return None;
    }
    import_array(source, ndarray)
}

/// Whether the memory of `array` comes from a DLPack capsule: NumPy's export then asks the
/// capsule at the end of the array's `base` chain for the device (`np.from_dlpack` of pinned or
/// managed GPU memory), where the direct path would say the CPU, so `__dlpack__` decides.
fn from_a_capsule(array: &ArrayObject, ndarray: *mut ffi::PyTypeObject) -> bool {
    let mut base = array.base;
    // As NumPy walks it (`array_get_dl_device`): through arrays, subclasses included.
    // SAFETY: a live object (each array holds its base), attached.
    while !base.is_null() && unsafe { ffi::PyObject_TypeCheck(base, ndarray) } != 0 {
        // SAFETY: an instance of `ndarray`: a `PyArrayObject`, read attached.
        base = unsafe { (*base.cast::<ArrayObject>()).base };
    }
    // SAFETY: a live object, attached.
    !base.is_null() && unsafe { ffi::PyCapsule_CheckExact(base) } != 0
}

/// The managed tensor and the extents and strides it points to, in one allocation.
#[repr(C)]
struct Managed {
    /// First: the pointer to `Managed` is the pointer to it.
    managed: DLManagedTensorVersioned,
    shape: [i64; INLINE_NDIM],
    strides: [i64; INLINE_NDIM],
}

impl Managed {
    /// Nothing yet: what a new allocation holds before `import_array` fills it.
    const EMPTY: Self = Self {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion { major: 0, minor: 0 },
            manager_ctx: ptr::null_mut(),
            deleter: None,
            flags: 0,
            dl_tensor: DLTensor {
                data: ptr::null_mut(),
                device: DLDevice {
                    device_type: kDLCPU,
                    device_id: 0,
                },
                ndim: 0,
                dtype: DLDataType {
                    code: kDLUInt,
                    bits: 8,
                    lanes: 1,
                },
                shape: ptr::null_mut(),
                strides: ptr::null_mut(),
                byte_offset: 0,
            },
        },
        shape: [0; INLINE_NDIM],
        strides: [0; INLINE_NDIM],
    };
}

fn import_array(
    source: &Bound<'_, PyAny>,
    ndarray: *mut ffi::PyTypeObject,
) -> Option<VersionedTensor> {
    // SAFETY: `source`'s type is exactly NumPy's `ndarray` (`import`): a live `PyArrayObject`,
    // read attached (the caller holds the GIL, so no thread changes it meanwhile).
    let array = unsafe { &*source.as_ptr().cast::<ArrayObject>() };
    // SAFETY: as above; read while the GIL is held, so unchanged.
    let (extents, byte_strides) = unsafe { array.extents_and_strides() }?;
    if extents.len() > INLINE_NDIM || from_a_capsule(array, ndarray) {
        return None;
    }
    // SAFETY: the array's live dtype, in NumPy 2's layout (`NDARRAY`).
    let descr = unsafe { &*array.descr.cast::<Descr2>() };
    let dtype = dtype_of(descr)?;
    let (mut shape, mut strides) = ([0i64; INLINE_NDIM], [0i64; INLINE_NDIM]);
    for (dim, (&extent, &stride)) in extents.iter().zip(byte_strides).enumerate() {
        shape[dim] = i64::try_from(extent).ok()?;
        // Whole elements only (NumPy refuses others unless contiguous: it decides those).
        if stride % descr.elsize != 0 {
            return None;
        }
        strides[dim] = i64::try_from(stride / descr.elsize).ok()?;
    }
    let flags = if array.writeable() {
        DLPackFlags::empty()
    } else {
        DLPackFlags::READ_ONLY
    };
    // Written through the raw pointer `from_raw` is given, so that every pointer into the
    // allocation derives from it.
    let raw = Box::into_raw(RECYCLED.take(source.py()));
    // SAFETY: `raw` is a live allocation, owned here until `from_raw` takes it.
    let shape_at = unsafe { ptr::addr_of_mut!((*raw).shape) };
    // SAFETY: a field of that allocation, written before anything reads it.
    unsafe { shape_at.write(shape) };
    // SAFETY: as for `shape_at`.
    let strides_at = unsafe { ptr::addr_of_mut!((*raw).strides) };
    // SAFETY: as for `shape`.
    unsafe { strides_at.write(strides) };
    let managed = DLManagedTensorVersioned {
        version: DLPackVersion {
            major: DLPACK_MAJOR_VERSION,
            minor: DLPACK_MINOR_VERSION,
        },
        // The array, held (a new reference) until the deleter gives it back.
        manager_ctx: source.clone().into_ptr().cast(),
        deleter: Some(delete),
        flags: flags.bits(),
        dl_tensor: DLTensor {
            data: array.data.cast(),
            device: DLDevice {
                device_type: kDLCPU,
                device_id: 0,
            },
            ndim: array.nd,
            dtype,
            shape: shape_at.cast::<i64>(),
            strides: strides_at.cast::<i64>(),
            byte_offset: 0,
        },
    };
    // SAFETY: as for `shape_at`.
    let managed_at = unsafe { ptr::addr_of_mut!((*raw).managed) };
    // SAFETY: as for `shape`.
    unsafe { managed_at.write(managed) };
    // SAFETY: a managed struct made here and handed over: its deleter (`delete`) frees it and
    // gives the array back; `shape` and `strides` point to `ndim` values in the same
    // allocation; the data is the array's, which the reference keeps alive. (Whether Rust may
    // write it while it is held is the borrow registry's business, as for any import.) On a
    // refusal the deleter has run, and `__dlpack__` decides instead.
    let tensor = unsafe { VersionedTensor::from_raw(raw.cast::<DLManagedTensorVersioned>()) };
    tensor.ok().inspect(|_| NUMPY_DIRECT_IMPORTS.add())
}

/// The DLPack type of a native-order built-in dtype NumPy's `__dlpack__` exports, as NumPy maps
/// it; `None` for every other dtype.
fn dtype_of(descr: &Descr2) -> Option<DLDataType> {
    if !matches!(descr.byteorder, b'=' | b'|') {
        return None;
    }
    let number = descr.type_num;
    let code = if number == type_num::BOOL {
        kDLBool
    } else if type_num::SIGNED.contains(&number) {
        kDLInt
    } else if type_num::UNSIGNED.contains(&number) {
        kDLUInt
    } else if type_num::FLOAT.contains(&number) {
        kDLFloat
    } else if type_num::COMPLEX.contains(&number) {
        kDLComplex
    } else {
        return None;
    };
    Some(DLDataType {
        code,
        bits: u8::try_from(descr.elsize.checked_mul(8)?).ok()?,
        lanes: 1,
    })
}

/// The deleter: frees the managed tensor and gives the array back, attached to the interpreter
/// (leaked when it is gone, as NumPy's own deleter does).
///
/// # Safety
/// `managed` was made by [`import_array`] and is deleted once (the DLPack contract).
unsafe extern "C" fn delete(managed: *mut DLManagedTensorVersioned) {
    // SAFETY: a `Box<Managed>` from `import_array` (its first field), deleted once (caller).
    let managed = unsafe { Box::from_raw(managed.cast::<Managed>()) };
    let array = managed.managed.manager_ctx.cast::<ffi::PyObject>();
    let mut spare = Some(managed);
    let _ = Python::try_attach(|py| {
        // SAFETY: the strong reference `import_array` took, given back attached.
        drop(unsafe { Bound::from_owned_ptr(py, array) });
        if let Some(managed) = spare.take() {
            RECYCLED.give(py, managed);
        }
    });
    // Freed here when the interpreter could not be attached to.
    drop(spare);
}

/// Allocations that deleted direct imports leave for the next ones: no `malloc`/`free` pair per
/// import. Touched only by the GIL's holder (`take` and `give` need `Python`, and this module is
/// built only where there is a GIL), so no atomics.
struct Recycled {
    /// `.0` spare allocations at the front of `.1`.
    spare: UnsafeCell<(usize, [Option<Box<Managed>>; RECYCLED_MAX])>,
}

/// Spare allocations kept at most: a call's arguments, a few tensors held at once.
const RECYCLED_MAX: usize = 8;

// SAFETY: only the GIL's holder reads or writes `spare` (`Recycled`'s methods take `Python`, and
// nothing else touches it).
unsafe impl Sync for Recycled {}

static RECYCLED: Recycled = Recycled {
    spare: UnsafeCell::new((0, [const { None }; RECYCLED_MAX])),
};

impl Recycled {
    /// A spare allocation, or a new one: its contents are overwritten by the caller.
    fn take(&self, _attached: Python<'_>) -> Box<Managed> {
        // SAFETY: the GIL is held (`_attached`), so this is the only access meanwhile.
        let (count, spare) = unsafe { &mut *self.spare.get() };
        let recycled = count.checked_sub(1).and_then(|last| {
            *count = last;
            spare[last].take()
        });
        recycled.unwrap_or_else(|| Box::new(Managed::EMPTY))
    }

    /// Keeps `managed`'s allocation for a next import, or frees it when enough are kept.
    fn give(&self, _attached: Python<'_>, managed: Box<Managed>) {
        // SAFETY: the GIL is held (`_attached`), so this is the only access meanwhile.
        let (count, spare) = unsafe { &mut *self.spare.get() };
        if let Some(slot) = spare.get_mut(*count) {
            *slot = Some(managed);
            *count += 1;
        }
    }
}
