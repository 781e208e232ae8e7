//! The C exchange API (DLPack 1.2+): a static table of functions a Python array type publishes
//! as `type(x).__dlpack_c_exchange_api__`, for exchanges without the `__dlpack__` round trip.
//! Every function returns 0 on success and non-zero on failure, and never synchronises streams.

use core::ffi::{c_char, c_int, c_void};

use super::{DLDeviceType, DLManagedTensorVersioned, DLPackVersion, DLTensor};

/// Allocates a new owning tensor in the producer, reading only `dtype`, `ndim`, `shape` and
/// `device` of `prototype`. On success writes `*out` and returns 0; on failure calls
/// `SetError(error_ctx, kind, message)` and returns non-zero.
///
/// ```
/// use core::ffi::{c_char, c_int, c_void};
/// use dlpack_abi::raw::dlpack::{DLManagedTensorVersioned, DLPackManagedTensorAllocator, DLTensor};
///
/// /// A producer that cannot allocate: it reports why through `set_error`.
/// unsafe extern "C" fn allocate(
///     _prototype: *mut DLTensor,
///     _out: *mut *mut DLManagedTensorVersioned,
///     error_ctx: *mut c_void,
///     set_error: Option<unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char)>,
/// ) -> c_int {
///     if let Some(set_error) = set_error {
///         // SAFETY: both strings are NUL-terminated and static.
///         unsafe { set_error(error_ctx, c"MemoryError".as_ptr(), c"out of memory".as_ptr()) };
///     }
///     -1
/// }
/// let slot: DLPackManagedTensorAllocator = Some(allocate);
/// assert!(slot.is_some());
/// ```
pub type DLPackManagedTensorAllocator = Option<
    unsafe extern "C" fn(
        prototype: *mut DLTensor,
        out: *mut *mut DLManagedTensorVersioned,
        error_ctx: *mut c_void,
        SetError: Option<
            unsafe extern "C" fn(
                error_ctx: *mut c_void,
                kind: *const c_char,
                message: *const c_char,
            ),
        >,
    ) -> c_int,
>;

/// Exports a `PyObject*` of the table's type as an owning tensor written to `*out`, without
/// stream synchronisation. On failure sets a Python exception and returns non-zero.
///
/// ```
/// use core::ffi::{c_int, c_void};
/// use dlpack_abi::raw::dlpack::{DLManagedTensorVersioned, DLPackManagedTensorFromPyObjectNoSync};
///
/// /// A producer's slot: a real one exports the object, as `__dlpack__` would.
/// unsafe extern "C" fn from_py_object(
///     _py_object: *mut c_void,
///     _out: *mut *mut DLManagedTensorVersioned,
/// ) -> c_int {
///     -1 // (and a Python exception set)
/// }
/// let slot: DLPackManagedTensorFromPyObjectNoSync = Some(from_py_object);
/// assert!(slot.is_some());
/// ```
pub type DLPackManagedTensorFromPyObjectNoSync = Option<
    unsafe extern "C" fn(py_object: *mut c_void, out: *mut *mut DLManagedTensorVersioned) -> c_int,
>;

/// Fills the caller's `DLTensor` with a non-owning view of a `PyObject*`, valid only until
/// control returns to the object's owner.
///
/// ```
/// use core::ffi::{c_int, c_void};
/// use dlpack_abi::raw::dlpack::{DLPackDLTensorFromPyObjectNoSync, DLTensor};
///
/// /// The optional non-owning fast path; a producer without one leaves the slot NULL.
/// let none: DLPackDLTensorFromPyObjectNoSync = None;
/// unsafe extern "C" fn view(_py_object: *mut c_void, _out: *mut DLTensor) -> c_int {
///     -1
/// }
/// let some: DLPackDLTensorFromPyObjectNoSync = Some(view);
/// assert!(none.is_none() && some.is_some());
/// ```
pub type DLPackDLTensorFromPyObjectNoSync =
    Option<unsafe extern "C" fn(py_object: *mut c_void, out: *mut DLTensor) -> c_int>;

