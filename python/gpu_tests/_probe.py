"""Which GPU array libraries work here: the one question that scripts/gpu-test.sh asks of the
bare interpreter and the tests ask again in the test environment (this file imports nothing of
dlpack_abi, so the bare interpreter can run it).

``python python/gpu_tests/_probe.py NAME`` prints one line and exits 0 when NAME (cupy, torch or
jax) imports and drives a GPU, 3 when it imports without one (a CPU-only build), 4 when it does
not import.

In the tests, ``library(NAME)`` returns the module, or fails (never skips) when
``DLPACK_ABI_GPU_REQUIRE`` (set by gpu-test.sh to what worked under the bare interpreter) names
it: a library the interpreter has that the test environment lost is a failure. Otherwise a
missing library skips its module with a reason that starts with "optional:", the only skips
gpu-test.sh does not count as failures.
"""
import os
import sys

# JAX takes 75% of the GPU's memory when it starts unless told not to; CuPy and PyTorch share it.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

REQUIRED = {name for name in os.environ.get("DLPACK_ABI_GPU_REQUIRE", "").split(",") if name}


class NoGpu(Exception):
    """The library imports but cannot drive a GPU."""


def _cupy():
    import cupy

    if cupy.cuda.runtime.getDeviceCount() < 1:
        raise NoGpu("CuPy sees no GPU")
    return cupy


def _torch():
    import torch

    if not torch.cuda.is_available():
        raise NoGpu(f"PyTorch {torch.__version__} has no usable CUDA (a CPU-only build?)")
    return torch


def _jax():
    import jax

    try:
        jax.devices("gpu")
    except RuntimeError as error:
        raise NoGpu(f"JAX {jax.__version__} has no GPU backend (jax[cuda12] not installed?): {error}")
    return jax


PROBES = {"cupy": _cupy, "torch": _torch, "jax": _jax}


def library(name):
    """The GPU library ``name``, usable on the GPU; see the module's docstring."""
    import pytest

    try:
        return PROBES[name]()
    except Exception as error:  # noqa: BLE001 - any failure to import or start is the answer
        why = f"{type(error).__name__}: {error}"
    if name in REQUIRED:
        pytest.fail(f"{name} works under the bare interpreter (gpu-test.sh checked) but not in the "
                    f"test environment: {why}", pytrace=False)
    pytest.skip(f"optional: {name} is not usable here ({why})", allow_module_level=True)


def main(argv):
    if len(argv) != 2 or argv[1] not in PROBES:
        print(f"usage: {argv[0]} {{{','.join(PROBES)}}}", file=sys.stderr)
        return 2
    name = argv[1]
    try:
        module = PROBES[name]()
    except NoGpu as error:
        print(f"{name}: cpu-only: {error}")
        return 3
    except Exception as error:  # noqa: BLE001
        print(f"{name}: absent: {type(error).__name__}: {error}")
        return 4
    print(f"{name}: usable: {module.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
