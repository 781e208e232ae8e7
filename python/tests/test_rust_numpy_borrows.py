"""rust-numpy's borrowed arguments (`PyReadwriteArray`, `PyReadonlyArray`: `tensor_ops.numpy_*`)
and dlpack-abi-pyo3's (`ReadwriteTensor`, `ReadonlyTensor`: `scale_`, `add_`, `while_borrowed_`,
`while_read`) of the same NumPy memory refuse each other, disjoint parts do not, and every borrow
is given back when its call returns. Whichever side borrows first publishes rust-numpy's table
(`_RUST_NUMPY_BORROW_CHECKING_API` on NumPy's `multiarray` module) and the other adopts it:
both load orders run in a fresh interpreter."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensor_ops

# Our refusals name rust-numpy; rust-numpy's own (a TypeError) say "already borrowed".
OURS_REFUSED = "rust-numpy"
THEIRS_REFUSED = "already borrowed"


def both_borrow_again(a):
    """The borrows were given back: each side borrows `a` for writing again."""
    before = a.copy()
    tensor_ops.scale_(a, 2.0)
    tensor_ops.numpy_scale_(a, 0.5)
    np.testing.assert_array_equal(a, before)


def test_rust_numpy_write_refuses_our_borrows():
    a = np.arange(8.0)
    out = np.zeros(8)
    for inner in (
        lambda: tensor_ops.scale_(a, 2.0),  # ReadwriteTensor of the same array
        lambda: tensor_ops.scale_(a[2:5], 2.0),  # of a view that overlaps it
        lambda: tensor_ops.add_(out, a),  # ReadonlyTensor: reading while rust-numpy writes
    ):
        with pytest.raises(BufferError, match=OURS_REFUSED):
            tensor_ops.numpy_while_borrowed_(a, inner)
        both_borrow_again(a)
    np.testing.assert_array_equal(a, np.arange(8.0))
    np.testing.assert_array_equal(out, np.zeros(8))


def test_rust_numpy_read_refuses_our_write_only():
    a = np.arange(8.0)
    out = np.zeros(8)
    with pytest.raises(BufferError, match=OURS_REFUSED):
        tensor_ops.numpy_while_read(a, lambda: tensor_ops.scale_(a, 2.0))
    tensor_ops.numpy_while_read(a, lambda: tensor_ops.add_(out, a))  # two readers
    np.testing.assert_array_equal(out, np.arange(8.0))
    both_borrow_again(a)


def test_our_write_refuses_rust_numpy_borrows():
    a = np.arange(8.0)
    for inner in (
        lambda: tensor_ops.numpy_scale_(a, 2.0),  # PyReadwriteArray
        lambda: tensor_ops.numpy_sum(a),  # PyReadonlyArray
        lambda: tensor_ops.numpy_sum(a[::3]),  # a view that overlaps it
    ):
        with pytest.raises(TypeError, match=THEIRS_REFUSED):
            tensor_ops.while_borrowed_(a, inner)
        both_borrow_again(a)
    np.testing.assert_array_equal(a, np.arange(8.0))


def test_our_read_refuses_rust_numpy_write_only():
    a = np.arange(8.0)
    with pytest.raises(TypeError, match=THEIRS_REFUSED):
        tensor_ops.while_read(a, lambda: tensor_ops.numpy_scale_(a, 2.0))
    assert tensor_ops.while_read(a, lambda: tensor_ops.numpy_sum(a)) == 28.0
    both_borrow_again(a)


def test_disjoint_parts_mix():
    a = np.arange(8.0)
    tensor_ops.numpy_while_borrowed_(a[::2], lambda: tensor_ops.scale_(a[1::2], -1.0))
    tensor_ops.while_borrowed_(a[:4], lambda: tensor_ops.numpy_scale_(a[4:], 10.0))
    np.testing.assert_array_equal(a, [0, -1, 2, -3, 40, -50, 60, -70])
    both_borrow_again(a)


def test_a_refused_call_releases_what_it_took():
    a = np.arange(4.0)
    b = np.arange(4.0)
    # `add_` takes `out` (b) for writing, then is refused `x` (a): b is given back.
    with pytest.raises(BufferError, match=OURS_REFUSED):
        tensor_ops.numpy_while_borrowed_(a, lambda: tensor_ops.add_(b, a))
    both_borrow_again(b)
    both_borrow_again(a)


SCENARIO = """
import sys
import numpy as np
import tensor_ops

major = int(np.__version__.split(".")[0])
module = sys.modules["numpy._core.multiarray" if major >= 2 else "numpy.core.multiarray"]
ATTRIBUTE = "_RUST_NUMPY_BORROW_CHECKING_API"
assert not hasattr(module, ATTRIBUTE), "published before any borrow"
first = np.zeros(2)
if sys.argv[1] == "rust-numpy":
    tensor_ops.numpy_sum(first)
else:
    tensor_ops.scale_(first, 1.0)
assert type(getattr(module, ATTRIBUTE)).__name__ == "PyCapsule"

