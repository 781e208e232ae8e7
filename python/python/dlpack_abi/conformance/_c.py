"""ctypes mirrors of the C structs the checker reads and writes (DLPack 1.3, the Arrow C Data,
Device Data and Stream interfaces), and the CPython capsule calls it needs.

Only what the checker uses: it reads producers' structs field by field, swaps their deleter or
release callback for a counting one, and builds the deliberately odd producers of the consumer
check. Sizes and offsets are those of ``include/dlpack_abi.h`` (ctypes lays them out as C does).
"""
import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_int,
    c_int8,
    c_int32,
    c_int64,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
    py_object,
)

# --- DLPack (dlpack-1.3.md §3) -----------------------------------------------------------------


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensor(Structure):
    pass


LEGACY_DELETER = CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", c_void_p),
    ("deleter", LEGACY_DELETER),
]


class DLManagedTensorVersioned(Structure):
    pass


VERSIONED_DELETER = CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", c_void_p),
    ("deleter", VERSIONED_DELETER),
    ("flags", c_uint64),
    ("dl_tensor", DLTensor),
]

READ_ONLY, IS_COPIED, IS_SUBBYTE_TYPE_PADDED = 1, 2, 4

# The exchange API table (dlpack-1.3.md §7). The functions that take or make Python objects are
# called with the GIL held (PYFUNCTYPE), those that do not with it released.
SET_ERROR = CFUNCTYPE(None, c_void_p, c_char_p, c_char_p)
ALLOCATOR = CFUNCTYPE(c_int, POINTER(DLTensor), POINTER(POINTER(DLManagedTensorVersioned)), c_void_p, SET_ERROR)
FROM_PY_OBJECT = ctypes.PYFUNCTYPE(c_int, py_object, POINTER(POINTER(DLManagedTensorVersioned)))
CURRENT_WORK_STREAM = CFUNCTYPE(c_int, c_int32, c_int32, POINTER(c_void_p))
# The new reference comes back as an address: the caller takes it over (and drops it).
TO_PY_OBJECT = ctypes.PYFUNCTYPE(c_int, POINTER(DLManagedTensorVersioned), POINTER(c_void_p))


class DLPackExchangeAPIHeader(Structure):
    pass


DLPackExchangeAPIHeader._fields_ = [
    ("version", DLPackVersion),
    ("prev_api", POINTER(DLPackExchangeAPIHeader)),
]


class DLPackExchangeAPI(Structure):
    _fields_ = [
        ("header", DLPackExchangeAPIHeader),
        ("managed_tensor_allocator", c_void_p),
        ("managed_tensor_from_py_object_no_sync", c_void_p),
        ("managed_tensor_to_py_object_no_sync", c_void_p),
        ("dltensor_from_py_object_no_sync", c_void_p),
        ("current_work_stream", c_void_p),
    ]


# --- Arrow (arrow-c-interfaces.md §3) --------------------------------------------------------


class ArrowSchema(Structure):
    pass


SCHEMA_RELEASE = CFUNCTYPE(None, POINTER(ArrowSchema))
ArrowSchema._fields_ = [
    ("format", c_char_p),
    ("name", c_char_p),
    ("metadata", c_void_p),
    ("flags", c_int64),
    ("n_children", c_int64),
    ("children", POINTER(POINTER(ArrowSchema))),
    ("dictionary", POINTER(ArrowSchema)),
    ("release", SCHEMA_RELEASE),
    ("private_data", c_void_p),
]


class ArrowArray(Structure):
    pass


ARRAY_RELEASE = CFUNCTYPE(None, POINTER(ArrowArray))
ArrowArray._fields_ = [
    ("length", c_int64),
    ("null_count", c_int64),
    ("offset", c_int64),
    ("n_buffers", c_int64),
    ("n_children", c_int64),
    ("buffers", POINTER(c_void_p)),
    ("children", POINTER(POINTER(ArrowArray))),
    ("dictionary", POINTER(ArrowArray)),
    ("release", ARRAY_RELEASE),
    ("private_data", c_void_p),
]


class ArrowDeviceArray(Structure):
    _fields_ = [
        ("array", ArrowArray),
        ("device_id", c_int64),
        ("device_type", c_int32),
        ("sync_event", c_void_p),
        ("reserved", c_int64 * 3),
    ]


class ArrowArrayStream(Structure):
    pass


