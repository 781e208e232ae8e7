"""Deliberately broken producers and consumers, one or more for every rule of
``dlpack_abi.conformance``: ``test_conformance.py`` asserts that the checker catches each.
Each class is an adapter (see ``dlpack_abi.conformance.libraries``).

The device fakes stand in for a GPU in CI: host memory described as CUDA memory (device type 2),
which the checker must treat as device memory (never read in place), with a copy to the CPU as
device libraries have (or a refusal of it)."""
import ctypes

import numpy as np
import pyarrow as pa

import dlpack_abi
from dlpack_abi.conformance import _c
from dlpack_abi.conformance._dlpack import Sample
from dlpack_abi.conformance._fake import FakeProducer

SIX = np.arange(6, dtype=np.float32).reshape(2, 3)


def fake_sample(name="fake", readonly=False, values=None, device=(1, 0), **breaks):
    producer = FakeProducer(data=SIX.tobytes(), readonly_source=readonly, device=device, **breaks)
    return Sample(name, producer, (2, 3), (2, 32, 1), SIX.tobytes() if values is None else values, readonly,
                  device)


def dlpack_adapter(readonly=False, values=None, device=(1, 0), **breaks):
    class Adapter:
        def samples():
            yield fake_sample(readonly=readonly, values=values, device=device, **breaks)
            if device != (1, 0):  # a device library's strided and read-only data too
                yield Sample("transposed", FakeProducer(data=SIX.tobytes(), shape=(3, 2), strides=(1, 3),
                                                        device=device, **breaks),
                             (3, 2), (2, 32, 1), SIX.T.copy().tobytes(), device=device)
                yield fake_sample("read-only", readonly=True, values=values, device=device, **breaks)

        def version():
            return f"fake {breaks} on {device}"

    return Adapter


# --- DLPack producers: rule -> adapter that breaks it ------------------------------------------
wrong_device = dlpack_adapter(wrong_device=True)
wrong_name = dlpack_adapter(wrong_name=True)
wrong_major = dlpack_adapter(wrong_major=True)
refuse_newer = dlpack_adapter(refuse_newer=True)
ignore_copy = dlpack_adapter(ignore_copy=True)
always_copied = dlpack_adapter(always_copied=True)
copy_on_dl_device = dlpack_adapter(copy_on_dl_device=True)
no_stream_keyword = dlpack_adapter(no_stream_keyword=True)
crash_on_stream = dlpack_adapter(crash_on_stream=True)
leak_unconsumed = dlpack_adapter(leak_unconsumed=True)
double_delete = dlpack_adapter(double_delete=True)
ignore_used = dlpack_adapter(ignore_used=True)
negative_ndim = dlpack_adapter(negative_ndim=True)
wrong_values = dlpack_adapter(values=np.arange(1, 7, dtype=np.float32).tobytes())
null_strides = dlpack_adapter(null_strides=True)
drop_read_only = dlpack_adapter(readonly=True, drop_read_only=True)
unknown_flag = dlpack_adapter(unknown_flag=True)

# --- DLPack producers on a (fake) device --------------------------------------------------------
CUDA = (2, 0)
device_ok = dlpack_adapter(device=CUDA)
device_refuses_copy = dlpack_adapter(device=CUDA, refuse_host_copy=True)
device_wrong_copy = dlpack_adapter(device=CUDA, wrong_host_copy=True)
device_copy_on_device = dlpack_adapter(device=CUDA, host_copy_on_device=True)
device_crash_on_stream = dlpack_adapter(device=CUDA, crash_on_stream=True)


class mixed_refuses_copy:
    """A CPU sample and a device sample whose copy to the CPU is refused."""

    def samples():
        yield fake_sample("on the CPU")
        yield fake_sample("on cuda:0", device=CUDA, refuse_host_copy=True)


class not_installed:
    """An adapter of a library that is not installed."""

    def version():
        import no_such_array_library  # noqa: F401

    def consume_dlpack(obj):
        raise AssertionError("never called: the library is not installed")


class device_tensor:
    """dlpack-abi's own Tensor over (fake) device memory: its C exchange API on a device, and a
    producer that cannot copy device memory to the CPU (the checker's own limit as a producer)."""

    def samples():
        producer = FakeProducer(data=SIX.tobytes(), device=CUDA)
        yield Sample("Tensor on cuda:0", dlpack_abi.Tensor.from_dlpack(producer), (2, 3), (2, 32, 1),
                     SIX.tobytes(), device=CUDA)

    def version():
        return "dlpack-abi Tensor on a fake cuda:0"


