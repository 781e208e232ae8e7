//! Record batches over the C Device interface and every raw C boundary in one call: round trips
//! (the same buffers), and every struct released exactly once on every path, refusals included.

use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchIterator, RecordBatchReader};
use dlpack_abi::arrow::DeviceArray;
use dlpack_abi::raw::{ArrowDeviceArray, ArrowSchema, ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA};
use dlpack_abi_arrow_rs::{
    device_reader_from_raw, device_reader_into_raw, device_record_batch_from_raw,
    device_record_batch_into_raw, export_device_record_batch, export_record_batch,
    import_device_record_batch, reader_from_raw, reader_into_raw, record_batch_from_raw,
    record_batch_into_raw, ArrowRsError,
};

use super::counted;

/// A one-column batch over a counted buffer, and the buffer's drop counter.
fn counted_batch(values: Vec<i64>) -> (RecordBatch, Arc<std::sync::atomic::AtomicUsize>) {
    let (column, drops) = counted(values);
    let column: ArrayRef = Arc::new(column);
    (RecordBatch::try_from_iter([("n", column)]).unwrap(), drops)
}

fn buffer_address(batch: &RecordBatch) -> usize {
    batch.column(0).to_data().buffers()[0].as_ptr() as usize
}

#[test]
fn device_batches_round_trip_zero_copy_and_free_once() {
    let (batch, drops) = counted_batch(vec![1, 2, 3]);
    let address = buffer_address(&batch);
    let (schema, array) = export_device_record_batch(&batch).unwrap();
    assert_eq!(array.device_type(), ARROW_DEVICE_CPU);
    drop(batch);
    let back = import_device_record_batch(schema.view(), array).unwrap();
    assert_eq!(buffer_address(&back), address);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop((schema, back));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn raw_batches_cross_in_one_call_each_way() {
    let (batch, drops) = counted_batch(vec![4, 5]);
    let address = buffer_address(&batch);
    let (mut schema, mut array) = record_batch_into_raw(&batch).unwrap();
    drop(batch);
    // SAFETY: the structs were just produced and are handed over once.
    let back = unsafe { record_batch_from_raw(&mut schema, &mut array) }.unwrap();
    assert!(
        schema.release.is_none() && array.release.is_none(),
        "moved out"
    );
    assert_eq!(buffer_address(&back), address);
    drop(back);
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    let (batch, drops) = counted_batch(vec![6]);
    let (mut schema, mut array) = device_record_batch_into_raw(&batch).unwrap();
    assert_eq!(array.device_type, ARROW_DEVICE_CPU);
    // SAFETY: as above.
    let back = unsafe { device_record_batch_from_raw(&mut schema, &mut array) }.unwrap();
    assert_eq!(back, batch);
    drop((batch, back));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn raw_readers_cross_in_one_call_each_way() {
    let (batch, drops) = counted_batch(vec![7, 8]);
    let schema = batch.schema();
    let reader = RecordBatchIterator::new([Ok(batch.clone())], schema.clone());
    drop(batch);
    let mut stream = reader_into_raw(Box::new(reader)).unwrap();
    // SAFETY: a producer's stream, handed over once.
    let back = unsafe { reader_from_raw(&mut stream) }.unwrap();
    assert!(stream.release.is_none(), "moved out");
    assert_eq!(back.schema(), schema);
    let batches: Vec<RecordBatch> = back.collect::<Result<_, _>>().unwrap();
    assert_eq!(batches.len(), 1);
    drop(batches);
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    let (batch, drops) = counted_batch(vec![9]);
    let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
    let mut stream = device_reader_into_raw(Box::new(reader)).unwrap();
    // SAFETY: as above.
    let mut back = unsafe { device_reader_from_raw(&mut stream) }.unwrap();
    assert_eq!(back.next().unwrap().unwrap(), batch);
    assert!(back.next().is_none());
    drop((batch, back));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn refusals_release_both_structs_once() {
    // A schema that breaks the C Data Interface (no format): refused, and the array released
    // too, unread.
    let (batch, drops) = counted_batch(vec![1]);
    let (mut schema, mut array) = record_batch_into_raw(&batch).unwrap();
    drop(batch);
    schema.format = ptr::null();
    // SAFETY: handed over once (the schema is malformed on purpose: import moves it out,
    // refuses it before reading its format, and releases it; its release reads no format).
    let error = unsafe { record_batch_from_raw(&mut schema, &mut array) }.unwrap_err();
    assert!(matches!(error, ArrowRsError::Arrow(_)), "{error}");
    assert!(
        schema.release.is_none() && array.release.is_none(),
        "both released"
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // The same for a device array.
    let (batch, drops) = counted_batch(vec![2]);
    let (mut schema, mut array) = device_record_batch_into_raw(&batch).unwrap();
    drop(batch);
    schema.format = ptr::null();
    // SAFETY: as above.
    let error = unsafe { device_record_batch_from_raw(&mut schema, &mut array) }.unwrap_err();
    assert!(matches!(error, ArrowRsError::Arrow(_)), "{error}");
    assert!(schema.release.is_none() && array.array.release.is_none());
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // Device memory the host cannot read: refused after validation, both released once.
    let (batch, drops) = counted_batch(vec![3]);
    let (schema, array) = export_record_batch(&batch).unwrap();
    drop(batch);
    // SAFETY: claims CUDA memory for CPU buffers that nothing reads: the import refuses on the
    // device type alone.
    let on_gpu = unsafe { DeviceArray::new(array, ARROW_DEVICE_CUDA, 0, ptr::null_mut()) };
    let (mut raw_schema, mut raw_gpu): (ArrowSchema, ArrowDeviceArray) =
        (schema.into_raw(), on_gpu.into_raw());
    // SAFETY: handed over once.
    let error = unsafe { device_record_batch_from_raw(&mut raw_schema, &mut raw_gpu) };
    assert!(matches!(error, Err(ArrowRsError::Arrow(_))));
    assert_eq!(drops.load(Ordering::SeqCst), 1, "released once on refusal");
}
