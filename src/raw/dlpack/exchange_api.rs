//! The C exchange API (DLPack 1.2+): a static table of functions a Python array type publishes
//! as `type(x).__dlpack_c_exchange_api__`, for exchanges without the `__dlpack__` round trip.
//! Every function returns 0 on success and non-zero on failure, and never synchronises streams.

use core::ffi::{c_char, c_int, c_void};

use super::{DLDeviceType, DLManagedTensorVersioned, DLPackVersion, DLTensor};

/// Allocates a new owning tensor in the producer, reading only `dtype`, `ndim`, `shape` and
/// `device` of `prototype`. On success writes `*out` and returns 0; on failure calls
/// `SetError(error_ctx, kind, message)` and returns non-zero.
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
pub type DLPackManagedTensorFromPyObjectNoSync = Option<
    unsafe extern "C" fn(py_object: *mut c_void, out: *mut *mut DLManagedTensorVersioned) -> c_int,
>;

/// Fills the caller's `DLTensor` with a non-owning view of a `PyObject*`, valid only until
/// control returns to the object's owner.
pub type DLPackDLTensorFromPyObjectNoSync =
    Option<unsafe extern "C" fn(py_object: *mut c_void, out: *mut DLTensor) -> c_int>;

/// Writes the producer's current work stream for a device (NULL is allowed for CPU).
pub type DLPackCurrentWorkStream = Option<
    unsafe extern "C" fn(
        device_type: DLDeviceType,
        device_id: i32,
        out_current_stream: *mut *mut c_void,
    ) -> c_int,
>;

/// Imports an owning tensor into the producer's tensor type, writing a new `PyObject*` to
/// `*out_py_object`. Takes ownership of `tensor` whether or not it succeeds.
pub type DLPackManagedTensorToPyObjectNoSync = Option<
    unsafe extern "C" fn(
        tensor: *mut DLManagedTensorVersioned,
        out_py_object: *mut *mut c_void,
    ) -> c_int,
>;

/// The part of an exchange API table that stays the same across versions.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLPackExchangeAPIHeader {
    /// Version of the table; check `major` before using the rest.
    pub version: DLPackVersion,
    /// A table of an older major version, or NULL.
    pub prev_api: *mut DLPackExchangeAPIHeader,
}

/// The exchange API table. Producers keep it in static storage for the life of the process.
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
