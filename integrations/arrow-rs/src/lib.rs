//! arrow-rs interop (feature `arrow-rs`): `ArrayRef`, `RecordBatch` and `RecordBatchReader` to
//! and from this crate's [`Array`], [`DeviceArray`], [`ArrayStream`](dlpack_abi::arrow::ArrayStream)
//! and [`DeviceArrayStream`](dlpack_abi::arrow::DeviceArrayStream), zero-copy, one call each.
//!
//! **Out of arrow-rs** ([`export_array`], [`export_device_array`], [`export_record_batch`],
//! [`export_reader`], [`export_device_reader`]): the schema is produced from arrow-rs's fields
//! ([`Schema::produce`](dlpack_abi::arrow::Schema::produce), one allocation per tree) and the array
//! built over arrow-rs's buffers ([`Array::from_parts`], which keeps arrow-rs's `ArrayData`
//! alive until the last node is released); both are then validated as any producer's are. They
//! are what arrow-rs's own C Data export (`to_ffi`) writes, struct for struct (tested), at
//! about 0.9x its cost for a record batch (BENCHMARKS.md). A device array or stream is on the
//! CPU (`kArrowCPU`, no event). arrow-rs has no C Device interface of its own; this is the way
//! to speak it.
//!
//! **Into arrow-rs** ([`import_array`], [`import_device_array`], [`import_record_batch`],
//! [`import_stream`], [`import_device_stream`]): a validated array is handed to arrow-rs's
//! `from_ffi_and_data_type`, which keeps the struct (and so the producer's buffers) alive for as
//! long as any arrow-rs buffer refers to it, and releases it once. arrow-rs's safe accessors
//! trust the values (UTF-8, offsets, view indices, dictionary keys, ...), which this crate's
//! structural validation does not read, so they are checked with arrow-rs's full validation
//! first: O(n) in the values, copying nothing. (arrow-rs copies a buffer that is not aligned
//! for its type; every producer that aligns its buffers, as the C Data Interface recommends,
//! is shared.) A device array must be host-readable with no pending `sync_event` (see
//! [`DeviceArray::wait_host`]). Streams become a [`StreamReader`], a
//! `RecordBatchReader` that validates each batch and passes a producer's error on with its
//! message.
//!
//! Errors are an [`InteropError`]: arrow-rs's, with its message, or this crate's. Nothing is
//! lost on either: every struct is released exactly once, on every path.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator};
//! use dlpack_abi::arrow_rs;
//!
//! let column: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]));
//! let batch = RecordBatch::try_from_iter([("n", column)])?;
//! // Out: a validated Arrow struct array sharing arrow-rs's buffers; and back in.
//! let (schema, array) = arrow_rs::export_record_batch(&batch)?;
//! assert_eq!(arrow_rs::import_record_batch(schema.view(), array)?, batch);
//! // A reader as a C Device stream (kArrowCPU), and a stream as a reader.
//! let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
//! let stream = arrow_rs::export_device_reader(Box::new(reader))?;
//! let batches = arrow_rs::import_device_stream(stream)?.collect::<Result<Vec<_>, _>>()?;
//! assert_eq!(batches, [batch]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![allow(unsafe_code)]

extern crate alloc;

/// `From` impls for errors that wrap others: `wraps! { Outer::Variant(Inner), ... }`.
#[allow(unused_macros)]
macro_rules! wraps {
    ($($outer:ident :: $variant:ident ($inner:ty)),+ $(,)?) => {$(
        impl From<$inner> for $outer {
            fn from(error: $inner) -> Self {
                Self::$variant(error)
            }
        }
    )+};
}

#[cfg(feature = "std")]
mod async_stream;
mod boundary;
mod export;
mod schema;
mod stream;

use core::fmt;
use core::mem::{align_of, size_of};
use core::ptr;

use arrow_array::ffi::{from_ffi_and_data_type, FFI_ArrowArray};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, RecordBatch, StructArray};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::Field;

use dlpack_abi::arrow::{
    Array, ArrayView, ArrowError, BridgeError, DataType, DeviceArray, ReadError, Schema, SchemaRef,
    StreamError, ValidationError,
};
use dlpack_abi::dlpack::VersionedTensor;
use dlpack_abi::raw::{ArrowArray, ArrowArrayStream, ArrowSchema};

