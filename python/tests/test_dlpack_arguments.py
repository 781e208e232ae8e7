"""`__dlpack__`'s hand-parsed keywords (Tensor's and every `dlpack_pymethods!` class's) against a
reference model of the array API's rules, over every combination of valid and invalid values."""
import itertools

import numpy as np
import pytest

import tensor_ops
from conftest import PyCapsule_GetName
from dlpack_abi import Tensor

ABSENT = object()


class Int(int):
    """An int that is not one of CPython's cached small-int objects (read from their address)."""


# Small ints (0..15 are read from their address), the ones past them, and ints that are not the
# cached objects.
STREAMS = [ABSENT, None, 1, 15, 16, -1, Int(2), "1", 1.0, True, 1 << 70]
VERSIONS = [ABSENT, None, (1, 3), (1, 0), (0, 8), (2, 0), (15, 15), (16, 0), (Int(1), Int(3)),
            (1,), (1, "3"), [1, 3], "1.3", (1 << 70, 0), (True, 3), (False, 3)]
# DLPack numbers plain CPU memory 0: `(1, 15)` is no device a CPU tensor can be exported to.
DEVICES = [ABSENT, None, (1, 0), (Int(1), Int(0)), (2, 0), (1, 15), (15, 15), (1,), "cpu",
           (1, 1 << 40), (True, 0)]
COPIES = [ABSENT, None, True, False, 1, "yes"]


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def pair_of_ints(value, bits):
    return (isinstance(value, tuple) and len(value) == 2 and all(is_int(v) for v in value)
            and all(-(1 << (bits - 1)) <= v < (1 << (bits - 1)) for v in value))


def expected(stream, max_version, dl_device, copy, readonly):
    """The outcome the array API (2023.12) and our choices call for: an exception type, or the
    capsule's name."""
    given = lambda value: value is not ABSENT and value is not None  # noqa: E731
    if given(stream) and not is_int(stream):
        return TypeError  # bools too: an int by inheritance, a mistake by intent
    if given(stream) and not -(1 << 63) <= stream < 1 << 63:
        return ValueError
    if given(max_version) and not pair_of_ints(max_version, 64):
        return TypeError
    if given(dl_device) and not pair_of_ints(dl_device, 32):
        return TypeError
    if given(copy) and not isinstance(copy, bool):
        return TypeError
    if given(stream):
        return BufferError  # a CPU tensor takes no stream
    if given(dl_device) and dl_device != (1, 0):
        return BufferError  # no other device, and (1, 0) is the tensor's own
    versioned = given(max_version) and max_version[0] >= 1
    if not versioned and readonly and copy is not True:
        return BufferError  # a legacy capsule cannot say read-only
    return b"dltensor_versioned" if versioned else b"dltensor"


def call(producer, stream, max_version, dl_device, copy):
    keywords = {name: value for name, value in
                [("stream", stream), ("max_version", max_version), ("dl_device", dl_device),
                 ("copy", copy)] if value is not ABSENT}
    try:
        return PyCapsule_GetName(producer.__dlpack__(**keywords))
    except Exception as error:  # noqa: BLE001 (the type is what is compared)
        return type(error)


PRODUCERS = {
    "writable Tensor": (lambda: Tensor.from_dlpack(np.arange(3.0)), False),
    "read-only Tensor": (lambda: Tensor.from_bytes(bytes(8), (2, 64, 1), [1], readonly=True), True),
    "exporter class": (lambda: tensor_ops.Grid(1, 2), True),
}


@pytest.mark.parametrize("name", PRODUCERS)
def test_every_keyword_combination_follows_the_model(name):
    make, readonly = PRODUCERS[name]
    producer = make()
    mismatches = []
    for combination in itertools.product(STREAMS, VERSIONS, DEVICES, COPIES):
        want = expected(*combination, readonly)
        got = call(producer, *combination)
        if got != want:
            mismatches.append((combination, want, got))
    assert not mismatches, mismatches[:5]


def test_positional_and_unknown_arguments_are_refused():
    tensor = Tensor.from_dlpack(np.arange(3.0))
    with pytest.raises(TypeError, match="no positional arguments"):
        tensor.__dlpack__(None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'strem'"):
        tensor.__dlpack__(strem=None)
    # A name that is not interned (built at run time) is matched by equality.
    name = "".join(["max_", "version"])
    assert PyCapsule_GetName(tensor.__dlpack__(**{name: (1, 3)})) == b"dltensor_versioned"


def test_a_cpu_other_than_device_0_is_refused_with_the_reason():
    tensor = Tensor.from_dlpack(np.arange(3.0))
    with pytest.raises(BufferError, match=r"to cpu:15 \(the CPU is device 0\)"):
        tensor.__dlpack__(max_version=(1, 3), dl_device=(1, 15))
    with pytest.raises(BufferError, match=r"to cpu:15 \(the CPU is device 0\)"):
        tensor.__dlpack__(max_version=(1, 3), dl_device=(1, 15), copy=True)


def test_the_method_describes_itself():
    import inspect
    for cls in (Tensor, tensor_ops.Grid):
        assert str(inspect.signature(cls.__dlpack__)) == (
            "(self, /, *, stream=None, max_version=None, dl_device=None, copy=None)")
        with pytest.raises(TypeError, match="doesn't apply"):
            cls.__dlpack__(np.arange(3.0))  # the descriptor checks `self`
