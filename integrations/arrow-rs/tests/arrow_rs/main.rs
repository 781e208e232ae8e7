//! The arrow-rs bridge against the real arrow-rs 60: round trips of every type the Arrow layer
//! validates (nulls, offsets from `slice`, nested types, dictionaries, views, run-end encoded),
//! the same buffers on both sides, and release exactly once on every path, counted.

use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arrow_array::{
    Array as _, ArrayRef, Int32Array, Int64Array, RecordBatch, RecordBatchIterator,
    RecordBatchReader, StringArray, StructArray,
};
use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field};
use dlpack_abi::arrow::{errno, Array, ArrayStream, ProducerError, SchemaDef};
use dlpack_abi::raw::ArrowArray;
use dlpack_abi_arrow_rs::{
    export_array, export_device_array, export_device_reader, export_reader, export_record_batch,
    import_array, import_device_array, import_device_stream, import_record_batch, import_stream,
    ArrowRsError,
};

mod agreement;
mod boundary;
mod canonical;
mod reach;
mod types;

use types::arrays;

/// The addresses of an array's buffers, children's included.
fn addresses(data: &arrow_data::ArrayData) -> Vec<usize> {
    let mut out: Vec<usize> = data.buffers().iter().map(|b| b.as_ptr() as usize).collect();
    for child in data.child_data() {
        out.extend(addresses(child));
    }
    out
}

#[test]
fn every_type_round_trips_zero_copy() {
    for (name, array) in arrays() {
        for (offset, length) in [(0, array.len()), (1, array.len() - 1)] {
            let array = array.slice(offset, length);
            let (schema, ours) = export_array(array.as_ref())
                .unwrap_or_else(|error| panic!("{name}: exported: {error}"));
            assert_eq!(ours.len(), length, "{name}");
            let back = import_array(schema.view(), ours)
                .unwrap_or_else(|error| panic!("{name}: imported: {error}"));
            assert_eq!(back.to_data(), array.to_data(), "{name} sliced at {offset}");
            assert_eq!(back.data_type(), array.data_type(), "{name}");
            assert_eq!(
                addresses(&back.to_data()),
                addresses(&array.to_data()),
                "{name}: the same buffers, not copies"
            );
        }
    }
}

#[test]
fn device_arrays_and_record_batches_round_trip() {
    for (name, array) in arrays() {
        let (schema, ours) = export_device_array(array.as_ref()).unwrap();
        let back = import_device_array(schema.view(), ours)
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        assert_eq!(back.to_data(), array.to_data(), "{name}");
    }
    let columns: Vec<(&str, ArrayRef)> = arrays()
        .into_iter()
        .map(|(name, array)| (name, array.slice(0, 2)))
        .collect();
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let (schema, ours) = export_record_batch(&batch).unwrap();
    assert_eq!(import_record_batch(schema.view(), ours).unwrap(), batch);
}

