"""The DLPack producer rules: what ``__dlpack__``, ``__dlpack_device__``, the capsules and the
C exchange API of one object do, judged against dlpack-1.3.md."""
import ctypes
import gc

from . import _c
from ._fake import _raw_name, _raw_pointer
from .. import Tensor


class Sample:
    """One object of the producer's type and what it holds: ``values`` are its elements in
    row-major order (bytes, native order), ``dtype`` DLPack's ``(code, bits, lanes)``."""

    def __init__(self, name, obj, shape, dtype, values, readonly=False, device=(1, 0)):
        self.name, self.obj, self.shape, self.dtype = name, obj, tuple(shape), tuple(dtype)
        self.values, self.readonly, self.device = values, readonly, device


class Refused(Exception):
    """A clean refusal the spec allows."""


class Broken(Exception):
    """A rule broken; the message says how."""


def struct_of(capsule):
    name = _c.capsule_name(capsule)
    if name in ("dltensor_versioned", "used_dltensor_versioned"):
        return _c.DLManagedTensorVersioned, _c.VERSIONED_DELETER
    if name in ("dltensor", "used_dltensor"):
        return _c.DLManagedTensor, _c.LEGACY_DELETER
    raise Broken(f"the capsule is named {name!r}, not 'dltensor_versioned' or 'dltensor'")


def managed(capsule):
    struct, _ = struct_of(capsule)
    return _c.capsule_pointer(capsule, struct).contents


def hook_deleter(capsule):
    """Swaps the tensor's deleter for a counting one (the capsule's holder may)."""
    struct, prototype = struct_of(capsule)
    pointer = _c.capsule_pointer(capsule, struct)
    counter = _c.Counter(prototype, pointer.contents.deleter)
    if pointer.contents.deleter:
        pointer.contents.deleter = counter.callback
    return counter


def versioned_export(obj, **kwargs):
    """The export a 1.3 consumer asks for: a versioned capsule, or a legacy one from a producer
    without a versioned export (its own version, which the spec allows it to return)."""
    capsule = obj.__dlpack__(max_version=(1, 3), **kwargs)
    struct_of(capsule)
    return capsule


def is_versioned(capsule):
    return _c.capsule_name(capsule) in ("dltensor_versioned", "used_dltensor_versioned")


def flags_of(capsule):
    return managed(capsule).flags if is_versioned(capsule) else 0


def collect():
    for _ in range(3):
        gc.collect()


def validated(capsule):
    """Our consumer's verdict on the capsule (which it consumes)."""
    try:
        return Tensor.from_dlpack(capsule)
    except BufferError as error:
        raise Broken(f"refused by dlpack-abi's validation: {error}") from None


def data_address(capsule):
    tensor = managed(capsule).dl_tensor
    return (tensor.data or 0) + tensor.byte_offset


# --- the checks, one sample at a time: return a detail string, or raise Broken/Refused ----------


def check_device(s):
    device = s.obj.__dlpack_device__()
    if not (isinstance(device, tuple) and len(device) == 2):
        raise Broken(f"returned {device!r}, not a 2-tuple")
    device = (int(device[0]), int(device[1]))
    capsule = versioned_export(s.obj)
    got = managed(capsule).dl_tensor.device
    if (got.device_type, got.device_id) != device:
        raise Broken(f"__dlpack_device__() is {device}, the tensor says {(got.device_type, got.device_id)}")
    return ""


def check_plain(s):
    try:
        capsule = s.obj.__dlpack__()
    except BufferError as error:
        raise Refused(f"BufferError: {error}") from None
    name = _c.capsule_name(capsule)
    if name != "dltensor":
        raise Broken(f"__dlpack__() gave a {name!r} capsule; a legacy consumer cannot read it")
    validated(capsule)
    return ""


