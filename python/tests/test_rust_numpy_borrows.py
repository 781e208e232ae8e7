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
