"""The DLPack producer rules: what ``__dlpack__``, ``__dlpack_device__``, the capsules and the
C exchange API of one object do, judged against dlpack-1.3.md."""
import ctypes
import gc

from . import _c
from ._fake import _raw_name, _raw_pointer
from .. import Tensor


class Sample:
    """One object of the producer's type and what it holds: ``values`` are its elements in
    row-major order (bytes, native order), ``dtype`` DLPack's ``(code, bits, lanes)``, ``device``
    DLPack's ``(device_type, device_id)`` of its memory."""

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


# --- devices: what the checker can read, and how ------------------------------------------------

#: Device types whose memory the host reads in place (dlpack-1.3.md §2.1): the CPU, CUDA and ROCm
#: pinned host memory, CUDA managed memory, and TPU pinned host memory (20, on DLPack ``main``,
#: in no release yet). Any other is device memory, which ``Tensor.tobytes`` cannot read: the
#: checker reads it through the producer's own copy to the CPU, or not at all.
HOST_ACCESSIBLE = frozenset({1, 3, 11, 13, 20})
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi",
                 10: "rocm", 11: "rocm_host", 12: "ext_dev", 13: "cuda_managed", 14: "oneapi",
                 15: "webgpu", 16: "hexagon", 17: "maia", 18: "trn", 19: "tpu", 20: "tpu_host",
                 21: "ascend"}


def device_name(device):
    """``"cuda:0"`` for ``(2, 0)``."""
    kind, index = (int(v) for v in device)
    return f"{_DEVICE_NAMES.get(kind, f'device type {kind}')}:{index}"


def device_of(capsule):
    """The ``(device_type, device_id)`` the capsule's tensor says it lies on."""
    device = managed(capsule).dl_tensor.device
    return (device.device_type, device.device_id)


def readable(tensor):
    """The elements of a ``dlpack_abi.Tensor`` in row-major order where the host can read them
    (``None`` where it cannot: device memory, or host-accessible memory it cannot order)."""
    device = tuple(tensor.__dlpack_device__())
    if device[0] == 1:
        return tensor.tobytes()
    if device[0] in HOST_ACCESSIBLE:
        try:
            return tensor.tobytes()
        except BufferError:
            return None
    return None


def host_bytes(source, tensor):
    """The elements of ``tensor`` (imported from the producer ``source``) in row-major order.

    Host memory is read in place; device memory through the producer's own copy to the CPU,
    ``__dlpack__(dl_device=(1, 0), copy=True)`` (dlpack-1.3.md §6.1). When the producer refuses
    that copy (the array API allows a ``BufferError``) or has none, the checker cannot read the
    elements: ``Unchecked`` (n/a) with the reason, never a failure of the library."""
    got = readable(tensor)
    if got is not None:
        return got
    where = f"device memory on {device_name(tensor.__dlpack_device__())}"
    try:
        capsule = source.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=True)
    except Exception as error:  # noqa: BLE001 - any refusal leaves the elements unread
        raise Unchecked(f"{where}: the producer's copy to the CPU was refused "
                        f"({type(error).__name__}: {error})") from None
    struct_of(capsule)
    copy_device = device_of(capsule)
    if copy_device[0] != 1:
        raise Unchecked(f"{where}: the producer's copy to the CPU came back on {device_name(copy_device)} "
                        "(dlpack.call.to_cpu)")
    return validated(capsule).tobytes()


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
    device = device_of(capsule)
    got = readable(validated(capsule))
    if got is None:
        # A copy on the device: the producer can copy the source to the CPU, not this capsule.
        return f"the copy's elements on {device_name(device)} not read (device memory)"
    if got != s.values:
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