def check_max_version(version):
    def check(s):
        try:
            capsule = s.obj.__dlpack__(max_version=version)
        except TypeError as error:
            raise Refused(f"TypeError (a legacy-only producer): {error}") from None
        except BufferError as error:
            raise Broken(f"BufferError: {error}") from None
        name = _c.capsule_name(capsule)
        if name == "dltensor":
            raise Warned("a legacy capsule: the producer has no versioned export, so it cannot "
                         "mark read-only or copied data")
        if name != "dltensor_versioned":
            raise Broken(f"gave a {name!r} capsule")
        major = managed(capsule).version.major
        if major != 1:
            raise Broken(f"version.major is {major}")
        minor = managed(capsule).version.minor
        validated(capsule)
        return f"version 1.{minor}"

    return check


def check_copy_true(s):
    original = versioned_export(s.obj)
    try:
        capsule = s.obj.__dlpack__(max_version=(1, 3), copy=True)
    except BufferError as error:
        raise Refused(f"BufferError: {error}") from None
    if not is_versioned(capsule):
        raise Refused("a legacy capsule cannot say IS_COPIED")
    if not flags_of(capsule) & _c.IS_COPIED:
        raise Broken("the copy is not marked IS_COPIED")
    if data_address(capsule) == data_address(original) and s.values:
        raise Broken("IS_COPIED, but the data is the original's")
    if validated(capsule).tobytes() != s.values:
        raise Broken("the copy's elements differ from the source's")
    return ""


def check_copy_false(s):
    original = versioned_export(s.obj)
    capsule = s.obj.__dlpack__(max_version=(1, 3), copy=False)
    if flags_of(capsule) & _c.IS_COPIED:
        raise Broken("copy=False came back marked IS_COPIED")
    if data_address(capsule) != data_address(original):
        raise Broken("copy=False does not share the plain export's memory")
    return ""


def check_dl_device(s):
    device = tuple(int(v) for v in s.obj.__dlpack_device__())
    original = versioned_export(s.obj)
    capsule = s.obj.__dlpack__(max_version=(1, 3), dl_device=device)
    if data_address(capsule) != data_address(original) and s.values:
        raise Broken("dl_device of the data's own device made a copy")
    return ""


def check_stream_none(s):
    versioned_export(s.obj, stream=None)
    return ""


def check_stream_minus_one(s):
    try:
        validated(versioned_export(s.obj, stream=-1))
    except Broken:
        raise
    except Exception as error:  # noqa: BLE001 - any exception is a refusal; only a crash is not
        raise Refused(f"{type(error).__name__}: {error}") from None
    return ""


def check_name(s):
    struct_of(s.obj.__dlpack__(max_version=(1, 3)))
    return ""


USED = {"dltensor_versioned": b"used_dltensor_versioned", "dltensor": b"used_dltensor"}


def check_unconsumed(s):
    capsule = versioned_export(s.obj)
    counter = hook_deleter(capsule)
    del capsule
    collect()
    if counter.calls == 0:
        # Freed another way (or leaked): the reference destructor calls `deleter`, so a holder
        # that wraps the deleter, as this check does, would not see it run.
        raise Warned("the capsule's destructor did not call the tensor's deleter field")
    if counter.calls != 1:
        raise Broken(f"the deleter ran {counter.calls} times when the unconsumed capsule died")
    return ""


def check_used(s):
    capsule = versioned_export(s.obj)
    counter = hook_deleter(capsule)
    # Consume as the spec says: rename, then call the deleter when done.
    _c.capsules.PyCapsule_SetName(capsule, USED[_c.capsule_name(capsule)])
    struct, _ = struct_of(capsule)
    pointer = _c.capsule_pointer(capsule, struct)
    if pointer.contents.deleter:
        pointer.contents.deleter(pointer)
    del capsule, pointer
    collect()
    if counter.calls != 1:
        raise Broken(f"the deleter ran {counter.calls} times (the capsule's destructor ignored 'used_')")
    return ""


