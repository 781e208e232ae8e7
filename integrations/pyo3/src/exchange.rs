//! The C exchange API of `dlpack_abi.Tensor` (`__dlpack_c_exchange_api__`, DLPack 1.3): a static
//! table whose functions convert without Python calls and without stream synchronisation.
#![allow(unsafe_code)]

use alloc::string::ToString;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::ptr::{self, NonNull};

use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use pyo3::PyClass;

use super::copy::HostTensor;
use super::errors::ToPyResult;
use super::exporter::{self, DlpackExporter};
use super::{PyTensor, ALLOCATIONS, EXCHANGE_EXPORTS, EXCHANGE_IMPORTS};
use dlpack_abi::dlpack::{compact_byte_size, VersionedTensor, MAX_NDIM};
use dlpack_abi::raw::{
    kDLCPU, DLDeviceType, DLManagedTensorVersioned, DLPackExchangeAPI, DLPackExchangeAPIHeader,
    DLPackFlags, DLPackVersion, DLTensor,
};

/// The exchange API table of `dlpack_abi.Tensor`, static for the life of the process.
///
/// ```
/// use dlpack_abi_pyo3::EXCHANGE_API;
///
/// let table = EXCHANGE_API.as_raw();
/// assert_eq!((table.header.version.major, table.header.version.minor), (1, 3));
/// assert!(table.managed_tensor_allocator.is_some());
/// ```
pub struct ExchangeApi(DLPackExchangeAPI);

// SAFETY: the table is never written; its one pointer (`prev_api`) is NULL.
unsafe impl Sync for ExchangeApi {}

impl ExchangeApi {
    /// The C table.
    ///
    /// ```
    /// use dlpack_abi_pyo3::EXCHANGE_API;
    ///
    /// // A C consumer reaches the same table through the capsule; Rust can read it directly.
    /// let current_work_stream = EXCHANGE_API.as_raw().current_work_stream;
    /// assert!(current_work_stream.is_some());
    /// ```
    pub fn as_raw(&self) -> &DLPackExchangeAPI {
        &self.0
    }

    /// The table of an exporter class `T` ([`#[dlpack_exporter]`](super::dlpack_exporter) and
    /// [`dlpack_pymethods!`](crate::dlpack_pymethods) keep one in a `static` per class): `managed_tensor_from_py_object_no_sync` makes the export
    /// `T`'s `__dlpack__(max_version=(1, 3))` makes, with
    /// [`ConsumerStream::NoSync`](dlpack_abi::dlpack::ConsumerStream::NoSync);
    /// `dltensor_from_py_object_no_sync` is NULL, which the header allows and which sends
    /// consumers to the owning export (an exporter makes a tensor per export, which no borrowed
    /// `DLTensor` could outlive); `current_work_stream` is `T`'s
    /// [`DlpackExporter::current_work_stream`]; the allocator and
    /// `managed_tensor_to_py_object_no_sync` (which makes a `dlpack_abi.Tensor`) are
    /// [`EXCHANGE_API`]'s.
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::{ConsumerStream, VersionedTensor};
    /// use dlpack_abi_pyo3::{DlpackExporter, PyDlpackResult};
    /// use pyo3::prelude::*;
    /// #[pyclass]
    /// struct Image;
    /// impl DlpackExporter for Image {
    ///     fn dlpack_device(&self) -> dlpack_abi::raw::DLDevice { unimplemented!() }
    ///     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> { unimplemented!() }
    /// }
    /// use dlpack_abi_pyo3::ExchangeApi;
    ///
    /// static IMAGE_API: ExchangeApi = ExchangeApi::of::<Image>();
    /// assert_eq!(IMAGE_API.as_raw().header.version.major, 1);
    /// ```
    pub const fn of<T: DlpackExporter + PyClass>() -> Self {
        Self(DLPackExchangeAPI {
            header: DLPackExchangeAPIHeader {
                version: DLPackVersion::CURRENT,
                prev_api: ptr::null_mut(),
            },
            managed_tensor_allocator: Some(allocate),
            managed_tensor_from_py_object_no_sync: Some(exporter_from_py_object::<T>),
            managed_tensor_to_py_object_no_sync: Some(to_py_object),
            dltensor_from_py_object_no_sync: None,
            current_work_stream: Some(exporter_work_stream::<T>),
        })
    }