a = np.arange(6.0)
try:
    tensor_ops.numpy_while_borrowed_(a, lambda: tensor_ops.scale_(a, 2.0))
    raise SystemExit("ReadwriteTensor allowed inside PyReadwriteArray")
except BufferError as error:
    assert "rust-numpy" in str(error), error
try:
    tensor_ops.while_borrowed_(a, lambda: tensor_ops.numpy_scale_(a, 2.0))
    raise SystemExit("PyReadwriteArray allowed inside ReadwriteTensor")
except TypeError as error:
    assert "already borrowed" in str(error), error
tensor_ops.numpy_while_borrowed_(a[::2], lambda: tensor_ops.scale_(a[1::2], -1.0))
tensor_ops.scale_(a, 2.0)
tensor_ops.numpy_scale_(a, 0.5)
assert a.tolist() == [0.0, -1.0, 2.0, -3.0, 4.0, -5.0], a
print("ok")
"""


@pytest.mark.parametrize("first", ["rust-numpy", "dlpack-abi"])
def test_either_side_publishes_the_table(first):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCENARIO), first],
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def _registry_backed():
    """Whether the rust-numpy table in use is ours, over dlpack-abi-pyo3's registry (else
    rust-numpy's own, with its own rule)."""
    import ctypes
    api = ctypes.pythonapi
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    get_dict = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(
        ("PyInterpreterState_GetDict", api))
    # A borrowed reference: read through a cast (a `py_object` result would be taken as new).
    home = ctypes.cast(get_dict(api.PyInterpreterState_Get()), ctypes.py_object).value
    get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", api))
    major = int(np.__version__.split(".")[0])
    module = sys.modules["numpy._core.multiarray" if major >= 2 else "numpy.core.multiarray"]
    table = get_pointer(module._RUST_NUMPY_BORROW_CHECKING_API, b"_RUST_NUMPY_BORROW_CHECKING_API")
    return home.get("dlpack_abi.rust_numpy_table.v1") == table


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_rust_numpy_refusals_agree_with_numpy(data):
    """A rust-numpy `PyReadwriteArray` of one float64 slice and our `ReadwriteTensor` of another,
    of one buffer (plain, 2-d column and 4-byte-shifted views): refused where NumPy says they
    share memory, never where NumPy's bound keeps them apart."""
    base = np.zeros(48, dtype=np.float64)
    shifted = base.view(np.uint8)[4:4 + 8 * 40].view(np.float64)  # elements straddle base's

    def part(label):
        kind = data.draw(st.sampled_from(["f8", "2d", "shifted"]), label=label)
        start = data.draw(st.integers(-40, 39), label=label + " start")
        step = data.draw(st.sampled_from([1, 2, 3, -1, -2, 5]), label=label + " step")
        if kind == "2d":
            return base.reshape(6, 8)[:, start % 8::max(step, 1)]
        return (shifted if kind == "shifted" else base)[start::step]

    theirs, ours = part("rust-numpy's"), part("ours")
    tensor_ops.scale_(np.zeros(1), 1.0)  # the table is published (by either side) by now
    # rust-numpy's own rule compares where elements start, not the bytes they cover: with its
    # table in use, a view shifted into the middle of the other's elements is not refused
    # (test_rust_numpys_rule_misses_straddling_elements).
    straddling = (theirs.ctypes.data - ours.ctypes.data) % 8 != 0
    if straddling and not _registry_backed():
        return
    try:
        tensor_ops.numpy_while_borrowed_(theirs, lambda: tensor_ops.scale_(ours, 1.0))
        refused = False
    except BufferError as error:
        if "aligned" in str(error):
            return  # a float64 view 4 bytes off: not an argument of either kind
        assert "ReadwriteTensor" in str(error), error
        refused = True
    except TypeError as error:  # rust-numpy's own refusal of a misaligned or borrowed array
        if "already borrowed" not in str(error):
            return
        refused = True
    if theirs.size and ours.size and np.shares_memory(theirs, ours):
        assert refused, "shared memory must be refused"
    if not np.may_share_memory(theirs, ours):
        assert not refused, "memory NumPy's bounds keep apart must not be refused"


STRADDLING = """
import sys
import numpy as np
import tensor_ops

base = np.zeros(48)
shifted = base.view(np.uint8)[4:4 + 8 * 40].view(np.float64)
tensor_ops.numpy_sum(np.zeros(1))  # rust-numpy publishes its own table first
try:
    tensor_ops.numpy_while_borrowed_(shifted, lambda: tensor_ops.scale_(base, 1.0))
except BufferError:
    print("refused")
else:
    print("allowed")
"""


def test_rust_numpys_rule_misses_straddling_elements():
    """With rust-numpy's own table in use (a rust-numpy extension borrowed first), its rule
    decides: a float64 view 4 bytes into another shares bytes with it, but no element starts
    where one of the other's does, so rust-numpy allows both borrows. Ours (published when we
    borrow first) refuses them. The exact failure a mixed user meets, documented in
    docs/python.md; this test fails when rust-numpy's rule changes."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(STRADDLING)],
                            capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "allowed", result.stdout + result.stderr
