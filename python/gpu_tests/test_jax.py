"""Stream ordering with JAX on a real GPU (scripts/gpu-test.sh): our late producer read by
``jax.numpy.from_dlpack``, and JAX arrays read by our consumer on its own stream."""
import numpy as np

from _probe import library

jax = library("jax")

from _gpu import N, ROUNDS, SPIN, expected, ext  # noqa: E402


def test_ours_to_jax():
    for round in range(ROUNDS):
        tensor = ext._cuda_late_tensor(N, float(round), SPIN)
        array = jax.numpy.from_dlpack(tensor)
        np.testing.assert_array_equal(np.asarray(array), expected(round))


def test_jax_to_ours():
    for round in range(ROUNDS):
        array = jax.numpy.arange(N, dtype=jax.numpy.float32) + np.float32(round)
        values = ext._cuda_read(array)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))