# --- A broken exchange API table -----------------------------------------------------------------
def _failing(prototype, result=-1):
    callback = prototype(lambda *args: result)
    _c.KEEP.append(callback)
    return ctypes.cast(callback, ctypes.c_void_p).value


_TABLE = _c.DLPackExchangeAPI()
_TABLE.header.version = _c.DLPackVersion(1, 3)
_TABLE.managed_tensor_allocator = _failing(_c.ALLOCATOR)
_TABLE.managed_tensor_from_py_object_no_sync = _failing(
    ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p))
_TABLE.managed_tensor_to_py_object_no_sync = _failing(
    ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p))
_TABLE.current_work_stream = _failing(_c.CURRENT_WORK_STREAM)
_c.KEEP.append(_TABLE)


class TableProducer(FakeProducer):
    """A producer whose exchange table fails every call."""

    __dlpack_c_exchange_api__ = _c.capsules.PyCapsule_New(ctypes.addressof(_TABLE), b"dlpack_exchange_api",
                                                     _c.CAPSULE_DESTRUCTOR())


class WrongTableProducer(FakeProducer):
    __dlpack_c_exchange_api__ = _c.capsules.PyCapsule_New(ctypes.addressof(_TABLE), b"exchange_api",
                                                     _c.CAPSULE_DESTRUCTOR())


class broken_table:
    def samples():
        yield Sample("table", TableProducer(data=SIX.tobytes()), (2, 3), (2, 32, 1), SIX.tobytes())


class wrong_table_name:
    def samples():
        yield Sample("table", WrongTableProducer(data=SIX.tobytes()), (2, 3), (2, 32, 1), SIX.tobytes())


# --- Arrow producers --------------------------------------------------------------------------
class _Wrapper:
    """A pyarrow object whose dunders one subclass breaks."""

    def __init__(self, obj=None):
        self.obj = pa.array([1, 2, 3]) if obj is None else obj

    def __arrow_c_schema__(self):
        return self.obj.__arrow_c_array__()[0]

    def __arrow_c_array__(self, requested_schema=None):
        return self.obj.__arrow_c_array__(requested_schema)

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return self.obj.__arrow_c_device_array__(requested_schema, **kwargs)


class NoSchema:
    """An array without ``__arrow_c_schema__``."""

    def __arrow_c_array__(self, requested_schema=None):
        return pa.array([1, 2, 3]).__arrow_c_array__(requested_schema)


class WrongSchemaName(_Wrapper):
    def __arrow_c_schema__(self):
        capsule = self.obj.__arrow_c_array__()[0]
        _c.capsules.PyCapsule_SetName(capsule, b"schema")
        return capsule


class ListNotTuple(_Wrapper):
    def __arrow_c_array__(self, requested_schema=None):
        return list(self.obj.__arrow_c_array__())


class RequestedBreaks(_Wrapper):
    def __arrow_c_array__(self, requested_schema=None):
        pair = self.obj.__arrow_c_array__()
        return pair if requested_schema is None else pair[::-1]


class IgnoresRequest(_Wrapper):
    def __arrow_c_array__(self, requested_schema=None):
        return self.obj.__arrow_c_array__()


class EventOnCpu(_Wrapper):
    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        pair = self.obj.__arrow_c_device_array__(requested_schema, **kwargs)
        _c.capsule_pointer(pair[1], _c.ArrowDeviceArray).contents.sync_event = ctypes.addressof(_c.KEEP_EVENT)
        return pair


_c.KEEP_EVENT = ctypes.c_int64(0)


class NoKwargs(_Wrapper):
    def __arrow_c_device_array__(self, requested_schema=None):
        return self.obj.__arrow_c_device_array__(requested_schema)


_noop_destructor = _c.CAPSULE_DESTRUCTOR(lambda capsule: None)


def _leaking(capsule, struct, name):
    """A capsule over a copy of ``capsule``'s struct (moved out) whose destructor never releases."""
    pointer = _c.capsule_pointer(capsule, struct)
    copy = struct.from_buffer_copy(pointer.contents)
    pointer.contents.release = type(pointer.contents.release)()
    _c.KEEP.append(copy)
    return _c.capsules.PyCapsule_New(ctypes.addressof(copy), name, _noop_destructor)