STREAM_GET_SCHEMA = CFUNCTYPE(c_int, POINTER(ArrowArrayStream), POINTER(ArrowSchema))
STREAM_GET_NEXT = CFUNCTYPE(c_int, POINTER(ArrowArrayStream), POINTER(ArrowArray))
STREAM_GET_LAST_ERROR = CFUNCTYPE(c_void_p, POINTER(ArrowArrayStream))
STREAM_RELEASE = CFUNCTYPE(None, POINTER(ArrowArrayStream))
ArrowArrayStream._fields_ = [
    ("get_schema", STREAM_GET_SCHEMA),
    ("get_next", STREAM_GET_NEXT),
    ("get_last_error", STREAM_GET_LAST_ERROR),
    ("release", STREAM_RELEASE),
    ("private_data", c_void_p),
]

#: Every struct, buffer and callback the checker hands to C: kept for the life of the process
#: (a short-lived one), so that no capsule, deleter or release can outlive what it points to.
KEEP: list = []

# --- Capsules ----------------------------------------------------------------------------------

api = ctypes.pythonapi
CAPSULE_DESTRUCTOR = CFUNCTYPE(None, c_void_p)


def _function(name, restype, argtypes):
    """A private prototype of a CPython function (``api[name]`` is a new object each time:
    setting ``ctypes.pythonapi.X.argtypes`` would change it for every user in the process)."""
    function = api[name]
    function.restype, function.argtypes = restype, argtypes
    return function


class _Api:
    PyCapsule_New = _function("PyCapsule_New", py_object, [c_void_p, c_char_p, CAPSULE_DESTRUCTOR])
    PyCapsule_GetPointer = _function("PyCapsule_GetPointer", c_void_p, [py_object, c_char_p])
    PyCapsule_GetName = _function("PyCapsule_GetName", c_char_p, [py_object])
    PyCapsule_SetName = _function("PyCapsule_SetName", c_int, [py_object, c_char_p])


capsules = _Api

_SetContext = _function("PyCapsule_SetContext", c_int, [py_object, c_void_p])


def new_capsule(pointer, name, destroy):
    """A capsule over ``pointer`` named ``name`` whose destructor calls ``destroy(address)``
    (``address``: the capsule's, as a ``CAPSULE_DESTRUCTOR`` callback gets it).

    The destructor is the package's C one, which sets aside any exception the destroying code
    has pending while ``destroy`` runs: a consumer that refuses the capsule keeps its error. (A
    ctypes destructor loses it: its first ctypes call sees the pending error, fails, and the
    error is cleared, so the consumer returns NULL with no exception: a ``SystemError`` that is
    the checker's, not the consumer's.) ``destroy`` is kept alive for the process."""
    from dlpack_abi import dlpack_abi as _extension

    guarded = CAPSULE_DESTRUCTOR(_extension._guarded_capsule_destructor())
    capsule = capsules.PyCapsule_New(pointer, name, guarded)
    KEEP.append(destroy)
    if _SetContext(capsule, id(destroy)) != 0:
        raise RuntimeError("PyCapsule_SetContext failed")
    return capsule


def is_capsule(obj):
    return type(obj).__name__ == "PyCapsule"


def capsule_name(capsule):
    """The capsule's name as str (``None`` for a NULL name)."""
    name = capsules.PyCapsule_GetName(capsule)
    return None if name is None else name.decode()


def capsule_pointer(capsule, struct):
    """A pointer to the capsule's struct of type ``struct`` (the capsule keeps the name)."""
    name = capsules.PyCapsule_GetName(capsule)
    return ctypes.cast(capsules.PyCapsule_GetPointer(capsule, name), POINTER(struct))


class Counter:
    """Counts the calls of a callback swapped into a producer's struct, then calls the original.

    The swap is what a consumer may do with a struct it holds (it owns it until it calls the
    callback); the checker uses it to see each deleter or ``release`` run exactly once."""

    def __init__(self, prototype, original):
        self.calls = 0
        # A copy of the function pointer: the field's value is a view of the struct's memory,
        # which the swap overwrites.
        address = ctypes.cast(original, c_void_p).value if original else None
        self.original = prototype(address) if address else None

        def call(pointer):
            self.calls += 1
            if self.original:
                self.original(pointer)

        self.callback = prototype(call)
        KEEP.append(self)


__all__ = [name for name in dir() if not name.startswith("_")]
