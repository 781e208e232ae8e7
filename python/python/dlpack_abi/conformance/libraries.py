"""Adapters for the libraries the checker knows: how to make objects of each library's types (the
producer check) and how each library imports (the consumer check).

An adapter is a module-level class with any of: ``samples()`` yielding :class:`Sample`
objects (DLPack producers, whose elements are known) and ``arrow_samples()`` yielding
``(name, make)`` pairs, ``make()`` returning a fresh Arrow PyCapsule producer (streams are
single-use); ``failing_stream()`` making an object whose
Arrow stream fails mid-way; ``consume_dlpack(obj)``, ``consume_arrow(obj)`` and
``consume_stream(obj)``, the library's import functions; ``writable(result)`` when the library
can say whether a result may be written. ``version()`` names what was tested (and, for device
samples, the device), and raises :class:`Unavailable` (or ``ImportError``) where the library cannot
be checked: the run then reports it as not checked instead of failing.

Device libraries add ``consumer_device()``, the ``(device_type, device_id)`` whose memory
``device_memory(data)`` returns as ``(address, device, keep)`` (``data`` copied into new device
memory, ready to read on any stream; ``keep`` holds it), or ``None`` where there is no device: the
consumer cases then run a second time on that device. ``imports_cpu = False`` says the library's
consumer takes device memory only (its CPU cases are n/a).

Another project checks its own library with ``--adapter module:Class``, a class of the same
shape.
"""
import importlib
import inspect

from ._dlpack import Sample


class Unavailable(Exception):
    """The library cannot be checked here (not installed, no device); the message says why."""


def _require(name, package=None):
    """The module ``name``, imported now (adapters import lazily), or :class:`Unavailable`."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise Unavailable(f"{package or name} is not installed ({error})") from None


def _numpy_samples(wrap, readonly_supported=True):
    import numpy as np

    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    cases = [
        ("float32 2x3", base),
        ("int64 strided", np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2]),
        ("float64 transposed", np.arange(6.0).reshape(2, 3).T),
        ("uint8 0-d", np.array(7, dtype=np.uint8)),
        ("float64 empty", np.zeros((0, 3))),
        ("bool", np.array([True, False, True])),
        ("complex64", np.array([1 + 2j, 3 - 4j], dtype=np.complex64)),
    ]
    for name, array in cases:
        yield _sample(name, wrap(array), array)
    if readonly_supported:
        frozen = np.arange(4.0)
        frozen.flags.writeable = False
        yield _sample("float64 read-only", wrap(frozen), frozen, readonly=True)


def _sample(name, obj, array, readonly=False, device=(1, 0)):
    import numpy as np

    return Sample(name, obj, array.shape, _dtype(array.dtype), np.ascontiguousarray(array).tobytes(), readonly,
                  device)


def _layouts():
    """(name, NumPy source, view) of the device libraries' samples: ``view`` (or none) is applied
    alike to the source and to the library's copy of it, so that the copy's layout is the
    library's own (on the device too) and its elements are known."""
    import numpy as np

    return [
        ("float32 2x3", np.arange(6, dtype=np.float32).reshape(2, 3), None),
        ("int64 strided", np.arange(12, dtype=np.int64).reshape(3, 4), lambda a: a[:, ::2]),
        ("float64 transposed", np.arange(6.0).reshape(2, 3), lambda a: a.T),
        ("uint8 0-d", np.array(7, dtype=np.uint8), None),
        ("float64 empty", np.zeros((0, 3)), None),
        ("bool", np.array([True, False, True]), None),
        ("complex64", np.array([1 + 2j, 3 - 4j], dtype=np.complex64), None),
        ("float16", np.arange(4, dtype=np.float16), None),
        ("int8", np.arange(-2, 2, dtype=np.int8), None),
    ]


def _device_samples(prefix, to_library, device):
    """The ``_layouts`` samples made by ``to_library(numpy_array)``, named ``prefix + name``."""
    for name, source, view in _layouts():
        obj = to_library(source)
        expected = source
        if view is not None:
            obj, expected = view(obj), view(source)
        yield _sample(prefix + name, obj, expected, device=device)


def _dtype(dtype):
    import numpy as np

    code = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}[np.dtype(dtype).kind]
    return (code, np.dtype(dtype).itemsize * 8, 1)


class numpy:
    @staticmethod
    def version():
        return "numpy " + importlib.import_module("numpy").__version__

    @staticmethod
    def samples():
        return _numpy_samples(lambda a: a)

    @staticmethod
    def consume_dlpack(obj):
        return importlib.import_module("numpy").from_dlpack(obj)

    @staticmethod
    def writable(result):
        return result.flags.writeable


