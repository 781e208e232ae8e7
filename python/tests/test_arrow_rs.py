"""arrow-rs values as #[pyfunction] arguments and return values (dlpack_abi::python::PyArray,
PyRecordBatch, PyField, PySchema, PyRecordBatchReader, PyDeviceRecordBatchReader; the helpers
are python/src/arrow_rs.rs), and the integrations' errors as exceptions."""
import errno
import struct

import nanoarrow
import polars as pl
import pyarrow as pa
import pytest

import dlpack_abi
from dlpack_abi.conformance import _c

ext = dlpack_abi.dlpack_abi


def data_address(array):
    """Where an array's first value is (arrow-rs folds a slice's offset into the pointer)."""
    return array.buffers()[1].address + array.offset * array.type.bit_width // 8


def test_a_record_batch_round_trips_through_arrow_rs_without_a_copy():
    batch = pa.record_batch(
        {"n": pa.array([1, None, 3], pa.int64()), "s": ["a", "b", None]},
        metadata={"origin": "test"},
    )
    out = ext._batch_roundtrip(batch)
    assert isinstance(out, dlpack_abi.ArrowArray) and out.format == "+s"
    back = pa.record_batch(out)
    assert back.equals(batch) and back.schema.metadata == {b"origin": b"test"}
    for name in ("n", "s"):
        for ours, theirs in zip(back.column(name).buffers(), batch.column(name).buffers()):
            assert (ours is None) == (theirs is None)
            if ours is not None:
                assert ours.address == theirs.address


def test_arrays_keep_their_field_and_memory():
    source = pa.array([1, 2, None, 4], pa.int64()).slice(1)
    out = ext._array_roundtrip(source)
    again = pa.array(out)
    assert again.to_pylist() == [2, None, 4]
    assert data_address(again) == data_address(source)
    plus = pa.array(ext._add_one(pa.array([1, None, 41])))
    assert plus.to_pylist() == [2, None, 42]
    with pytest.raises(TypeError, match="int64"):
        ext._add_one(pa.array([1.5]))


def test_other_producers_polars_and_nanoarrow():
    assert pa.array(ext._add_one(nanoarrow.c_array([5], nanoarrow.int64()))).to_pylist() == [6]
    frame = pl.DataFrame({"a": [1, 2, 3]})
    assert ext._reader_rows(frame) == 3


def test_schemas_and_fields():
    schema = pa.schema([("a", pa.int8()), ("b", pa.string())], metadata={"k": "v"})
    assert ext._schema_names(schema) == ["a", "b"]
    assert ext._schema_names(dlpack_abi.ArrowSchema.from_arrow(schema)) == ["a", "b"]
    out = ext._schema_roundtrip(schema)
    assert isinstance(out, dlpack_abi.ArrowSchema) and out.format == "+s"
    assert pa.schema(out) == schema and pa.schema(out).metadata == {b"k": b"v"}
    field = pa.field("x", pa.list_(pa.int32()), nullable=False, metadata={"m": "1"})
    back = pa.field(ext._field_roundtrip(field))
    assert back == field and back.metadata == {b"m": b"1"}
    with pytest.raises(ValueError, match="struct"):
        ext._schema_names(pa.int64())
    with pytest.raises(TypeError):
        ext._schema_names(42)


def test_readers_both_ways():
    table = pa.table({"x": [1, 2, 3]}).to_batches()[0]
    table = pa.Table.from_batches([table, table])
    assert ext._reader_rows(table) == 6
    out = ext._reader_roundtrip(table)
    assert isinstance(out, dlpack_abi.ArrowStream)
    assert pa.RecordBatchReader.from_stream(out).read_all().equals(table)
    device = ext._device_reader_roundtrip(table)
    with pytest.raises(BufferError):
        device.__arrow_c_stream__()
    # Taken as an argument again: the CPU method refuses, the device stream is read.
    assert ext._reader_rows(device) == 6


def test_a_producers_error_reaches_python_as_oserror():
    schema = pa.schema([("x", pa.int64())])

    def batches():
        yield pa.record_batch({"x": [1]}, schema=schema)
        raise ValueError("disk on fire")

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    with pytest.raises(OSError, match="disk on fire") as raised:
        ext._reader_rows(reader)
    assert raised.value.errno is not None


