"""Run-time borrow checking of `ReadwriteTensor` / `ReadonlyTensor` arguments
(`tensor_ops.scale_`, `add_`, `while_borrowed_`): the same memory passed twice is refused, disjoint
parts are not, across two extensions built separately (`tensor_ops` and `dlpack_abi`), and under
threads."""
import gc
import sys
import threading
import time

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import dlpack_abi
import tensor_ops

BORROWED = "ReadwriteTensor"


def test_in_place_kernels_write_any_layout():
    a = np.arange(12.0).reshape(3, 4)
    tensor_ops.scale_(a, 2.0)
    np.testing.assert_array_equal(a, 2 * np.arange(12.0).reshape(3, 4))
    tensor_ops.scale_(a.T, 0.5)  # Fortran order
    tensor_ops.scale_(a[:, ::-2], -1.0)  # reversed, strided columns
    expected = np.arange(12.0).reshape(3, 4)
    expected[:, ::-2] *= -1
    np.testing.assert_array_equal(a, expected)
    out = np.zeros(5)
    tensor_ops.add_(out, np.arange(5.0))
    np.testing.assert_array_equal(out, np.arange(5.0))


@pytest.mark.parametrize("out, x, name", [
    (lambda a: a, lambda a: a, "f(a, a)"),
    (lambda a: a, lambda a: a[::2], "f(a, a[::2])"),
    (lambda a: a[::2], lambda a: a, "f(a[::2], a)"),
    (lambda a: a[:7], lambda a: a[5:12], "overlapping halves"),
    (lambda a: a.reshape(3, 4)[:, 1], lambda a: a.reshape(3, 4)[0, :3], "a column and a row"),
    (lambda a: a[::-1][:6], lambda a: a[5:11], "reversed, overlapping"),
])
def test_the_same_memory_twice_is_refused(out, x, name):
    a = np.arange(12.0)
    before = sys.getrefcount(a)
    out, x = out(a), x(a)
    assert np.shares_memory(out, x), name
    with pytest.raises(BufferError, match=BORROWED):
        tensor_ops.add_(out, x)
    np.testing.assert_array_equal(a, np.arange(12.0))  # nothing written
    del out, x
    gc.collect()
    assert sys.getrefcount(a) == before, "every export of a refused call was released"


@pytest.mark.parametrize("out, x, name", [
    (lambda a: a[::2], lambda a: a[1::2], "a[::2], a[1::2]"),
    (lambda a: a[:6], lambda a: a[6:], "two halves"),
    (lambda a: a.reshape(3, 4)[:, 0], lambda a: a.reshape(3, 4)[:, 1], "two columns"),
    (lambda a: a.reshape(3, 4)[1:, 0], lambda a: a.reshape(3, 4)[0, :2], "a column and a row"),
])
def test_disjoint_parts_of_one_array_are_borrowed_together(out, x, name):
    a = np.arange(12.0)
    out, x = out(a), x(a)
    assert not np.shares_memory(out, x), name
    expected = out + x
    tensor_ops.add_(out, x)
    np.testing.assert_array_equal(out, expected)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_refusals_agree_with_numpy(data):
    """Whatever two slices of one buffer are passed (8-byte and 4-byte views of it), memory that
    NumPy says is shared is refused, and a refusal is never made where NumPy's bound says no
    byte can be shared."""
    base = np.zeros(48, dtype=np.float64)

    def part(label):
        view = data.draw(st.sampled_from(["f8", "2d"]), label=label)
        start = data.draw(st.integers(-48, 47), label=label + " start")
        stop = data.draw(st.integers(-48, 48), label=label + " stop")
        step = data.draw(st.sampled_from([1, 2, 3, -1, -2, 5]), label=label + " step")
        if view == "2d":
            return base.reshape(6, 8)[:, start % 8::max(step, 1)]
        return base[start:stop:step]

    out, x = part("out"), part("x")
    try:
        _borrow_both(out, x)
        refused = False
    except BufferError as error:
        assert BORROWED in str(error)
        refused = True
    if out.size and x.size and np.shares_memory(out, x):
        assert refused, "shared memory must be refused"
    if not np.may_share_memory(out, x):
        assert not refused, "memory NumPy's bounds keep apart must not be refused"


def _borrow_both(out, x):
    """Borrows `out` for writing while `x` is imported (whatever their shapes)."""
    tensor_ops.while_borrowed_(out, lambda: dlpack_abi.Tensor.from_dlpack(x))