/// An allocation that counts its drops: arrow-rs frees it once every holder is gone.
struct Counted {
    values: Vec<i64>,
    drops: Arc<AtomicUsize>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// An int64 array whose buffer is a `Counted`, and its drop counter.
fn counted(values: Vec<i64>) -> (Int64Array, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    let owner = Arc::new(Counted {
        values,
        drops: Arc::clone(&drops),
    });
    let len = owner.values.len() * 8;
    let start = NonNull::new(owner.values.as_ptr().cast_mut().cast::<u8>()).unwrap();
    let count = owner.values.len();
    // SAFETY: `start` is `len` bytes of `owner`'s vector, which the buffer keeps alive.
    let buffer = unsafe { Buffer::from_custom_allocation(start, len, owner) };
    (
        Int64Array::new(ScalarBuffer::new(buffer, 0, count), None),
        drops,
    )
}

#[test]
fn the_memory_is_freed_once_whoever_holds_it_last() {
    // Exported, never imported back: dropping ours releases arrow-rs's reference.
    let (array, drops) = counted(vec![1, 2, 3]);
    let (schema, ours) = export_array(&array).unwrap();
    drop(array);
    assert_eq!(drops.load(Ordering::SeqCst), 0, "ours still holds it");
    drop((schema, ours));
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // Through us and back: arrow-rs's new array holds the original until its last buffer goes.
    let (array, drops) = counted(vec![4, 5]);
    let (schema, ours) = export_array(&array).unwrap();
    drop(array);
    let back = import_array(schema.view(), ours).unwrap();
    let sliced = back.slice(1, 1);
    drop(back);
    assert_eq!(drops.load(Ordering::SeqCst), 0, "the slice still holds it");
    assert_eq!(sliced.to_data().buffers()[0].typed_data::<i64>(), [5]);
    drop(sliced);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn a_child_moved_out_outlives_its_released_parent() {
    let (column, drops) = counted(vec![7, 8, 9]);
    let batch = RecordBatch::try_from_iter([("n", Arc::new(column) as ArrayRef)]).unwrap();
    let (schema, ours) = export_record_batch(&batch).unwrap();
    drop(batch);
    let mut parent: ArrowArray = ours.into_raw();
    // A consumer moves the child out (C Data Interface: a bitwise copy, then the original's
    // `release` set to NULL) and releases the parent.
    // SAFETY: `parent` is a live struct array with one child.
    let mut child: ArrowArray = unsafe { ptr::read(*parent.children) };
    // SAFETY: as above.
    unsafe { (**parent.children).release = None };
    let release = parent.release.expect("a live array");
    // SAFETY: releasing the parent we own, once.
    unsafe { release(&mut parent) };
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "the moved child still holds the buffer"
    );
    let child_schema = schema.view().child(0).unwrap();
    // SAFETY: the moved child, ours to own, of `child_schema`'s type.
    let child = unsafe { Array::from_raw(&mut child, child_schema) }.unwrap();
    assert_eq!(
        child.view(child_schema).unwrap().values::<i64>().unwrap(),
        [7, 8, 9]
    );
    drop(child);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

fn batch(values: Vec<i32>) -> RecordBatch {
    RecordBatch::try_from_iter([("v", Arc::new(Int32Array::from(values)) as ArrayRef)]).unwrap()
}

#[test]
fn readers_go_out_as_streams_and_come_back() {
    let batches = vec![batch(vec![1, 2]), batch(vec![3])];
    let schema = batches[0].schema();
    let reader = RecordBatchIterator::new(batches.clone().into_iter().map(Ok), schema.clone());
    let stream = export_reader(Box::new(reader)).unwrap();
    let back: Vec<RecordBatch> = import_stream(stream)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, batches);

    let reader = RecordBatchIterator::new(batches.clone().into_iter().map(Ok), schema.clone());
    let stream = export_device_reader(Box::new(reader)).unwrap();
    let reader = import_device_stream(stream).unwrap();
    assert_eq!(reader.schema(), schema);
    let back: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(back, batches);
}

#[test]
fn a_readers_error_reaches_the_consumer_with_its_message() {
    let schema = batch(vec![]).schema();
    for device in [false, true] {
        let items = vec![
            Ok(batch(vec![1])),
            Err(ArrowError::ComputeError("the source went away".into())),
        ];
        let reader = Box::new(RecordBatchIterator::new(items, schema.clone()));
        let mut back = if device {
            import_device_stream(export_device_reader(reader).unwrap()).unwrap()
        } else {
            import_stream(export_reader(reader).unwrap()).unwrap()
        };
        assert_eq!(back.next().unwrap().unwrap(), batch(vec![1]));
        let error = back.next().unwrap().unwrap_err();
        assert!(
            error.to_string().contains("the source went away"),
            "{error}"
        );
        assert!(back.next().is_none(), "the stream ends at its error");
    }
}

#[test]
fn our_producers_errors_reach_arrow_rs_with_their_code_and_message() {
    let layout = SchemaDef::new("+s")
        .unwrap()
        .with_child(SchemaDef::new("i").unwrap().with_name("v"));
    let stream = ArrayStream::from_iter(
        layout,
        [Err(ProducerError::new(errno::EIO, Some("disk gone")))],
    )
    .unwrap();
    let mut reader = import_stream(stream).unwrap();
    let error = reader.next().unwrap().unwrap_err();
    assert!(error.to_string().contains("disk gone"), "{error}");
    assert!(reader.next().is_none());
}

#[test]
fn arrow_rs_refusals_are_its_errors_and_lose_nothing() {
    // A stream of int32 arrays (not structs) cannot be read as record batches.
    let stream = ArrayStream::from_iter(SchemaDef::new("i").unwrap(), std::iter::empty()).unwrap();
    let Err(ArrowRsError::ArrowRs(error)) = import_stream(stream) else {
        panic!("refused by arrow-rs")
    };
    assert!(error.to_string().contains("struct"), "{error}");
    // A record batch from an array that is not a struct: refused, the array released.
    let (array, drops) = counted(vec![1]);
    let (schema, ours) = export_array(&array).unwrap();
    drop(array);
    assert!(matches!(
        import_record_batch(schema.view(), ours),
        Err(ArrowRsError::ArrowRs(_))
    ));
    assert_eq!(drops.load(Ordering::SeqCst), 1, "released once on refusal");
    // An array read with a schema it was not validated against: ours refuses, nothing leaks.
    let (array, drops) = counted(vec![2]);
    let (_, ours) = export_array(&array).unwrap();
    drop(array);
    let other = SchemaDef::new("l").unwrap().export().unwrap();
    assert!(matches!(
        import_array(other.view(), ours),
        Err(ArrowRsError::Arrow(_))
    ));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

/// A `Vec<f32>` owner that counts its drops, exported as a DLPack tensor.
struct CountedTensor {
    values: Vec<f32>,
    shape: [i64; 3],
    drops: Arc<AtomicUsize>,
}

impl Drop for CountedTensor {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: the vector is the owner's own allocation, described exactly.
unsafe impl dlpack_abi::dlpack::TensorOwner for CountedTensor {
    fn describe(&mut self) -> dlpack_abi::dlpack::TensorDescription<'_> {
        dlpack_abi::dlpack::TensorDescription::cpu(&mut self.values, &self.shape)
    }
}

#[test]
fn fixed_shape_tensors_go_to_dlpack_and_back_zero_copy() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Float32Type;
    use dlpack_abi::dlpack::VersionedTensor;
    use dlpack_abi_arrow_rs::{export_fixed_shape_tensor, import_fixed_shape_tensor};

    let drops = Arc::new(AtomicUsize::new(0));
    let owner = CountedTensor {
        values: (0..24).map(|i| i as f32).collect(),
        shape: [4, 2, 3],
        drops: Arc::clone(&drops),
    };
    let tensor = VersionedTensor::from_owner(owner).unwrap();
    let address = tensor.view().data_ptr();
    let (field, array) = import_fixed_shape_tensor(tensor, "cells").unwrap();
    assert_eq!(
        field.extension_type_name(),
        Some("arrow.fixed_shape_tensor")
    );
    let lists = array.as_fixed_size_list();
    assert_eq!((lists.len(), lists.value_length()), (4, 6));
    let values = lists.values().as_primitive::<Float32Type>();
    assert_eq!(
        values.values().as_ptr().cast::<u8>(),
        address.cast_const().cast()
    );
    assert_eq!(values.value(23), 23.0);

    // And back to DLPack: the same memory again, read-only (Arrow data is immutable).
    let again = export_fixed_shape_tensor(&field, array.as_ref()).unwrap();
    assert_eq!(again.view().shape(), [4, 2, 3]);
    // The field's name comes through the round trip: DLPack carries none, the import takes it.
    let (named, _) = import_fixed_shape_tensor(
        export_fixed_shape_tensor(&field, array.as_ref()).unwrap(),
        field.name(),
    )
    .unwrap();
    assert_eq!(named, field);
    assert_eq!(again.view().data_ptr(), address);
    assert_eq!(again.view().get::<f32>(&[3, 1, 2]).unwrap(), 23.0);
    drop(array);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "the second tensor still holds the memory"
    );
    drop(again);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the tensor's deleter ran once"
    );

    // A primitive array is a 1-D tensor; one with nulls, which a tensor cannot mark, is refused.
    let plain = Field::new("x", DataType::Int32, true);
    let one_d = export_fixed_shape_tensor(&plain, &Int32Array::from(vec![1, 2])).unwrap();
    assert_eq!(one_d.view().shape(), [2]);
    let with_nulls = Int32Array::from(vec![Some(1), None]);
    let Err(ArrowRsError::Arrow(error)) = export_fixed_shape_tensor(&plain, &with_nulls) else {
        panic!("nulls are refused")
    };
    assert!(error.to_string().contains("null"), "{error}");

    // A fixed-size list without the extension is no tensor: the refusal says what is missing.
    let bare = Field::new("t", field.data_type().clone(), false);
    let tensor =
        dlpack_abi::dlpack::Export::new((0..12).map(|v| v as f32).collect::<Vec<f32>>(), &[2, 6])
            .finish();
    let (_, lists) = import_fixed_shape_tensor(tensor.unwrap(), "t").unwrap();
    let Err(ArrowRsError::Arrow(error)) = export_fixed_shape_tensor(&bare, lists.as_ref()) else {
        panic!("a fixed-size list without the extension is refused")
    };
    assert_eq!(
        error.to_string(),
        "the Arrow type \"+w:6\" has no DLPack equivalent; a fixed-size list is a tensor only as \
         the arrow.fixed_shape_tensor extension type, and this field has no \
         ARROW:extension:name of \"arrow.fixed_shape_tensor\" (with ARROW:extension:metadata \
         {\"shape\": [...]})"
    );
}

