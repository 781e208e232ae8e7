"""Stream ordering with PyTorch on a real GPU (scripts/gpu-test.sh): every case test_cupy.py has,
for PyTorch, and what is PyTorch's own: its C exchange API table, strided views, its dtypes,
and its caching allocator.

What PyTorch does (2.10 and later): ``torch.Tensor.__dlpack__(stream=s)`` makes ``s`` wait on
the *current* stream (``stream`` defaults to -1, "no ordering"), so every export here happens
inside ``torch.cuda.stream(writer)``; ``torch.from_dlpack`` passes its current stream (1 for the
legacy default) and ``max_version=(1, 0)`` and does not use the producer's exchange table; it
aborts the process on negative strides (never handed one here) and ignores READ_ONLY;
``torch.Tensor`` publishes ``__dlpack_c_exchange_api__``, which our plain ``from_dlpack`` uses.
The late writer is PyTorch's own (``torch.cuda._sleep`` then ``torch.add``, _gpu.torch_writer).
"""
import gc

import numpy as np
import pytest

from _probe import library

torch = library("torch")

import dlpack_abi  # noqa: E402
from _gpu import CUDA, N, ROUNDS, SPIN, counts, expected, ext, torch_writer  # noqa: E402

# DLPack's (code, bits, lanes) of the dtypes PyTorch has and CuPy or NumPy lack or treat apart.
DTYPES = {
    "bool": (torch.bool, (6, 8, 1)),
    "bfloat16": (torch.bfloat16, (4, 16, 1)),
    "float16": (torch.float16, (2, 16, 1)),
    "int8": (torch.int8, (0, 8, 1)),
    "complex64": (torch.complex64, (5, 64, 1)),
}


@pytest.fixture(scope="module")
def late():
    return torch_writer(torch)


def stream():
    return torch.cuda.Stream()


def host(tensor):
    """The values, copied on PyTorch's current stream (``.cpu()`` waits for that stream)."""
    return tensor.cpu().numpy()


def torch_version():
    return tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])


@pytest.mark.parametrize("per_thread", [False, True])
def test_torch_to_ours(late, per_thread):
    for round in range(ROUNDS):
        writer = stream()
        with torch.cuda.stream(writer):
            tensor = late(round)
            # Our consumer passes its own stream; PyTorch makes it wait on its current one.
            values = ext._cuda_read(tensor, per_thread=per_thread)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))


def test_ours_to_torch_on_the_default_stream():
    for round in range(ROUNDS):
        tensor = torch.from_dlpack(ext._cuda_late_tensor(N, float(round), SPIN))  # stream=1
        np.testing.assert_array_equal(host(tensor), expected(round))


def test_ours_to_torch_on_a_side_stream():
    for round in range(ROUNDS):
        ours = ext._cuda_late_tensor(N, float(round), SPIN)
        with torch.cuda.stream(stream()):
            tensor = torch.from_dlpack(ours)  # PyTorch passes the side stream
            values = host(tensor)
        np.testing.assert_array_equal(values, expected(round))


def test_torch_through_a_tensor_and_back(late):
    for round in range(ROUNDS):
        writer, consumer = stream(), stream()
        with torch.cuda.stream(writer):
            tensor = late(round)
            ours = dlpack_abi.Tensor.from_dlpack(tensor, stream=consumer.cuda_stream)
        assert ours.__dlpack_device__() == (CUDA, tensor.device.index)
        with torch.cuda.stream(consumer):
            again = torch.from_dlpack(ours)
            values = host(again)
        np.testing.assert_array_equal(values, expected(round))
        assert again.data_ptr() == tensor.data_ptr(), "zero-copy both ways"


def test_torch_reexported_to_torch_on_a_third_stream(late):
    """Imported for c while the writer p is current, read by PyTorch on d: our export must
    make d wait on c."""
    for round in range(ROUNDS):
        p, c, d = stream(), stream(), stream()
        with torch.cuda.stream(p):
            tensor = late(round)
            ours = dlpack_abi.Tensor.from_dlpack(tensor, stream=c.cuda_stream)
        with torch.cuda.stream(d):
            values = host(torch.from_dlpack(ours))
        np.testing.assert_array_equal(values, expected(round))