/// Writes the producer's current work stream for a device (NULL is allowed for CPU).
///
/// ```
/// use core::ffi::{c_int, c_void};
/// use dlpack_abi::raw::dlpack::{kDLCPU, DLDeviceType, DLPackCurrentWorkStream};
///
/// /// A CPU-only producer: there is no stream, so it writes NULL.
/// unsafe extern "C" fn current_work_stream(
///     _device_type: DLDeviceType,
///     _device_id: i32,
///     out_current_stream: *mut *mut c_void,
/// ) -> c_int {
///     // SAFETY: the caller passes a pointer valid for writes.
///     unsafe { *out_current_stream = core::ptr::null_mut() };
///     0
/// }
/// let slot: DLPackCurrentWorkStream = Some(current_work_stream);
/// let mut stream = core::ptr::NonNull::<c_void>::dangling().as_ptr();
/// // SAFETY: `stream` is valid for writes.
/// assert_eq!(unsafe { slot.unwrap()(kDLCPU, 0, &mut stream) }, 0);
/// assert!(stream.is_null());
/// ```
pub type DLPackCurrentWorkStream = Option<
    unsafe extern "C" fn(
        device_type: DLDeviceType,
        device_id: i32,
        out_current_stream: *mut *mut c_void,
    ) -> c_int,
>;

/// Imports an owning tensor into the producer's tensor type, writing a new `PyObject*` to
/// `*out_py_object`. Takes ownership of `tensor` whether or not it succeeds.
///
/// ```
/// use core::ffi::{c_int, c_void};
/// use dlpack_abi::raw::dlpack::{DLManagedTensorVersioned, DLPackManagedTensorToPyObjectNoSync};
///
/// /// A producer's slot: it owns `tensor` from the call on, even when it fails.
/// unsafe extern "C" fn to_py_object(
///     tensor: *mut DLManagedTensorVersioned,
///     _out_py_object: *mut *mut c_void,
/// ) -> c_int {
///     // This one refuses every tensor, so it releases what it was given.
///     // SAFETY: the caller hands over a live tensor whose deleter has not run.
///     if let Some(deleter) = unsafe { (*tensor).deleter } {
///         // SAFETY: as above; the deleter runs exactly once, here.
///         unsafe { deleter(tensor) };
///     }
///     -1
/// }
/// let slot: DLPackManagedTensorToPyObjectNoSync = Some(to_py_object);
/// assert!(slot.is_some());
/// ```
pub type DLPackManagedTensorToPyObjectNoSync = Option<
    unsafe extern "C" fn(
        tensor: *mut DLManagedTensorVersioned,
        out_py_object: *mut *mut c_void,
    ) -> c_int,
>;

/// The part of an exchange API table that stays the same across versions.
///
/// ```
/// use dlpack_abi::raw::dlpack::{DLPackExchangeAPIHeader, DLPackVersion};
///
/// let header = DLPackExchangeAPIHeader { version: DLPackVersion::CURRENT, prev_api: core::ptr::null_mut() };
/// // A consumer checks the major version before it reads past the header.
/// assert_eq!(header.version.major, 1);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLPackExchangeAPIHeader {
    /// Version of the table; check `major` before using the rest.
    pub version: DLPackVersion,
    /// A table of an older major version, or NULL.
    pub prev_api: *mut DLPackExchangeAPIHeader,
}

/// The exchange API table. Producers keep it in static storage for the life of the process.
///
/// ```
/// use dlpack_abi::raw::dlpack::{DLPackExchangeAPI, DLPackExchangeAPIHeader, DLPackVersion};
///
/// /// What a consumer checks before it calls a table found behind
/// /// `type(x).__dlpack_c_exchange_api__`.
/// fn usable(api: &DLPackExchangeAPI) -> bool {
///     api.header.version.major == DLPackVersion::CURRENT.major
///         && api.managed_tensor_allocator.is_some()
///         && api.managed_tensor_from_py_object_no_sync.is_some()
///         && api.managed_tensor_to_py_object_no_sync.is_some()
///         && api.current_work_stream.is_some()
/// }
/// let empty = DLPackExchangeAPI {
///     header: DLPackExchangeAPIHeader { version: DLPackVersion::CURRENT, prev_api: core::ptr::null_mut() },
///     managed_tensor_allocator: None,
///     managed_tensor_from_py_object_no_sync: None,
///     managed_tensor_to_py_object_no_sync: None,
///     dltensor_from_py_object_no_sync: None,
///     current_work_stream: None,
/// };
/// assert!(!usable(&empty));
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLPackExchangeAPI {
    /// Version and link to older tables.
    pub header: DLPackExchangeAPIHeader,
    /// Non-NULL.
    pub managed_tensor_allocator: DLPackManagedTensorAllocator,
    /// Non-NULL.
    pub managed_tensor_from_py_object_no_sync: DLPackManagedTensorFromPyObjectNoSync,
    /// Non-NULL.
    pub managed_tensor_to_py_object_no_sync: DLPackManagedTensorToPyObjectNoSync,
    /// May be NULL: the producer offers no non-owning fast path.
    pub dltensor_from_py_object_no_sync: DLPackDLTensorFromPyObjectNoSync,
    /// Non-NULL.
    pub current_work_stream: DLPackCurrentWorkStream,
}