#[cfg(feature = "std")]
pub use async_stream::AsyncBatchStream;
pub use boundary::{
    device_reader_from_raw, device_reader_into_raw, device_record_batch_from_raw,
    device_record_batch_into_raw, export_device_record_batch, import_device_record_batch,
    reader_from_raw, reader_into_raw, record_batch_from_raw, record_batch_into_raw,
};
pub use export::{export_array, export_device_array, export_field_array, export_record_batch};
pub use stream::{
    export_device_reader, export_reader, import_device_stream, import_stream, StreamReader,
};

// arrow-rs's FFI structs are `#[repr(C)]` mirrors of the same C structs as ours: moving one into
// the other is a bitwise move.
static_assertions::assert_eq_size!(FFI_ArrowSchema, ArrowSchema);
static_assertions::assert_eq_size!(FFI_ArrowArray, ArrowArray);
static_assertions::assert_eq_size!(FFI_ArrowArrayStream, ArrowArrayStream);
static_assertions::const_assert_eq!(align_of::<FFI_ArrowSchema>(), align_of::<ArrowSchema>());
static_assertions::const_assert_eq!(align_of::<FFI_ArrowArray>(), align_of::<ArrowArray>());
static_assertions::const_assert_eq!(
    align_of::<FFI_ArrowArrayStream>(),
    align_of::<ArrowArrayStream>()
);
const _: () = assert!(size_of::<ArrowArray>() == 80 || size_of::<usize>() != 8);

/// Why an exchange with arrow-rs failed: arrow-rs refused (its own error, message included), or
/// this crate did. Whatever was handed over has been released, exactly once.
///
/// ```
/// use dlpack_abi_arrow_rs::InteropError;
/// let error = InteropError::from(arrow_schema::ArrowError::SchemaError("no such type".into()));
/// assert_eq!(error.to_string(), "arrow-rs: Schema error: no such type");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum InteropError {
    /// arrow-rs refused, or its reader failed.
    ArrowRs(arrow_schema::ArrowError),
    /// This crate refused what arrow-rs produced, or what it was asked to hand over.
    Arrow(ArrowError),
    /// A stream of this crate's failed: its producer's code and message, or a refused item.
    Stream(StreamError),
}

impl fmt::Display for InteropError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ArrowRs(error) => write!(f, "arrow-rs: {error}"),
            Self::Arrow(error) => write!(f, "{error}"),
            Self::Stream(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for InteropError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::ArrowRs(error) => Some(error),
            Self::Arrow(error) => Some(error),
            Self::Stream(error) => Some(error),
        }
    }
}

impl From<arrow_schema::ArrowError> for InteropError {
    fn from(error: arrow_schema::ArrowError) -> Self {
        Self::ArrowRs(error)
    }
}

impl From<ArrowError> for InteropError {
    fn from(error: ArrowError) -> Self {
        Self::Arrow(error)
    }
}

impl From<ValidationError> for InteropError {
    fn from(error: ValidationError) -> Self {
        Self::Arrow(error.into())
    }
}

impl From<ReadError> for InteropError {
    fn from(error: ReadError) -> Self {
        Self::Arrow(error.into())
    }
}

impl From<BridgeError> for InteropError {
    fn from(error: BridgeError) -> Self {
        Self::Arrow(error.into())
    }
}

impl From<StreamError> for InteropError {
    fn from(error: StreamError) -> Self {
        Self::Stream(error)
    }
}

/// An arrow-rs schema (a record batch's) as this crate's schema: a struct of its fields, with
/// its metadata, as arrow-rs's own C Data export writes it (the `__arrow_c_schema__` of a table).
///
/// # Errors
/// [`InteropError::Arrow`] when the schema breaks the C Data Interface (a name with a NUL byte).
///
/// ```
/// use arrow_schema::{DataType, Field, Schema};
///
/// let schema = Schema::new(vec![Field::new("n", DataType::Int64, false)]);
/// let ours = dlpack_abi_arrow_rs::export_schema(&schema)?;
/// assert_eq!(ours.view().format(), b"+s");
/// assert_eq!(dlpack_abi_arrow_rs::import_schema(ours.view())?, schema);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_schema(schema: &arrow_schema::Schema) -> Result<Schema, InteropError> {
    Ok(schema::of_schema(schema)?)
}