def test_torch_reexported_as_an_arrow_device_array(late):
    for round in range(ROUNDS):
        p, c = stream(), stream()
        with torch.cuda.stream(p):
            tensor = late(round)
            ours = dlpack_abi.Tensor.from_dlpack(tensor, stream=c.cuda_stream)
        values = ext._cuda_read_arrow(ours)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))


def test_export_after_leaving_the_writers_stream_block_is_a_user_error(late):
    """Exporting after ``torch.cuda.stream(writer)`` has ended orders PyTorch's *then* current
    stream (the default one) before ours, not the writer: the read may see zeros, a part of the
    writes, or what the allocator's block held before, depending on timing. Only what is
    guaranteed is asserted: no crash, the right size, and the right values once the writer has
    been synchronised."""
    writer = stream()
    with torch.cuda.stream(writer):
        tensor = late(7)
    early = ext._cuda_read(tensor)  # the user's error: `writer` is no longer current
    assert len(early) == N
    writer.synchronize()
    np.testing.assert_array_equal(np.asarray(ext._cuda_read(tensor), dtype=np.float32), expected(7))


def test_the_plain_import_takes_torchs_exchange_table(late):
    """A plain ``Tensor.from_dlpack(t)`` of a ``torch.Tensor`` goes through PyTorch's
    ``__dlpack_c_exchange_api__`` (counted by ``foreign_exchange_imports``), with no sync: the
    data is ready on PyTorch's current stream, the writer's, and a later hand-over to another
    stream waits on it. An import with a ``stream`` goes through ``__dlpack__`` instead."""
    writer, reader = stream(), stream()
    if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        # Before 2.10: a plain import is a plain __dlpack__() call, which PyTorch does not order.
        assert torch_version() < (2, 10), f"PyTorch {torch.__version__} has no exchange table"
        before = counts()["foreign_exchange_imports"]
        dlpack_abi.Tensor.from_dlpack(torch.zeros(4, device="cuda"))
        assert counts()["foreign_exchange_imports"] == before
        return
    for round in range(ROUNDS):
        writer, reader = stream(), stream()
        before = counts()["foreign_exchange_imports"]
        with torch.cuda.stream(writer):
            tensor = late(round)
            ours = dlpack_abi.Tensor.from_dlpack(tensor)
        assert counts()["foreign_exchange_imports"] == before + 1
        with torch.cuda.stream(reader):
            values = host(torch.from_dlpack(ours))
        np.testing.assert_array_equal(values, expected(round))
    before = counts()["foreign_exchange_imports"]
    with torch.cuda.stream(writer):
        dlpack_abi.Tensor.from_dlpack(late(0), stream=reader.cuda_stream)
    assert counts()["foreign_exchange_imports"] == before, "a stream request uses __dlpack__"
    writer.synchronize()


VIEWS = {
    "every_other_column": lambda x: x[:, ::2],
    "transpose": lambda x: x.t(),
    "offset_block": lambda x: x[1:, 3:],
    "strided_block": lambda x: x[::2, 1::3],
    "permuted_3d": lambda x: x.reshape(6, 8, 10).permute(2, 0, 1),
    "transposed_columns": lambda x: x[:, ::2].t(),
}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("with_stream", [False, True])
def test_strided_views_are_zero_copy_both_ways(view, with_stream):
    base = torch.arange(48 * 10, dtype=torch.float32, device="cuda").reshape(48, 10)
    source = VIEWS[view](base)
    if with_stream:  # through __dlpack__, ready on a side stream (the default one's handle is 0)
        ours = dlpack_abi.Tensor.from_dlpack(source, stream=stream().cuda_stream)
    else:  # through PyTorch's exchange table
        ours = dlpack_abi.Tensor.from_dlpack(source)
    assert ours.shape == tuple(source.shape)
    assert ours.strides == source.stride()
    assert ours.data_ptr == source.data_ptr()
    again = torch.from_dlpack(ours)
    assert again.data_ptr() == source.data_ptr()
    assert again.stride() == source.stride()
    assert torch.equal(again, source)


