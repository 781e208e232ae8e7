"""The Arrow PyCapsule producer rules (arrow-c-interfaces.md §5, §7): the dunders of one object,
their capsules, ``requested_schema``, the device variants, and ``release``."""
import ctypes

from . import _c
from ._arrow_fake import Keeper, schema_capsule
from ._dlpack import Broken, NotApplicable, Refused, Warned, collect, device_name
from ._fake import _raw_name, _raw_pointer

ARRAY_METHODS = ("__arrow_c_array__", "__arrow_c_device_array__", "__arrow_c_stream__",
                 "__arrow_c_device_stream__")


class Pair:
    """An object offering one pair of capsules, for dlpack-abi's importer."""

    def __init__(self, schema, array, device=False):
        self.pair = (schema, array)
        if device:
            self.__arrow_c_device_array__ = lambda requested_schema=None, **kw: self.pair
        else:
            self.__arrow_c_array__ = lambda requested_schema=None: self.pair


def validate(schema, array, device=False):
    from .. import ArrowArray

    try:
        return ArrowArray.from_arrow(Pair(schema, array, device))
    except (ValueError, BufferError, TypeError) as error:
        raise Broken(f"refused by dlpack-abi's validation: {error}") from None


def names(pair, expected):
    if not (isinstance(pair, tuple) and len(pair) == 2):
        raise Broken(f"returned {type(pair).__name__}, not a 2-tuple of capsules")
    got = tuple(_c.capsule_name(c) if _c.is_capsule(c) else type(c).__name__ for c in pair)
    if got != expected:
        raise Broken(f"capsules named {got}, not {expected}")


def needs(obj, method):
    if not hasattr(obj, method):
        raise NotApplicable()


def device_of(obj):
    """The ``(device_type, device_id)`` of the object's device array (Arrow numbers devices as
    DLPack does), or ``None`` when it has none."""
    if not hasattr(obj, "__arrow_c_device_array__"):
        return None
    try:
        pair = obj.__arrow_c_device_array__()
        device = _c.capsule_pointer(pair[1], _c.ArrowDeviceArray).contents
    except Exception:  # noqa: BLE001 - arrow.device.capsules reports it
        return None
    return (device.device_type, device.device_id)


def cpu_array(obj, **keywords):
    """``__arrow_c_array__(**keywords)``. The CPU methods of a producer whose data is elsewhere
    must copy or raise (§7): its exception is a refusal, not a failure."""
    try:
        return obj.__arrow_c_array__(**keywords)
    except Exception as error:
        device = device_of(obj)
        if device is not None and device[0] != 1:
            raise Refused(f"data on {device_name(device)}: __arrow_c_array__ raised "
                          f"{type(error).__name__}: {error}") from None
        raise


def check_schema_present(s):
    offered = [m for m in ARRAY_METHODS if hasattr(s.obj, m)]
    if not offered:
        raise NotApplicable()
    if not hasattr(s.obj, "__arrow_c_schema__"):
        raise Warned(f"{offered[0]} without __arrow_c_schema__: a consumer must consume the data to read its schema")
    return ""


def check_schema_capsule(s):
    needs(s.obj, "__arrow_c_schema__")
    capsule = s.obj.__arrow_c_schema__()
    if not _c.is_capsule(capsule) or _c.capsule_name(capsule) != "arrow_schema":
        raise Broken(f"returned {capsule!r}, not an 'arrow_schema' capsule")
    node = _c.capsule_pointer(capsule, _c.ArrowSchema).contents
    if not node.release or not node.format:
        raise Broken("the schema is released or has no format")
    return node.format.decode(errors="replace")


def check_array(s):
    needs(s.obj, "__arrow_c_array__")
    pair = cpu_array(s.obj)
    names(pair, ("arrow_schema", "arrow_array"))
    validate(*pair)
    return ""


