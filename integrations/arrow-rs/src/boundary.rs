//! Record batches over the C Device interface, and every crossing of a raw C boundary in one
//! call: a batch, a device batch, a reader and a device reader, each way.
//!
//! **Values** ([`export_device_record_batch`], [`import_device_record_batch`]): the device twins
//! of [`export_record_batch`] and [`import_record_batch`](super::import_record_batch).
//!
//! **Raw structs**, for a function that C calls with out-parameters or hands structs to: out,
//! [`record_batch_into_raw`], [`device_record_batch_into_raw`], [`reader_into_raw`] and
//! [`device_reader_into_raw`] return the C structs to write into the caller's (who then owns
//! them and calls their `release`); in, [`record_batch_from_raw`],
//! [`device_record_batch_from_raw`], [`reader_from_raw`] and [`device_reader_from_raw`] move the
//! caller's structs out (marking them released), validate them, and hand them to arrow-rs. On
//! every path, every struct is released exactly once: by arrow-rs when its last buffer goes, or
//! at once when it is refused.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{ArrayRef, Int32Array, RecordBatch};
//! use dlpack_abi::raw::{ArrowDeviceArray, ArrowSchema};
//!
//! /// What a C caller would call: fills its out-parameters with a device batch.
//! fn produce(schema_out: &mut ArrowSchema, array_out: &mut ArrowDeviceArray) -> i32 {
//!     let column: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
//!     let Ok(batch) = RecordBatch::try_from_iter([("n", column)]) else { return 22 };
//!     match dlpack_abi_arrow_rs::device_record_batch_into_raw(&batch) {
//!         Ok((schema, array)) => (*schema_out, *array_out) = (schema, array),
//!         Err(_) => return 22,
//!     }
//!     0
//! }
//!
//! // Released (all-zero) structs, as a C caller passes them.
//! let mut schema: ArrowSchema = bytemuck::Zeroable::zeroed();
//! let mut array: ArrowDeviceArray = bytemuck::Zeroable::zeroed();
//! assert_eq!(produce(&mut schema, &mut array), 0);
//! // SAFETY: both structs were filled by a producer and are handed over once.
//! let batch = unsafe { dlpack_abi_arrow_rs::device_record_batch_from_raw(&mut schema, &mut array) }?;
//! assert_eq!((batch.num_rows(), batch.schema().field(0).name().as_str()), (3, "n"));
//! assert!(schema.release.is_none() && array.array.release.is_none()); // moved out
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![allow(unsafe_code)]

use alloc::boxed::Box;

use arrow_array::{RecordBatch, RecordBatchReader};

use crate::import::{import_field_array_of_device, record_batch_of};
use crate::{
    export_device_reader, export_reader, export_record_batch, import_device_stream,
    import_record_batch, import_stream, ArrowRsError, StreamReader,
};
use dlpack_abi::arrow::{Array, ArrayStream, DeviceArray, DeviceArrayStream, Schema, SchemaRef};
use dlpack_abi::raw::{
    ArrowArray, ArrowArrayStream, ArrowDeviceArray, ArrowDeviceArrayStream, ArrowSchema,
};

/// Exports a record batch as a struct array on the CPU device (`kArrowCPU`, no event): the C
/// Device interface's twin of [`export_record_batch`].
///
/// # Errors
/// As [`export_record_batch`].
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Float64Array, RecordBatch};
///
/// let column: ArrayRef = Arc::new(Float64Array::from(vec![0.5, 1.5]));
/// let batch = RecordBatch::try_from_iter([("x", column)])?;
/// let (schema, array) = dlpack_abi_arrow_rs::export_device_record_batch(&batch)?;
/// assert_eq!((array.device_type(), array.len()), (dlpack_abi::raw::ARROW_DEVICE_CPU, 2));
/// assert_eq!(schema.view().format(), b"+s");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_device_record_batch(
    batch: &RecordBatch,
) -> Result<(Schema, DeviceArray), ArrowRsError> {
    let (schema, array) = export_record_batch(batch)?;
    Ok((schema, DeviceArray::from_cpu(array)))
}

