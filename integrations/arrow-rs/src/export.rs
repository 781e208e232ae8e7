//! Out of arrow-rs: arrays, record batches, fields and schemas as dlpack-abi's [`Array`]s and
//! [`Schema`]s, and `arrow.fixed_shape_tensor` arrays as DLPack tensors, sharing arrow-rs's
//! buffers.
//!
//! The schema is produced from arrow-rs's fields ([`Schema::produce`], in one allocation; see
//! `schema.rs`) and validated. The array is built here, over the buffers of arrow-rs's
//! `ArrayData`, with dlpack-abi's producer ([`Array::from_parts`]): one struct per node, the children of a node in one
//! allocation, and one shared owner (the `ArrayData`s) for the whole export, instead of
//! arrow-rs's several allocations and buffer references per node. It is then validated against
//! the schema, as any producer's array is. arrow-rs keeps a node's validity offset apart from
//! its data offset, which the C Data Interface cannot; a column where they differ (a sliced
//! array with nulls, say) goes through arrow-rs's own export, which realigns the bitmap.
//! `tests/arrow_rs/agreement.rs` checks that both ways give the same structs, type by type.
#![allow(unsafe_code)]

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::ptr;

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::RecordBatch;
use arrow_data::ArrayData;
use arrow_schema::Field;

use crate::{schema, ArrowRsError};
use dlpack_abi::arrow::{
    Array, ArrayParts, DataType, DeviceArray, Schema, SchemaRef, ValidationError,
};
use dlpack_abi::dlpack::VersionedTensor;
use dlpack_abi::raw::ArrowArray;

/// Exports an arrow-rs array as dlpack-abi's schema and array, sharing its buffers.
///
/// # Errors
/// [`ArrowRsError::ArrowRs`] when arrow-rs cannot export the array; [`ArrowRsError::Arrow`]
/// when the export breaks the C Data Interface.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Array, ArrayRef, Int64Array};
///
/// let values: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]));
/// let (schema, array) = dlpack_abi_arrow_rs::export_array(values.as_ref())?;
/// let view = array.view(schema.view())?;
/// assert_eq!(view.values::<i64>()?[2], 3);
/// assert_eq!(view.null_count(), Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_array(array: &dyn arrow_array::Array) -> Result<(Schema, Array), ArrowRsError> {
    let schema = schema::of_type(array.data_type())?;
    let array = export_one(array.to_data(), schema.view())?;
    Ok((schema, array))
}

/// Exports an arrow-rs array as a CPU device array (`kArrowCPU`, no event): what the C Device
/// interface's consumers (`__arrow_c_device_array__`, ...) take.
///
/// # Errors
/// As [`export_array`].
///
/// ```
/// use arrow_array::StringArray;
///
/// let names = StringArray::from(vec!["ada", "grace"]);
/// let (schema, array) = dlpack_abi_arrow_rs::export_device_array(&names)?;
/// assert_eq!((array.device_type(), array.len()), (dlpack_abi::raw::ARROW_DEVICE_CPU, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_device_array(
    array: &dyn arrow_array::Array,
) -> Result<(Schema, DeviceArray), ArrowRsError> {
    let (schema, array) = export_array(array)?;
    Ok((schema, DeviceArray::from_cpu(array)))
}

/// Exports a record batch as a struct array (one child per column), as the C Stream Interface
/// carries batches.
///
/// # Errors
/// As [`export_array`].
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Float32Array, RecordBatch};
///
/// let column: ArrayRef = Arc::new(Float32Array::from(vec![0.5, 1.5]));
/// let batch = RecordBatch::try_from_iter([("x", column)])?;
/// let (schema, array) = dlpack_abi_arrow_rs::export_record_batch(&batch)?;
/// assert_eq!(schema.view().format(), b"+s");
/// assert_eq!(schema.view().child(0).unwrap().name(), Some("x"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_record_batch(batch: &RecordBatch) -> Result<(Schema, Array), ArrowRsError> {
    // The batch's schema (its metadata included) as the root's.
    let schema = schema::of_schema(batch.schema_ref())?;
    let columns: Keep = batch.columns().iter().map(|c| c.to_data()).collect();
    let mut root = ArrayParts::new(batch.num_rows(), alloc::vec![ptr::null()]);
    root.children = export_columns(columns, schema.view())?;
    // SAFETY: a struct array needs one buffer, its validity, which may be NULL with no nulls
    // (null_count 0); and one child per field of the batch's schema, in order, each at least
    // `num_rows` long (a `RecordBatch`'s columns all have exactly `num_rows` values) and valid
    // for its field (the whole tree is validated against the schema, and bound to it, by
    // `bind`). The children own their buffers; the root owns nothing else.
    let array = unsafe { Array::from_parts(root, ()) }.bind(schema.view())?;
    Ok((schema, array))
}

/// What every node of one export keeps alive until it is released: the `ArrayData`s its
/// buffer pointers were read from.
type Keep = Arc<[ArrayData]>;

