//! Import from Python: `__dlpack_c_exchange_api__` when the type offers it, otherwise
//! `__dlpack__` with version negotiation, and capsules consumed only after validation.
#![allow(unsafe_code)]

use alloc::format;
use core::ffi::CStr;
use core::ptr::{self, NonNull};
use core::sync::atomic::AtomicUsize;
use core::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCapsule, PyDict, PyTuple, PyType};
use pyo3::{ffi, intern};

use super::capsule::{capsule_pointer, consuming, type_name, DlpackCapsule};
use super::errors::{IntoPyErr, ToPyResult};
#[cfg(not(any(PyPy, Py_GIL_DISABLED)))]
use super::numpy_borrow;
use super::{borrows, streams, PyTensor, FOREIGN_EXCHANGE_IMPORTS};
use dlpack_abi::dlpack::{
    work_stream, ConsumerStream, ImportError, ManagedTensor, OrderError, VersionedTensor,
};
use dlpack_abi::raw::{
    kDLCPU, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLPackExchangeAPI,
    DLPackExchangeAPIHeader, DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION,
};

/// What [`from_dlpack`] asks the producer for: the keywords of `__dlpack__`.
///
/// ```no_run
/// use dlpack_abi_pyo3::{from_dlpack, DlpackRequest};
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
/// use pyo3::prelude::*;
///
/// #[pyfunction] // a private CPU copy of any producer's data, whatever device it is on
/// fn snapshot(array: &Bound<'_, PyAny>) -> PyResult<usize> {
///     let mut request = DlpackRequest::default();
///     request.copy = Some(true);
///     request.dl_device = Some(DLDevice { device_type: kDLCPU, device_id: 0 });
///     let tensor = from_dlpack(array, &request)?;
///     Ok(tensor.view().element_count())
/// }
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct DlpackRequest {
    /// The consumer's stream (a Python int) on which the data must be safe to use; `None` for
    /// CPU memory and stream-less devices.
    pub stream: Option<Py<PyAny>>,
    /// The device the tensor must be on; `None` for wherever it is.
    pub dl_device: Option<DLDevice>,
    /// `Some(true)`: always copy; `Some(false)`: never copy; `None`: copy only if needed.
    pub copy: Option<bool>,
}

impl DlpackRequest {
    /// Only the plain request may use the exchange API, which neither synchronises nor copies.
    pub(crate) fn is_plain(&self) -> bool {
        self.stream.is_none() && self.dl_device.is_none() && self.copy.is_none()
    }
}

/// Imports any object with `__dlpack__` (or a `dltensor[_versioned]` capsule) as an owned,
/// validated tensor.
///
/// - When `type(source).__dlpack_c_exchange_api__` is a `"dlpack_exchange_api"` capsule with a
///   major-1 table (older tables are found through `prev_api`) and the request is plain, its
///   `managed_tensor_from_py_object_no_sync` is used: no Python call, no capsule.
/// - A NumPy 2.1+ array (exactly `numpy.ndarray`, a native-order bool, integer, float or
///   complex dtype, at most 4 dimensions, strides of whole elements, memory not from a DLPack
///   capsule) under a plain request is read
///   directly into what its `__dlpack__` would hand over, without the call (not on PyPy or
///   free-threaded builds). The first import of the type only notes it.
/// - Otherwise `source.__dlpack__(max_version=(1, 3), ...)` with the request's keywords; on
///   `TypeError`, when neither `dl_device` nor `copy` is asked for, the legacy call
///   `__dlpack__()` (with `stream` if given).
/// - A capsule is checked (name, version, every field) before it is consumed. A refused capsule
///   is left as it was, so its own destructor frees it; an accepted one is renamed
///   `used_dltensor[_versioned]` and its destructor cleared, and the deleter then runs when the
///   tensor is dropped.
/// - A legacy tensor is upgraded to a versioned one marked `READ_ONLY` (legacy producers cannot
///   say whether the memory may be written).
///
/// # Errors
/// `BufferError` for a tensor that fails validation, `TypeError` for an object without the
/// protocol, `ValueError` for a capsule of another name or one consumed already; the
/// producer's own exceptions pass through.
///
/// ```no_run
/// use dlpack_abi_pyo3::{from_dlpack, DlpackRequest};
/// use pyo3::prelude::*;
///
/// #[pyfunction]
/// fn total(array: &Bound<'_, PyAny>) -> PyResult<f64> {
///     let tensor = from_dlpack(array, &DlpackRequest::default())?;
///     let values = tensor.view().as_slice::<f64>()
///         .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
///     Ok(values.iter().sum())
/// }
/// ```
pub fn from_dlpack(
    source: &Bound<'_, PyAny>,
    request: &DlpackRequest,
) -> PyResult<VersionedTensor> {
    let mut tensor = untracked(source, request)?;
    borrows::track(source.py(), &mut tensor, false)?;
    Ok(tensor)
}