def test_requested_schema():
    batch = pa.record_batch({"n": pa.array([1, 2], pa.int64())})
    # Passed on to the producer, which casts.
    cast = pa.record_batch(ext._batch_as(batch, pa.schema([("n", pa.int32())])))
    assert cast.schema == pa.schema([("n", pa.int32())]) and cast.column(0).to_pylist() == [1, 2]
    # Returned: our own schema for a request of the same shape (the consumer casts), a clear
    # refusal otherwise; the value stays exportable.
    out = ext._batch_roundtrip(batch)
    same_shape = pa.schema([("n", pa.int32())]).__arrow_c_schema__()
    schema, array = out.__arrow_c_array__(requested_schema=same_shape)
    assert pa.RecordBatch._import_from_c_capsule(schema, array).equals(batch)
    two = pa.schema([("a", pa.int64()), ("b", pa.int64())])
    with pytest.raises(ValueError, match="fields"):
        out.__arrow_c_array__(requested_schema=two.__arrow_c_schema__())
    assert pa.record_batch(out).equals(batch)
    stream = ext._reader_roundtrip(pa.table({"n": [1]}))
    with pytest.raises(ValueError, match="fields"):
        stream.__arrow_c_stream__(two)
    assert pa.RecordBatchReader.from_stream(stream).read_all().num_rows == 1


def test_malformed_input_is_refused_not_crashed_on():
    class BrokenCount:
        def __arrow_c_array__(self, requested_schema=None):
            schema, array = pa.array([1, 2, 3]).__arrow_c_array__()
            _c.capsule_pointer(array, _c.ArrowArray).contents.n_buffers = 7
            return schema, array

    with pytest.raises(ValueError, match="n_buffers"):
        ext._array_roundtrip(BrokenCount())
    # Structurally fine, but not UTF-8: arrow-rs's own validation refuses the values.
    offsets = pa.py_buffer(struct.pack("<2i", 0, 1))
    bad = pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(b"\xff")])
    with pytest.raises(ValueError, match="arrow-rs"):
        ext._array_roundtrip(bad)
    with pytest.raises(ValueError, match="null rows"):
        ext._batch_roundtrip(pa.array([{"x": 1}, None]))
    with pytest.raises(TypeError):
        ext._batch_roundtrip(object())


@pytest.mark.parametrize(
    "kind, exception",
    [
        ("arrow_rs.invalid", ValueError),
        ("arrow_rs.not_implemented", NotImplementedError),
        ("arrow_rs.overflow", OverflowError),
        ("arrow_rs.divide", ZeroDivisionError),
        ("arrow_rs.memory", MemoryError),
        ("arrow_rs.io", FileNotFoundError),
        ("arrow_rs.external_other", RuntimeError),
        ("arrow_rs.ours", ValueError),
        ("safetensors.io", PermissionError),
        ("safetensors.format", ValueError),
        ("safetensors.no_tensor", KeyError),
        ("safetensors.dtype", TypeError),
        ("safetensors.misaligned", ValueError),
        ("safetensors.extent", OverflowError),
        ("safetensors.export_flags", BufferError),
        ("metadata", ValueError),
        ("into_legacy", BufferError),
        ("cudarc.not_cuda", BufferError),
    ],
)
def test_every_error_converts_to_its_exception(kind, exception):
    with pytest.raises(exception) as raised:
        ext._raise_error(kind)
    # Exactly the kind, not a broader one that happens to match.
    assert type(raised.value) is exception
    # With the stable code of the error it was made from (the integration's range or the core's).
    assert isinstance(raised.value.code, int) and 100 <= raised.value.code < 2000, kind


@pytest.mark.parametrize("kind", ["producer", "arrow_rs.external_stream"])
def test_producer_errors_are_oserrors_with_errno(kind):
    with pytest.raises(OSError, match="disk on fire") as raised:
        ext._raise_error(kind)
    assert raised.value.errno == errno.EIO


def test_the_same_producer_twice_and_a_stream_consumed_twice():
    """Arrays may be exported to any number of consumers: the same pyarrow batch imports twice,
    sharing its buffers both times. A stream has one consumer: ours, taken as an argument a
    second time, is refused with an exception (never a crash, never an empty read)."""
    batch = pa.record_batch({"n": pa.array([1, 2, 3], pa.int64())})
    first, second = pa.record_batch(ext._batch_roundtrip(batch)), pa.record_batch(
        ext._batch_roundtrip(batch)
    )
    assert first.equals(batch) and second.equals(batch)
    assert first.column(0).buffers()[1].address == second.column(0).buffers()[1].address
    stream = ext._reader_roundtrip(pa.Table.from_batches([batch]))
    assert ext._reader_rows(stream) == 3
    with pytest.raises(Exception, match="consumed|already|no longer"):
        ext._reader_rows(stream)