def check_to_cpu(s):
    device = device_of(versioned_export(s.obj))
    if device[0] == 1:
        raise NotApplicable("the data is on the CPU (dlpack.call.dl_device)")
    try:
        capsule = s.obj.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=True)
    except BufferError as error:
        raise Refused(f"BufferError: {error}") from None
    except TypeError as error:
        raise Refused(f"TypeError (a producer without dl_device): {error}") from None
    except Exception as error:  # noqa: BLE001 - the spec's refusal is a BufferError
        raise Broken(f"{type(error).__name__}, not BufferError: {error}") from None
    struct_of(capsule)
    got = device_of(capsule)
    if got != (1, 0):
        raise Broken(f"dl_device=(1, 0) gave a tensor on {device_name(got)}")
    if is_versioned(capsule) and not flags_of(capsule) & _c.IS_COPIED:
        raise Broken(f"the copy from {device_name(device)} to the CPU is not marked IS_COPIED")
    if validated(capsule).tobytes() != s.values:
        raise Broken(f"the copy from {device_name(device)} holds other elements than the source")
    return f"from {device_name(device)}"


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


#: The consumer streams dlpack-1.3.md §6.2 gives each device type, besides ``None`` and ``-1``:
#: CUDA's legacy and per-thread default streams (CUDA managed memory is CUDA's), ROCm's default.
DEVICE_STREAMS = {2: (1, 2), 13: (1, 2), 10: (0,)}


def check_stream_device(s):
    device = device_of(versioned_export(s.obj))
    streams = DEVICE_STREAMS.get(device[0])
    if streams is None:
        raise NotApplicable(f"data on {device_name(device)}: §6.2 defines no streams but None there")
    refused = []
    for stream in streams:
        try:
            capsule = versioned_export(s.obj, stream=stream)
        except Broken:
            raise
        except Exception as error:  # noqa: BLE001 - support for streams is optional; a crash is not
            refused.append(f"stream={stream}: {type(error).__name__}: {error}")
            continue
        validated(capsule)
    if refused:
        raise Refused("; ".join(refused))
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


def consumed_once(capsule, use=None):
    """Takes the capsule with dlpack-abi's consumer (validation first), hands the tensor to
    ``use``, drops it, and checks that the deleter ran exactly once; returns ``use``'s detail."""
    counter = hook_deleter(capsule)
    tensor = validated(capsule)
    detail = use(tensor) if use else ""
    del tensor, capsule
    collect()
    if counter.calls != 1:
        raise Broken(f"the deleter ran {counter.calls} times after the consumer was done")
    return detail or ""


def check_valid(s):
    return consumed_once(versioned_export(s.obj))


def check_values(s):
    capsule = versioned_export(s.obj)
    tensor = managed(capsule).dl_tensor
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim)) if tensor.ndim > 0 else ()
    dtype = (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)
    if shape != s.shape:
        raise Broken(f"shape {shape}, the source's is {s.shape}")
    if dtype != s.dtype:
        raise Broken(f"dtype {dtype}, the source's is {s.dtype}")
    tensor = validated(capsule)
    got = readable(tensor)
    if got is None:
        if host_bytes(s.obj, tensor) != s.values:
            raise Broken("the elements of the producer's copy to the CPU differ from the source's")
        return "device memory: read through the producer's copy to the CPU"
    if got != s.values:
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


class Unchecked(NotApplicable):
    """The rule applies, but the checker cannot check it here (device memory it cannot read, a
    library that is not installed): n/a with the reason, never a failure of the library, and not
    hidden behind the passes of other samples."""


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
    "dlpack.call.to_cpu": check_to_cpu,
    "dlpack.call.stream_none": check_stream_none,
    "dlpack.call.stream_minus_one": check_stream_minus_one,
    "dlpack.call.stream_device": check_stream_device,
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


def wrap_versioned(pointer):
    """A 'dltensor_versioned' capsule over a tensor the exchange API handed out: its destructor
    calls the deleter unless a consumer took it."""
    return _c.new_capsule(ctypes.cast(pointer, ctypes.c_void_p), b"dltensor_versioned", _wrap_destructor)