/// [`from_dlpack`] before the tensor is registered as a borrow: ready on its device's default
/// stream.
pub(crate) fn untracked(
    source: &Bound<'_, PyAny>,
    request: &DlpackRequest,
) -> PyResult<VersionedTensor> {
    // Set once `source` is known to be no capsule, not ours, and of a type without a table: only
    // `__dlpack__` is left, and `import` need not ask again (issue 31: a NumPy argument).
    let mut only_dlpack = false;
    #[cfg(not(any(PyPy, Py_GIL_DISABLED)))]
    if request.is_plain() {
        if let Some(tensor) = numpy_borrow::import_direct(source) {
            // A NumPy array, read as its `__dlpack__` would export it, without the call.
            return Ok(tensor);
        }
    }
    #[cfg(not(any(Py_LIMITED_API, PyPy)))]
    if request.is_plain() {
        if let Some(descriptor) = plain_type_method(source) {
            // A type seen before to be no capsule, not ours, without a table, and with a C
            // `__dlpack__` (NumPy's `ndarray`): one probe instead of the checks below.
            return call_dlpack_via(source, request, Some(descriptor)).map(|(tensor, _)| tensor);
        }
    }
    if request.is_plain() && !source.is_instance_of::<PyCapsule>() {
        // Our own tensor: the export its exchange table would make, ready where a plain
        // request wants it, without the round trip through the table and a second validation.
        if let Ok(ours) = source.cast::<PyTensor>() {
            return ours.get().share(ConsumerStream::Unspecified);
        }
        if let Some(api) = exchange_api_of(source) {
            let (tensor, ready) = import_through(source, api)?;
            // Through the table the data is ready on the producer's current work stream (live:
            // an event recorded on it now covers its pending work); a plain request wants it on
            // the device's default stream (the array API's `None`).
            let device = tensor.view().device();
            if streams::on_default_stream(device, ready) {
                // Ready on the device's default stream already (CPU data, or a producer working
                // there): what the hook below would answer, with no runtime lookup and no hook
                // to allocate (issue 38: the CUDA import from PyTorch lost a third of its speed
                // to them).
                return Ok(tensor);
            }
            let Some(hook) = streams::ready_on(device, ready).py()? else {
                return Ok(tensor); // CPU data
            };
            return match hook.ready_on(device, ConsumerStream::Unspecified) {
                Ok(()) => Ok(tensor),
                Err(OrderError::NotOrdered { .. }) => {
                    // No runtime to order it: the producer's `__dlpack__` orders it instead.
                    drop(tensor);
                    call_dlpack(source, request).map(|(tensor, _)| tensor)
                }
                Err(error) => Err(error.into_py_err()),
            };
        }
        only_dlpack = true;
        #[cfg(not(any(Py_LIMITED_API, PyPy)))]
        if let Some(descriptor) = cached_dlpack_method(source) {
            PLAIN_TYPES.insert(&source.get_type(), descriptor as usize);
        }
    }
    let imported = if only_dlpack {
        call_dlpack(source, request)
    } else {
        import_untracked(source, request)
    };
    imported.map(|(tensor, _)| tensor)
}

/// Imports as [`from_dlpack`] does (a registered borrow), and says on which stream of its
/// device the tensor is ready: the one the request names (its device's default stream when it
/// names none), or, through a producer's exchange API, the producer's current work stream (a
/// plain request to a type with a table).
pub(crate) fn import(
    source: &Bound<'_, PyAny>,
    request: &DlpackRequest,
) -> PyResult<(VersionedTensor, ConsumerStream)> {
    let (mut tensor, ready) = import_untracked(source, request)?;
    borrows::track(source.py(), &mut tensor, false)?;
    Ok((tensor, ready))
}

