//! Streams: an arrow-rs `RecordBatchReader` out as dlpack-abi's streams, and dlpack-abi's
//! streams in as a `RecordBatchReader` that validates every batch.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::string::ToString;
use core::ptr;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::SchemaRef as ArrowRsSchema;

use crate::import::{batch_of, check_typed_reads, field_of, hand_over};
use crate::{export_record_batch, ArrowRsError};
use dlpack_abi::arrow::{
    errno, ArrayStream, DeviceArray, DeviceArrayStream, ProducerError, Schema, SchemaDef,
};
use dlpack_abi::raw::{ArrowArrayStream, ARROW_DEVICE_CPU};

/// Exports an arrow-rs reader as dlpack-abi's CPU stream: arrow-rs's own C stream, taken over.
/// Each batch is validated as it is read; the reader's errors reach the consumer with their
/// messages.
///
/// # Errors
/// [`ArrowRsError::Arrow`] when the stream arrow-rs made breaks the C Stream Interface.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator};
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
/// let mut stream = dlpack_abi_arrow_rs::export_reader(Box::new(reader))?;
/// assert_eq!(stream.next().unwrap()?.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_reader(
    reader: Box<dyn RecordBatchReader + Send>,
) -> Result<ArrayStream, ArrowRsError> {
    let mut exported = FFI_ArrowArrayStream::new(reader);
    let raw = ptr::from_mut(&mut exported).cast::<ArrowArrayStream>();
    // SAFETY: an `FFI_ArrowArrayStream` is an `ArrowArrayStream` (layouts asserted in the
    // module), made by arrow-rs by the C Stream Interface; `from_raw` moves it out and sets its
    // `release` to NULL, so dropping the husk does nothing.
    Ok(unsafe { ArrayStream::from_raw(raw) }?)
}

/// Exports an arrow-rs reader as dlpack-abi's device stream (`kArrowCPU`, no events): what a
/// C Device Stream consumer (`__arrow_c_device_stream__`, ...) takes, which arrow-rs cannot
/// make itself. Each batch is exported zero-copy and checked against the reader's schema; a
/// reader's error ends the stream with `EIO` and its message, a batch of another layout with
/// `EINVAL`.
///
/// # Errors
/// [`ArrowRsError::ArrowRs`] when arrow-rs cannot export the reader's schema;
/// [`ArrowRsError::Arrow`] when that export breaks the C Data Interface.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator};
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
/// let mut stream = dlpack_abi_arrow_rs::export_device_reader(Box::new(reader))?;
/// let array = stream.next().unwrap()?;
/// assert_eq!((array.device_type(), array.len()), (dlpack_abi::raw::ARROW_DEVICE_CPU, 3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_device_reader(
    reader: Box<dyn RecordBatchReader + Send>,
) -> Result<DeviceArrayStream, ArrowRsError> {
    let schema = crate::schema::of_schema(reader.schema().as_ref())?;
    let layout = SchemaDef::copy_of(schema.view());
    let layout_of_stream = layout.clone();
    let items = reader.map(move |batch| {
        let batch = batch.map_err(|error| failed(errno::EIO, &error))?;
        let (schema, array) = export_record_batch(&batch).map_err(|e| failed(errno::EINVAL, &e))?;
        // Read with the stream's schema from here on: it must have the batch's layout.
        let array = array
            .with_layout(schema.view(), layout_of_stream.clone())
            .map_err(|_| {
                let message = "a batch's schema has another layout than the reader's";
                ProducerError::new(errno::EINVAL, Some(message))
            })?;
        Ok(DeviceArray::from_cpu(array))
    });
    Ok(DeviceArrayStream::from_iter(
        layout,
        ARROW_DEVICE_CPU,
        items,
    )?)
}

/// A producer error with `error`'s message.
fn failed(code: i32, error: &dyn core::fmt::Display) -> ProducerError {
    ProducerError::new(code, Some(&error.to_string()))
}

/// dlpack-abi's stream (CPU or device) as an arrow-rs `RecordBatchReader`: each array is
/// validated, then handed to arrow-rs zero-copy as a record batch. A producer's error, or an
/// array dlpack-abi refuses, is the reader's error, with its message; the stream ends there.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator, RecordBatchReader};
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![5, 6]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
/// let stream = dlpack_abi_arrow_rs::export_device_reader(Box::new(reader))?;
/// let mut back = dlpack_abi_arrow_rs::import_device_stream(stream)?;
/// assert_eq!(back.schema(), batch.schema());
/// assert_eq!(back.next().unwrap()?, batch);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct StreamReader {
    source: Source,
    schema: Schema,
    arrow_rs_schema: ArrowRsSchema,
    done: bool,
}

/// The stream a [`StreamReader`] reads.
enum Source {
    Cpu(ArrayStream),
    Device(DeviceArrayStream),
}

