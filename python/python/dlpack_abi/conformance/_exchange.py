"""The C exchange API rules (dlpack-1.3.md §6.5, §7): the table a type publishes as
``__dlpack_c_exchange_api__``, called through ctypes as a C consumer calls it."""
import ctypes

from . import _c
from ._dlpack import (
    HOST_ACCESSIBLE,
    Broken,
    NotApplicable,
    Refused,
    Unchecked,
    consumed_once,
    device_name,
    device_of,
    host_bytes,
    managed,
    readable,
    versioned_export,
    wrap_versioned,
)

_decref = _c.api["Py_DecRef"]
_decref.argtypes = [ctypes.c_void_p]
_decref.restype = None


def table_of(obj):
    """The object's exchange table, or NotApplicable when its type has none."""
    capsule = getattr(type(obj), "__dlpack_c_exchange_api__", None)
    if capsule is None:
        raise NotApplicable()
    if not _c.is_capsule(capsule):
        raise Broken(f"__dlpack_c_exchange_api__ is a {type(capsule).__name__}, not a capsule")
    name = _c.capsule_name(capsule)
    if name != "dlpack_exchange_api":
        raise Broken(f"the capsule is named {name!r}, not 'dlpack_exchange_api'")
    table = _c.capsule_pointer(capsule, _c.DLPackExchangeAPI).contents
    return capsule, table


def check_table(s):
    _, table = table_of(s.obj)
    version = table.header.version
    if version.major != 1:
        raise Broken(f"version {version.major}.{version.minor}")
    missing = [slot for slot in ("managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
                                 "managed_tensor_to_py_object_no_sync", "current_work_stream")
               if not getattr(table, slot)]
    if missing:
        raise Broken(f"NULL slots: {', '.join(missing)}")
    return f"version {version.major}.{version.minor}"


def export_through(obj, table):
    out = ctypes.POINTER(_c.DLManagedTensorVersioned)()
    function = _c.FROM_PY_OBJECT(table.managed_tensor_from_py_object_no_sync)
    if function(obj, ctypes.byref(out)) != 0 or not out:
        raise Broken("managed_tensor_from_py_object_no_sync failed")
    return out


def description(tensor):
    """What says which elements a DLTensor holds: first element, device, shape, strides, dtype."""
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim)) if tensor.ndim > 0 else ()
    strides = tuple(tensor.strides[i] for i in range(tensor.ndim)) if tensor.strides and tensor.ndim > 0 else None
    return ((tensor.data or 0) + tensor.byte_offset, (tensor.device.device_type, tensor.device.device_id),
            shape, strides, (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes))


def check_export(s):
    keep, table = table_of(s.obj)
    exported = wrap_versioned(export_through(s.obj, table))

    def same_elements(tensor):
        got = readable(tensor)
        if got is not None:
            if got != s.values:
                raise Broken("the exported elements differ from the object's")
            return ""
        # Device memory the checker cannot read: the same memory, described alike, as the
        # object's __dlpack__ export (whose elements dlpack.fields.values reads) holds the same.
        where = f"device memory on {device_name(tensor.__dlpack_device__())}"
        plain = versioned_export(s.obj)
        if description(managed(plain).dl_tensor) != description(managed(exported).dl_tensor):
            raise Unchecked(f"{where}: the export describes other memory than __dlpack__'s, whose elements "
                            "the checker cannot read")
        return f"{where}: the same memory and layout as __dlpack__'s export"

    return consumed_once(exported, same_elements)


def check_allocator(s):
    keep, table = table_of(s.obj)
    device = device_of(versioned_export(s.obj))  # a prototype on the sample's device
    shape = (ctypes.c_int64 * 2)(2, 3)
    prototype = _c.DLTensor(data=None, device=_c.DLDevice(*device), ndim=2, dtype=_c.DLDataType(2, 32, 1),
                            shape=ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)), strides=None,
                            byte_offset=0)
    errors = []
    set_error = _c.SET_ERROR(lambda _ctx, kind, message: errors.append((kind, message)))
    _c.KEEP += [set_error, shape, prototype]
    out = ctypes.POINTER(_c.DLManagedTensorVersioned)()
    allocate = _c.ALLOCATOR(table.managed_tensor_allocator)
    if allocate(ctypes.byref(prototype), ctypes.byref(out), None, set_error) != 0 or not out:
        if device[0] != 1:
            # Allocating on the device is the producer's to offer; its clean failure is a refusal.
            raise Refused(f"the allocator failed for float32 (2, 3) on {device_name(device)}: {errors}")
        raise Broken(f"the allocator failed for float32 (2, 3) on the CPU: {errors}")
    m = out.contents.dl_tensor
    got = tuple(m.shape[i] for i in range(m.ndim))
    if got != (2, 3) or (m.dtype.code, m.dtype.bits, m.dtype.lanes) != (2, 32, 1):
        raise Broken(f"allocated shape {got}, dtype {(m.dtype.code, m.dtype.bits)}")
    if (m.device.device_type, m.device.device_id) != device:
        raise Broken(f"asked for {device_name(device)}, allocated on "
                     f"{device_name((m.device.device_type, m.device.device_id))}")

    def write_all(tensor):
        if device[0] not in HOST_ACCESSIBLE:
            return f"on {device_name(device)}: the bytes are not written (device memory)"
        # Every byte the tensor describes: an allocation smaller than that crashes here (or
        # corrupts the heap, which the child process then reports).
        ctypes.memset(tensor.data_ptr, 0x5A, tensor.nbytes)
        return ""

    return consumed_once(wrap_versioned(out), write_all)


def check_import(s):
    keep, table = table_of(s.obj)
    tensor = export_through(s.obj, table)
    out = ctypes.c_void_p()
    to_py = _c.TO_PY_OBJECT(table.managed_tensor_to_py_object_no_sync)
    if to_py(tensor, ctypes.byref(out)) != 0 or not out:
        raise Broken("managed_tensor_to_py_object_no_sync failed")
    result = ctypes.cast(out, ctypes.py_object).value
    _decref(out)  # the new reference the function wrote; `result` holds its own
    from .. import Tensor

    # Device memory is read through the result's own copy to the CPU (n/a when it has none).
    if host_bytes(result, Tensor.from_dlpack(result)) != s.values:
        raise Broken(f"the {type(result).__name__} made from the tensor holds other elements")
    return type(result).__name__


def check_stream(s):
    keep, table = table_of(s.obj)
    device = device_of(versioned_export(s.obj))  # the sample's device
    stream = ctypes.c_void_p()
    function = _c.CURRENT_WORK_STREAM(table.current_work_stream)
    if function(device[0], device[1], ctypes.byref(stream)) != 0:
        raise Broken(f"current_work_stream({device_name(device)}) failed")
    return "" if device[0] == 1 else f"{device_name(device)}: stream {stream.value or 0:#x}"


CHECKS = {
    "dlpack.exchange.table": check_table,
    "dlpack.exchange.export": check_export,
    "dlpack.exchange.allocator": check_allocator,
    "dlpack.exchange.import": check_import,
    "dlpack.exchange.stream": check_stream,
}