/// [`import`] before the tensor is registered as a borrow.
fn import_untracked(
    source: &Bound<'_, PyAny>,
    request: &DlpackRequest,
) -> PyResult<(VersionedTensor, ConsumerStream)> {
    #[cfg(not(any(PyPy, Py_GIL_DISABLED)))]
    if request.is_plain() {
        if let Some(tensor) = numpy_borrow::import_direct(source) {
            // A NumPy array, read as its `__dlpack__` would export it: CPU data.
            return Ok((tensor, ConsumerStream::Unspecified));
        }
    }
    if source.is_instance_of::<PyCapsule>() {
        // A capsule is ready where its maker asked for it: the request's stream says where.
        let tensor = consume(source)?;
        let ready = requested_stream(source.py(), request, &tensor)?;
        return Ok((tensor, ready));
    }
    if request.is_plain() {
        if let Some(api) = exchange_api_of(source) {
            return import_through(source, api);
        }
    }
    call_dlpack(source, request)
}

/// The stream `request` names, parsed for `tensor`'s device (no stream: its default stream;
/// none at all for CPU data). A value the device's table refuses is an error (the tensor is
/// dropped by the caller, its deleter run).
fn requested_stream(
    py: Python<'_>,
    request: &DlpackRequest,
    tensor: &VersionedTensor,
) -> PyResult<ConsumerStream> {
    let device = tensor.view().device();
    match &request.stream {
        Some(stream) if device.device_type != kDLCPU => {
            Ok(ConsumerStream::parse(device, stream.bind(py).extract::<Option<i64>>()?).py()?)
        }
        _ => Ok(ConsumerStream::Unspecified),
    }
}

/// `source.__dlpack__(...)` with the request's keywords (and the legacy retry), consumed; the
/// stream the tensor is ready on is the request's, parsed for the tensor's device.
fn call_dlpack(
    source: &Bound<'_, PyAny>,
    request: &DlpackRequest,
) -> PyResult<(VersionedTensor, ConsumerStream)> {
    call_dlpack_via(source, request, None)
}

/// [`call_dlpack`], through `descriptor` (the C method descriptor of `source`'s type's
/// `__dlpack__`, found before) for a plain request when it is given.
#[inline]
fn call_dlpack_via(
    source: &Bound<'_, PyAny>,
    request: &DlpackRequest,
    descriptor: Option<*mut ffi::PyObject>,
) -> PyResult<(VersionedTensor, ConsumerStream)> {
    let py = source.py();
    let method = intern!(py, "__dlpack__");
    let called = if request.is_plain() {
        match descriptor {
            #[cfg(not(any(Py_LIMITED_API, PyPy)))]
            Some(descriptor) => call_descriptor(source, descriptor),
            _ => call_plain(source, method),
        }
    } else {
        source.call_method(method, (), Some(&request_kwargs(py, request)?))
    };
    let capsule = match called {
        Ok(capsule) => capsule,
        Err(error)
            if error.is_instance_of::<PyTypeError>(py)
                && request.dl_device.is_none()
                && request.copy.is_none()
                && source.hasattr(method)? =>
        {
            // A producer from before the 2023.12 keywords.
            let legacy = PyDict::new(py);
            if let Some(stream) = &request.stream {
                legacy.set_item(intern!(py, "stream"), stream)?;
            }
            source.call_method(method, (), Some(&legacy))?
        }
        Err(error)
            if error.is_instance_of::<PyBufferError>(py)
                && per_thread_default_refused(source, request) =>
        {
            // CUDA's per-thread default stream (`2`) refused (PyTorch 2.11: "per-thread default
            // stream is not supported"): the legacy default stream (`1`) instead. The per-thread
            // default stream is a blocking stream, so work the consumer enqueues on it later
            // waits for what the producer enqueued on the legacy default stream: "The per-thread
            // default stream is not a non-blocking stream and will synchronize with the legacy
            // default stream if both are used in a program" (CUDA Runtime API, "Stream
            // synchronization behavior"). The tensor is then ready on the stream the request
            // names.
            let legacy = request_kwargs(py, request)?;
            legacy.set_item(intern!(py, "stream"), 1)?;
            source.call_method(method, (), Some(&legacy))?
        }
        Err(error) if !source.hasattr(method)? => {
            return Err(PyTypeError::new_err(format!(
                "{} does not support the DLPack protocol (no __dlpack__): {error}",
                type_name(source)
            )))
        }
        Err(error) => return Err(error),
    };
    let tensor = consume(&capsule)?;
    let ready = requested_stream(py, request, &tensor)?;
    Ok((tensor, ready))
}

