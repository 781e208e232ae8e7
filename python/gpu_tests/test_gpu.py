"""Stream ordering on a real GPU, dlpack_abi alone (scripts/gpu-test.sh; not part of CI, which
has no GPU): our cudarc producer (``ext._cuda_late_*``, python/src/cuda.rs) read by our cudarc
consumers, Arrow device arrays and their ``sync_event``, and the refusals. The other libraries
have their own modules: test_cupy.py, test_torch.py, test_jax.py, and test_cross.py for CuPy and
PyTorch together. See _gpu.py for the late writers and what the checks prove.
"""
import importlib.util

import numpy as np
import pytest

from _gpu import CUDA, N, ROUNDS, SPIN, expected, ext


def test_arrow_device_arrays_carry_a_sync_event_that_consumers_wait_on():
    for round in range(ROUNDS):
        array = ext._cuda_late_arrow(N, float(round), SPIN)
        assert array.device == (CUDA, 0)
        values = ext._cuda_read_arrow(array)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))


def test_ours_read_by_ours_on_another_stream():
    for round in range(ROUNDS):
        tensor = ext._cuda_late_tensor(N, float(round), SPIN)
        values = ext._cuda_read(tensor)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))


def test_ours_read_by_ours_on_the_per_thread_default_stream():
    for round in range(ROUNDS):
        tensor = ext._cuda_late_tensor(N, float(round), SPIN)
        values = ext._cuda_read(tensor, per_thread=True)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))


def test_bad_streams_are_refused_on_cuda():
    tensor = ext._cuda_late_tensor(16, 0.0, 0)
    with pytest.raises(BufferError, match="ambiguous"):
        tensor.__dlpack__(stream=0, max_version=(1, 3))
    with pytest.raises(ValueError):
        tensor.__dlpack__(stream=-5, max_version=(1, 3))


def test_pyarrow_cuda():
    if importlib.util.find_spec("pyarrow") is None:
        pytest.skip("optional: pyarrow is not installed")
    try:
        import pyarrow.cuda  # noqa: F401
    except ImportError:
        pytest.skip("optional: pyarrow's wheel has no CUDA support (pyarrow.cuda does not import)")
    array = ext._cuda_late_arrow(N, 1.0, SPIN)
    import pyarrow as pa
    imported = pa.Array._import_from_c_device_capsule(*array.__arrow_c_device_array__())
    assert imported.device_type == pa.DeviceAllocationType.CUDA