/// Exports one array of `schema`'s type.
fn export_one(data: ArrayData, schema: SchemaRef<'_>) -> Result<Array, ArrowRsError> {
    if !same_offsets(&data) {
        return export_by_arrow_rs(&data, schema);
    }
    if data.child_data().is_empty() {
        // A leaf keeps its own `ArrayData`, with nothing to share.
        let no_children =
            |_: &ArrayData, _: SchemaRef<'_>| Err(ValidationError::SchemaMismatch.into());
        let (parts, sizes) = parts_of(&data, schema, no_children)?;
        // SAFETY: `parts` were read from `data`, which the array keeps.
        return Ok(unsafe { finish(parts, sizes, data) }.bind(schema)?);
    }
    let keep: Keep = Arc::new([data]);
    Ok(node(&keep[0], schema, &keep)?.bind(schema)?)
}

/// Exports the columns in `keep`, one per child of the struct `schema`, in order, sharing
/// `keep` as their owner; the caller validates them (with their parent).
fn export_columns(keep: Keep, schema: SchemaRef<'_>) -> Result<Vec<Array>, ArrowRsError> {
    if keep.len() != schema.n_children() {
        return Err(ValidationError::SchemaMismatch.into());
    }
    let mut arrays = Vec::with_capacity(keep.len());
    for (data, field) in keep.iter().zip(schema.children()) {
        arrays.push(match same_offsets(data) {
            true => node(data, field, &keep)?,
            false => export_by_arrow_rs(data, field)?,
        });
    }
    Ok(arrays)
}

/// Whether every node's validity bitmap starts at its data's offset, as the C Data Interface
/// needs (it has one offset per array).
fn same_offsets(data: &ArrayData) -> bool {
    data.nulls()
        .is_none_or(|nulls| nulls.offset() == data.offset())
        && data.child_data().iter().all(same_offsets)
}

/// One node (and its children and dictionary) over `data`'s buffers, of `schema`'s type; `data`
/// lies in `keep`, and its validity starts at its offset ([`same_offsets`]).
fn node(data: &ArrayData, schema: SchemaRef<'_>, keep: &Keep) -> Result<Array, ArrowRsError> {
    let (parts, sizes) = parts_of(data, schema, |child, field| node(child, field, keep))?;
    // SAFETY: `parts` were read from `data`, which `keep` holds.
    Ok(unsafe { finish(parts, sizes, Arc::clone(keep)) })
}