/// An arrow-rs field as this crate's schema: its type, name, nullability and metadata.
///
/// # Errors
/// As [`export_schema`].
///
/// ```
/// use arrow_schema::{DataType, Field};
///
/// let field = Field::new("x", DataType::Float32, true);
/// let ours = dlpack_abi_arrow_rs::export_field(&field)?;
/// assert_eq!((ours.view().format(), ours.view().name()), (&b"f"[..], Some("x")));
/// assert_eq!(dlpack_abi_arrow_rs::import_field(ours.view())?, field);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_field(field: &Field) -> Result<Schema, InteropError> {
    Ok(schema::of_field(field)?)
}

/// This crate's schema (validated, read and not taken) as an arrow-rs field.
///
/// # Errors
/// [`InteropError::ArrowRs`] when arrow-rs has no type for it (an extension it cannot read, a
/// format newer than it).
///
/// ```
/// use dlpack_abi::arrow::SchemaDef;
///
/// let ours = SchemaDef::new("l")?.with_name("n").export()?;
/// let field = dlpack_abi_arrow_rs::import_field(ours.view())?;
/// assert_eq!((field.name().as_str(), field.data_type()), ("n", &arrow_schema::DataType::Int64));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_field(schema: SchemaRef<'_>) -> Result<Field, InteropError> {
    field_of(schema)
}

/// This crate's struct schema (a record batch's or a stream's) as an arrow-rs schema: one field
/// per child, and the root's metadata.
///
/// # Errors
/// [`InteropError::ArrowRs`] when the schema is not a struct (`InvalidArgumentError`), or as
/// [`import_field`].
///
/// ```
/// use dlpack_abi::arrow::SchemaDef;
///
/// let ours = SchemaDef::new("+s")?.with_child(SchemaDef::new("u")?.with_name("name")).export()?;
/// let schema = dlpack_abi_arrow_rs::import_schema(ours.view())?;
/// assert_eq!(schema.field(0).name(), "name");
/// assert!(dlpack_abi_arrow_rs::import_schema(SchemaDef::new("u")?.export()?.view()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_schema(schema: SchemaRef<'_>) -> Result<arrow_schema::Schema, InteropError> {
    let field = field_of(schema)?;
    match field.data_type() {
        arrow_schema::DataType::Struct(fields) => Ok(arrow_schema::Schema::new_with_metadata(
            fields.clone(),
            field.metadata().clone(),
        )),
        other => Err(
            arrow_schema::ArrowError::InvalidArgumentError(alloc::format!(
                "a schema of record batches is a struct, not {other}"
            ))
            .into(),
        ),
    }
}

/// Hands this crate's array to arrow-rs with its field (name, nullability, metadata), zero-copy.
///
/// # Errors
/// As [`import_array`].
///
/// ```
/// use arrow_array::Int32Array;
/// use arrow_schema::{DataType, Field};
///
/// let field = Field::new("n", DataType::Int32, true);
/// let (schema, array) = dlpack_abi_arrow_rs::export_field_array(&field, &Int32Array::from(vec![1]))?;
/// let (back_field, back) = dlpack_abi_arrow_rs::import_field_array(schema.view(), array)?;
/// assert_eq!((back_field, back.len()), (field, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_field_array(
    schema: SchemaRef<'_>,
    array: Array,
) -> Result<(Field, ArrayRef), InteropError> {
    check_typed_reads(array.view(schema)?)?;
    let field = field_of(schema)?;
    let array = hand_over(array.into_raw(), field.clone())?;
    Ok((field, array))
}