/// Whether `request` names CUDA's per-thread default stream (`2`) for data asked for on a
/// device (`dl_device`, else the producer's `__dlpack_device__`) where `2` means that stream
/// ([`ConsumerStream::parse`]: CUDA device, pinned and managed memory): the one stream a
/// producer may refuse that has a stand-in ordered with it. Asked only after a `BufferError`
/// (whatever it says: a second refusal, of stream 1, then stands).
fn per_thread_default_refused(source: &Bound<'_, PyAny>, request: &DlpackRequest) -> bool {
    let py = source.py();
    let Some(stream) = &request.stream else {
        return false;
    };
    if !matches!(stream.bind(py).extract::<i64>(), Ok(2)) {
        return false;
    }
    // The stream is the consumer's, on the device the data is asked for (`dl_device`), else
    // where it is.
    let device = match request.dl_device {
        Some(device) => device,
        None => {
            let device = source
                .call_method0(intern!(py, "__dlpack_device__"))
                .and_then(|device| device.extract::<(i32, i32)>());
            let Ok((device_type, device_id)) = device else {
                return false; // no device to read: the producer's refusal stands
            };
            DLDevice {
                device_type: DLDeviceType(device_type),
                device_id,
            }
        }
    };
    ConsumerStream::parse(device, Some(2)) == Ok(ConsumerStream::PerThreadDefault)
}

/// `(1, 3)`, made once: the `max_version` of every `__dlpack__` call.
fn max_version(py: Python<'_>) -> PyResult<&Bound<'_, PyTuple>> {
    static VERSION: PyOnceLock<Py<PyTuple>> = PyOnceLock::new();
    let version = VERSION.get_or_try_init(py, || {
        PyTuple::new(py, [DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION]).map(Bound::unbind)
    })?;
    Ok(version.bind(py))
}

/// `source.__dlpack__(max_version=(1, 3))` through `PyObject_VectorcallMethod` (CPython 3.12's
/// stable ABI, or any version's full API): no bound method, no keyword dict, names matched by
/// pointer. The cheapest call there is; a fresh dict and tuple per call cost about 100 ns of a
/// NumPy import, the bound method and the dict's unpacking as much again.
#[cfg(any(Py_3_12, not(any(Py_LIMITED_API, PyPy))))]
fn call_plain<'py>(
    source: &Bound<'py, PyAny>,
    method: &Bound<'py, pyo3::types::PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = source.py();
    let names = max_version_name(py)?;
    #[cfg(not(any(Py_LIMITED_API, PyPy)))]
    if let Some(descriptor) = cached_dlpack_method(source) {
        return call_descriptor(source, descriptor);
    }
    let args = [source.as_ptr(), max_version(py)?.as_ptr()];
    // SAFETY: attached; `args` holds `self` and then the one keyword's value, both alive for the
    // call, and `names` is a tuple of that one name. `nargsf` is 1 (`self`) without
    // `PY_VECTORCALL_ARGUMENTS_OFFSET`: the slot before `args` is not ours to write.
    let result = unsafe {
        ffi::PyObject_VectorcallMethod(method.as_ptr(), args.as_ptr(), 1, names.as_ptr())
    };
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, result) }
}

/// `max_version`'s keyword name, as a vectorcall's `kwnames`, made once.
#[cfg(any(Py_3_12, not(any(Py_LIMITED_API, PyPy))))]
fn max_version_name(py: Python<'_>) -> PyResult<&Bound<'_, PyTuple>> {
    static NAMES: PyOnceLock<Py<PyTuple>> = PyOnceLock::new();
    let names = NAMES.get_or_try_init(py, || {
        PyTuple::new(py, [intern!(py, "max_version")]).map(Bound::unbind)
    })?;
    Ok(names.bind(py))
}

/// `source.__dlpack__(max_version=(1, 3))` through the C method descriptor of its type's
/// `__dlpack__` ([`cached_dlpack_method`]), called with `self` first as the method call would.
#[cfg(not(any(Py_LIMITED_API, PyPy)))]
#[inline]
fn call_descriptor<'py>(
    source: &Bound<'py, PyAny>,
    descriptor: *mut ffi::PyObject,
) -> PyResult<Bound<'py, PyAny>> {
    let py = source.py();
    let args = [source.as_ptr(), max_version(py)?.as_ptr()];
    // SAFETY: attached; `descriptor` is a live C method descriptor of `source`'s type (kept
    // alive by the type, which the cache holds), called as the method call would be: `self`
    // first, then the keyword's value named by the names tuple; `nargsf` is 1 (`self`) without
    // `PY_VECTORCALL_ARGUMENTS_OFFSET`.
    let result = unsafe {
        ffi::PyObject_Vectorcall(descriptor, args.as_ptr(), 1, max_version_name(py)?.as_ptr())
    };
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, result) }
}