def check_requested(s):
    needs(s.obj, "__arrow_c_array__")
    own = cpu_array(s.obj)[0]
    try:
        pair = s.obj.__arrow_c_array__(requested_schema=own)
    except Exception as error:  # noqa: BLE001 - requested_schema support is optional
        raise Refused(f"{type(error).__name__} for its own schema: {error}") from None
    names(pair, ("arrow_schema", "arrow_array"))
    validate(*pair)
    return ""


def check_incompatible(s):
    needs(s.obj, "__arrow_c_array__")
    keeper = Keeper()
    request = schema_capsule(keeper, "+s", ["n", "n", "n"])
    try:
        pair = s.obj.__arrow_c_array__(requested_schema=request)
    except Exception:  # noqa: BLE001 - any exception is the refusal the rule asks for
        return ""
    got = _c.capsule_pointer(pair[0], _c.ArrowSchema).contents
    raise Broken(f"a 3-field struct was requested; it returned {got.format.decode()!r} with "
                 f"{got.n_children} children instead of raising")


def check_device(s):
    needs(s.obj, "__arrow_c_device_array__")
    pair = s.obj.__arrow_c_device_array__()
    names(pair, ("arrow_schema", "arrow_device_array"))
    device = _c.capsule_pointer(pair[1], _c.ArrowDeviceArray).contents
    if device.device_type == 1 and device.sync_event:
        raise Broken("a CPU device array carries a sync_event")
    detail = f"device ({device.device_type}, {device.device_id})"
    validate(*pair, device=True)
    return detail


def check_kwargs(s):
    needs(s.obj, "__arrow_c_device_array__")
    try:
        s.obj.__arrow_c_device_array__(future_keyword=None)
    except TypeError as error:
        raise Broken(f"an unknown keyword whose value is None was refused: {error}") from None
    try:
        s.obj.__arrow_c_device_array__(future_keyword=1)
    except NotImplementedError:
        return ""
    except Exception as error:  # noqa: BLE001
        raise Broken(f"an unknown keyword with a value raised {type(error).__name__}, not NotImplementedError") from None
    raise Broken("an unknown keyword with a value was ignored")


def array_struct(capsule):
    """The ArrowArray a capsule holds: an 'arrow_array''s, or the array of an
    'arrow_device_array''s; and the struct to copy when moving it out."""
    if _c.capsule_name(capsule) == "arrow_device_array":
        outer = _c.capsule_pointer(capsule, _c.ArrowDeviceArray)
        return outer, ctypes.pointer(outer.contents.array)
    pointer = _c.capsule_pointer(capsule, _c.ArrowArray)
    return pointer, pointer


def hook_release(capsule):
    outer, pointer = array_struct(capsule)
    counter = _c.Counter(_c.ARRAY_RELEASE, pointer.contents.release)
    if not pointer.contents.release:
        raise Broken("the exported array is already released")
    pointer.contents.release = counter.callback
    return outer, pointer, counter


def array_capsule(obj):
    """An array capsule of the object: the CPU one, or the device one of data that is not on the
    CPU (whose CPU method may refuse)."""
    device = device_of(obj)
    if device is not None and (device[0] != 1 or not hasattr(obj, "__arrow_c_array__")):
        return obj.__arrow_c_device_array__()[1]
    if hasattr(obj, "__arrow_c_array__"):
        return obj.__arrow_c_array__()[1]
    raise NotApplicable()


def check_unconsumed(s):
    capsule = array_capsule(s.obj)
    outer, pointer, counter = hook_release(capsule)
    del capsule, outer, pointer
    collect()
    if counter.calls != 1:
        raise Broken(f"release ran {counter.calls} times when the unconsumed capsule died")
    return ""


def check_moved(s):
    capsule = array_capsule(s.obj)
    outer, pointer, counter = hook_release(capsule)
    moved = type(outer.contents).from_buffer_copy(outer.contents)
    pointer.contents.release = _c.ARRAY_RELEASE()
    del capsule, outer, pointer
    collect()
    if counter.calls != 0:
        raise Broken("the capsule's destructor released an array moved out of it")
    array = moved.array if isinstance(moved, _c.ArrowDeviceArray) else moved
    array.release(ctypes.byref(array))
    if counter.calls != 1:
        raise Broken(f"release ran {counter.calls} times")
    return ""