    /// The `"dlpack_exchange_api"` capsule over this table, for a `__dlpack_c_exchange_api__`
    /// class attribute (no destructor: the table is static).
    ///
    /// # Errors
    /// Python's, when the capsule cannot be made.
    ///
    /// ```no_run
    /// use pyo3::prelude::*;
    ///
    /// Python::attach(|py| {
    ///     let capsule = dlpack_abi_pyo3::EXCHANGE_API.capsule(py)?;
    ///     assert!(capsule.bind(py).is_valid_checked(Some(c"dlpack_exchange_api")));
    ///     PyResult::Ok(())
    /// });
    /// ```
    pub fn capsule(&'static self, py: Python<'_>) -> PyResult<Py<PyCapsule>> {
        let table = NonNull::from(&self.0).cast::<c_void>();
        // SAFETY: a static table, never freed; consumers only read it.
        unsafe { PyCapsule::new_with_pointer(py, table, c"dlpack_exchange_api") }.map(Bound::unbind)
    }
}

/// `dlpack_abi.Tensor.__dlpack_c_exchange_api__` points here: version 1.3, no older table, all
/// five functions.
///
/// - `managed_tensor_allocator`: zeroed CPU tensors (other devices are refused through
///   `SetError`).
/// - `managed_tensor_from_py_object_no_sync`: the same export as `__dlpack__(max_version=(1, 3))`,
///   ready on the device's default stream (what `current_work_stream` names): it never blocks
///   the host, and orders pending work there through the tensor's hook, or refuses.
/// - `managed_tensor_to_py_object_no_sync`: validates and steals the tensor into a new `Tensor`
///   (its deleter runs at once if validation fails).
/// - `dltensor_from_py_object_no_sync`: the bare `DLTensor` of a writable `Tensor`, ready on the
///   same stream; read-only and padded sub-byte ones are refused, since a bare `DLTensor` has
///   no flags to say so.
/// - `current_work_stream`: NULL (a `Tensor` runs no device work of its own).
///
/// ```
/// use dlpack_abi_pyo3::EXCHANGE_API;
///
/// let table = EXCHANGE_API.as_raw();
/// assert!(table.header.prev_api.is_null());
/// assert!(table.dltensor_from_py_object_no_sync.is_some());
/// ```
pub static EXCHANGE_API: ExchangeApi = ExchangeApi(DLPackExchangeAPI {
    header: DLPackExchangeAPIHeader {
        version: DLPackVersion::CURRENT,
        prev_api: ptr::null_mut(),
    },
    managed_tensor_allocator: Some(allocate),
    managed_tensor_from_py_object_no_sync: Some(from_py_object),
    managed_tensor_to_py_object_no_sync: Some(to_py_object),
    dltensor_from_py_object_no_sync: Some(dltensor_from_py_object),
    current_work_stream: Some(current_work_stream),
});

/// Runs `body` with the `Python` token the exchange API's caller implies, turning an error (or
/// a panic, which must not unwind into the C caller) into a raised exception and -1.
///
/// # Safety
/// The caller is attached to the interpreter (the exchange API functions that take Python
/// objects are called with the GIL held).
unsafe fn attached(body: impl FnOnce(Python<'_>) -> PyResult<()>) -> c_int {
    // SAFETY: attached (caller).
    let py = unsafe { Python::assume_attached() };
    match super::errors::catching_panics("the DLPack exchange API", || body(py)) {
        Ok(()) => 0,
        Err(error) => {
            error.restore(py);
            -1
        }
    }
}

/// The `Tensor` behind a borrowed object pointer.
///
/// # Safety
/// `object` is NULL or a live object, and the caller is attached.
unsafe fn tensor_of<'py>(py: Python<'py>, object: *mut c_void) -> PyResult<Bound<'py, PyTensor>> {
    // SAFETY: a live object (caller), borrowed for the call.
    let object = unsafe { Bound::from_borrowed_ptr_or_err(py, object.cast()) }?;
    object
        .cast_into::<PyTensor>()
        .map_err(|error| PyTypeError::new_err(error.to_string()))
}