def check_valid(s):
    capsule = versioned_export(s.obj)
    counter = hook_deleter(capsule)
    tensor = validated(capsule)
    del tensor, capsule
    collect()
    if counter.calls != 1:
        raise Broken(f"the deleter ran {counter.calls} times after the consumer was done")
    return ""


def check_values(s):
    capsule = versioned_export(s.obj)
    tensor = managed(capsule).dl_tensor
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim)) if tensor.ndim > 0 else ()
    dtype = (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)
    if shape != s.shape:
        raise Broken(f"shape {shape}, the source's is {s.shape}")
    if dtype != s.dtype:
        raise Broken(f"dtype {dtype}, the source's is {s.dtype}")
    if validated(capsule).tobytes() != s.values:
        raise Broken("the elements read through shape, strides and byte_offset differ from the source's")
    return ""


def check_strides(s):
    capsule = versioned_export(s.obj)
    if not is_versioned(capsule):
        raise NotApplicable("a legacy capsule (NULL strides allowed)")
    m = managed(capsule)
    if (m.version.major, m.version.minor) >= (1, 2) and m.dl_tensor.ndim > 0 and not m.dl_tensor.strides:
        raise Broken(f"version {m.version.major}.{m.version.minor}, ndim {m.dl_tensor.ndim}, strides NULL")
    return ""


def check_read_only(s):
    if not s.readonly:
        raise NotApplicable()
    capsule = versioned_export(s.obj)
    if not flags_of(capsule) & _c.READ_ONLY:
        raise Broken("a read-only source came out without READ_ONLY: consumers may write it")
    try:
        legacy = s.obj.__dlpack__()
    except (BufferError, TypeError):
        return ""
    if _c.capsule_name(legacy) == "dltensor":
        raise Broken("a read-only source was exported as a legacy capsule, which cannot say so")
    return ""


def check_unknown_flags(s):
    flags = flags_of(versioned_export(s.obj))
    if flags & ~0b111:
        raise Broken(f"flags {flags:#x} has bits 1.3 does not define")
    return ""


class NotApplicable(Exception):
    """The rule does not apply to this object."""


class Warned(Exception):
    """A recommendation not followed."""


CHECKS = {
    "dlpack.device": check_device,
    "dlpack.call.plain": check_plain,
    "dlpack.call.max_version_1_0": check_max_version((1, 0)),
    "dlpack.call.max_version_1_3": check_max_version((1, 3)),
    "dlpack.call.max_version_2_0": check_max_version((2, 0)),
    "dlpack.call.copy_true": check_copy_true,
    "dlpack.call.copy_false": check_copy_false,
    "dlpack.call.dl_device": check_dl_device,
    "dlpack.call.stream_none": check_stream_none,
    "dlpack.call.stream_minus_one": check_stream_minus_one,
    "dlpack.capsule.name": check_name,
    "dlpack.capsule.unconsumed": check_unconsumed,
    "dlpack.capsule.used": check_used,
    "dlpack.fields.valid": check_valid,
    "dlpack.fields.values": check_values,
    "dlpack.fields.strides": check_strides,
    "dlpack.flags.read_only": check_read_only,
    "dlpack.flags.unknown": check_unknown_flags,
}


def _wrap_destructor(capsule):
    name = _raw_name(capsule)
    if name == b"dltensor_versioned":
        pointer = ctypes.cast(_raw_pointer(capsule, name), ctypes.POINTER(_c.DLManagedTensorVersioned))
        if pointer.contents.deleter:
            pointer.contents.deleter(pointer)


_WRAP_DESTRUCTOR = _c.CAPSULE_DESTRUCTOR(_wrap_destructor)


def wrap_versioned(pointer):
    """A 'dltensor_versioned' capsule over a tensor the exchange API handed out: its destructor
    calls the deleter unless a consumer took it."""
    return _c.capsules.PyCapsule_New(ctypes.cast(pointer, ctypes.c_void_p), b"dltensor_versioned", _WRAP_DESTRUCTOR)