/// `source.__dlpack__(max_version=(1, 3))` with a keyword dict made once (the stable ABI before
/// CPython 3.12 has no vectorcall). Callees see a copy or only read it (CPython unpacks it for
/// vectorcall callees, and copies it into a Python function's `**kwargs`); a C callee that
/// changed it anyway would have it rebuilt before the next call.
#[cfg(not(any(Py_3_12, not(any(Py_LIMITED_API, PyPy)))))]
fn call_plain<'py>(
    source: &Bound<'py, PyAny>,
    method: &Bound<'py, pyo3::types::PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    static PLAIN: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let py = source.py();
    let version = max_version(py)?;
    let kwargs = PLAIN.get_or_init(py, || PyDict::new(py).unbind()).bind(py);
    let intact = kwargs.len() == 1
        && kwargs
            .get_item(intern!(py, "max_version"))?
            .is_some_and(|value| value.is(version));
    if !intact {
        kwargs.clear();
        kwargs.set_item(intern!(py, "max_version"), version)?;
    }
    source.call_method(method, (), Some(kwargs))
}

/// The keywords of `__dlpack__` for `request`: `max_version=(1, 3)` and those it asks for.
fn request_kwargs<'py>(py: Python<'py>, request: &DlpackRequest) -> PyResult<Bound<'py, PyDict>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item(
        intern!(py, "max_version"),
        (DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION),
    )?;
    if let Some(stream) = &request.stream {
        kwargs.set_item(intern!(py, "stream"), stream)?;
    }
    if let Some(device) = request.dl_device {
        kwargs.set_item(
            intern!(py, "dl_device"),
            (device.device_type.0, device.device_id),
        )?;
    }
    if let Some(copy) = request.copy {
        kwargs.set_item(intern!(py, "copy"), copy)?;
    }
    Ok(kwargs)
}

/// Consumes a `dltensor_versioned` or `dltensor` capsule. The name is read once and compared
/// here: `PyCapsule_IsValid` per candidate name would compare it again (with `strcmp`) before
/// `take`'s `PyCapsule_GetPointer` does.
#[inline(always)] // its result, returned through memory, stalled the load after it (perf, issue 31)
fn consume(capsule: &Bound<'_, PyAny>) -> PyResult<VersionedTensor> {
    let Ok(capsule) = capsule.cast::<PyCapsule>() else {
        return Err(PyTypeError::new_err(format!(
            "__dlpack__ returned {}, not a PyCapsule",
            type_name(capsule)
        )));
    };
    // SAFETY: a live capsule, attached; the name is NULL or a C string.
    let name = unsafe { ffi::PyCapsule_GetName(capsule.as_ptr()) };
    if name.is_null() {
        // A nameless capsule (or, had it no pointer, the exception saying so, dropped).
        PyErr::take(capsule.py());
    }
    let name = (!name.is_null()).then(|| {
        // SAFETY: non-NULL names are NUL-terminated and live as long as the capsule, which we
        // hold; no Python code runs while the name is read.
        unsafe { CStr::from_ptr(name) }
    });
    match name {
        Some(name) if name == DLManagedTensorVersioned::NAME => consuming(capsule.as_any(), || {
            take::<DLManagedTensorVersioned>(capsule)
        }),
        Some(name) if name == DLManagedTensor::NAME => {
            consuming(capsule.as_any(), || take::<DLManagedTensor>(capsule))
                .map(ManagedTensor::into_versioned)
        }
        Some(name)
            if name == DLManagedTensorVersioned::USED_NAME
                || name == DLManagedTensor::USED_NAME =>
        {
            Err(PyValueError::new_err(
                "the DLPack capsule was already consumed",
            ))
        }
        other => Err(PyValueError::new_err(format!(
            "expected a capsule named 'dltensor_versioned' or 'dltensor', got {:?}",
            other.map(|name| name.to_string_lossy().into_owned())
        ))),
    }
}