/// An arrow-rs `arrow.fixed_shape_tensor` array (a `FixedSizeList` whose field carries the
/// extension) as a DLPack tensor, zero-copy: the first dimension is the array's length, the
/// rest the extension's shape (a `permutation` becomes strides). Read-only, as Arrow data is.
///
/// The field may be built the typed way (`Field::with_extension_type(FixedShapeTensor::try_new(..))`,
/// arrow-schema's `canonical_extension_types` feature, whose metadata spells `permutations` and
/// writes `null` for absent keys) or carry the metadata pyarrow and Arrow C++ write (the key
/// `permutation`, a nullable item): both are read. See [`TensorShape::parse`](dlpack_abi::arrow::TensorShape::parse).
///
/// # Errors
/// [`InteropError::Arrow`] with a [`BridgeError`] for arrays a tensor
/// cannot describe (nulls, an element type DLPack has no code for, a field without the
/// extension); otherwise as [`export_field_array`].
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Arc;
/// use arrow_array::{FixedSizeListArray, Float32Array};
/// use arrow_schema::{DataType, Field};
///
/// let values = Float32Array::from((0..12).map(|i| i as f32).collect::<Vec<_>>());
/// let item = Arc::new(Field::new("item", DataType::Float32, false));
/// let tensors = FixedSizeListArray::new(item.clone(), 6, Arc::new(values), None);
/// let field = Field::new("t", DataType::FixedSizeList(item, 6), false).with_metadata(HashMap::from([
///     ("ARROW:extension:name".to_string(), "arrow.fixed_shape_tensor".to_string()),
///     ("ARROW:extension:metadata".to_string(), r#"{"shape":[2,3]}"#.to_string()),
/// ]));
/// let tensor = dlpack_abi_arrow_rs::fixed_shape_tensor_to_dlpack(&field, &tensors)?;
/// assert_eq!(tensor.view().shape(), [2, 2, 3]);
/// assert_eq!(tensor.view().get::<f32>(&[1, 0, 2])?, 8.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fixed_shape_tensor_to_dlpack(
    field: &Field,
    array: &dyn arrow_array::Array,
) -> Result<VersionedTensor, InteropError> {
    let (schema, array) = export_field_array(field, array)?;
    Ok(DeviceArray::from_cpu(array).into_tensor(schema.view())?)
}

/// A DLPack tensor (of at least one dimension) as an arrow-rs `arrow.fixed_shape_tensor` array
/// and its field (a primitive array for one dimension), zero-copy: the tensor's deleter runs
/// when arrow-rs lets go of the last buffer.
///
/// The field is one arrow-rs's canonical `FixedShapeTensor` accepts
/// (`field.try_extension_type::<FixedShapeTensor>()`): metadata `{"shape":[...]}` and a
/// non-nullable item named `item`, which pyarrow imports too. A `kDLBool` tensor is
/// `arrow.bool8` with empty metadata, as arrow-rs's `Bool8` requires.
///
/// # Errors
/// [`InteropError::Arrow`] with a [`BridgeError`] for tensors Arrow
/// cannot describe (0-d, device memory arrow-rs cannot read, element types Arrow has no format
/// for); otherwise as [`import_field_array`].
///
/// ```
/// use arrow_array::cast::AsArray;
/// use dlpack_abi::dlpack::Export;
///
/// let tensor = Export::new(vec![1i16, 2, 3, 4, 5, 6], &[3, 2]).finish()?;
/// let (field, array) = dlpack_abi_arrow_rs::dlpack_to_fixed_shape_tensor(tensor)?;
/// assert_eq!(field.extension_type_name(), Some("arrow.fixed_shape_tensor"));
/// assert_eq!(array.as_fixed_size_list().value_length(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn dlpack_to_fixed_shape_tensor(
    tensor: VersionedTensor,
) -> Result<(Field, ArrayRef), InteropError> {
    let (layout, array) = DeviceArray::from_tensor(tensor)?;
    let schema = layout.export()?;
    let (field, array) = import_field_array_of_device(schema.view(), array)?;
    Ok((field, array))
}

/// [`import_device_array`] for an array whose `sync_event` the caller has waited on: its
/// buffers must still be memory the host can read.
///
/// # Safety
/// The caller has waited on the array's `sync_event` (for example with `cudaEventSynchronize`),
/// so that the host observes the producer's writes.
///
/// # Errors
/// As [`import_device_array`], except for the event.
///
/// ```
/// use arrow_array::Int64Array;
///
/// let (schema, array) = dlpack_abi_arrow_rs::export_device_array(&Int64Array::from(vec![1]))?;
/// // SAFETY: a CPU array has no event to wait on.
/// let back = unsafe { dlpack_abi_arrow_rs::import_device_array_synchronized(schema.view(), array) }?;
/// assert_eq!(back.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub unsafe fn import_device_array_synchronized(
    schema: SchemaRef<'_>,
    array: DeviceArray,
) -> Result<ArrayRef, InteropError> {
    import_device(schema, array, true).map(|(_, array)| array)
}

