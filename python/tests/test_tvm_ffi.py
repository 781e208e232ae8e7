"""The C exchange API (`__dlpack_c_exchange_api__`) with apache-tvm-ffi, both directions."""
import numpy as np
import pytest
import tvm_ffi
from tvm_ffi.core import DLTensorTestWrapper

import dlpack_abi
from conftest import exchange_table
from dlpack_abi import Tensor


def test_tvm_ffi_imports_ours_through_our_table():
    ours = Tensor.from_bytes(np.arange(6, dtype=np.int32).tobytes(), (0, 32, 1), [2, 3])
    before = dlpack_abi.counts()["exchange_exports"]
    seen = tvm_ffi.from_dlpack(ours)
    assert dlpack_abi.counts()["exchange_exports"] == before + 1
    assert seen.shape == (2, 3) and seen.data_ptr() == ours.data_ptr
    np.testing.assert_array_equal(np.from_dlpack(seen), np.arange(6).reshape(2, 3))


def test_tvm_ffi_returns_tensors_as_ours():
    ours = Tensor.from_dlpack(np.arange(4.0))
    counts = dlpack_abi.counts()
    echoed = tvm_ffi.get_global_func("testing.echo")(ours)
    after = dlpack_abi.counts()
    assert type(echoed) is Tensor  # converted back by our managed_tensor_to_py_object_no_sync
    assert after["exchange_exports"] == counts["exchange_exports"] + 1
    assert after["exchange_imports"] == counts["exchange_imports"] + 1
    assert echoed.data_ptr == ours.data_ptr and echoed.shape == (4,)


class NoPythonCall(DLTensorTestWrapper):
    def __dlpack__(self, **kwargs):
        raise AssertionError("the exchange API should have been used")


def test_we_import_through_tvm_ffi_table():
    source = tvm_ffi.from_dlpack(np.arange(5, dtype=np.float32))
    before = dlpack_abi.counts()["foreign_exchange_imports"]
    ours = Tensor.from_dlpack(NoPythonCall(source))
    assert dlpack_abi.counts()["foreign_exchange_imports"] == before + 1
    assert ours.data_ptr == source.data_ptr() and ours.shape == (5,)
    assert ours.tobytes() == np.arange(5, dtype=np.float32).tobytes()
    with pytest.raises(AssertionError):  # a request with keywords goes through __dlpack__
        Tensor.from_dlpack(NoPythonCall(source), copy=True)


def test_our_table_follows_the_header():
    table = exchange_table()
    assert (table.major, table.minor, table.prev_api) == (1, 3, None)
    assert all(getattr(table, name) for name, _ in table._fields_[3:])


def test_a_pyfunction_takes_and_returns_tvm_ffi_tensors():
    source = tvm_ffi.from_dlpack(np.arange(4.0))
    result = dlpack_abi.scale(source, 2.0)  # through tvm-ffi's exchange API or __dlpack__
    back = tvm_ffi.from_dlpack(result)
    np.testing.assert_array_equal(np.from_dlpack(back), [0.0, 2.0, 4.0, 6.0])