/// The parts of `data`'s node, of `schema`'s type, with the children (and dictionary) `child`
/// makes; and for the view types, the sizes of their data buffers, which the C Data Interface
/// adds as their last buffer.
fn parts_of(
    data: &ArrayData,
    schema: SchemaRef<'_>,
    mut child: impl FnMut(&ArrayData, SchemaRef<'_>) -> Result<Array, ArrowRsError>,
) -> Result<(ArrayParts, Option<Vec<i64>>), ArrowRsError> {
    let data_type = schema.data_type();
    let view = data_type.has_variadic_buffers();
    let validity = usize::from(data_type.has_validity());
    let mut buffers = Vec::with_capacity(validity + data.buffers().len() + usize::from(view));
    if validity == 1 {
        let validity = data.nulls().map(|nulls| nulls.buffer().as_ptr());
        buffers.push(validity.map_or(ptr::null(), |start| start.cast::<c_void>()));
    }
    buffers.extend(data.buffers().iter().map(|b| b.as_ptr().cast::<c_void>()));
    // A dictionary's values are arrow-rs's only child; the C Data Interface's `dictionary`.
    let (children, dictionary) = match schema.dictionary() {
        Some(values) => (&[][..], data.child_data().first().map(|d| (d, values))),
        None => (data.child_data(), None),
    };
    if children.len() != schema.n_children()
        || dictionary.is_some() != schema.dictionary().is_some()
    {
        return Err(ValidationError::SchemaMismatch.into());
    }
    let null_count = match data_type {
        // arrow-rs's null arrays have no bitmap: every value is null.
        DataType::Null => data.len(),
        _ => data.null_count(),
    };
    let mut parts = ArrayParts::new(data.len(), buffers)
        .with_null_count(i64::try_from(null_count).unwrap_or(i64::MAX))
        .with_offset(i64::try_from(data.offset()).unwrap_or(i64::MAX));
    parts.children.reserve_exact(children.len());
    for (data, field) in children.iter().zip(schema.children()) {
        parts.children.push(child(data, field)?);
    }
    if let Some((values, field)) = dictionary {
        parts.dictionary = Some(child(values, field)?);
    }
    let sizes = view.then(|| {
        let data_buffers = data.buffers().get(1..).unwrap_or_default();
        let sizes = data_buffers.iter().map(|buffer| buffer.len());
        sizes
            .map(|size| i64::try_from(size).unwrap_or(i64::MAX))
            .collect()
    });
    Ok((parts, sizes))
}

/// The array of `parts` (and `sizes`, appended as the last buffer), which `owner` keeps alive.
///
/// # Safety
/// `parts` and `sizes` were made by [`parts_of`] from an `ArrayData` whose validity starts at
/// its offset ([`same_offsets`]) and which `owner` holds (or is).
unsafe fn finish<O: core::any::Any + Send>(
    mut parts: ArrayParts,
    sizes: Option<Vec<i64>>,
    owner: O,
) -> Array {
    match sizes {
        Some(sizes) => {
            parts.buffers.push(sizes.as_ptr().cast());
            // SAFETY: as below; `sizes` (its heap buffer, which moving the `Vec` leaves in place)
            // lives as long as the node.
            unsafe { Array::from_parts(parts, (owner, sizes)) }
        }
        // SAFETY: the buffers are the `ArrayData`'s, in arrow-rs's order for this type, which is
        // the C Data Interface's (with the validity bitmap first where the type has one,
        // starting at the node's offset), as large as the type needs for `offset + length`
        // values (a valid `ArrayData`); CPU memory, immutable, and alive for as long as `owner`
        // (caller), kept by the node until its release; `ArrayData` is `Send + Sync`. Callers
        // validate the tree against its schema (`bind`).
        None => unsafe { Array::from_parts(parts, owner) },
    }
}

/// Exports `data` by arrow-rs's own C Data export, validated against `schema` (of its type).
fn export_by_arrow_rs(data: &ArrayData, schema: SchemaRef<'_>) -> Result<Array, ArrowRsError> {
    let mut exported = FFI_ArrowArray::new(data);
    let raw = ptr::from_mut(&mut exported).cast::<ArrowArray>();
    // SAFETY: an `FFI_ArrowArray` is an `ArrowArray` (layouts asserted in the module root)
    // that arrow-rs exported for this schema's type, in CPU memory. `from_raw` moves it out
    // and sets its `release` to NULL (on error too), so dropping the husk does nothing.
    Ok(unsafe { Array::from_raw(raw, schema) }?)
}

/// Exports an arrow-rs array with its field: the field's name, nullability and metadata
/// (extension types such as `arrow.fixed_shape_tensor` live there) go into the schema.
///
/// # Errors
/// As [`export_array`], and [`ArrowRsError::ArrowRs`] when the field's type is not the array's.
///
/// ```
/// use std::collections::HashMap;
/// use arrow_array::Int32Array;
/// use arrow_schema::{DataType, Field};
///
/// let field = Field::new("n", DataType::Int32, false)
///     .with_metadata(HashMap::from([("unit".to_string(), "m".to_string())]));
/// let (schema, _array) = dlpack_abi_arrow_rs::export_field_array(&field, &Int32Array::from(vec![1]))?;
/// assert_eq!(schema.view().name(), Some("n"));
/// assert_eq!(schema.view().metadata().unwrap().get("unit"), Some(&b"m"[..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_field_array(
    field: &Field,
    array: &dyn arrow_array::Array,
) -> Result<(Schema, Array), ArrowRsError> {
    if field.data_type() != array.data_type() {
        return Err(
            arrow_schema::ArrowError::InvalidArgumentError(alloc::format!(
                "the field is {}, the array {}",
                field.data_type(),
                array.data_type()
            ))
            .into(),
        );
    }
    let schema = schema::of_field(field)?;
    let array = export_one(array.to_data(), schema.view())?;
    Ok((schema, array))
}

/// An arrow-rs schema (a record batch's) as dlpack-abi's schema: a struct of its fields, with
/// its metadata, as arrow-rs's own C Data export writes it (the `__arrow_c_schema__` of a table).
///
/// # Errors
/// [`ArrowRsError::Arrow`] when the schema breaks the C Data Interface (a name with a NUL byte).
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
pub fn export_schema(schema: &arrow_schema::Schema) -> Result<Schema, ArrowRsError> {
    Ok(schema::of_schema(schema)?)
}

/// An arrow-rs field as dlpack-abi's schema: its type, name, nullability and metadata.
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
pub fn export_field(field: &Field) -> Result<Schema, ArrowRsError> {
    Ok(schema::of_field(field)?)
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
/// [`ArrowRsError::Arrow`] with a [`BridgeError`](dlpack_abi::arrow::BridgeError) for arrays a tensor
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
/// let tensor = dlpack_abi_arrow_rs::export_fixed_shape_tensor(&field, &tensors)?;
/// assert_eq!(tensor.view().shape(), [2, 2, 3]);
/// assert_eq!(tensor.view().get::<f32>(&[1, 0, 2])?, 8.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_fixed_shape_tensor(
    field: &Field,
    array: &dyn arrow_array::Array,
) -> Result<VersionedTensor, ArrowRsError> {
    let (schema, array) = export_field_array(field, array)?;
    Ok(DeviceArray::from_cpu(array).into_tensor(schema.view())?)
}
