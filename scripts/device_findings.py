#!/usr/bin/env python3
"""Minimal reproducers of what the conformance checker found in PyTorch and CuPy on a GPU
(CONFORMANCE.md, "Device findings"), one function each, for those libraries' maintainers.

    python scripts/device_findings.py            # on a machine with a CUDA GPU, PyTorch and CuPy
    python scripts/device_findings.py --json     # the same, as JSON (scripts/gpu-test.sh saves it)

Each reproducer needs only its library, NumPy and ctypes: a producer with the odd property is a
DLPack capsule built here with ctypes over the library's own device memory (`producer`). It
prints `reproduces`, `does not reproduce` (fixed, or changed) or `n/a` (the library or a GPU is
missing), with what it saw. A finding that kills the process runs in a child process. The exit
code is 0 whatever the findings: they are facts about other libraries, not failures of ours.
"""
import ctypes
import json
import subprocess
import sys

# DLPack 1.3 (dlpack/dlpack.h): DLManagedTensorVersioned and the flag bits.
READ_ONLY, IS_COPIED = 1 << 0, 1 << 1
kDLCPU, kDLCUDA, kDLFloat, kDLFloat4_e2m1fn = 1, 2, 2, 17


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
    ("deleter", DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]

api = ctypes.pythonapi
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

_kept = []  # structs, shapes and the memory's owners: alive for the process, deleter or not
deleted = []  # one entry per deleter call


@DELETER
def _deleter(_):
    deleted.append(1)


class Producer:
    """What `from_dlpack` takes: `__dlpack__` hands out `capsule` once (the memory was written
    and the device synchronised before: no stream to order), on `device`."""

    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def producer(data_ptr, device, shape, strides, dtype=(kDLFloat, 32, 1), flags=0, byte_offset=0,
             version=(1, 3), owner=None):
    """A producer of one `dltensor_versioned` capsule describing `data_ptr` (memory `owner`
    keeps alive) with the given fields. Its deleter only counts its calls."""
    n = len(shape)
    shape_array = (ctypes.c_int64 * n)(*shape)
    strides_array = (ctypes.c_int64 * n)(*strides)
    managed = DLManagedTensorVersioned(
        version[0], version[1], None, _deleter, flags,
        DLTensor(data_ptr, DLDevice(*device), n, DLDataType(*dtype), shape_array, strides_array,
                 byte_offset))
    _kept.extend([managed, shape_array, strides_array, owner])
    versioned = api.PyCapsule_New(ctypes.addressof(managed), b"dltensor_versioned", None)
    return Producer(versioned, device)


def managed_of(versioned_capsule):
    """The DLManagedTensorVersioned a (not yet consumed) capsule holds: valid only while the
    caller keeps the capsule (its destructor runs the producer's deleter)."""
    pointer = api.PyCapsule_GetPointer(versioned_capsule, b"dltensor_versioned")
    return DLManagedTensorVersioned.from_address(pointer)


def result(reproduces, detail):
    return ("reproduces" if reproduces else "does not reproduce"), detail


# -- PyTorch -------------------------------------------------------------------------------

def torch_copy_is_not_marked_copied():
    """`__dlpack__(copy=True)` (CUDA to CUDA, and CUDA to the CPU) returns a copy whose flags
    lack IS_COPIED (dlpack-1.3.md §4: a producer that copies sets it)."""
    import torch
    t = torch.arange(4.0, device="cuda")
    seen = {}
    for name, keywords in (("copy=True", dict(copy=True)),
                           ("dl_device=CPU", dict(dl_device=(kDLCPU, 0), copy=True))):
        capsule = t.__dlpack__(max_version=(1, 3), **keywords)
        seen[name] = managed_of(capsule).flags
        del capsule
    unmarked = {name: flags for name, flags in seen.items() if not flags & IS_COPIED}
    return result(bool(unmarked), f"flags of the copies: {seen} (IS_COPIED = {IS_COPIED})")


def torch_aborts_on_negative_strides():
    """`torch.from_dlpack` of a CUDA tensor with a negative stride (dlpack-1.3.md §5.3 allows
    them) kills the process with SIGABRT instead of importing or raising."""
    code = ("import sys, torch; sys.path.insert(0, %r); from device_findings import producer;"
            "b = torch.arange(6.0, dtype=torch.float32, device='cuda'); torch.cuda.synchronize();"
            "c = producer(b.data_ptr(), (2, b.device.index), (6,), (-1,), byte_offset=20, owner=b);"
            "print(torch.from_dlpack(c).cpu().tolist())") % sys.path[0]
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    died = child.returncode < 0
    return result(died, f"exit status {child.returncode}; stdout {child.stdout.strip()!r}; "
                        f"stderr {child.stderr.strip()[-300:]!r}")


def torch_ignores_read_only():
    """`torch.from_dlpack` of a READ_ONLY CUDA tensor returns a writable tensor sharing its
    memory (dlpack-1.3.md §4: a consumer that cannot keep it read-only must copy or refuse)."""
    import torch
    b = torch.zeros(4, device="cuda")
    torch.cuda.synchronize()
    c = producer(b.data_ptr(), (kDLCUDA, b.device.index), (4,), (1,), flags=READ_ONLY, owner=b)
    t = torch.from_dlpack(c)
    shares = t.data_ptr() == b.data_ptr()
    try:
        t[0] = 42.0
        wrote = b[0].item() == 42.0
    except RuntimeError as error:
        return result(False, f"the write was refused: {error}")
    return result(shares and wrote, f"shares the memory: {shares}; the write reached it: {wrote}")