/// Buffers this crate exports, counting the drop of their owner.
struct CountedBuffers {
    _buffers: (Vec<i32>, Vec<u8>),
    drops: Arc<AtomicUsize>,
}

impl Drop for CountedBuffers {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// A `utf8` array of one value whose bytes are `bytes`, built by this crate over counted
/// buffers: structurally valid whatever the bytes are. The offsets start `shift` bytes into an
/// `i32`-aligned allocation (0: aligned, as the C Data Interface asks).
fn utf8_shifted(bytes: &[u8], shift: usize) -> (Array, Arc<AtomicUsize>) {
    use dlpack_abi::arrow::ArrayParts;
    let drops = Arc::new(AtomicUsize::new(0));
    let length = i32::try_from(bytes.len()).unwrap();
    // Room for the shift: three i32s, the two offsets written `shift` bytes in.
    let mut offsets = vec![0i32; 3];
    let raw: &mut [u8] = bytemuck_bytes(&mut offsets);
    raw[shift..shift + 4].copy_from_slice(&0i32.to_ne_bytes());
    raw[shift + 4..shift + 8].copy_from_slice(&length.to_ne_bytes());
    let data = bytes.to_vec();
    let start = offsets.as_ptr().cast::<u8>().wrapping_add(shift);
    let parts = ArrayParts::new(1, vec![ptr::null(), start.cast(), data.as_ptr().cast()]);
    let owner = CountedBuffers {
        _buffers: (offsets, data),
        drops: Arc::clone(&drops),
    };
    // SAFETY: one utf8 value: no validity, two i32 offsets (0 and the length) `shift` bytes
    // into `offsets`, `bytes.len()` data bytes, all kept alive by `owner` (moving a `Vec` does
    // not move its heap buffer).
    (unsafe { Array::from_parts(parts, owner) }, drops)
}

/// The bytes of an `i32` slice, to write.
fn bytemuck_bytes(values: &mut [i32]) -> &mut [u8] {
    let len = std::mem::size_of_val(values);
    // SAFETY: `i32` has no padding and every byte pattern is valid for it; the slice is
    // borrowed mutably for the result's lifetime.
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<u8>(), len) }
}