/// Validates the capsule's tensor without owning it, then renames the capsule and owns it.
fn take<M: DlpackCapsule>(capsule: &Bound<'_, PyCapsule>) -> PyResult<ManagedTensor<M>> {
    let pointer: NonNull<M> = capsule_pointer(capsule.as_any(), M::NAME)?;
    // SAFETY: an unconsumed DLPack capsule holds a live managed struct that its producer hands
    // to whoever consumes the capsule; validation reads it without taking it, so a refusal
    // leaves the capsule (and its destructor) in charge.
    let checked = unsafe { ManagedTensor::<M>::validate(pointer) }.py()?;
    // SAFETY: a live capsule, attached; a static name. Renaming is the DLPack consume step.
    if unsafe { ffi::PyCapsule_SetName(capsule.as_ptr(), M::USED_NAME.as_ptr()) } != 0 {
        return Err(PyErr::fetch(capsule.py()));
    }
    // SAFETY: as above. Clearing the destructor as well protects against producers whose
    // destructor does not check the name.
    unsafe { ffi::PyCapsule_SetDestructor(capsule.as_ptr(), None) };
    // SAFETY: consumed: the struct is ours, unchanged since it was validated.
    Ok(unsafe { checked.take() })
}

/// Immutable types and the address of their major-1 exchange API table (0: none), so that a
/// type without one (NumPy's `ndarray`, for one) is not asked again: the failed lookup raises
/// and discards an `AttributeError` every time, about half the cost of a NumPy import.
///
/// Reads take no lock: entries are only ever appended, each written before `len` is published
/// with release ordering, so a reader that loads `len` with acquire ordering sees every entry
/// below it whole. Writers append under `owners`' lock, which also holds a reference to each
/// cached type, so that a type's address is never reused while it is cached. At most
/// [`EXCHANGE_CACHE_CAPACITY`] types are remembered; later ones are asked every time.
struct ExchangeCache {
    /// How many entries are published.
    len: AtomicUsize,
    /// `(type address, table address)` pairs.
    entries: [(AtomicUsize, AtomicUsize); EXCHANGE_CACHE_CAPACITY],
    /// The cached types, kept alive; the writers' lock.
    owners: std::sync::Mutex<alloc::vec::Vec<Py<PyType>>>,
}

impl ExchangeCache {
    /// The table address cached for the type at `ty`, if it is cached.
    fn get(&self, ty: usize) -> Option<usize> {
        let len = self.len.load(Acquire);
        self.entries[..len]
            .iter()
            .find(|(cached, _)| cached.load(Relaxed) == ty)
            .map(|(_, address)| address.load(Relaxed))
    }

    /// Caches `address` for `ty`, unless it is cached already or the cache is full.
    fn insert(&self, ty: &Bound<'_, PyType>, address: usize) {
        let mut owners = self
            .owners
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let len = self.len.load(Relaxed);
        let key = ty.as_ptr() as usize;
        if len == EXCHANGE_CACHE_CAPACITY || self.get(key).is_some() {
            return;
        }
        owners.push(ty.clone().unbind());
        self.entries[len].0.store(key, Relaxed);
        self.entries[len].1.store(address, Relaxed);
        self.len.store(len + 1, Release);
    }
}

static EXCHANGE_CACHE: ExchangeCache = ExchangeCache {
    len: AtomicUsize::new(0),
    entries: [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; EXCHANGE_CACHE_CAPACITY],
    owners: std::sync::Mutex::new(alloc::vec::Vec::new()),
};

/// `Py_TPFLAGS_IMMUTABLETYPE` (CPython 3.10; the bit is unused before, where only static types,
/// which lack `Py_TPFLAGS_HEAPTYPE`, are immutable). pyo3 names it only for 3.10 and later.
const IMMUTABLE_TYPE: core::ffi::c_ulong = 1 << 8;

/// How many types [`EXCHANGE_CACHE`] remembers.
const EXCHANGE_CACHE_CAPACITY: usize = 64;