/// Hands a device struct array (validated against `schema`) to arrow-rs as a record batch,
/// zero-copy, when the host can read it (as [`import_device_array`](super::import_device_array)
/// decides: host-accessible memory and no pending `sync_event`).
///
/// # Errors
/// As [`import_device_array`](super::import_device_array), and [`ArrowRsError::ArrowRs`] when
/// the array is not a struct array without nulls. `array` has been released then.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, StringArray, RecordBatch};
///
/// let column: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
/// let batch = RecordBatch::try_from_iter([("s", column)])?;
/// let (schema, array) = dlpack_abi_arrow_rs::export_device_record_batch(&batch)?;
/// let back = dlpack_abi_arrow_rs::import_device_record_batch(schema.view(), array)?;
/// assert_eq!(back, batch);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_device_record_batch(
    schema: SchemaRef<'_>,
    array: DeviceArray,
) -> Result<RecordBatch, ArrowRsError> {
    let (field, array) = import_field_array_of_device(schema, array)?;
    record_batch_of(&field, array.as_ref())
}

/// A record batch as the raw C structs of the C Data Interface (a struct array and its
/// schema), for a caller's out-parameters: [`export_record_batch`] and `into_raw` in one call.
/// The caller owns both structs, and must call each one's `release` (or hand them to a consumer
/// who will).
///
/// # Errors
/// As [`export_record_batch`]; nothing is left to release then.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch};
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![4, 5]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let (mut schema, mut array) = dlpack_abi_arrow_rs::record_batch_into_raw(&batch)?;
/// // SAFETY: the structs were just produced and are handed over once.
/// let back = unsafe { dlpack_abi_arrow_rs::record_batch_from_raw(&mut schema, &mut array) }?;
/// assert_eq!(back, batch);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn record_batch_into_raw(
    batch: &RecordBatch,
) -> Result<(ArrowSchema, ArrowArray), ArrowRsError> {
    let (schema, array) = export_record_batch(batch)?;
    Ok((schema.into_raw(), array.into_raw()))
}

/// A record batch as the raw C structs of the C Device interface (a CPU device struct array and
/// its schema): [`export_device_record_batch`] and `into_raw` in one call. The caller owns both
/// structs.
///
/// # Errors
/// As [`export_record_batch`]; nothing is left to release then.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch};
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![4, 5]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let (mut schema, mut array) = dlpack_abi_arrow_rs::device_record_batch_into_raw(&batch)?;
/// assert_eq!((array.device_type, array.array.length), (dlpack_abi::raw::ARROW_DEVICE_CPU, 2));
/// // The caller owns them: release both (a consumer would).
/// unsafe { array.array.release.unwrap()(&mut array.array) };
/// unsafe { schema.release.unwrap()(&mut schema) };
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn device_record_batch_into_raw(
    batch: &RecordBatch,
) -> Result<(ArrowSchema, ArrowDeviceArray), ArrowRsError> {
    let (schema, array) = export_device_record_batch(batch)?;
    Ok((schema.into_raw(), array.into_raw()))
}

/// A reader as a raw C stream (`ArrowArrayStream`): [`export_reader`] and `into_raw` in one
/// call. The caller owns the stream.
///
/// # Errors
/// As [`export_reader`].
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator};
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
/// let mut stream = dlpack_abi_arrow_rs::reader_into_raw(Box::new(reader))?;
/// // SAFETY: the stream was just produced and is handed over once.
/// let batches: Vec<_> = unsafe { dlpack_abi_arrow_rs::reader_from_raw(&mut stream) }?.collect();
/// assert_eq!(batches.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn reader_into_raw(
    reader: Box<dyn RecordBatchReader + Send>,
) -> Result<ArrowArrayStream, ArrowRsError> {
    Ok(export_reader(reader)?.into_raw())
}

