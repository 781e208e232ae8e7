"""CuPy and PyTorch through a dlpack_abi ``Tensor`` on a real GPU (scripts/gpu-test.sh): data
written late by one library, imported for a stream c while the writer is current, and read by
the other library on a third stream d. Our export must make d wait on c."""
import numpy as np

from _probe import library

cupy = library("cupy")
torch = library("torch")

import dlpack_abi  # noqa: E402
from _gpu import ROUNDS, cupy_writer, expected, torch_writer  # noqa: E402


def test_cupy_reexported_to_torch_on_a_side_stream():
    late = cupy_writer(cupy)
    for round in range(ROUNDS):
        p, c = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)
        with p:
            array = late(round)
            tensor = dlpack_abi.Tensor.from_dlpack(array, stream=c.ptr)
        with torch.cuda.stream(torch.cuda.Stream()):
            again = torch.from_dlpack(tensor)  # PyTorch passes its side stream
            values = again.cpu().numpy()
        np.testing.assert_array_equal(values, expected(round))
        assert again.data_ptr() == array.data.ptr


def test_torch_reexported_to_cupy_on_a_third_stream():
    late = torch_writer(torch)
    for round in range(ROUNDS):
        p, c, d = torch.cuda.Stream(), torch.cuda.Stream(), cupy.cuda.Stream(non_blocking=True)
        with torch.cuda.stream(p):
            source = late(round)
            tensor = dlpack_abi.Tensor.from_dlpack(source, stream=c.cuda_stream)
        with d:
            again = cupy.from_dlpack(tensor)  # CuPy passes d.ptr
            values = cupy.asnumpy(again, stream=d)
        d.synchronize()
        np.testing.assert_array_equal(values, expected(round))
        assert again.data.ptr == source.data_ptr()


def test_torch_through_its_exchange_table_to_cupy_on_another_stream():
    """A plain import takes PyTorch's exchange table (no sync): the data is ready on PyTorch's
    current stream, the writer's, and CuPy's stream must wait on it."""
    assert hasattr(torch.Tensor, "__dlpack_c_exchange_api__"), "PyTorch 2.10 or later"
    late = torch_writer(torch)
    for round in range(ROUNDS):
        p, d = torch.cuda.Stream(), cupy.cuda.Stream(non_blocking=True)
        with torch.cuda.stream(p):
            source = late(round)
            tensor = dlpack_abi.Tensor.from_dlpack(source)
        with d:
            values = cupy.asnumpy(cupy.from_dlpack(tensor), stream=d)
        d.synchronize()
        np.testing.assert_array_equal(values, expected(round))
