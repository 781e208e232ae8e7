//! Into arrow-rs: dlpack-abi's schemas, arrays, device arrays and DLPack tensors as arrow-rs
//! fields, schemas, arrays and record batches, zero-copy.
//!
//! A validated array is handed to arrow-rs's `from_ffi_and_data_type`, which keeps the struct
//! (and so the producer's buffers) alive for as long as any arrow-rs buffer refers to it, and
//! releases it once. arrow-rs's safe accessors trust the values, which dlpack-abi's structural
//! validation does not read, so they are checked with arrow-rs's full validation first
//! ([`hand_over`]).
#![allow(unsafe_code)]

use core::mem::align_of;
use core::ptr;

use arrow_array::ffi::{from_ffi_and_data_type, FFI_ArrowArray};
use arrow_array::{ArrayRef, RecordBatch, StructArray};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::Field;

use crate::ArrowRsError;
use dlpack_abi::arrow::{Array, ArrayView, DataType, DeviceArray, SchemaRef};
use dlpack_abi::dlpack::VersionedTensor;
use dlpack_abi::raw::ArrowArray;

/// dlpack-abi's schema (validated, read and not taken) as an arrow-rs field.
///
/// # Errors
/// [`ArrowRsError::ArrowRs`] when arrow-rs has no type for it (an extension it cannot read, a
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
pub fn import_field(schema: SchemaRef<'_>) -> Result<Field, ArrowRsError> {
    field_of(schema)
}

/// dlpack-abi's struct schema (a record batch's or a stream's) as an arrow-rs schema: one field
/// per child, and the root's metadata.
///
/// # Errors
/// [`ArrowRsError::ArrowRs`] when the schema is not a struct (`InvalidArgumentError`), or as
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
pub fn import_schema(schema: SchemaRef<'_>) -> Result<arrow_schema::Schema, ArrowRsError> {
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

/// Hands dlpack-abi's array to arrow-rs with its field (name, nullability, metadata), zero-copy.
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
) -> Result<(Field, ArrayRef), ArrowRsError> {
    check_typed_reads(array.view(schema)?)?;
    let field = field_of(schema)?;
    let array = hand_over(array.into_raw(), field.clone())?;
    Ok((field, array))
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
/// [`ArrowRsError::Arrow`] with a [`BridgeError`](dlpack_abi::arrow::BridgeError) for tensors Arrow
/// cannot describe (0-d, device memory arrow-rs cannot read, element types Arrow has no format
/// for); otherwise as [`import_field_array`].
///
/// ```
/// use arrow_array::cast::AsArray;
/// use dlpack_abi::dlpack::Export;
///
/// let tensor = Export::new(vec![1i16, 2, 3, 4, 5, 6], &[3, 2]).finish()?;
/// let (field, array) = dlpack_abi_arrow_rs::import_fixed_shape_tensor(tensor, "pairs")?;
/// assert_eq!(field.name(), "pairs");
/// assert_eq!(field.extension_type_name(), Some("arrow.fixed_shape_tensor"));
/// assert_eq!(array.as_fixed_size_list().value_length(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A DLPack tensor has no name: `name` is the field's (the name of the field a tensor was
/// exported from, [`export_fixed_shape_tensor`](crate::export_fixed_shape_tensor), for a round
/// trip that keeps it).
pub fn import_fixed_shape_tensor(
    tensor: VersionedTensor,
    name: &str,
) -> Result<(Field, ArrayRef), ArrowRsError> {
    let (layout, array) = DeviceArray::from_tensor(tensor)?;
    let schema = layout.with_name(name).export()?;
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
) -> Result<ArrayRef, ArrowRsError> {
    import_device(schema, array, true).map(|(_, array)| array)
}

/// [`import_field_array`] for a device array the host can read.
pub(crate) fn import_field_array_of_device(
    schema: SchemaRef<'_>,
    array: DeviceArray,
) -> Result<(Field, ArrayRef), ArrowRsError> {
    import_device(schema, array, false)
}

/// A device array into arrow-rs: host-readable memory, and no pending event unless `waited`.
fn import_device(
    schema: SchemaRef<'_>,
    array: DeviceArray,
    waited: bool,
) -> Result<(Field, ArrayRef), ArrowRsError> {
    check_typed_reads(array.view(schema)?)?;
    array.check_host_readable(waited)?;
    let field = field_of(schema)?;
    let array = hand_over(array.into_raw().array, field.clone())?;
    Ok((field, array))
}

/// Hands dlpack-abi's array (validated against `schema`) to arrow-rs, zero-copy: arrow-rs keeps
/// the struct, and with it the producer's buffers, until its last buffer goes.
///
/// # Errors
/// [`ArrowRsError::Arrow`] when `array` was not imported with `schema`;
/// [`ArrowRsError::ArrowRs`] when arrow-rs refuses the type. `array` has been released then.
///
/// ```
/// use arrow_array::{cast::AsArray, types::Int64Type, Int64Array};
///
/// let (schema, array) = dlpack_abi_arrow_rs::export_array(&Int64Array::from(vec![4, 5]))?;
/// let back = dlpack_abi_arrow_rs::import_array(schema.view(), array)?;
/// assert_eq!(back.as_primitive::<Int64Type>().values(), &[4, 5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_array(schema: SchemaRef<'_>, array: Array) -> Result<ArrayRef, ArrowRsError> {
    // Only the schema the array was checked against says how large its buffers are.
    check_typed_reads(array.view(schema)?)?;
    let field = field_of(schema)?;
    hand_over(array.into_raw(), field)
}