def torch_refuses_the_per_thread_default_stream():
    """`__dlpack__(stream=2)` (CUDA's per-thread default stream, dlpack-1.3.md §6.2) raises
    BufferError: a consumer on that stream must ask for another one (the legacy default stream
    is ordered with it)."""
    import torch
    t = torch.arange(4.0, device="cuda")
    try:
        t.__dlpack__(max_version=(1, 3), stream=2)
    except BufferError as error:
        return result(True, f"BufferError: {error}")
    return result(False, "accepted")


# -- CuPy -------------------------------------------------------------------------------------

def cupy_ignores_read_only():
    """`cupy.from_dlpack` of a READ_ONLY CUDA tensor returns a writable array sharing its
    memory."""
    import cupy
    b = cupy.zeros(4, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    c = producer(b.data.ptr, (kDLCUDA, b.device.id), (4,), (1,), flags=READ_ONLY, owner=b)
    a = cupy.from_dlpack(c)
    a[0] = 42.0
    wrote = float(b[0]) == 42.0
    return result(a.data.ptr == b.data.ptr and wrote, f"the write reached the memory: {wrote}")


def _cupy_import(**fields):
    import cupy
    b = cupy.zeros(4, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    c = producer(b.data.ptr, (kDLCUDA, b.device.id), (4,), (1,), owner=b, **fields)
    try:
        cupy.from_dlpack(c)
    except SystemError as error:
        return result(True, f"SystemError: {error}")
    except Exception as error:  # a clean refusal is the fix
        return result(False, f"{type(error).__name__}: {error}")
    return result(False, "imported")


def cupy_system_error_on_subbyte():
    """`cupy.from_dlpack` of a float4_e2m1fn tensor (DLPack 1.3's sub-byte types) fails with
    `SystemError: error return without exception set` instead of a BufferError. (Reported by
    the 2026-11-27 run; in doubt: the checker's capsules then lost a consumer's error, which this
    capsule, without a destructor, cannot.)"""
    return _cupy_import(dtype=(kDLFloat4_e2m1fn, 4, 1))


def cupy_system_error_on_major_2():
    """`cupy.from_dlpack` of a tensor of major version 2 (which a 1.x consumer must refuse,
    calling its deleter) fails with `SystemError: error return without exception set`. (In
    doubt, as above.)"""
    return _cupy_import(version=(2, 0))


def cupy_negative_strides():
    """A negative stride does not survive CuPy: the conformance run gave `cupy.from_dlpack` a
    tensor with strides (-3, -1) and read back, through CuPy's `__dlpack__`, `strides[0] =
    4611686018427387901` (2**62 - 3: a byte stride of -12 divided by 4 as an unsigned number).
    Checked both ways: the import of a reversed tensor, and the export of a reversed array."""
    import cupy
    b = cupy.arange(6, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    c = producer(b.data.ptr, (kDLCUDA, b.device.id), (6,), (-1,), byte_offset=20, owner=b)
    imported = cupy.from_dlpack(c)
    capsule = b[::-1].__dlpack__(max_version=(1, 3))
    exported = managed_of(capsule).dl_tensor.strides[0]
    del capsule
    wrong = imported.strides != (-4,) or exported != -1
    return result(wrong, f"imported: strides {imported.strides} (expected (-4,)), values "
                         f"{imported.get().tolist()}; exported: strides[0] = {exported} (expected -1)")


FINDINGS = {
    "torch": [torch_copy_is_not_marked_copied, torch_aborts_on_negative_strides,
              torch_ignores_read_only, torch_refuses_the_per_thread_default_stream],
    "cupy": [cupy_ignores_read_only, cupy_system_error_on_subbyte, cupy_system_error_on_major_2,
             cupy_negative_strides],
}


def gpu_library(name):
    """The library, if it imports and sees a CUDA device; else why not."""
    try:
        module = __import__(name)
        if name == "torch" and not module.cuda.is_available():
            return None, "no CUDA device"
        if name == "cupy":
            module.cuda.runtime.getDeviceCount()
        return module, ""
    except Exception as error:  # ImportError, or a CUDA error where there is no GPU
        return None, f"{type(error).__name__}: {error}"


def main(argv):
    report = {}
    for library, findings in FINDINGS.items():
        module, why = gpu_library(library)
        version = f"{library} {module.__version__}" if module else library
        for finding in findings:
            if module is None:
                verdict, detail = "n/a", why
            else:
                try:
                    verdict, detail = finding()
                except Exception as error:
                    verdict, detail = "n/a", f"the reproducer failed: {type(error).__name__}: {error}"
            report[finding.__name__] = {"library": version, "verdict": verdict, "detail": detail,
                                        "finding": " ".join(finding.__doc__.split())}
    if "--json" in argv:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        for name, entry in report.items():
            print(f"{entry['verdict']:>18}  {name} ({entry['library']}): {entry['detail']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