class pyarrow:
    @staticmethod
    def version():
        return "pyarrow " + importlib.import_module("pyarrow").__version__

    @staticmethod
    def samples():
        import numpy as np
        pa = importlib.import_module("pyarrow")

        for name, values in [("int64", np.arange(5)), ("float32", np.arange(3, dtype=np.float32))]:
            yield _sample(name, pa.array(values), values, readonly=True)

    @staticmethod
    def arrow_samples():
        pa = importlib.import_module("pyarrow")

        yield "Array with nulls", lambda: pa.array([1, None, 3])
        yield "sliced Array", lambda: pa.array(["a", "bb", None, "ccc"]).slice(1)
        yield "RecordBatch", lambda: pa.record_batch({"x": [1, 2], "y": ["a", None]})
        yield "Table", lambda: pa.table({"x": [1.5, 2.5]})
        yield "ChunkedArray", lambda: pa.chunked_array([[1, 2], [3]])

    @staticmethod
    def failing_stream():
        pa = importlib.import_module("pyarrow")

        schema = pa.schema([("x", pa.int64())])

        def batches():
            yield pa.record_batch({"x": [1, 2]})
            raise OSError("the source went away")

        return pa.RecordBatchReader.from_batches(schema, batches())

    @staticmethod
    def consume_arrow(obj):
        result = importlib.import_module("pyarrow").array(obj)
        result.to_pylist()  # read the values, not only the structs
        return result

    @staticmethod
    def consume_stream(obj):
        return importlib.import_module("pyarrow").chunked_array(obj)


class tvm_ffi:
    @staticmethod
    def version():
        return "apache-tvm-ffi " + importlib.import_module("tvm_ffi").__version__

    @staticmethod
    def samples():
        tvm = importlib.import_module("tvm_ffi")
        return _numpy_samples(tvm.from_dlpack, readonly_supported=False)

    @staticmethod
    def consume_dlpack(obj):
        return importlib.import_module("tvm_ffi").from_dlpack(obj)


class jax:
    @staticmethod
    def version():
        return "jax " + importlib.import_module("jax").__version__

    @staticmethod
    def samples():
        import os

        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        importlib.import_module("jax").config.update("jax_enable_x64", True)  # keep int64, float64
        jnp = importlib.import_module("jax.numpy")
        return _numpy_samples(jnp.asarray, readonly_supported=False)

    @staticmethod
    def consume_dlpack(obj):
        import os

        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        return importlib.import_module("jax.numpy").from_dlpack(obj)


class polars:
    @staticmethod
    def version():
        return "polars " + importlib.import_module("polars").__version__

    @staticmethod
    def arrow_samples():
        pl = importlib.import_module("polars")
        yield "Series with nulls", lambda: pl.Series("x", [1, None, 3])
        yield "DataFrame", lambda: pl.DataFrame({"x": [1, 2], "y": ["a", None]})

    @staticmethod
    def consume_arrow(obj):
        return importlib.import_module("polars").Series(obj)

    @staticmethod
    def as_arrow(result):
        return result.to_arrow()

    @staticmethod
    def consume_stream(obj):
        return importlib.import_module("polars").Series(obj)


class nanoarrow:
    @staticmethod
    def version():
        return "nanoarrow " + importlib.import_module("nanoarrow").__version__

    @staticmethod
    def arrow_samples():
        na = importlib.import_module("nanoarrow")
        yield "c_array int64", lambda: na.c_array([1, 2, 3], na.int64())
        yield "Array string", lambda: na.Array(["a", None, "c"], na.string())
        yield "c_array_stream", lambda: na.c_array_stream(na.c_array([1, 2], na.int32()))

    @staticmethod
    def consume_arrow(obj):
        result = importlib.import_module("nanoarrow").Array(obj)
        result.to_pylist()  # read the values, not only the structs
        return result

    @staticmethod
    def consume_stream(obj):
        na = importlib.import_module("nanoarrow")
        return na.ArrayStream(obj).read_all()


class arro3:
    @staticmethod
    def version():
        core = importlib.import_module("arro3.core")
        return "arro3-core " + getattr(core, "__version__", "?")

    @staticmethod
    def arrow_samples():
        core = importlib.import_module("arro3.core")
        import numpy as np

        yield "Array from numpy", lambda: core.Array.from_numpy(np.arange(4, dtype=np.int64))
        yield "Table", lambda: core.Table.from_pydict({"x": core.Array.from_numpy(np.arange(3.0))})

    @staticmethod
    def consume_arrow(obj):
        result = importlib.import_module("arro3.core").Array.from_arrow(obj)
        result.to_pylist()  # read the values, not only the structs
        return result

    @staticmethod
    def consume_stream(obj):
        return importlib.import_module("arro3.core").ChunkedArray.from_arrow(obj)


class duckdb:
    @staticmethod
    def version():
        return "duckdb " + importlib.import_module("duckdb").__version__

    @staticmethod
    def arrow_samples():
        db = importlib.import_module("duckdb")
        yield "relation", lambda: db.sql("select range as x, range::varchar as s from range(3)")

    @staticmethod
    def consume_stream(obj):
        db = importlib.import_module("duckdb")
        return db.from_arrow(obj).fetchall()