/// Hands dlpack-abi's device array to arrow-rs, zero-copy, when the host can read it: a
/// host-accessible device type and no pending `sync_event` (wait on it with
/// [`DeviceArray::wait_host`] and a device runtime's [`HostWait`](dlpack_abi::arrow::HostWait), or
/// yourself, then use [`import_device_array_synchronized`]).
///
/// # Errors
/// [`ReadError::NotHostAccessible`](dlpack_abi::arrow::ReadError::NotHostAccessible) (in [`ArrowRsError::Arrow`]) for device memory or a pending
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
) -> Result<ArrayRef, ArrowRsError> {
    import_field_array_of_device(schema, array).map(|(_, array)| array)
}

/// Hands dlpack-abi's struct array (validated against `schema`) to arrow-rs as a record batch,
/// one column per child.
///
/// # Errors
/// As [`import_array`], and [`ArrowRsError::ArrowRs`] when the array is not a struct array.
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
) -> Result<RecordBatch, ArrowRsError> {
    let field = field_of(schema)?;
    let array = import_array(schema, array)?;
    record_batch_of(&field, array.as_ref())
}

/// The record batch of a struct array imported with `field`, whose metadata is the batch
/// schema's.
pub(crate) fn record_batch_of(
    field: &Field,
    array: &dyn arrow_array::Array,
) -> Result<RecordBatch, ArrowRsError> {
    let batch = batch_of(array)?;
    let with_metadata = arrow_schema::Schema::new_with_metadata(
        batch.schema().fields().clone(),
        field.metadata().clone(),
    );
    Ok(batch.with_schema(alloc::sync::Arc::new(with_metadata))?)
}

/// A record batch from a struct array (its columns and their fields).
pub(crate) fn batch_of(array: &dyn arrow_array::Array) -> Result<RecordBatch, ArrowRsError> {
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

/// The arrow-rs field of a schema dlpack-abi validated (read, not taken).
pub(crate) fn field_of(schema: SchemaRef<'_>) -> Result<Field, ArrowRsError> {
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
pub(crate) fn check_typed_reads(view: ArrayView<'_>) -> Result<(), ArrowRsError> {
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
            .is_some_and(|start| !start.is_null() && !start.addr().is_multiple_of(align));
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
/// dictionary keys, union type ids, run ends. dlpack-abi's validation is structural (it reads
/// no data), so the values are checked here, with arrow-rs's own full validation, before any
/// arrow-rs array exists: O(n) in the values, and what makes this function safe.
pub(crate) fn hand_over(raw: ArrowArray, field: Field) -> Result<ArrayRef, ArrowRsError> {
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