@pytest.mark.parametrize("name", DTYPES)
def test_dtypes_round_trip(name):
    dtype, dlpack = DTYPES[name]
    values = torch.arange(-64, 64, device="cuda")
    if dtype == torch.bool:
        source = values % 3 == 0
    elif dtype.is_complex:
        source = torch.complex(values.float(), -values.float() / 4).to(dtype)
    else:
        source = values.to(dtype)
    ours = dlpack_abi.Tensor.from_dlpack(source)
    assert ours.dtype == dlpack
    again = torch.from_dlpack(ours)
    assert again.dtype == dtype
    assert again.data_ptr() == source.data_ptr()
    assert torch.equal(again, source)
    assert torch.equal(torch.from_dlpack(dlpack_abi.Tensor.from_dlpack(source[::2])), source[::2])


def test_gpu_memory_returns_to_its_baseline_after_2000_round_trips():
    """Every path leaves nothing behind: plain imports (the exchange table), imports for a
    stream, re-exports to PyTorch, and capsules dropped unconsumed."""
    side = stream()

    def round_trips(count):
        for i in range(count):
            source = torch.full((4096,), float(i), device="cuda")
            ours = dlpack_abi.Tensor.from_dlpack(source)
            again = torch.from_dlpack(ours)
            for_stream = dlpack_abi.Tensor.from_dlpack(again, stream=side.cuda_stream)
            capsule = for_stream.__dlpack__(stream=torch.cuda.current_stream().cuda_stream or 1,
                                            max_version=(1, 3))
            del source, ours, again, for_stream, capsule

    round_trips(10)  # PyTorch's and our one-time allocations
    gc.collect()
    torch.cuda.synchronize()
    memory, live = torch.cuda.memory_allocated(), counts()
    round_trips(2000)
    gc.collect()
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == memory
    after = counts()
    assert (after["live_imports"], after["live_exports"]) == (live["live_imports"], live["live_exports"])


def test_the_deleter_waits_for_a_late_read_before_torch_reuses_the_memory():
    """``_cuda_read_late`` imports a fresh tensor for its stream, enqueues a copy that starts
    after SPIN cycles, and drops the import at once; PyTorch's caching allocator gets the block
    back from the deleter, and ``reuse`` allocates the same size on the same stream and fills it
    with -1 (the allocator hands out the block just freed). The copy must hold the source's
    values: the drop waits for the read before the deleter runs."""
    writer = stream()
    base = torch.arange(N, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    made, reused = [], 0
    for round in range(ROUNDS):

        def make():
            source = torch.add(base, float(round))
            made.append(source.data_ptr())
            return source

        def reuse():
            return torch.full((N,), -1.0, device="cuda").data_ptr()

        with torch.cuda.stream(writer):
            values, pointer = ext._cuda_read_late(make, SPIN, reuse)
        reused += pointer == made[-1]
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float32), expected(round))
    writer.synchronize()
    assert reused > 0, "PyTorch's allocator never reused the block: the check proved nothing"


def safetensors_file(path, tensors):
    """A safetensors file of ``{name: (dtype name, shape, bytes)}``, written as the format says
    (the device has no ``safetensors`` package): 8 bytes of header length, the JSON header padded
    to 8 bytes, then the data in order."""
    import json

    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(len(text).to_bytes(8, "little") + text + data)


def test_safetensors_weights_reach_torch_without_a_copy(tmp_path):
    """Weights mapped by ``dlpack_abi.safetensors`` are PyTorch tensors over the same memory,
    bfloat16 included; PyTorch ignores READ_ONLY, and its writes land in the mapping's private
    pages, never in the file; ``.cuda()`` takes them to the GPU."""
    path = tmp_path / "model.safetensors"
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    h = torch.tensor([1.5, -2.0, 0.25, 8.0], dtype=torch.bfloat16)
    safetensors_file(path, {
        "w": ("F32", [2, 3], w.tobytes()),
        "h": ("BF16", [4], h.view(torch.int16).numpy().tobytes()),
    })
    on_disk = path.read_bytes()
    weights = dlpack_abi.safetensors.open(path)
    ours = weights["w"]
    seen = torch.from_dlpack(ours)
    assert seen.data_ptr() == ours.data_ptr
    assert seen.tolist() == w.tolist()
    assert torch.equal(torch.from_dlpack(weights["h"]), h)
    seen.add_(1)  # PyTorch writes despite READ_ONLY: into private pages
    assert path.read_bytes() == on_disk
    assert torch.equal(seen.cuda().cpu(), torch.from_numpy(w + 1))
    del seen, ours, weights
    gc.collect()
