"""Issue 31's fast paths say and do what the paths they replace did: the import reads a capsule's
name once (no `PyCapsule_IsValid` per candidate name), `__dlpack__`'s capsule destructor
finds an unconsumed export by its name's address, and `tensor_ops.element_count` (the argument
benchmark's target) counts what any producer hands it."""
import ctypes
import gc

import numpy as np
import pytest

import dlpack_abi
from conftest import float64_layouts, PyCapsule_GetName
from dlpack_abi import Tensor

PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def capsule_named(name, keep):
    """A capsule over a byte of `keep`'s, named `name` (or nameless: None), with no destructor;
    `keep` holds the buffer and the name for as long as the capsule lives."""
    buffer = ctypes.create_string_buffer(64)
    keep.extend([buffer, name])
    return PyCapsule_New(ctypes.addressof(buffer), name, None)


@pytest.mark.parametrize("name", [b"arrow_array", b"dltensor_versioned_", b"dltensor_version",
                                  b"dltenso", b"DLTENSOR", b""])
def test_a_capsule_of_another_name_is_refused_untouched(name):
    keep = []
    capsule = capsule_named(name, keep)
    with pytest.raises(ValueError) as refused:
        Tensor.from_dlpack(capsule)
    assert str(refused.value) == ("expected a capsule named 'dltensor_versioned' or "
                                  f"'dltensor', got Some(\"{name.decode()}\")")
    assert PyCapsule_GetName(capsule) == name  # not consumed


def test_a_nameless_capsule_is_refused():
    keep = []
    capsule = capsule_named(None, keep)
    with pytest.raises(ValueError, match="got None$"):
        Tensor.from_dlpack(capsule)
    assert PyCapsule_GetName(capsule) is None


@pytest.mark.parametrize("name", [b"used_dltensor_versioned", b"used_dltensor"])
def test_a_consumed_capsule_is_refused_as_consumed(name):
    keep = []
    with pytest.raises(ValueError, match="^the DLPack capsule was already consumed$"):
        Tensor.from_dlpack(capsule_named(name, keep))


@pytest.mark.parametrize("max_version", [(1, 3), None])
def test_both_capsule_names_are_consumed_once(max_version):
    array = np.arange(6.0).reshape(2, 3)
    capsule = array.__dlpack__(max_version=max_version)
    name = PyCapsule_GetName(capsule)
    tensor = Tensor.from_dlpack(capsule)
    assert PyCapsule_GetName(capsule) == b"used_" + name
    assert np.from_dlpack(tensor).tolist() == array.tolist()
    with pytest.raises(ValueError, match="already consumed"):
        Tensor.from_dlpack(capsule)


def test_an_export_released_unconsumed_or_consumed_runs_its_deleter_once():
    ours = dlpack_abi.ramp(3)
    for max_version in [(1, 3), None]:
        if max_version is None:
            ours = Tensor.from_dlpack(np.arange(3.0))  # a legacy export needs writable data
        before = dlpack_abi.counts()["live_exports"]
        unconsumed = ours.__dlpack__(max_version=max_version)
        assert dlpack_abi.counts()["live_exports"] == before + 1
        del unconsumed
        gc.collect()
        assert dlpack_abi.counts()["live_exports"] == before
        consumed = ours.__dlpack__(max_version=max_version)
        imported = Tensor.from_dlpack(consumed)
        del consumed
        gc.collect()
        assert dlpack_abi.counts()["live_exports"] == before + 1  # held by `imported`
        del imported
        gc.collect()
        assert dlpack_abi.counts()["live_exports"] == before