/// `managed_tensor_from_py_object_no_sync`: the export `__dlpack__(max_version=(1, 3))` makes.
///
/// # Safety
/// The exchange API contract: called attached to the interpreter, `object` a live object (of
/// our type, or a `TypeError` is raised), `out` NULL or writable.
unsafe extern "C" fn from_py_object(
    object: *mut c_void,
    out: *mut *mut DLManagedTensorVersioned,
) -> c_int {
    // SAFETY: a live object, attached (exchange API contract).
    let make = |py: Python<'_>| {
        // SAFETY: as above.
        let tensor = unsafe { tensor_of(py, object) }?;
        let tensor = tensor.get();
        tensor.ready_on_work_stream()?;
        tensor.export(Some(py), false)
    };
    // SAFETY: called attached, `out` NULL or writable (exchange API contract).
    unsafe { export_into(out, make) }
}

/// The frame of every `managed_tensor_from_py_object_no_sync`: `make` the export and hand it
/// over through `out`.
///
/// # Safety
/// Called attached; `out` NULL or writable.
unsafe fn export_into(
    out: *mut *mut DLManagedTensorVersioned,
    make: impl FnOnce(Python<'_>) -> PyResult<VersionedTensor>,
) -> c_int {
    let body = |py: Python<'_>| {
        if out.is_null() {
            return Err(PyBufferError::new_err("NULL out"));
        }
        let tensor = make(py)?;
        EXCHANGE_EXPORTS.add();
        // SAFETY: `out` is non-NULL and writable (caller).
        unsafe { *out = tensor.into_raw() };
        Ok(())
    };
    // SAFETY: called attached (caller).
    unsafe { attached(body) }
}

/// `managed_tensor_from_py_object_no_sync` of an exporter class `T`.
///
/// # Safety
/// As [`from_py_object`], with objects of `T`.
unsafe extern "C" fn exporter_from_py_object<T: DlpackExporter + PyClass>(
    object: *mut c_void,
    out: *mut *mut DLManagedTensorVersioned,
) -> c_int {
    // SAFETY: a live object, attached (exchange API contract).
    let make = |py: Python<'_>| unsafe { exporter::exchange_export::<T>(py, object) };
    // SAFETY: called attached, `out` NULL or writable (exchange API contract).
    unsafe { export_into(out, make) }
}

/// `managed_tensor_to_py_object_no_sync`: steals `tensor` into a new `Tensor`.
///
/// # Safety
/// Called attached; `tensor` is NULL or an owning tensor handed over (its deleter is ours to
/// call, and runs at once on refusal); `out` NULL or writable.
unsafe extern "C" fn to_py_object(
    tensor: *mut DLManagedTensorVersioned,
    out: *mut *mut c_void,
) -> c_int {
    let body = |py: Python<'_>| {
        EXCHANGE_IMPORTS.add();
        // SAFETY: the function steals `tensor` (exchange API contract); `from_raw` calls its
        // deleter on every refusal.
        let tensor = unsafe { VersionedTensor::from_raw(tensor) }.py()?;
        if out.is_null() {
            return Err(PyBufferError::new_err("NULL out")); // drops (deletes) the tensor
        }
        let mut tensor = tensor;
        super::borrows::track(py, &mut tensor, false)?;
        let object = Bound::new(py, PyTensor::imported(tensor))?;
        // SAFETY: `out` is non-NULL and writable (exchange API contract).
        unsafe { *out = object.into_ptr().cast() };
        Ok(())
    };
    // SAFETY: called attached (exchange API contract).
    unsafe { attached(body) }
}

/// `dltensor_from_py_object_no_sync`: the bare `DLTensor` of a writable `Tensor`, valid while
/// the object lives.
///
/// # Safety
/// Called attached; `object` a live object; `out` NULL or writable.
unsafe extern "C" fn dltensor_from_py_object(object: *mut c_void, out: *mut DLTensor) -> c_int {
    let body = |py: Python<'_>| {
        // SAFETY: a live object, attached (exchange API contract).
        let tensor = unsafe { tensor_of(py, object) }?;
        let tensor = tensor.get();
        let raw = tensor.dl_tensor().map_err(PyBufferError::new_err)?;
        // Ready, as the owning export is, on the stream `current_work_stream` names.
        tensor.ready_on_work_stream()?;
        if out.is_null() {
            return Err(PyBufferError::new_err("NULL out"));
        }
        // SAFETY: `out` is non-NULL and writable (exchange API contract); the DLTensor stays
        // valid while the object lives, which is all this function promises.
        unsafe { *out = raw };
        Ok(())
    };
    // SAFETY: called attached (exchange API contract).
    unsafe { attached(body) }
}