def _crash_destructor(capsule):
    ctypes.string_at(0)  # a destructor calling a NULL release: what C code would do


_crashing = _c.CAPSULE_DESTRUCTOR(_crash_destructor)


class LeaksArray(_Wrapper):
    def __arrow_c_array__(self, requested_schema=None):
        schema, array = self.obj.__arrow_c_array__()
        return schema, _leaking(array, _c.ArrowArray, b"arrow_array")


class ReleasesMoved(_Wrapper):
    def __arrow_c_array__(self, requested_schema=None):
        schema, array = self.obj.__arrow_c_array__()
        pointer = _c.capsule_pointer(array, _c.ArrowArray)
        copy = _c.ArrowArray.from_buffer_copy(pointer.contents)
        pointer.contents.release = _c.ARRAY_RELEASE()
        _c.KEEP.append(copy)
        # Its destructor calls release without checking for NULL (and crashes on a moved struct).
        return schema, _c.capsules.PyCapsule_New(ctypes.addressof(copy), b"arrow_array", _crashing)


class StreamWrongName:
    def __arrow_c_schema__(self):
        return pa.schema([("x", pa.int64())]).__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema=None):
        capsule = pa.table({"x": [1]}).__arrow_c_stream__()
        _c.capsules.PyCapsule_SetName(capsule, b"arrow_stream")
        return capsule


class StreamLeaks(StreamWrongName):
    def __arrow_c_stream__(self, requested_schema=None):
        return _leaking(pa.table({"x": [1]}).__arrow_c_stream__(), _c.ArrowArrayStream, b"arrow_array_stream")


def arrow_adapter(cls, failing_stream=None):
    class Adapter:
        def arrow_samples():
            yield cls.__name__, cls

        def version():
            return f"fake {cls.__name__}"

    if failing_stream is not None:
        Adapter.failing_stream = failing_stream
    return Adapter


no_schema = arrow_adapter(NoSchema)
wrong_schema_name = arrow_adapter(WrongSchemaName)
list_not_tuple = arrow_adapter(ListNotTuple)
requested_breaks = arrow_adapter(RequestedBreaks)
ignores_request = arrow_adapter(IgnoresRequest)
event_on_cpu = arrow_adapter(EventOnCpu)
no_kwargs = arrow_adapter(NoKwargs)


class DeviceArrow(_Wrapper):
    """Arrow data on a (fake) device with a sync_event: its CPU method refuses, as §7 allows."""

    def __arrow_c_schema__(self):
        return pa.int64().__arrow_c_schema__()

    def __arrow_c_array__(self, requested_schema=None):
        raise BufferError("the data is on cuda:0")

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        pair = self.obj.__arrow_c_device_array__(requested_schema, **kwargs)
        device = _c.capsule_pointer(pair[1], _c.ArrowDeviceArray).contents
        device.device_type, device.device_id = CUDA
        device.sync_event = ctypes.addressof(_c.KEEP_EVENT)
        return pair


device_arrow = arrow_adapter(DeviceArrow)
leaks_array = arrow_adapter(LeaksArray)
releases_moved = arrow_adapter(ReleasesMoved)
stream_wrong_name = arrow_adapter(StreamWrongName)
stream_leaks = arrow_adapter(StreamLeaks)
# A "failing" stream that ends normally: no errno, no message.
silent_stream = arrow_adapter(StreamWrongName, failing_stream=lambda: dlpack_abi.int64_stream([[1]]))


# --- Consumers ------------------------------------------------------------------------------------
def fake_device_memory(data):
    """``device_memory`` of the fake device: host memory described as cuda:0."""
    buffer = ctypes.create_string_buffer(bytes(data), max(len(data), 1))
    return ctypes.addressof(buffer), CUDA, buffer


class _DeviceResult:
    """A device library's array: a dlpack_abi.Tensor over (fake) device memory, which copies
    itself to the CPU for ``dl_device=(1, 0)`` (unless ``copies`` is false) as CuPy and PyTorch do."""

    def __init__(self, tensor, copies=True):
        self.tensor, self.copies = tensor, copies

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    def __dlpack__(self, **keywords):
        if keywords.get("dl_device") not in (None, tuple(self.__dlpack_device__())):
            if not self.copies:
                raise BufferError("this array cannot be copied to the CPU")
            # The fake device's memory is host memory: describe it as the CPU's, then copy.
            t = self.tensor
            alias = FakeProducer(data=b"", place=lambda _: (t.data_ptr, (1, 0), None), dtype=t.dtype,
                                 shape=t.shape, strides=t.strides)
            copy = dlpack_abi.Tensor.from_bytes(dlpack_abi.Tensor.from_dlpack(alias).tobytes(), t.dtype, t.shape)
            return copy.__dlpack__(max_version=keywords.get("max_version"))
        return self.tensor.__dlpack__(**keywords)