/// Hands dlpack-abi's CPU stream to arrow-rs as a `RecordBatchReader` (its schema read now).
///
/// # Errors
/// The stream's error reading its schema; [`ArrowRsError::ArrowRs`] when arrow-rs refuses the
/// schema (a stream of anything but structs, say).
///
/// ```
/// use arrow_array::RecordBatchReader;
/// use dlpack_abi::arrow::{errno, Array, ArrayStream, ProducerError, SchemaDef};
///
/// let stream = ArrayStream::from_iter(
///     SchemaDef::new("+s")?.with_child(SchemaDef::new("l")?.with_name("n")),
///     [Err(ProducerError::new(errno::EIO, Some("disk gone")))],
/// )?;
/// let mut reader = dlpack_abi_arrow_rs::import_stream(stream)?;
/// assert_eq!(reader.schema().field(0).name(), "n");
/// let error = reader.next().unwrap().unwrap_err();
/// assert!(error.to_string().contains("disk gone"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_stream(mut stream: ArrayStream) -> Result<StreamReader, ArrowRsError> {
    let schema = stream.schema()?;
    let copy = SchemaDef::copy_of(schema).export()?;
    StreamReader::new(Source::Cpu(stream), copy)
}

/// Hands dlpack-abi's device stream to arrow-rs as a `RecordBatchReader`; its arrays must be
/// host-readable with no pending event, or the reader fails with
/// [`ReadError::NotHostAccessible`](dlpack_abi::arrow::ReadError::NotHostAccessible).
///
/// # Errors
/// As [`import_stream`].
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, RecordBatch, RecordBatchIterator, StringArray};
///
/// let column: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
/// let batch = RecordBatch::try_from_iter([("s", column)])?;
/// let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
/// let stream = dlpack_abi_arrow_rs::export_device_reader(Box::new(reader))?;
/// let batches: Vec<RecordBatch> =
///     dlpack_abi_arrow_rs::import_device_stream(stream)?.collect::<Result<_, _>>()?;
/// assert_eq!(batches, [batch]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_device_stream(mut stream: DeviceArrayStream) -> Result<StreamReader, ArrowRsError> {
    let schema = stream.schema()?;
    let copy = SchemaDef::copy_of(schema).export()?;
    StreamReader::new(Source::Device(stream), copy)
}

impl StreamReader {
    fn new(source: Source, schema: Schema) -> Result<Self, ArrowRsError> {
        let arrow_rs_schema = batch_schema(schema.view())?;
        Ok(Self {
            source,
            schema,
            arrow_rs_schema,
            done: false,
        })
    }

    /// The next batch, or the error that ends the stream.
    fn read(&mut self) -> Option<Result<RecordBatch, ArrowRsError>> {
        let array = match &mut self.source {
            Source::Cpu(stream) => stream.next().map(|item| {
                let array = item?;
                let schema = stream.schema()?;
                check_typed_reads(array.view(schema)?)?;
                Ok::<_, ArrowRsError>(array.into_raw())
            }),
            Source::Device(stream) => stream.next().map(|item| {
                let array = item?;
                let schema = stream.schema()?;
                check_typed_reads(array.view(schema)?)?;
                array.check_host_readable(false)?;
                Ok(array.into_raw().array)
            }),
        }?;
        Some(array.and_then(|raw| {
            let field = field_of(self.schema.view())?;
            let array = hand_over(raw, field)?;
            let batch = batch_of(array.as_ref())?;
            // The stream's own schema, metadata included (a batch's struct field has none).
            Ok(batch.with_schema(self.arrow_rs_schema.clone())?)
        }))
    }
}

impl Iterator for StreamReader {
    type Item = Result<RecordBatch, arrow_schema::ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.read();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item.map(|item| item.map_err(into_arrow_rs))
    }
}

impl RecordBatchReader for StreamReader {
    fn schema(&self) -> ArrowRsSchema {
        self.arrow_rs_schema.clone()
    }
}

/// The arrow-rs schema of the record batches a stream of struct arrays carries (the root's
/// metadata included).
pub(super) fn batch_schema(
    schema: dlpack_abi::arrow::SchemaRef<'_>,
) -> Result<ArrowRsSchema, ArrowRsError> {
    Ok(ArrowRsSchema::new(crate::import_schema(schema)?))
}

/// An interop error as arrow-rs's own: arrow-rs's as it was, ours (a producer's error, a
/// refused array) as an external error that keeps ours, message and all.
pub(super) fn into_arrow_rs(error: ArrowRsError) -> arrow_schema::ArrowError {
    match error {
        ArrowRsError::ArrowRs(error) => error,
        other => arrow_schema::ArrowError::ExternalError(Box::new(other)),
    }
}