/// [`import_field_array`] for a device array the host can read.
fn import_field_array_of_device(
    schema: SchemaRef<'_>,
    array: DeviceArray,
) -> Result<(Field, ArrayRef), InteropError> {
    import_device(schema, array, false)
}

/// A device array into arrow-rs: host-readable memory, and no pending event unless `waited`.
fn import_device(
    schema: SchemaRef<'_>,
    array: DeviceArray,
    waited: bool,
) -> Result<(Field, ArrayRef), InteropError> {
    check_typed_reads(array.view(schema)?)?;
    array.check_host_readable(waited)?;
    let field = field_of(schema)?;
    let array = hand_over(array.into_raw().array, field.clone())?;
    Ok((field, array))
}

/// Hands this crate's array (validated against `schema`) to arrow-rs, zero-copy: arrow-rs keeps
/// the struct, and with it the producer's buffers, until its last buffer goes.
///
/// # Errors
/// [`InteropError::Arrow`] when `array` was not imported with `schema`;
/// [`InteropError::ArrowRs`] when arrow-rs refuses the type. `array` has been released then.
///
/// ```
/// use arrow_array::{cast::AsArray, types::Int64Type, Int64Array};
///
/// let (schema, array) = dlpack_abi_arrow_rs::export_array(&Int64Array::from(vec![4, 5]))?;
/// let back = dlpack_abi_arrow_rs::import_array(schema.view(), array)?;
/// assert_eq!(back.as_primitive::<Int64Type>().values(), &[4, 5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_array(schema: SchemaRef<'_>, array: Array) -> Result<ArrayRef, InteropError> {
    // Only the schema the array was checked against says how large its buffers are.
    check_typed_reads(array.view(schema)?)?;
    let field = field_of(schema)?;
    hand_over(array.into_raw(), field)
}

/// Hands this crate's device array to arrow-rs, zero-copy, when the host can read it: a
/// host-accessible device type and no pending `sync_event` (wait on it with
/// [`DeviceArray::wait_host`] and a device runtime's [`HostWait`](dlpack_abi::arrow::HostWait), or
/// yourself, then use [`import_device_array_synchronized`]).
///
/// # Errors
/// [`ReadError::NotHostAccessible`] (in [`InteropError::Arrow`]) for device memory or a pending
/// event; otherwise as [`import_array`]. `array` has been released then.
///
/// ```
/// use arrow_array::{cast::AsArray, BooleanArray};
///
/// let (schema, array) = dlpack_abi_arrow_rs::export_device_array(&BooleanArray::from(vec![true, false]))?;
/// let back = dlpack_abi_arrow_rs::import_device_array(schema.view(), array)?;
/// assert!(back.as_boolean().value(0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_device_array(
    schema: SchemaRef<'_>,
    array: DeviceArray,
) -> Result<ArrayRef, InteropError> {
    import_field_array_of_device(schema, array).map(|(_, array)| array)
}

/// Hands this crate's struct array (validated against `schema`) to arrow-rs as a record batch,
/// one column per child.
///
/// # Errors
/// As [`import_array`], and [`InteropError::ArrowRs`] when the array is not a struct array.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int32Array, RecordBatch};
///
/// let column: ArrayRef = Arc::new(Int32Array::from(vec![7, 8, 9]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// let (schema, array) = dlpack_abi_arrow_rs::export_record_batch(&batch)?;
/// let back = dlpack_abi_arrow_rs::import_record_batch(schema.view(), array)?;
/// assert_eq!(back, batch);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_record_batch(
    schema: SchemaRef<'_>,
    array: Array,
) -> Result<RecordBatch, InteropError> {
    let field = field_of(schema)?;
    let array = import_array(schema, array)?;
    record_batch_of(&field, array.as_ref())
}

/// The record batch of a struct array imported with `field`, whose metadata is the batch
/// schema's.
fn record_batch_of(
    field: &Field,
    array: &dyn arrow_array::Array,
) -> Result<RecordBatch, InteropError> {
    let batch = batch_of(array)?;
    let with_metadata = arrow_schema::Schema::new_with_metadata(
        batch.schema().fields().clone(),
        field.metadata().clone(),
    );
    Ok(batch.with_schema(alloc::sync::Arc::new(with_metadata))?)
}