def import_capsule(capsule):
    """``Tensor.from_dlpack(capsule)``, letting the capsule die before a refusal is raised: the
    fakes' ctypes destructors cannot run while an exception is pending."""
    try:
        return dlpack_abi.Tensor.from_dlpack(capsule)
    except Exception as error:  # noqa: BLE001
        failure = error
    del capsule
    raise failure


def device_consumer_of(stream=None, copies=True):
    class Adapter:
        """Imports with dlpack_abi (host and fake device memory), passing ``stream`` for device
        data (``None`` on the CPU)."""

        def consume_dlpack(producer):
            device = tuple(producer.__dlpack_device__())
            if device == (1, 0):
                return dlpack_abi.from_dlpack(producer)
            return _DeviceResult(import_capsule(producer.__dlpack__(stream=stream, max_version=(1, 3))), copies)

        def consumer_device():
            return CUDA

        device_memory = staticmethod(fake_device_memory)

        def version():
            return f"fake device consumer (stream {stream}, copies {copies})"

    return Adapter


device_consumer = device_consumer_of(stream=1)
device_consumer_no_copy = device_consumer_of(stream=1, copies=False)
device_stream_zero = device_consumer_of(stream=0)


class device_only_consumer(device_consumer):
    """As CuPy: device memory only (CPU producers: TypeError)."""

    imports_cpu = False


class stream_zero_consumer:
    """Passes stream=0 whatever the device (the CPU takes None only; CUDA never 0)."""

    def consume_dlpack(producer):
        return import_capsule(producer.__dlpack__(stream=0, max_version=(1, 3)))

class naive_consumer:
    """Reads ``prod(shape)`` elements from ``data`` as if compact: ignores strides, byte_offset,
    version and flags, and returns a writable array over the producer's memory."""

    def consume_dlpack(producer):
        capsule = producer.__dlpack__(max_version=(1, 3))
        managed = _c.capsule_pointer(capsule, _c.DLManagedTensorVersioned).contents
        tensor = managed.dl_tensor
        shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
        if tensor.dtype.code != 2 or tensor.dtype.bits != 32:
            raise TypeError("float32 only")
        count = int(np.prod(shape))
        buffer = (ctypes.c_float * max(count, 1)).from_address(tensor.data) if tensor.data else None
        array = np.ctypeslib.as_array(buffer)[:count].reshape(shape) if buffer else np.zeros(shape, np.float32)
        _c.capsules.PyCapsule_SetName(capsule, b"used_dltensor_versioned")
        holder = _Holder(array, managed)
        return holder


class _Holder:
    """A writable result that calls the deleter when dropped."""

    def __init__(self, array, managed):
        self.array, self.managed = array, managed

    def __dlpack__(self, **kw):
        return self.array.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __del__(self):
        if self.managed.deleter:
            self.managed.deleter(ctypes.pointer(self.managed))


_LEAKED = []


class leaky_consumer:
    """Reads every tensor correctly and never calls a deleter; swallows producers' errors;
    ignores an Arrow array's offset and a stream's error."""

    def consume_dlpack(producer):
        try:
            tensor = dlpack_abi.from_dlpack(producer)
        except RuntimeError:
            return np.zeros(0, np.float32)
        _LEAKED.append(tensor)
        return tensor

    def consume_arrow(obj):
        schema, array = obj.__arrow_c_array__()
        if _c.capsule_pointer(schema, _c.ArrowSchema).contents.format == b"vu":
            ctypes.string_at(0)  # crashes on string_view, as a reader of the wrong layout would
        _c.capsule_pointer(array, _c.ArrowArray).contents.offset = 0
        return pa.Array._import_from_c_capsule(schema, array)

    def consume_stream(obj):
        try:
            return pa.chunked_array(obj)
        except OSError:
            return pa.chunked_array([], pa.int64())