/// A reader as a raw C device stream (`ArrowDeviceArrayStream`, `kArrowCPU`):
/// [`export_device_reader`] and `into_raw` in one call. The caller owns the stream.
///
/// # Errors
/// As [`export_device_reader`].
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator};
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
/// let mut stream = dlpack_abi_arrow_rs::device_reader_into_raw(Box::new(reader))?;
/// assert_eq!(stream.device_type, dlpack_abi::raw::ARROW_DEVICE_CPU);
/// // SAFETY: the stream was just produced and is handed over once.
/// let mut batches = unsafe { dlpack_abi_arrow_rs::device_reader_from_raw(&mut stream) }?;
/// assert_eq!(batches.next().unwrap()?, batch);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn device_reader_into_raw(
    reader: Box<dyn RecordBatchReader + Send>,
) -> Result<ArrowDeviceArrayStream, ArrowRsError> {
    Ok(export_device_reader(reader)?.into_raw())
}

/// A record batch from a C producer's raw schema and struct array: `Schema::from_raw`,
/// `Array::from_raw` and [`import_record_batch`] in one call. Both structs are moved out (their
/// `release` set to NULL) whatever happens, and released exactly once: by arrow-rs when the
/// batch's last buffer goes, or before this returns an error.
///
/// # Safety
/// `schema` and `array` point to a schema and an array as the C Data Interface defines them
/// (released, or to be released by their `release` only), that the caller hands over; the array
/// was made for the schema's type.
///
/// # Errors
/// [`ArrowRsError::Arrow`] when either struct breaks the C Data Interface, or the array does
/// not match the schema; as [`import_record_batch`] otherwise.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch};
/// use dlpack_abi::raw::{ArrowArray, ArrowSchema};
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let (mut schema, mut array): (ArrowSchema, ArrowArray) = dlpack_abi_arrow_rs::record_batch_into_raw(&batch)?;
/// // SAFETY: a producer's structs, handed over once.
/// let back = unsafe { dlpack_abi_arrow_rs::record_batch_from_raw(&mut schema, &mut array) }?;
/// assert_eq!(back.num_rows(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub unsafe fn record_batch_from_raw(
    schema: *mut ArrowSchema,
    array: *mut ArrowArray,
) -> Result<RecordBatch, ArrowRsError> {
    // SAFETY: the caller hands over both structs (this function's contract).
    let schema = unsafe { schema_or_release(schema, array) }?;
    // SAFETY: the caller hands over an array by the C Data Interface, for this schema's type.
    let array = unsafe { Array::from_raw(array, schema.view()) }?;
    import_record_batch(schema.view(), array)
}

/// A record batch from a C producer's raw schema and device struct array: `Schema::from_raw`,
/// `DeviceArray::from_raw` and [`import_device_record_batch`] in one call. Both structs are
/// moved out whatever happens and released exactly once, as [`record_batch_from_raw`] says.
///
/// # Safety
/// As [`record_batch_from_raw`], for an `ArrowDeviceArray` (whose `sync_event`, if not NULL,
/// points to its device's event until release).
///
/// # Errors
/// As [`record_batch_from_raw`], and [`import_device_record_batch`]'s (device memory the host
/// cannot read, or a pending `sync_event`).
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, BooleanArray, RecordBatch};
///
/// let column: ArrayRef = Arc::new(BooleanArray::from(vec![true, false]));
/// let batch = RecordBatch::try_from_iter([("b", column)])?;
/// let (mut schema, mut array) = dlpack_abi_arrow_rs::device_record_batch_into_raw(&batch)?;
/// // SAFETY: a producer's structs, handed over once.
/// let back = unsafe { dlpack_abi_arrow_rs::device_record_batch_from_raw(&mut schema, &mut array) }?;
/// assert_eq!(back, batch);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub unsafe fn device_record_batch_from_raw(
    schema: *mut ArrowSchema,
    array: *mut ArrowDeviceArray,
) -> Result<RecordBatch, ArrowRsError> {
    // `array` is the first field of an `ArrowDeviceArray` (offset 0, asserted below): a pointer
    // to the device array is one to its array.
    let inner = array.cast::<ArrowArray>();
    // SAFETY: the caller hands over both structs (this function's contract).
    let schema = unsafe { schema_or_release(schema, inner) }?;
    // SAFETY: the caller hands over a device array by the C Device interface, for this type.
    let array = unsafe { DeviceArray::from_raw(array, schema.view()) }?;
    import_device_record_batch(schema.view(), array)
}

