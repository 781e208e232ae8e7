"""safetensors files (written by the reference `safetensors` package, pinned in scripts/test.sh)
loaded through ``dlpack_abi.safetensors``: values, zero-copy sharing of the one mapping, its
lifetime (``/proc/self/maps``), refusals, and the consumers NumPy and JAX."""
import errno
import gc
import json
import mmap
import os
import re

import numpy as np
import pytest
import safetensors.numpy

import dlpack_abi
import dlpack_abi.safetensors

DTYPES = [np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.float16, np.uint32, np.int32,
          np.float32, np.uint64, np.int64, np.float64, np.complex64]


def mapped(path):
    with open("/proc/self/maps") as maps:
        return any(str(path) in line for line in maps)


@pytest.fixture
def weights(tmp_path):
    path = tmp_path / "model.safetensors"
    rng = np.random.default_rng(7)
    arrays = {
        f"{np.dtype(dtype).name}": (rng.standard_normal((3, 5)) * 50).astype(dtype)
        for dtype in DTYPES
    }
    arrays["empty"] = np.zeros((0, 4), np.float32)
    arrays["scalar"] = np.array(2.5, np.float64)
    safetensors.numpy.save_file(arrays, path, metadata={"format": "np", "step": "3"})
    return path, arrays


def test_numpy_reads_every_dtype_without_a_copy(weights):
    path, arrays = weights
    file = dlpack_abi.safetensors.open(path)
    assert sorted(file.keys()) == sorted(arrays) and len(file) == len(arrays)
    assert file.metadata == {"format": "np", "step": "3"}
    for name, expected in arrays.items():
        seen = np.from_dlpack(file[name])
        assert seen.dtype == expected.dtype and seen.shape == expected.shape, name
        np.testing.assert_array_equal(seen, expected)
        # (NumPy makes its own empty arrays.)
        assert not seen.flags.writeable or name == "empty", name
    # Zero-copy: every array lies in the one mapping, at its file offset past the first's.
    header_len = int.from_bytes(path.read_bytes()[:8], "little")
    header = json.loads(path.read_bytes()[8:8 + header_len])
    begin = {name: header[name]["data_offsets"][0] for name in arrays if name != "empty"}
    first = min(begin, key=begin.get)
    base = np.from_dlpack(file[first]).ctypes.data
    assert base % mmap.PAGESIZE == 8 + header_len, "the mapping starts at a page"
    for name, offset in begin.items():
        assert np.from_dlpack(file[name]).ctypes.data - base == offset, name
    # Taking a tensor twice shares it again.
    assert np.shares_memory(np.from_dlpack(file["float32"]), np.from_dlpack(file["float32"]))


def test_tensors_keep_the_mapping_alive_until_the_last(weights):
    path, arrays = weights
    file = dlpack_abi.safetensors.open(path)
    tensor = file["int64"]
    array = np.from_dlpack(file["float64"])
    assert mapped(path)
    del file
    gc.collect()
    os.remove(path)
    np.testing.assert_array_equal(array, arrays["float64"])
    np.testing.assert_array_equal(np.from_dlpack(tensor), arrays["int64"])
    del array
    gc.collect()
    assert mapped(path), "the tensor still holds the mapping"
    del tensor
    gc.collect()
    assert not mapped(path), "unmapped once the last tensor is gone"


def test_load_gives_every_tensor_in_file_order(weights):
    path, arrays = weights
    loaded = dlpack_abi.safetensors.load(path)
    assert sorted(loaded) == sorted(arrays)
    assert list(loaded) == dlpack_abi.SafeTensors(path).keys()
    for name, tensor in loaded.items():
        assert isinstance(tensor, dlpack_abi.Tensor) and tensor.readonly
        np.testing.assert_array_equal(np.from_dlpack(tensor), arrays[name])
    assert "float32" in dlpack_abi.SafeTensors(path) and "nope" not in dlpack_abi.SafeTensors(path)
    assert sorted(dlpack_abi.SafeTensors(path)) == sorted(arrays)
    assert repr(dlpack_abi.SafeTensors(path)).startswith("SafeTensors(")


def test_jax_gets_the_one_copy_it_needs(weights):
    """JAX asks for legacy capsules, which cannot carry READ_ONLY: it is refused, never handed
    writable memory, and `jnp.asarray(np.from_dlpack(t))` is the documented copy."""
    import jax.numpy as jnp

    path, arrays = weights
    file = dlpack_abi.safetensors.open(path)
    with pytest.raises(BufferError, match="READ_ONLY"):
        jnp.from_dlpack(file["float32"])
    np.testing.assert_array_equal(jnp.asarray(np.from_dlpack(file["float32"])), arrays["float32"])


def test_bad_files_and_names_are_refused(tmp_path, weights):
    path, _ = weights
    # Python's own OSError subclasses, with errno and filename, as open() gives them.
    missing = tmp_path / "missing.safetensors"
    with pytest.raises(FileNotFoundError) as raised:
        dlpack_abi.safetensors.open(missing)
    assert (raised.value.errno, raised.value.filename) == (errno.ENOENT, str(missing))
    assert raised.value.strerror == os.strerror(errno.ENOENT)
    assert raised.value.code == 1101
    with pytest.raises(IsADirectoryError) as raised:
        dlpack_abi.safetensors.open(tmp_path)
    assert (raised.value.errno, raised.value.filename) == (errno.EISDIR, str(tmp_path))
    with pytest.raises(IsADirectoryError):
        dlpack_abi.SafeTensors(tmp_path)
    # A tensor whose data is shorter than its shape says: the message names it.
    header = b'{"ok":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},' \
             b'"w":{"dtype":"F32","shape":[2,3],"data_offsets":[4,24]}}'
    short = tmp_path / "short.safetensors"
    short.write_bytes(len(header).to_bytes(8, "little") + header + bytes(24))
    message = 'tensor "w" has shape [2, 3] of F32, 24 bytes, but its data_offsets span 20'
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        dlpack_abi.safetensors.open(short)
    assert raised.value.code == 1107
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(ValueError, match="not a valid safetensors file"):
        dlpack_abi.safetensors.open(truncated)
    huge = tmp_path / "huge.safetensors"
    huge.write_bytes((2**62).to_bytes(8, "little") + b"{}")
    with pytest.raises(ValueError, match="not a valid safetensors file"):
        dlpack_abi.safetensors.open(huge)
    with pytest.raises(KeyError, match="no tensor named"):
        dlpack_abi.safetensors.open(path)["nope"]
    # Data misaligned for its dtype: refused alone, the other tensor still usable.
    header = b'{"u":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},' \
             b'"f":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}'
    header = header.ljust(120)
    odd = tmp_path / "odd.safetensors"
    odd.write_bytes(len(header).to_bytes(8, "little") + header + bytes([1, 2, 0, 0, 128, 63]))
    file = dlpack_abi.safetensors.open(odd)
    with pytest.raises(ValueError, match="not a multiple of its dtype's alignment, 4"):
        file["f"]
    assert np.from_dlpack(file["u"]).tolist() == [1, 2]