/// The major-1 exchange API table of `source`'s type, if it has one: from the cache for types
/// that cannot change (static types and immutable heap types, whose attributes Python code cannot
/// set), looked up for the others.
fn exchange_api_of(source: &Bound<'_, PyAny>) -> Option<&'static DLPackExchangeAPI> {
    let ty = source.get_type();
    // SAFETY: `ty` is a live type object (we hold a reference), and the GIL is held.
    let flags = unsafe { ffi::PyType_GetFlags(ty.as_type_ptr()) };
    let immutable = flags & IMMUTABLE_TYPE != 0 || flags & ffi::Py_TPFLAGS_HEAPTYPE == 0;
    if !immutable {
        return lookup_exchange_api(&ty);
    }
    let address = match EXCHANGE_CACHE.get(ty.as_ptr() as usize) {
        Some(address) => address,
        None => {
            // Looked up outside the writers' lock: the lookup runs Python code (a descriptor, a
            // metaclass), which may come back here.
            let address = lookup_exchange_api(&ty).map_or(0, |table| table as *const _ as usize);
            EXCHANGE_CACHE.insert(&ty, address);
            // Once per type: NumPy's `ndarray` is then imported without `__dlpack__`.
            #[cfg(not(any(PyPy, Py_GIL_DISABLED)))]
            numpy_borrow::note_type(&ty);
            address
        }
    };
    // SAFETY: a non-zero address is a major-1 table found by `lookup_exchange_api`, static and
    // process-lifetime by the protocol.
    (address != 0).then(|| unsafe { &*(address as *const DLPackExchangeAPI) })
}

/// The `__dlpack__` of an immutable type whose instances have no `__dict__`, when it is a C
/// method descriptor (NumPy's `ndarray`): calling it with `self` first is what the method call
/// does, without looking the method up on every call. Remembered per type ([`DLPACK_METHODS`]);
/// `None` for every other type, which takes the method call.
#[cfg(not(any(Py_LIMITED_API, PyPy)))]
fn cached_dlpack_method(source: &Bound<'_, PyAny>) -> Option<*mut ffi::PyObject> {
    let ty = source.get_type();
    // SAFETY: `ty` is a live type object (we hold a reference), and the GIL is held.
    let flags = unsafe { ffi::PyType_GetFlags(ty.as_type_ptr()) };
    if flags & IMMUTABLE_TYPE == 0 && flags & ffi::Py_TPFLAGS_HEAPTYPE != 0 {
        return None;
    }
    let address = match DLPACK_METHODS.get(ty.as_ptr() as usize) {
        Some(address) => address,
        None => {
            // SAFETY: as above; the full API's type object has `tp_dictoffset`.
            let no_dict = unsafe { (*ty.as_type_ptr()).tp_dictoffset } == 0;
            let py = source.py();
            // CPython's static type of C method descriptors (its address only).
            let descriptor_type = core::ptr::addr_of_mut!(ffi::PyMethodDescr_Type);
            let address = ty
                .getattr(intern!(py, "__dlpack__"))
                .ok()
                .filter(|method| no_dict && method.get_type().as_type_ptr() == descriptor_type)
                .map_or(0, |method| method.as_ptr() as usize);
            PyErr::take(py);
            DLPACK_METHODS.insert(&ty, address);
            address
        }
    };
    (address != 0).then_some(address as *mut ffi::PyObject)
}

/// Immutable types and their `__dlpack__` method descriptor (0: call the method instead): the
/// same kind of cache as [`EXCHANGE_CACHE`]. The type's dictionary, which cannot change, holds
/// the descriptor; the cache holds the type.
#[cfg(not(any(Py_LIMITED_API, PyPy)))]
static DLPACK_METHODS: ExchangeCache = ExchangeCache {
    len: AtomicUsize::new(0),
    entries: [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; EXCHANGE_CACHE_CAPACITY],
    owners: std::sync::Mutex::new(alloc::vec::Vec::new()),
};

/// Types whose instances [`untracked`] found to be plain `__dlpack__` producers (no capsule, not
/// a `dlpack_abi.Tensor`, no exchange table: immutable, so that cannot change), with their
/// `__dlpack__` C method descriptor ([`DLPACK_METHODS`]): a plain import of one costs one probe.
#[cfg(not(any(Py_LIMITED_API, PyPy)))]
static PLAIN_TYPES: ExchangeCache = ExchangeCache {
    len: AtomicUsize::new(0),
    entries: [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; EXCHANGE_CACHE_CAPACITY],
    owners: std::sync::Mutex::new(alloc::vec::Vec::new()),
};

/// The `__dlpack__` descriptor of `source`'s type when [`PLAIN_TYPES`] holds it.
#[cfg(not(any(Py_LIMITED_API, PyPy)))]
#[inline]
fn plain_type_method(source: &Bound<'_, PyAny>) -> Option<*mut ffi::PyObject> {
    // The type's address only (no new reference): compared with cached types, which the cache
    // keeps alive.
    let ty = source.get_type_ptr() as usize;
    PLAIN_TYPES
        .get(ty)
        .map(|descriptor| descriptor as *mut ffi::PyObject)
}

/// The major-1 exchange API table of type `ty`, looked up.
fn lookup_exchange_api(ty: &Bound<'_, PyType>) -> Option<&'static DLPackExchangeAPI> {
    let py = ty.py();
    let attribute = ty.getattr(intern!(py, "__dlpack_c_exchange_api__")).ok()?;
    let mut header: *const DLPackExchangeAPIHeader =
        capsule_pointer::<DLPackExchangeAPIHeader>(&attribute, c"dlpack_exchange_api")
            .ok()?
            .as_ptr();
    while !header.is_null() {
        // SAFETY: the protocol makes the table (and the tables `prev_api` links) static and
        // process-lifetime; the header is the table's permanent prefix.
        let current = unsafe { &*header };
        if current.version.major == DLPACK_MAJOR_VERSION {
            // SAFETY: a major-1 header starts a whole `DLPackExchangeAPI` (the header is its
            // first field), static as above.
            return Some(unsafe { &*header.cast::<DLPackExchangeAPI>() });
        }
        header = current.prev_api;
    }
    None
}

/// `managed_tensor_from_py_object_no_sync`, then validation (which calls the deleter on error),
/// and the table's `current_work_stream` for the tensor's device: where its data is ready (the
/// exchange API's exports never synchronise; their consumer works on that stream).
fn import_through(
    source: &Bound<'_, PyAny>,
    api: &DLPackExchangeAPI,
) -> PyResult<(VersionedTensor, ConsumerStream)> {
    let py = source.py();
    let Some(export) = api.managed_tensor_from_py_object_no_sync else {
        return Err(PyBufferError::new_err(
            "the exchange API has no managed_tensor_from_py_object_no_sync",
        ));
    };
    let mut out = ptr::null_mut();
    // SAFETY: the exchange API contract: a live object of the table's type, attached, and an
    // out-pointer; 0 means `out` holds an owning tensor, non-zero that an exception is set.
    let status = unsafe { export(source.as_ptr().cast(), &mut out) };
    if status != 0 {
        return Err(PyErr::take(py).unwrap_or_else(|| {
            PyBufferError::new_err(format!("the exchange API failed with {status}"))
        }));
    }
    FOREIGN_EXCHANGE_IMPORTS.add();
    // SAFETY: on success `out` is an owning tensor handed to us.
    let tensor = unsafe { VersionedTensor::from_raw(out) }.map_err(|error| match error {
        ImportError::NullTensor => PyBufferError::new_err("the exchange API returned NULL"),
        error => error.into_py_err(),
    })?;
    let device = tensor.view().device();
    if device.device_type == kDLCPU {
        return Ok((tensor, ConsumerStream::Unspecified));
    }
    let Some(current_work_stream) = api.current_work_stream else {
        return Err(PyBufferError::new_err(
            "the exchange API has no current_work_stream, so its device data cannot be ordered",
        ));
    };
    let mut stream = ptr::null_mut();
    // SAFETY: the exchange API contract: a device and an out-pointer; 0 means `stream` holds
    // the producer's current stream for the device (NULL: its default stream).
    let status = unsafe { current_work_stream(device.device_type, device.device_id, &mut stream) };
    if status != 0 {
        return Err(PyErr::take(py).unwrap_or_else(|| {
            PyBufferError::new_err(format!("current_work_stream failed with {status}"))
        }));
    }
    Ok((tensor, work_stream(device, stream as usize)))
}