def owned_capsule(struct, name, keep):
    """A capsule over a copy of ``struct`` that releases it unless moved out."""
    kind = type(struct)

    def destructor(capsule):
        pointer = ctypes.cast(_raw_pointer(capsule, _raw_name(capsule)), ctypes.POINTER(kind))
        if pointer.contents.release:
            pointer.contents.release(pointer)

    copy = kind.from_buffer_copy(struct)
    keep += [copy]  # (`new_capsule` keeps `destructor`)
    return _c.new_capsule(ctypes.addressof(copy), name, destructor)


def pull(capsule, keep):
    """Reads a stream capsule to its end with dlpack-abi's validation of every batch: returns
    (batches, error) where error is (code, message) of a failing get_next."""
    stream = _c.capsule_pointer(capsule, _c.ArrowArrayStream)
    if not stream.contents.release:
        raise Broken("the stream is released")
    batches = 0
    while True:
        schema = _c.ArrowSchema()
        if stream.contents.get_schema(stream, ctypes.byref(schema)) != 0:
            raise Broken("get_schema failed")
        array = _c.ArrowArray()
        code = stream.contents.get_next(stream, ctypes.byref(array))
        if code != 0:
            if schema.release:
                schema.release(ctypes.byref(schema))
            message = stream.contents.get_last_error(stream) if stream.contents.get_last_error else None
            return batches, (code, ctypes.string_at(message).decode(errors="replace") if message else None)
        if not array.release:
            if schema.release:
                schema.release(ctypes.byref(schema))
            return batches, None
        validate(owned_capsule(schema, b"arrow_schema", keep), owned_capsule(array, b"arrow_array", keep))
        batches += 1


def check_stream(s):
    needs(s.obj, "__arrow_c_stream__")
    capsule = s.obj.__arrow_c_stream__()
    if not _c.is_capsule(capsule) or _c.capsule_name(capsule) != "arrow_array_stream":
        raise Broken(f"returned {capsule!r}, not an 'arrow_array_stream' capsule")
    batches, error = pull(capsule, _c.KEEP)
    if error is not None:
        raise Broken(f"get_next failed with {error[0]}: {error[1]}")
    return f"{batches} batches"


def check_stream_release(s):
    needs(s.obj, "__arrow_c_stream__")
    capsule = s.obj.__arrow_c_stream__()
    stream = _c.capsule_pointer(capsule, _c.ArrowArrayStream)
    counter = _c.Counter(_c.STREAM_RELEASE, stream.contents.release)
    stream.contents.release = counter.callback
    del capsule, stream
    collect()
    if counter.calls != 1:
        raise Broken(f"release ran {counter.calls} times when the unconsumed stream capsule died")
    return ""


def check_stream_error(s):
    failing = getattr(s, "failing_stream", None)
    if failing is None:
        raise NotApplicable()
    batches, error = pull(failing().__arrow_c_stream__(), _c.KEEP)
    if error is None:
        raise Broken("the failing stream ended without an error")
    code, message = error
    if code < 0:
        raise Broken(f"get_next returned {code}, not an errno")
    if not message:
        raise Broken(f"get_next returned {code}, and get_last_error gave no message")
    return f"errno {code}: {message}"


CHECKS = {
    "arrow.schema.present": check_schema_present,
    "arrow.schema.capsule": check_schema_capsule,
    "arrow.array.capsules": check_array,
    "arrow.array.requested": check_requested,
    "arrow.array.incompatible": check_incompatible,
    "arrow.device.capsules": check_device,
    "arrow.device.kwargs": check_kwargs,
    "arrow.release.unconsumed": check_unconsumed,
    "arrow.release.moved": check_moved,
    "arrow.stream.capsule": check_stream,
    "arrow.stream.release": check_stream_release,
    "arrow.stream.error": check_stream_error,
}
