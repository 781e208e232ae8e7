"""The consumer rules: a library's import function (``from_dlpack``, an Arrow constructor) given
this module's producers, odd and broken ones included. Each case is handled (correct elements,
read-only kept, deleter run once), refused (an exception, nothing leaked) or mishandled.

The DLPack cases run on host memory, and again on the consumer's device memory where its adapter
provides some (``device_memory``): the same producers, describing memory the library's own
allocator filled, and the results read back through their own copy to the CPU."""
import ctypes

from . import _c
from ._arrow_fake import Int64Array
from ._dlpack import Broken, NotApplicable, Refused, Unchecked, Warned, collect, device_name, host_bytes
from ._fake import FakeProducer

def f32(values):
    return b"".join(bytes(ctypes.c_float(v)) for v in values)


SIX = f32([0, 1, 2, 3, 4, 5])


class Case:
    """A producer, the row-major bytes a correct consumer reads, and whether refusing it is the
    correct outcome (``expect="refusal"``), allowed (``"either"``), a refusal the report shows
    (``"values"``) or a failure (``"required"``)."""

    def __init__(self, make, values=None, expect="values", readonly=False, host_only=False):
        self.make, self.values, self.expect, self.readonly = make, values, expect, readonly
        #: ``make`` takes no ``place``: the case has no device variant.
        self.host_only = host_only


def fake(**fields):
    """A case's producer: a ``FakeProducer`` of ``fields``, placed in device memory when the case
    runs on the device (``make(place=...)``)."""
    return lambda **where: FakeProducer(**fields, **where)


CASES = {
    "consumer.contiguous": Case(fake(data=SIX), SIX),
    "consumer.strides": Case(fake(data=SIX, strides=(1, 2)), f32([0, 2, 4, 1, 3, 5])),
    # data is the first byte of the buffer; the first element is the last value.
    "consumer.negative_strides": Case(fake(data=SIX, strides=(-3, -1), byte_offset=20), f32([5, 4, 3, 2, 1, 0])),
    "consumer.byte_offset": Case(fake(data=SIX + f32([6, 7]), shape=(2, 3), strides=(3, 1), byte_offset=8),
                                 f32([2, 3, 4, 5, 6, 7])),
    "consumer.read_only": Case(fake(data=SIX, readonly_source=True), SIX, readonly=True),
    # Producers may refuse legacy exports (array API, 2025): a consumer must ask for versioned ones.
    "consumer.versioned_only": Case(fake(data=SIX, kind="versioned"), SIX, expect="required"),
    "consumer.legacy_only": Case(fake(data=SIX, kind="legacy"), SIX, expect="either"),
    "consumer.null_strides_legacy": Case(fake(data=SIX, kind="legacy", strides=None), SIX, expect="either"),
    "consumer.zero_size": Case(fake(data=b"", shape=(0, 3), strides=(3, 1)), b""),
    "consumer.bool": Case(fake(data=b"\x01\x00\x01", dtype=(6, 8, 1), shape=(3,), strides=(1,)),
                          b"\x01\x00\x01", expect="either"),
    "consumer.subbyte_packed": Case(fake(data=b"\x21\x43", dtype=(17, 4, 1), shape=(4,), strides=(1,)),
                                    None, expect="either"),
    "consumer.subbyte_padded": Case(fake(data=b"\x01\x02\x03\x04", dtype=(17, 4, 1), shape=(4,), strides=(1,),
                                         flags=_c.IS_SUBBYTE_TYPE_PADDED), None, expect="either"),
    # Through the exchange API where the consumer uses it (tvm-ffi does).
    "consumer.read_only_exchange": Case(lambda: _readonly_tensor(), SIX, readonly=True, host_only=True),
    "consumer.major_2": Case(fake(data=SIX, version=(2, 0)), None, expect="refusal"),
    "consumer.raises": Case(fake(raises=RuntimeError("producer failure")), None, expect="refusal"),
    "consumer.stream": Case(fake(data=SIX), SIX),
}


def allowed_stream(device, stream):
    """Whether dlpack-1.3.md §6.2 lets a consumer pass ``stream`` for data on ``device``."""
    if stream is None:
        return True
    if not isinstance(stream, int) or stream < -1:
        return False
    if device[0] in (2, 13):  # CUDA (managed memory is CUDA's): 0 is ambiguous
        return stream != 0
    if device[0] == 10:  # ROCm: 1 and 2 are CUDA's default streams
        return stream not in (1, 2)
    return False  # the CPU and stream-less devices: None only


def check_streams(producer):
    bad = [stream for stream in producer.streams if not allowed_stream(producer.device, stream)]
    if bad:
        raise Broken(f"passed stream={bad[0]!r} for data on {device_name(producer.device)} "
                     "(§6.2: None on the CPU; never 0 on CUDA; never 1 or 2 on ROCm)")
    return f"stream={producer.streams[-1]!r}" if producer.streams else ""


def _readonly_tensor():
    from .. import Tensor

    return Tensor.from_bytes(SIX, (2, 32, 1), (2, 3), readonly=True)


def producer_memory(producer):
    """The byte range the producer's elements live in."""
    if isinstance(producer, FakeProducer):
        if producer.placed is not None:
            return producer.placed[0], producer.placed[0] + producer.placed[1]
        start = ctypes.addressof(producer.buffer)
        return start, start + len(producer.buffer)
    return producer.data_ptr, producer.data_ptr + producer.nbytes


def elements(result):
    """The result's elements in row-major order, read back through DLPack (device memory through
    the result's own copy to the CPU), whether its export is read-only, and the address of its
    first element."""
    from .. import Tensor

    tensor = Tensor.from_dlpack(result)
    return host_bytes(result, tensor), tensor.readonly, tensor.data_ptr


