"""docs/python.md's claims about in-place kernels, as tests: its `add_` example runs as written
(compiled verbatim into `tensor_ops.docs`, python/examples/tensor-ops/src/docs_examples.rs), on
strided halves of one array and on any layout, refuses what the guide says it refuses with the
exception it names, and a dtype `TypeError` names the argument it is about."""
import pathlib
import pickle
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensor_ops

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUST_BLOCK = re.compile(r"^```rust[^\n]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)

add_ = tensor_ops.docs.add_


def test_the_guides_add_example_is_the_one_compiled_here():
    guide = (ROOT / "docs/python.md").read_text(encoding="utf-8")
    blocks = [b for b in RUST_BLOCK.findall(guide) if "fn add_(" in b]
    assert len(blocks) == 1, "docs/python.md has one add_ example"
    source = (ROOT / "python/examples/tensor-ops/src/docs_examples.rs").read_text(encoding="utf-8")
    assert blocks[0] in source, "docs_examples.rs holds the guide's add_ verbatim"


def test_add_of_the_two_interleaved_halves_works():
    """The guide: `add_(a[::2], a[1::2])` works."""
    a = np.arange(12, dtype=np.float32)
    expected = a.copy()
    expected[::2] += expected[1::2]
    add_(a[::2], a[1::2])
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("out, x, name", [
    (lambda a: a, lambda a: a, "add_(a, a)"),
    (lambda a: a, lambda a: a[::2], "add_(a, a[::2])"),
])
def test_add_of_the_same_memory_twice_raises_buffer_error(out, x, name):
    """The guide: `add_(a, a)` and `add_(a, a[::2])` raise BufferError, writing nothing."""
    a = np.arange(12, dtype=np.float32)
    with pytest.raises(BufferError, match="ReadwriteTensor"):
        add_(out(a), x(a))
    np.testing.assert_array_equal(a, np.arange(12, dtype=np.float32), err_msg=name)


@pytest.mark.parametrize("out, name", [
    (lambda a: a, "C-contiguous"),
    (lambda a: a.T, "transposed (Fortran order)"),
    (lambda a: a[::-1, ::2], "reversed rows, every other column"),
    (lambda a: a[:, 1], "a column"),
    (lambda a: a[1:, ::-3], "a strided block"),
])
def test_add_writes_any_layout(out, name):
    """The guide: `iter_mut` walks any layout whose strides reach no element twice."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = out(a)
    x = np.arange(view.size, dtype=np.float32).reshape(view.shape) * 10
    expected = a.copy()
    out(expected)[...] += x
    add_(view, x)
    np.testing.assert_array_equal(a, expected, err_msg=name)
    # And with a strided `x`, read through its strides in the same row-major order.
    strided_x = np.zeros((2 * view.size,), dtype=np.float32)[::2].reshape(view.shape)
    strided_x[...] = x
    add_(view, strided_x)
    out(expected)[...] += x
    np.testing.assert_array_equal(a, expected, err_msg=name)


def test_add_of_two_shapes_raises_value_error():
    out, x = np.zeros(4, np.float32), np.ones(3, np.float32)
    with pytest.raises(ValueError, match="one shape"):
        add_(out, x)
    np.testing.assert_array_equal(out, np.zeros(4, np.float32))


def test_a_writable_broadcast_is_refused_naming_the_way_out():
    """The guide: strides that may reach one element twice are refused with `BufferError`, whose
    message names the way out (one element at a time: `get_mut`, `set`)."""
    base = np.zeros(3, np.float32)
    broadcast = np.lib.stride_tricks.as_strided(base, shape=(4, 3), strides=(0, 4))
    assert broadcast.flags.writeable
    with pytest.raises(BufferError, match="get_mut or set") as raised:
        add_(broadcast, np.ones((4, 3), np.float32))
    assert "two indices" in str(raised.value)
    np.testing.assert_array_equal(base, np.zeros(3, np.float32))


def test_a_read_only_array_is_refused_with_buffer_error():
    """The guide's order of checks: `READ_ONLY` (a read-only NumPy array) is a `BufferError`."""
    out = np.zeros(3, np.float32)
    out.setflags(write=False)
    with pytest.raises(BufferError, match="READ_ONLY"):
        add_(out, np.ones(3, np.float32))


@pytest.mark.parametrize("add", [tensor_ops.add_, add_], ids=["tensor_ops.add_", "docs.add_"])
def test_a_dtype_type_error_names_its_argument(add):
    """The guide's order of checks: the dtype comes first, as a `TypeError` naming the argument
    and both dtypes, with the stable code (`ACCESS_DTYPE_MISMATCH`, 204) as `.code`."""
    right = np.float32 if add is add_ else np.float64
    wrong = np.float64 if add is add_ else np.float32
    requested, found = np.dtype(right).name, np.dtype(wrong).name
    with pytest.raises(TypeError) as raised:
        add(np.zeros(3, right), np.zeros(3, wrong))
    assert str(raised.value) == (
        f"argument 'x': DLTensor.dtype is {found}, but the requested type is {requested}"
    )
    assert raised.value.code == 204
    with pytest.raises(TypeError) as raised:
        add(np.zeros(3, wrong), np.zeros(3, right))
    assert str(raised.value).startswith("argument 'out': DLTensor.dtype is ")
    # The dtype is checked before anything else: a read-only `out` of another dtype.
    read_only = np.zeros(3, wrong)
    read_only.setflags(write=False)
    with pytest.raises(TypeError, match="argument 'out'"):
        add(read_only, np.zeros(3, right))
    # It prints and pickles as a TypeError, keeping its message and code.
    assert repr(raised.value).startswith("TypeError(\"argument 'out'")
    copy = pickle.loads(pickle.dumps(raised.value))
    assert type(copy) is TypeError and str(copy) == str(raised.value) and copy.code == 204


def test_a_dtype_error_raised_in_a_kernels_body_keeps_its_message():
    """Outside argument extraction nothing names an argument: the message is the error's own."""
    with pytest.raises(TypeError, match=r"^scale takes float32 or float64, not int64$"):
        tensor_ops.scale(np.arange(3), 1.0)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_add_agrees_with_numpy_on_random_layouts(shape, data):
    """`add_(out, x)` equals NumPy's `out += x` for random slices (steps of either sign) and
    transposes of two arrays: the strided walk and the contiguous fast path agree."""

    def layout():
        steps = tuple(data.draw(st.sampled_from([1, 2, -1, -2])) for _ in shape)
        transpose = data.draw(st.booleans())

        def apply(array):
            view = array[tuple(slice(None, None, step) for step in steps)]
            return view.T if transpose else view

        return apply

    big = [2 * n for n in shape]
    out_layout, x_layout = layout(), layout()
    out_base = np.arange(np.prod(big), dtype=np.float32).reshape(big)
    x = x_layout(np.arange(np.prod(big), dtype=np.float32).reshape(big) * -3)
    common = tuple(min(o, i) for o, i in zip(out_layout(out_base).shape, x.shape))
    cut = tuple(slice(0, n) for n in common)
    expected = out_base.copy()
    out_layout(expected)[cut] += x[cut]
    add_(out_layout(out_base)[cut], x[cut])
    np.testing.assert_array_equal(out_base, expected)