/// `current_work_stream` of an exporter class `T`: [`DlpackExporter::current_work_stream`], NULL
/// when it names none.
///
/// # Safety
/// `out` is NULL or writable.
unsafe extern "C" fn exporter_work_stream<T: DlpackExporter>(
    device_type: DLDeviceType,
    device_id: i32,
    out: *mut *mut c_void,
) -> c_int {
    if out.is_null() {
        return -1;
    }
    let device = dlpack_abi::raw::DLDevice {
        device_type,
        device_id,
    };
    // A panic must not unwind into the C caller; it is no stream then.
    let handle = std::panic::catch_unwind(|| T::current_work_stream(device)).unwrap_or(None);
    let stream = ptr::null_mut::<u8>().wrapping_add(handle.unwrap_or(0));
    // SAFETY: a writable out-pointer (contract).
    unsafe { *out = stream.cast() };
    0
}

/// `current_work_stream`: NULL, for every device: the device's default stream, on which
/// `managed_tensor_from_py_object_no_sync` makes each export ready (a `Tensor` runs no device
/// work of its own).
///
/// # Safety
/// `out` is NULL or writable.
unsafe extern "C" fn current_work_stream(
    _device_type: DLDeviceType,
    _device_id: i32,
    out: *mut *mut c_void,
) -> c_int {
    if out.is_null() {
        return -1;
    }
    let stream = ptr::null_mut::<u8>().wrapping_add(TENSOR_WORK_STREAM);
    // SAFETY: a writable out-pointer (contract).
    unsafe { *out = stream.cast() };
    0
}

/// The stream `Tensor`'s `current_work_stream` names for every device, as an address: NULL, the
/// device's default stream, where its `no_sync` exports are made ready.
pub(crate) const TENSOR_WORK_STREAM: usize = 0;

/// A `SetError` callback.
type SetError = Option<unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char)>;

/// `managed_tensor_allocator`: a zeroed, writable CPU tensor of the prototype's dtype and shape.
///
/// # Safety
/// `prototype` is NULL or a readable `DLTensor` whose `shape` holds `ndim` extents; `out` NULL or
/// writable; `set_error`, if set, may be called with `error_ctx`.
unsafe extern "C" fn allocate(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut c_void,
    set_error: SetError,
) -> c_int {
    let fail = |kind: &CStr, message: &CStr| {
        if let Some(set_error) = set_error {
            // SAFETY: the caller's callback and context, with static strings.
            unsafe { set_error(error_ctx, kind.as_ptr(), message.as_ptr()) };
        }
        -1
    };
    if prototype.is_null() || out.is_null() {
        return fail(c"ValueError", c"NULL prototype or out");
    }
    // SAFETY: a readable prototype (contract): only dtype, ndim, shape and device are read.
    let prototype = unsafe { &*prototype };
    if prototype.device.device_type != kDLCPU {
        return fail(c"RuntimeError", c"dlpack_abi allocates CPU memory only");
    }
    let Ok(ndim) = usize::try_from(prototype.ndim) else {
        return fail(c"ValueError", c"negative ndim");
    };
    if ndim > MAX_NDIM || (ndim > 0 && prototype.shape.is_null()) {
        return fail(c"ValueError", c"ndim above 64, or NULL shape");
    }
    let shape = if ndim == 0 {
        alloc::vec::Vec::new()
    } else {
        // SAFETY: `ndim` readable extents (contract), checked non-NULL above.
        unsafe { core::slice::from_raw_parts(prototype.shape, ndim) }.to_vec()
    };
    // Sized by validation's own rule (odd widths round up per element, sub-byte ones pack),
    // and checked again by the export: the tensor never describes more than it allocates.
    let dtype = prototype.dtype;
    let Ok(bytes) = compact_byte_size(&shape, dtype, DLPackFlags::empty()) else {
        return fail(
            c"ValueError",
            c"invalid dtype, negative extent or size overflow",
        );
    };
    let Some(owner) = HostTensor::zeroed(bytes, shape, None, dtype, DLPackFlags::empty()) else {
        return fail(c"MemoryError", c"cannot allocate the tensor");
    };
    match VersionedTensor::from_owner(owner) {
        Ok(tensor) => {
            ALLOCATIONS.add();
            // SAFETY: writable (checked non-NULL; contract).
            unsafe { *out = tensor.into_raw() };
            0
        }
        Err(_) => fail(
            c"ValueError",
            c"the prototype is not a valid tensor description",
        ),
    }
}