def run_dlpack_case(rule, consume, writable=None, place=None):
    """The verdict of ``consume`` on the case ``rule``: raises Broken or Refused, or returns a
    detail. ``place`` puts the producer's data in the consumer's device memory."""
    case = CASES[rule]
    producer = case.make(place=place) if place is not None else case.make()
    error, result = None, None
    try:
        result = consume(producer)
    except Exception as raised:  # noqa: BLE001 - any exception is a refusal
        error = (type(raised).__name__, str(raised), isinstance(raised, SystemError))
    if error is not None:
        collect()  # the traceback is gone: the capsule (if any) has died by now
        name, message, system = error
        calls = getattr(producer, "deleter_calls", 1)  # a Tensor counts its own
        if system:
            raise Broken(f"{name}: {message} (an error without a Python exception set)")
        if calls > 1:
            raise Broken(f"refused ({name}), and the deleter ran {calls} times")
        if rule == "consumer.raises":
            if "producer failure" not in message:
                raise Broken(f"the producer's RuntimeError became {name}: {message}")
            return f"{name} reached the caller"
        if case.expect == "required":
            raise Broken(f"refused ({name}: {message}); a 1.x consumer must take it")
        if case.expect == "refusal":
            if calls != 1 and rule == "consumer.major_2":
                raise Broken(f"refused ({name}), but the deleter ran {calls} times")
            return f"refused: {name}: {message}"
        raise Refused(f"{name}: {message}")
    if case.expect == "refusal":
        raise Broken(f"accepted ({type(result).__name__}); the spec requires a refusal")
    detail = check_streams(producer) if rule == "consumer.stream" else ""
    if case.values is not None:
        try:
            got, read_only, address = elements(result)
        except NotApplicable:
            raise
        except Exception as failure:  # noqa: BLE001
            raise Unchecked(f"the result cannot be read back through DLPack: {failure}") from None
        if got != case.values:
            raise Broken(f"wrong elements: {got.hex()} instead of {case.values.hex()}")
        start, end = producer_memory(producer)
        shares = start <= address < end
        if case.readonly and shares:
            still_writable = writable(result) if writable else not read_only
            if still_writable:
                raise Broken("the result shares the producer's READ_ONLY memory and may write it")
    del result
    collect()
    if isinstance(producer, FakeProducer) and producer.deleter_calls != 1:
        raise Broken(f"after the result was dropped the deleter had run {producer.deleter_calls} times")
    return detail


def arrow_values(result):
    """An int64 array's values (``None`` for nulls) read from ``result.__arrow_c_array__``."""
    pair = result.__arrow_c_array__()
    array = _c.capsule_pointer(pair[1], _c.ArrowArray).contents
    values = ctypes.cast(array.buffers[1], ctypes.POINTER(ctypes.c_int64))
    bits = ctypes.cast(array.buffers[0], ctypes.POINTER(ctypes.c_uint8)) if array.buffers[0] else None
    out = []
    for i in range(array.offset, array.offset + array.length):
        valid = bits is None or bits[i // 8] >> (i % 8) & 1
        out.append(values[i] if valid else None)
    return out


def run_arrow_case(rule, consume_array, consume_stream, as_arrow=None):
    if rule == "consumer.arrow_string_view":
        if consume_array is None:
            raise NotApplicable()
        try:
            pa = __import__("pyarrow")
        except ImportError:
            raise NotApplicable("needs pyarrow") from None
        source = pa.array(["a string longer than twelve bytes", None, "short"], type=pa.string_view())
        try:
            consume_array(source)
        except Exception as error:  # noqa: BLE001
            raise Refused(f"{type(error).__name__}: {error}") from None
        return ""
    if rule == "consumer.arrow_nulls_offset":
        if consume_array is None:
            raise NotApplicable()
        producer = Int64Array()
        try:
            result = consume_array(producer)
        except Exception as error:  # noqa: BLE001
            raise Refused(f"{type(error).__name__}: {error}") from None
        try:
            got = arrow_values(as_arrow(result) if as_arrow else result)
        except Exception as error:  # noqa: BLE001
            raise NotApplicable(f"the result cannot be read back through __arrow_c_array__: {error}") from None
        if got != producer.values:
            raise Broken(f"read {got}, the array holds {producer.values}")
        del result
        collect()
        return ""
    if consume_stream is None:
        raise NotApplicable()
    from .. import int64_stream

    message = "the source went away"
    try:
        result = consume_stream(int64_stream([[1, 2, 3]], error=message))
    except Exception as error:  # noqa: BLE001
        if isinstance(error, SystemError):
            raise Broken(f"{type(error).__name__}: {error} (an error without a Python exception set)") from None
        if message not in str(error):
            raise Warned(f"raised {type(error).__name__} without the producer's message: {error}") from None
        return f"{type(error).__name__}: {error}"
    raise Broken(f"the stream's error was swallowed: returned {type(result).__name__}")




def has_device_variant(rule):
    return rule in CASES and not CASES[rule].host_only


def run_case(rule, adapter, on_device=False):
    """The verdict of ``adapter``'s consumer on ``rule``; ``on_device`` runs the case in the
    memory of the adapter's ``device_memory``."""
    if rule.startswith("consumer.arrow_"):
        return run_arrow_case(rule, getattr(adapter, "consume_arrow", None), getattr(adapter, "consume_stream", None),
                              getattr(adapter, "as_arrow", None))
    consume = getattr(adapter, "consume_dlpack", None)
    if consume is None:
        raise NotApplicable()
    return run_dlpack_case(rule, consume, getattr(adapter, "writable", None),
                           adapter.device_memory if on_device else None)
