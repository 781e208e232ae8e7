"""JAX (pinned in scripts/test.sh), an array library that is not NumPy: it imports only 64-byte
aligned CPU buffers without a copy, and exports its own arrays to us."""
import numpy as np
import pytest

import jax.numpy as jnp

from dlpack_abi import Tensor


def test_jax_imports_our_tensors_without_a_copy():
    ours = Tensor.from_bytes(np.arange(6, dtype=np.float32).tobytes(), (2, 32, 1), [2, 3])
    seen = jnp.from_dlpack(ours, copy=False)
    assert seen.unsafe_buffer_pointer() == ours.data_ptr
    np.testing.assert_array_equal(np.asarray(seen), [[0, 1, 2], [3, 4, 5]])


def test_strided_tensors_reach_jax_or_are_refused_cleanly():
    transposed = Tensor.from_dlpack(np.arange(8, dtype=np.int32).reshape(2, 4).T)
    assert jnp.from_dlpack(transposed).tolist() == [[0, 4], [1, 5], [2, 6], [3, 7]]
    # JAX takes no negative strides (its own limit), and says so with an exception.
    reversed_rows = Tensor.from_dlpack(np.arange(8, dtype=np.int32).reshape(2, 4)[:, ::-1])
    with pytest.raises(Exception, match="striding"):
        jnp.from_dlpack(reversed_rows)


def test_we_import_jax_arrays():
    ours = Tensor.from_dlpack(jnp.arange(4.0, dtype=jnp.float32))
    assert ours.shape == (4,) and "dtype=float32" in repr(ours)
    np.testing.assert_array_equal(np.from_dlpack(ours), [0.0, 1.0, 2.0, 3.0])


def test_read_only_tensors_are_refused_to_a_legacy_request_never_lost():
    """JAX 0.10.2 asks for a legacy capsule, which cannot say READ_ONLY: refused with a
    BufferError that says what to do, rather than handed out writable."""
    frozen = Tensor.from_bytes(bytes(8), (2, 32, 1), [2], readonly=True)
    with pytest.raises(BufferError, match="READ_ONLY"):
        jnp.from_dlpack(frozen, copy=False)


def test_jax_imports_pyfunction_results_without_a_copy():
    """Results built in Rust (`AlignedVec`) are 64-byte aligned, so JAX takes them as they are."""
    import dlpack_abi
    import tensor_ops

    result = tensor_ops.scale(np.arange(4, dtype=np.float32), 2.0)
    seen = jnp.from_dlpack(result, copy=False)
    assert seen.unsafe_buffer_pointer() == result.data_ptr
    np.testing.assert_array_equal(np.asarray(seen), [0.0, 2.0, 4.0, 6.0])
    # float64 (which JAX without x64 converts, so copies) and shared pixels: aligned as well.
    for made in (dlpack_abi.scale(np.arange(4.0), 2.0), dlpack_abi.Image(2, 3),
                 dlpack_abi.ramp(5)):
        assert np.from_dlpack(made).ctypes.data % 64 == 0