/// A record batch from a struct array (its columns and their fields).
fn batch_of(array: &dyn arrow_array::Array) -> Result<RecordBatch, InteropError> {
    let Some(columns) = array.as_any().downcast_ref::<StructArray>() else {
        return Err(
            arrow_schema::ArrowError::InvalidArgumentError(alloc::format!(
                "a record batch needs a struct array, not {}",
                array.data_type()
            ))
            .into(),
        );
    };
    // A record batch has no top-level nulls (arrow-rs asserts it).
    let nulls = arrow_array::Array::null_count(columns);
    if nulls > 0 {
        return Err(
            arrow_schema::ArrowError::InvalidArgumentError(alloc::format!(
                "a record batch cannot come from a struct array with {nulls} null rows"
            ))
            .into(),
        );
    }
    Ok(RecordBatch::from(columns))
}

/// The arrow-rs field of a schema this crate validated (read, not taken).
fn field_of(schema: SchemaRef<'_>) -> Result<Field, InteropError> {
    let raw = ptr::from_ref(schema.raw()).cast::<FFI_ArrowSchema>();
    // SAFETY: an `ArrowSchema` is an `FFI_ArrowSchema` (layouts asserted above), validated and
    // alive for the borrow; arrow-rs only reads it here.
    Ok(Field::try_from(unsafe { &*raw })?)
}

/// Refuses the buffers arrow-rs's import reads through typed pointers before it can check or
/// realign anything (the last offset of `utf8`/`binary` and their large variants, to size the
/// data buffer; the variadic buffer sizes of view types) when they are not aligned for their
/// type: a misaligned read is undefined behaviour there. The C Data Interface asks producers to
/// align buffers; this is the check that a malformed one did. Every node, children and
/// dictionaries included.
fn check_typed_reads(view: ArrayView<'_>) -> Result<(), InteropError> {
    let read = match view.data_type() {
        DataType::Utf8 | DataType::Binary => Some((1, align_of::<i32>())),
        DataType::LargeUtf8 | DataType::LargeBinary => Some((1, align_of::<i64>())),
        data_type if data_type.has_variadic_buffers() => view
            .n_buffers()
            .checked_sub(1)
            .map(|last| (last, align_of::<i64>())),
        _ => None,
    };
    if let Some((index, align)) = read {
        let misaligned = view
            .buffer(index)
            .is_some_and(|start| !start.is_null() && (start as usize) % align != 0);
        if misaligned {
            return Err(
                arrow_schema::ArrowError::InvalidArgumentError(alloc::format!(
                    "buffer {index} of a {:?} array is not aligned to {align} bytes, as arrow-rs \
                 needs to read it",
                    core::str::from_utf8(view.schema().format()).unwrap_or("?")
                ))
                .into(),
            );
        }
    }
    for child in view.children() {
        check_typed_reads(child)?;
    }
    if let Some(dictionary) = view.dictionary() {
        check_typed_reads(dictionary)?;
    }
    Ok(())
}

/// Moves a validated array struct into arrow-rs, which releases it when its last buffer goes
/// (or at once, on error).
///
/// arrow-rs's import trusts the values (it builds its arrays without validation), and its safe
/// accessors rely on them: UTF-8, offsets in order and in bounds, view buffer indices,
/// dictionary keys, union type ids, run ends. This crate's validation is structural (it reads
/// no data), so the values are checked here, with arrow-rs's own full validation, before any
/// arrow-rs array exists: O(n) in the values, and what makes this function safe.
fn hand_over(raw: ArrowArray, field: Field) -> Result<ArrayRef, InteropError> {
    // SAFETY: an `ArrowArray` is an `FFI_ArrowArray` (layouts asserted above); the struct is
    // moved, so its `release` runs once, from arrow-rs.
    let exported = unsafe { core::mem::transmute::<ArrowArray, FFI_ArrowArray>(raw) };
    // SAFETY: the array was validated against the schema `field` was read from: its buffers
    // are as large as the type needs, in CPU memory, alive until release. The values are not
    // trusted: `validate_full` checks them before the data is used (on error `data` is dropped
    // and the struct released, once).
    let data = unsafe { from_ffi_and_data_type(exported, field.data_type().clone()) }?;
    data.validate_full()?;
    Ok(arrow_array::make_array(data))
}