class torch:
    """PyTorch: CPU tensors, and the same on CUDA where ``torch.cuda.is_available()``."""

    @staticmethod
    def _cuda():
        module = _require("torch")
        return module.cuda.current_device() if module.cuda.is_available() else None

    @staticmethod
    def version():
        module = _require("torch")
        index = torch._cuda()
        device = f" ({module.cuda.get_device_name(index)})" if index is not None else ""
        return f"torch {module.__version__}{device}"

    @staticmethod
    def samples():
        import numpy as np
        module = _require("torch")

        index = torch._cuda()
        places = [("", "cpu", (1, 0))] + ([] if index is None else [(f"cuda:{index} ", f"cuda:{index}", (2, index))])
        for prefix, where, device in places:
            yield from _device_samples(prefix, lambda a, where=where: module.from_numpy(a.copy()).to(where), device)
            # bfloat16 (DLPack's kDLBfloat, code 4), which NumPy lacks: the upper halves of float32s.
            values = np.arange(4, dtype=np.float32)
            bf16 = module.from_numpy(values).to(module.bfloat16).to(where)
            halves = (values.view(np.uint32) >> 16).astype(np.uint16).tobytes()
            yield Sample(prefix + "bfloat16", bf16, (4,), (4, 16, 1), halves, device=device)
            if _accepts(module.Tensor.__dlpack__, "read_only"):
                frozen = module.arange(4.0, dtype=module.float64).to(where)
                yield Sample(prefix + "float64 read-only", _ReadOnlyExport(frozen), (4,), (2, 64, 1),
                             np.arange(4.0).tobytes(), readonly=True, device=device)

    @staticmethod
    def consume_dlpack(obj):
        return _require("torch").from_dlpack(obj)

    @staticmethod
    def consumer_device():
        index = torch._cuda()
        return None if index is None else (2, index)

    @staticmethod
    def device_memory(data):
        module = _require("torch")
        memory = module.frombuffer(bytearray(data or b"\0"), dtype=module.uint8).to(f"cuda:{torch._cuda()}")
        module.cuda.synchronize()
        return memory.data_ptr(), (2, memory.device.index), memory


def _accepts(function, keyword):
    try:
        return keyword in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


class _ReadOnlyExport:
    """A torch tensor whose every export asks for ``read_only=True`` (torch 2.15 and later)."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, **keywords):
        return self.tensor.__dlpack__(read_only=True, **keywords)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


class cupy:
    """CuPy: CUDA arrays only (it has no CPU arrays, and its consumer imports device memory only)."""

    imports_cpu = False

    @staticmethod
    def _device():
        module = _require("cupy")
        try:
            count = module.cuda.runtime.getDeviceCount()
            index = module.cuda.Device().id
        except Exception as error:  # noqa: BLE001 - CUDARuntimeError without a driver or device
            raise Unavailable(f"no CUDA device ({type(error).__name__}: {error})") from None
        if count == 0:
            raise Unavailable("no CUDA device")
        return index, count

    @staticmethod
    def version():
        module = _require("cupy")
        index, _ = cupy._device()
        name = module.cuda.runtime.getDeviceProperties(index)["name"]
        return f"cupy {module.__version__} ({name.decode() if isinstance(name, bytes) else name})"

    @staticmethod
    def samples():
        module = _require("cupy")
        index, _ = cupy._device()
        return _device_samples(f"cuda:{index} ", module.asarray, (2, index))

    @staticmethod
    def consume_dlpack(obj):
        return _require("cupy").from_dlpack(obj)

    @staticmethod
    def consumer_device():
        return (2, cupy._device()[0])

    @staticmethod
    def device_memory(data):
        import numpy as np
        module = _require("cupy")

        memory = module.asarray(np.frombuffer(data or b"\0", dtype=np.uint8))
        module.cuda.runtime.deviceSynchronize()
        return memory.data.ptr, (2, memory.data.device_id), memory


class dlpack_abi:
    @staticmethod
    def version():
        return "dlpack-abi " + _own_version()

    @staticmethod
    def samples():
        from .. import Tensor

        return _numpy_samples(Tensor.from_dlpack)

    @staticmethod
    def arrow_samples():
        pa = importlib.import_module("pyarrow")

        from .. import ArrowArray, ArrowStream

        yield "ArrowArray", lambda: ArrowArray.from_arrow(pa.array([1, None, 3]))
        yield "ArrowStream", lambda: ArrowStream.from_arrow(pa.table({"x": [1, 2]}))

    @staticmethod
    def consume_dlpack(obj):
        from .. import Tensor

        return Tensor.from_dlpack(obj)

    @staticmethod
    def consume_arrow(obj):
        from .. import ArrowArray

        return ArrowArray.from_arrow(obj)


def _own_version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dlpack-abi")
    except PackageNotFoundError:
        return "?"


KNOWN = {
    "numpy": numpy, "pyarrow": pyarrow, "tvm_ffi": tvm_ffi, "jax": jax, "polars": polars,
    "nanoarrow": nanoarrow, "arro3": arro3, "duckdb": duckdb, "dlpack_abi": dlpack_abi,
    "torch": torch, "cupy": cupy,
}


def adapter(name):
    """The adapter called ``name``, or ``module:Class`` imported."""
    if name in KNOWN:
        return KNOWN[name]
    module, _, attribute = name.partition(":")
    if not attribute:
        raise SystemExit(f"unknown library {name!r}: one of {', '.join(KNOWN)}, or module:Class")
    return getattr(importlib.import_module(module), attribute)