@pytest.mark.parametrize("on_a_thread", [False, True])
def test_the_memory_goes_with_the_last_of_a_tensor_and_its_exports(on_a_thread):
    """Exports made holding the GIL are counted without a locked instruction: they keep the
    memory past the Tensor, which goes with the last of them, whichever kind goes last and in
    whatever order (a capsule left unconsumed, a NumPy array over one, a `Tensor` importing one,
    a second `Tensor` sharing it), released on this thread or another."""
    import itertools
    import threading

    kinds = ["unconsumed", "numpy", "imported", "sharing"]
    for order in itertools.permutations(kinds):
        tensor = Tensor.from_dlpack(np.arange(8.0))  # imported: counted until the memory goes
        before = dlpack_abi.counts()["live_imports"]
        held = {
            "unconsumed": tensor.__dlpack__(max_version=(1, 3)),
            "numpy": np.from_dlpack(tensor),
            "imported": Tensor.from_dlpack(tensor.__dlpack__(max_version=(1, 3))),
            "sharing": Tensor.from_dlpack(tensor),
        }
        assert np.from_dlpack(held["imported"]).tolist() == list(range(8))
        del tensor
        for kind in order[:-1]:
            del held[kind]
            gc.collect()
            # The memory's import, and `imported`'s own while it lives.
            expected = before + ("imported" in held)
            assert dlpack_abi.counts()["live_imports"] == expected, (order, kind)
        if on_a_thread:
            last = [held.pop(order[-1])]
            thread = threading.Thread(target=last.clear)
            thread.start()
            thread.join()
        else:
            del held[order[-1]]
        gc.collect()
        assert dlpack_abi.counts()["live_imports"] == before - 1, order


def test_a_renamed_export_is_left_to_its_consumer():
    """A consumer that renamed the capsule owns the tensor: the destructor leaves it, and the
    consumer's deleter call releases it."""
    ours = dlpack_abi.ramp(3)
    before = dlpack_abi.counts()["live_exports"]
    capsule = ours.__dlpack__(max_version=(1, 3))
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    from conftest import DLManagedTensorVersioned
    managed = ctypes.cast(get(capsule, b"dltensor_versioned"),
                          ctypes.POINTER(DLManagedTensorVersioned))
    rename = ctypes.pythonapi.PyCapsule_SetName
    rename.restype, rename.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    used = b"used_dltensor_versioned"
    assert rename(capsule, used) == 0
    del capsule
    gc.collect()
    assert dlpack_abi.counts()["live_exports"] == before + 1  # not released by the destructor
    managed.contents.deleter(managed)
    assert dlpack_abi.counts()["live_exports"] == before


def test_an_export_renamed_to_its_own_name_elsewhere_is_still_released():
    """The destructor's fast path knows its capsules by the name's address; a capsule named
    `dltensor_versioned` by another string (a consumer that put the name back) is checked by
    value, as before, and released once."""
    ours = dlpack_abi.ramp(3)
    before = dlpack_abi.counts()["live_exports"]
    capsule = ours.__dlpack__(max_version=(1, 3))
    rename = ctypes.pythonapi.PyCapsule_SetName
    rename.restype, rename.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    same_name = ctypes.create_string_buffer(b"dltensor_versioned")
    assert rename(capsule, ctypes.cast(same_name, ctypes.c_char_p)) == 0
    assert dlpack_abi.counts()["live_exports"] == before + 1
    del capsule
    gc.collect()
    assert dlpack_abi.counts()["live_exports"] == before


INPUTS = {
    **float64_layouts(),
    "float32 strided": np.arange(5, dtype=np.float32)[::2],
    "bool": np.array([True, False]),
}


@pytest.mark.parametrize("name", INPUTS)
def test_element_count_counts_any_producer(name):
    tensor_ops = pytest.importorskip("tensor_ops")
    array = INPUTS[name]
    assert tensor_ops.element_count(array) == array.size
    assert tensor_ops.element_count(Tensor.from_dlpack(array)) == array.size
    assert tensor_ops.element_count(array.__dlpack__(max_version=(1, 3))) == array.size
    with pytest.raises(TypeError):
        tensor_ops.element_count([1.0, 2.0])