/// A `RecordBatchReader` from a C producer's raw stream: `ArrayStream::from_raw` and
/// [`import_stream`] in one call. The stream is moved out (its `release` set to NULL) and
/// released once, when the reader is dropped or refused.
///
/// # Safety
/// `stream` points to a stream as the C Stream Interface defines it, which the caller hands
/// over.
///
/// # Errors
/// [`ArrowRsError::Arrow`] when the stream breaks the C Stream Interface; as [`import_stream`].
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator};
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![9]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
/// let mut stream = dlpack_abi_arrow_rs::reader_into_raw(Box::new(reader))?;
/// // SAFETY: a producer's stream, handed over once.
/// let mut batches = unsafe { dlpack_abi_arrow_rs::reader_from_raw(&mut stream) }?;
/// assert_eq!(batches.next().unwrap()?, batch);
/// assert!(batches.next().is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub unsafe fn reader_from_raw(stream: *mut ArrowArrayStream) -> Result<StreamReader, ArrowRsError> {
    // SAFETY: forwarded from the caller.
    import_stream(unsafe { ArrayStream::from_raw(stream) }?)
}

/// A `RecordBatchReader` from a C producer's raw device stream: `DeviceArrayStream::from_raw`
/// and [`import_device_stream`] in one call. The stream is moved out and released once, when
/// the reader is dropped or refused.
///
/// # Safety
/// `stream` points to a device stream as the C Device Stream Interface defines it, which the
/// caller hands over.
///
/// # Errors
/// [`ArrowRsError::Arrow`] when the stream breaks the interface; as [`import_device_stream`].
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator};
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![9, 10]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
/// let mut stream = dlpack_abi_arrow_rs::device_reader_into_raw(Box::new(reader))?;
/// // SAFETY: a producer's stream, handed over once.
/// let batches = unsafe { dlpack_abi_arrow_rs::device_reader_from_raw(&mut stream) }?;
/// assert_eq!(batches.collect::<Result<Vec<_>, _>>()?, [batch]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub unsafe fn device_reader_from_raw(
    stream: *mut ArrowDeviceArrayStream,
) -> Result<StreamReader, ArrowRsError> {
    // SAFETY: forwarded from the caller.
    import_device_stream(unsafe { DeviceArrayStream::from_raw(stream) }?)
}

/// The handed-over schema, validated; when it is refused, `array` (NULL or handed over too) is
/// released at once, unread, so that neither struct is lost.
///
/// # Safety
/// `schema` as [`Schema::from_raw`] takes it; `array` NULL or an array by the C Data Interface
/// that the caller hands over.
unsafe fn schema_or_release(
    schema: *mut ArrowSchema,
    array: *mut ArrowArray,
) -> Result<Schema, ArrowRsError> {
    // SAFETY: forwarded from the caller.
    let refused = match unsafe { Schema::from_raw(schema) } {
        Ok(schema) => return Ok(schema),
        Err(error) => error,
    };
    if !array.is_null() {
        // SAFETY: the caller hands the array over too: released, unread.
        unsafe { release_array(array) };
    }
    Err(refused.into())
}

// The C Device interface puts the `ArrowArray` first (what `device_record_batch_from_raw` uses).
static_assertions::const_assert_eq!(core::mem::offset_of!(ArrowDeviceArray, array), 0);

/// Releases a handed-over array that cannot be imported (its schema was refused), once.
///
/// # Safety
/// `array` points to an array by the C Data Interface that the caller hands over.
unsafe fn release_array(array: *mut ArrowArray) {
    // SAFETY: the caller hands the struct over; reading its `release` field is reading a live
    // struct's field.
    let release = unsafe { (*array).release };
    if let Some(release) = release {
        // SAFETY: the producer's callback, called once on its own struct, which it marks
        // released (the C Data Interface's rule).
        unsafe { release(array) };
    }
}