def test_a_live_import_in_another_extension_blocks_writing():
    a = np.arange(4.0)
    held = dlpack_abi.Tensor.from_dlpack(a)  # the `dlpack_abi` extension's import
    with pytest.raises(BufferError, match="another live import"):
        tensor_ops.scale_(a, 2.0)
    tensor_ops.scale_(a[:0], 2.0)  # empty: nothing to share
    del held
    gc.collect()
    tensor_ops.scale_(a, 2.0)
    np.testing.assert_array_equal(a, [0.0, 2.0, 4.0, 6.0])
    assert not hasattr(sys.modules["_dlpack_abi_borrows"], "api"), "the pre-release home, retired"


def test_writing_blocks_imports_in_another_extension():
    a = np.arange(4.0)
    errors = []

    def during():
        with pytest.raises(BufferError, match=BORROWED) as refused:
            dlpack_abi.Tensor.from_dlpack(a[1:3])
        errors.append(refused.value)
        return dlpack_abi.Tensor.from_dlpack(np.arange(3.0))  # other memory is fine

    result = tensor_ops.while_borrowed_(a, during)
    assert len(errors) == 1 and np.from_dlpack(result).tolist() == [0.0, 1.0, 2.0]
    dlpack_abi.Tensor.from_dlpack(a)  # the borrow ended with the call


def test_dtype_and_flags_are_checked_before_the_borrow():
    a32 = np.arange(4, dtype=np.float32)
    held = dlpack_abi.Tensor.from_dlpack(a32)
    with pytest.raises(TypeError, match="float32"):
        tensor_ops.scale_(a32, 2.0)  # the wrong dtype, not a borrow conflict
    del held
    frozen = np.arange(4.0)
    frozen.flags.writeable = False
    with pytest.raises(BufferError, match="READ_ONLY"):
        tensor_ops.scale_(frozen, 2.0)


def test_a_borrow_blocks_other_threads_until_it_ends():
    a = np.arange(8.0)
    inside, release = threading.Event(), threading.Event()

    def hold():
        inside.set()
        assert release.wait(10)

    holder = threading.Thread(target=tensor_ops.while_borrowed_, args=(a, hold))
    holder.start()
    assert inside.wait(10)
    with pytest.raises(BufferError, match=BORROWED):
        tensor_ops.scale_(a[2:4], 2.0)
    tensor_ops.scale_(np.arange(3.0), 2.0)  # other memory meanwhile
    release.set()
    holder.join()
    tensor_ops.scale_(a[2:4], 2.0)
    assert a.tolist() == [0.0, 1.0, 4.0, 6.0, 4.0, 5.0, 6.0, 7.0]


def test_threads_writing_disjoint_parts_never_conflict():
    a = np.ones(40_000)
    failures = []

    def work(i):
        try:
            for _ in range(50):
                tensor_ops.scale_(a[i::4], 1.0)  # releases the GIL while it writes
            tensor_ops.scale_(a[i::4], float(i + 1))
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for i in range(4):
        assert (a[i::4] == i + 1).all()