fn utf8_of(bytes: &[u8]) -> (Array, Arc<AtomicUsize>) {
    utf8_shifted(bytes, 0)
}

#[test]
fn misaligned_offsets_are_refused_before_arrow_rs_reads_them() {
    let schema = SchemaDef::new("u").unwrap().export().unwrap();
    let (array, drops) = utf8_shifted(b"ok", 1);
    let Err(ArrowRsError::ArrowRs(error)) = import_array(schema.view(), array) else {
        panic!("misaligned offsets are refused")
    };
    assert!(error.to_string().contains("aligned"), "{error}");
    assert_eq!(drops.load(Ordering::SeqCst), 1, "released once on refusal");
}

#[test]
fn values_arrow_rs_would_trust_are_checked_before_it_sees_them() {
    // Structurally valid, but not UTF-8: arrow-rs's safe `&str` accessors would hand it out.
    let schema = SchemaDef::new("u").unwrap().export().unwrap();
    let (array, drops) = utf8_of(b"\xff\xfe");
    let Err(ArrowRsError::ArrowRs(error)) = import_array(schema.view(), array) else {
        panic!("invalid UTF-8 is refused")
    };
    assert!(error.to_string().to_lowercase().contains("utf"), "{error}");
    assert_eq!(drops.load(Ordering::SeqCst), 1, "released once on refusal");
    let (array, drops) = utf8_of("ok".as_bytes());
    let back = import_array(schema.view(), array).unwrap();
    assert_eq!(
        back.as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .value(0),
        "ok"
    );
    drop(back);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn a_schema_arrow_rs_rejects_is_its_error_and_loses_nothing() {
    // Valid for the C Data Interface (metadata values are bytes), not for arrow-rs (strings).
    let schema = SchemaDef::new("u")
        .unwrap()
        .with_metadata("note", b"\xff")
        .export()
        .unwrap();
    let (array, drops) = utf8_of(b"x");
    let Err(ArrowRsError::ArrowRs(error)) = import_array(schema.view(), array) else {
        panic!("refused by arrow-rs")
    };
    assert!(error.to_string().contains("utf-8"), "{error}");
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn a_struct_with_null_rows_is_no_record_batch_and_no_panic() {
    let column: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    let nulls = arrow_buffer::NullBuffer::from(vec![true, false]);
    let structs = StructArray::new(
        vec![Field::new("n", DataType::Int32, false)].into(),
        vec![column],
        Some(nulls),
    );
    let (schema, ours) = export_array(&structs).unwrap();
    let Err(ArrowRsError::ArrowRs(error)) = import_record_batch(schema.view(), ours) else {
        panic!("refused")
    };
    assert!(error.to_string().contains("null rows"), "{error}");
}

#[test]
fn schema_metadata_crosses_with_batches_and_streams() {
    let batch = batch(vec![1, 2]);
    let metadata = std::collections::HashMap::from([("origin".to_string(), "test".to_string())]);
    let schema = Arc::new(batch.schema().as_ref().clone().with_metadata(metadata));
    let batch = batch.with_schema(schema.clone()).unwrap();
    let (ours_schema, ours) = export_record_batch(&batch).unwrap();
    let back = import_record_batch(ours_schema.view(), ours).unwrap();
    assert_eq!(back.schema(), schema);
    let reader = RecordBatchIterator::new([Ok(batch.clone())], schema.clone());
    let back = import_device_stream(export_device_reader(Box::new(reader)).unwrap()).unwrap();
    assert_eq!(back.schema(), schema);
}

#[test]
fn device_memory_the_host_cannot_read_is_refused() {
    use dlpack_abi::arrow::DeviceArray;
    use dlpack_abi::raw::ARROW_DEVICE_CUDA;

    let (array, drops) = counted(vec![1, 2]);
    let (schema, ours) = export_array(&array).unwrap();
    drop(array);
    // SAFETY: claims CUDA memory for CPU buffers that nothing reads: the import must refuse
    // on the device type alone, before any access.
    let on_gpu = unsafe { DeviceArray::new(ours, ARROW_DEVICE_CUDA, 0, ptr::null_mut()) };
    assert!(matches!(
        import_device_array(schema.view(), on_gpu),
        Err(ArrowRsError::Arrow(_))
    ));
    assert_eq!(drops.load(Ordering::SeqCst), 1, "released once on refusal");
}

#[test]
fn a_pending_event_is_refused_until_the_host_waited_on_it() {
    use dlpack_abi::arrow::{DeviceArray, HostWait};
    use dlpack_abi::raw::{ArrowDeviceType, ARROW_DEVICE_CUDA_HOST};

    /// A runtime whose (host-memory) device never has pending work.
    struct Immediate;
    // SAFETY: nothing writes the test's memory: the work is always complete.
    unsafe impl HostWait for Immediate {
        type Error = ();
        fn wait_host(
            &self,
            _: ArrowDeviceType,
            _: i64,
            _: NonNull<std::ffi::c_void>,
        ) -> Result<(), ()> {
            Ok(())
        }
    }

    let mut event = 0u64;
    let pinned = |event: &mut u64| {
        let (schema, ours) = export_array(&Int64Array::from(vec![4, 5])).unwrap();
        // SAFETY: pinned host memory is host memory; the event outlives the array.
        let array = unsafe {
            DeviceArray::new(ours, ARROW_DEVICE_CUDA_HOST, 0, ptr::from_mut(event).cast())
        };
        (schema, array)
    };
    let (schema, array) = pinned(&mut event);
    assert!(matches!(
        import_device_array(schema.view(), array),
        Err(ArrowRsError::Arrow(_))
    ));
    let (schema, mut array) = pinned(&mut event);
    array.wait_host(&Immediate).unwrap();
    let back = import_device_array(schema.view(), array).unwrap();
    assert_eq!(back.to_data().buffers()[0].typed_data::<i64>(), [4, 5]);
}

#[test]
fn a_dictionary_moved_out_outlives_its_released_parent() {
    use arrow_array::types::Int8Type;
    use arrow_array::DictionaryArray;

    let (values, drops) = counted(vec![10, 20]);
    let keys = arrow_array::Int8Array::from(vec![1, 0, 1]);
    let dictionary = DictionaryArray::<Int8Type>::try_new(keys, Arc::new(values)).unwrap();
    let (schema, ours) = export_array(&dictionary).unwrap();
    drop(dictionary);
    let mut parent: ArrowArray = ours.into_raw();
    // A consumer moves the dictionary out (a bitwise copy, the original marked released) and
    // releases the indices.
    // SAFETY: `parent` is a live dictionary-encoded array.
    let mut moved: ArrowArray = unsafe { ptr::read(parent.dictionary) };
    // SAFETY: as above.
    unsafe { (*parent.dictionary).release = None };
    let release = parent.release.expect("a live array");
    // SAFETY: releasing the parent we own, once.
    unsafe { release(&mut parent) };
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "the moved dictionary holds the values"
    );
    let values_schema = schema.view().dictionary().unwrap();
    // SAFETY: the moved dictionary, ours to own, of `values_schema`'s type.
    let values = unsafe { Array::from_raw(&mut moved, values_schema) }.unwrap();
    let view = values.view(values_schema).unwrap();
    assert_eq!(view.values::<i64>().unwrap(), [10, 20]);
    drop(values);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}