def test_threads_borrowing_the_same_memory_never_hold_it_together():
    """Three threads keep borrowing overlapping parts of one array for writing, each holding its
    borrow across a sleep (the GIL released): whoever is inside is alone, the others are
    refused, and no borrow outlives its call."""
    a = np.ones(64)
    parts = [a, a[::2], a[10:40]]  # every pair overlaps
    inside, outcomes, lock = [], [], threading.Lock()

    def hold():
        with lock:
            inside.append(1)
            assert len(inside) == 1, "two writers of the same memory at once"
        time.sleep(0.002)
        with lock:
            inside.pop()

    def work(part):
        for _ in range(30):
            try:
                tensor_ops.while_borrowed_(part, hold)
                outcomes.append("wrote")
            except BufferError as error:
                assert BORROWED in str(error)
                outcomes.append("refused")

    threads = [threading.Thread(target=work, args=(part,)) for part in parts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(outcomes) == 90 and "wrote" in outcomes and "refused" in outcomes
    tensor_ops.scale_(a, 2.0)  # no borrow outlived its call
    assert (a == 2.0).all()


def test_the_dtype_is_checked_before_a_live_borrow_refuses():
    a = np.arange(6.0)
    refused = []

    def during():
        with pytest.raises(TypeError, match="int64"):
            tensor_ops.add_(np.zeros(6), a.view(np.int64))
        refused.append(True)

    tensor_ops.while_borrowed_(a, during)
    assert refused == [True]


class Copying:
    """A producer that always hands over a copy (IS_COPIED)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        kwargs["copy"] = True
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_a_copy_is_refused_for_writing_not_written_and_lost():
    a = np.arange(3.0)
    with pytest.raises(BufferError, match="copy"):
        tensor_ops.scale_(Copying(a), 5.0)
    assert a.tolist() == [0.0, 1.0, 2.0]
    tensor_ops.add_(np.zeros(3), Copying(a))  # reading a copy is fine


def test_a_tensor_made_from_arrow_memory_is_a_registered_borrow():
    a = np.arange(4.0)
    column = pa.array(a)  # zero-copy: the same memory
    held = dlpack_abi.Tensor.from_arrow(column)
    with pytest.raises(BufferError, match="another live import"):
        tensor_ops.scale_(a, 2.0)
    del held
    gc.collect()
    tensor_ops.scale_(a, 2.0)
    assert column.to_pylist() == [0.0, 2.0, 4.0, 6.0]


def test_a_capsule_passed_twice_is_consumed_once():
    a = np.arange(3.0)
    before = sys.getrefcount(a)
    capsule = a.__dlpack__(max_version=(1, 3))
    with pytest.raises(ValueError, match="already consumed"):
        tensor_ops.add_(capsule, capsule)  # out consumes it; x finds it used
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
    del capsule
    gc.collect()
    assert sys.getrefcount(a) == before, "the producer's deleter ran, once"
    tensor_ops.scale_(a, 2.0)  # and its borrow is gone


def _own_tensor(n=4096):
    """A writable `dlpack_abi.Tensor` over memory Rust owns (not an import: nothing registered)."""
    return dlpack_abi.Tensor.from_bytes(np.arange(n, dtype=np.float64).tobytes(), (2, 64, 1), (n,))


def test_reads_of_a_tensors_own_memory_wait_for_no_writer():
    t = _own_tensor(8)
    for read in (lambda: t.tobytes(), lambda: t.__dlpack__(max_version=(1, 3), copy=True),
                 lambda: t.__dlpack__(copy=True)):
        with pytest.raises(BufferError, match=BORROWED):
            tensor_ops.while_borrowed_(t, read)  # Rust would read bytes a &mut may write
        read()  # and after the borrow, it reads
    assert np.frombuffer(t.tobytes()).tolist() == list(range(8))


def test_reads_of_a_tensors_own_memory_are_never_torn_by_a_writer():
    """One thread negates a Rust-owned tensor through a `ReadwriteTensor` with the GIL released;
    another copies it meanwhile: every copy is refused or whole, never half negated."""
    t = _own_tensor(1 << 18)
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            tensor_ops.scale_(t, -1.0)  # the GIL is released while it writes
            time.sleep(0)  # and between writes, reads get their turn

    thread = threading.Thread(target=writer)
    thread.start()
    torn = refused = whole = 0
    deadline = time.monotonic() + 10
    try:
        while (refused < 20 or whole < 20) and time.monotonic() < deadline:
            try:
                values = np.frombuffer(t.tobytes())
            except BufferError:
                refused += 1  # read while the writer held its borrow
                continue
            negative = np.count_nonzero(values < 0)
            if 0 < negative < values.size - 1:  # element 0 is 0.0 either way
                torn += 1
            else:
                whole += 1
    finally:
        stop.set()
        thread.join()
    assert torn == 0, f"{torn} copies mixed negated and unnegated elements"
    assert whole > 0 and refused > 0, (whole, refused)


def test_an_arrow_import_is_a_registered_borrow_while_held():
    a = np.arange(4.0)
    column = pa.array(a)
    assert column.buffers()[1].address == a.ctypes.data, "zero-copy: the same memory"
    held = dlpack_abi.ArrowArray.from_arrow(column)
    again = dlpack_abi.ArrowArray.from_arrow(column)  # a second import of the same producer
    with pytest.raises(BufferError, match="another live import"):
        tensor_ops.scale_(a, 2.0)
    tensor_ops.scale_(np.arange(3.0), 2.0)  # other memory is fine
    del held
    gc.collect()
    with pytest.raises(BufferError, match="another live import"):
        tensor_ops.scale_(a, 2.0)  # the second import still holds its own borrow
    del again
    gc.collect()
    tensor_ops.scale_(a, 2.0)  # both released: both borrows ended with them
    assert column.to_pylist() == [0.0, 2.0, 4.0, 6.0]


def test_an_arrow_import_is_refused_while_its_memory_is_written():
    a = np.arange(4.0)
    column = pa.array(a)
    with pytest.raises(BufferError, match=BORROWED):
        tensor_ops.while_borrowed_(a, lambda: dlpack_abi.ArrowArray.from_arrow(column))
    strings = pa.array(["ab", None, "cde"])  # offsets, data and validity: all registered
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)
    assert offsets.tolist() == [0, 2, 2, 5]
    held = dlpack_abi.ArrowArray.from_arrow(strings)
    del held
    gc.collect()


def test_arrow_rs_arguments_and_stream_batches_are_registered_borrows():
    a = np.arange(4.0)
    column = pa.array(a)
    held = dlpack_abi.dlpack_abi._array_roundtrip(column)  # arrow-rs holds the import
    with pytest.raises(BufferError, match="another live import"):
        tensor_ops.scale_(a, 2.0)
    del held
    gc.collect()
    tensor_ops.scale_(a, 1.0)

    batches = pa.RecordBatchReader.from_batches(
        pa.schema([("x", pa.float64())]), [pa.record_batch([column], names=["x"])])
    out = pa.RecordBatchReader.from_stream(dlpack_abi.dlpack_abi._reader_roundtrip(batches))
    batch = out.read_next_batch()  # pulled through our wrapped stream, held by arrow-rs
    assert batch.column(0).buffers()[1].address == a.ctypes.data
    with pytest.raises(BufferError, match="another live import"):
        tensor_ops.scale_(a, 2.0)
    del batch, out
    gc.collect()
    tensor_ops.scale_(a, 2.0)
    np.testing.assert_array_equal(a, [0.0, 2.0, 4.0, 6.0])


def test_a_stream_batch_is_refused_while_its_memory_is_written():
    a = np.arange(4.0)
    column = pa.array(a)
    batches = pa.RecordBatchReader.from_batches(
        pa.schema([("x", pa.float64())]), [pa.record_batch([column], names=["x"])])
    stream = dlpack_abi.ArrowStream.from_arrow(batches)

    def during():
        out = pa.RecordBatchReader.from_stream(dlpack_abi.dlpack_abi._reader_roundtrip(stream))
        with pytest.raises(pa.ArrowInvalid, match="ReadwriteTensor"):
            out.read_next_batch()
        return "refused"

    assert tensor_ops.while_borrowed_(a, during) == "refused"


def test_refusals_carry_their_stable_codes():
    a = np.arange(4.0)
    held = dlpack_abi.Tensor.from_dlpack(a)
    with pytest.raises(BufferError) as shared:
        tensor_ops.scale_(a, 2.0)
    assert shared.value.code == 1602  # dlpack_abi_pyo3::codes::SHARED
    del held
    with pytest.raises(BufferError) as mutably:
        tensor_ops.while_borrowed_(a, lambda: dlpack_abi.Tensor.from_dlpack(a))
    assert mutably.value.code == 1601  # BORROWED_MUTABLY
    with pytest.raises(BufferError) as read_only:
        a.flags.writeable = False
        tensor_ops.scale_(a, 2.0)
    assert read_only.value.code == 207  # the core's ACCESS_READ_ONLY


def test_a_stream_whose_schema_cannot_be_read_is_refused_and_released():
    """Its batches could not be sized for the registry, so the import is refused (released
    once: the producer's release runs)."""
    from dlpack_abi.conformance import _c

    capsule = pa.table({"x": [1.0]}).__arrow_c_stream__()
    stream = _c.capsule_pointer(capsule, _c.ArrowArrayStream)
    failing = _c.STREAM_GET_SCHEMA(lambda _stream, _out: 5)  # EIO
    released = _c.Counter(_c.STREAM_RELEASE, stream.contents.release)
    stream.contents.get_schema, stream.contents.release = failing, released.callback
    with pytest.raises(ValueError, match="could not give its schema"):
        dlpack_abi.ArrowStream.from_arrow(capsule)
    assert released.calls == 1
