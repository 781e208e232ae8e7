//! The bridge's export (schemas produced from arrow-rs's fields, arrays built over its
//! buffers) against arrow-rs's own C Data export, the reference: struct for struct, the same
//! formats, names, flags and metadata, and the same lengths, offsets, null counts and buffer
//! addresses, for every type, sliced at every offset and length.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::types::Int16Type;
use arrow_array::{Array as _, ArrayRef, DictionaryArray, MapArray, RecordBatch, StructArray};
use arrow_data::ArrayData;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Schema as ArrowSchemaDef};
use dlpack_abi::arrow::{Array, Schema, SchemaRef};
use dlpack_abi::raw::{ArrowArray, ArrowSchema};
use dlpack_abi_arrow_rs::{export_array, export_record_batch};

/// arrow-rs's schema for `exported`, taken over (and validated) by this crate for reading.
fn theirs(mut exported: FFI_ArrowSchema) -> Schema {
    // SAFETY: an `FFI_ArrowSchema` is an `ArrowSchema` (the bridge asserts their layouts), and
    // arrow-rs exported it; `from_raw` moves it out.
    unsafe { Schema::from_raw(std::ptr::from_mut(&mut exported).cast::<ArrowSchema>()) }
        .expect("arrow-rs exports valid schemas")
}

fn same_schema(ours: SchemaRef<'_>, theirs: SchemaRef<'_>, path: &str) {
    assert_eq!(ours.format(), theirs.format(), "{path}: format");
    assert_eq!(ours.name(), theirs.name(), "{path}: name");
    assert_eq!(ours.flags(), theirs.flags(), "{path}: flags");
    let map = |schema: SchemaRef<'_>| schema.metadata().map(|m| m.as_bytes().to_vec());
    assert_eq!(map(ours), map(theirs), "{path}: metadata");
    assert_eq!(ours.n_children(), theirs.n_children(), "{path}: children");
    for (index, (a, b)) in ours.children().zip(theirs.children()).enumerate() {
        same_schema(a, b, &format!("{path}.{index}"));
    }
    match (ours.dictionary(), theirs.dictionary()) {
        (Some(a), Some(b)) => same_schema(a, b, &format!("{path}.dictionary")),
        (a, b) => assert_eq!(a.is_some(), b.is_some(), "{path}: dictionary"),
    }
}

/// Reads pointer `index` of a C array of `count` pointers.
fn at<T>(pointers: *mut *mut T, count: i64, index: usize) -> *mut T {
    assert!(index < usize::try_from(count).unwrap());
    // SAFETY: `pointers` holds `count` pointers (the C Data Interface), `index` is below.
    unsafe { *pointers.add(index) }
}

/// Compares two arrays of `schema`'s type exported from `data`: buffers by address, except
/// those arrow-rs allocates on export: a validity bitmap it realigns (where `data` keeps its
/// validity at another offset than its values, which the C Data Interface cannot say) and the
/// view types' sizes; those by content.
fn same_array(
    ours: &ArrowArray,
    theirs: &ArrowArray,
    schema: SchemaRef<'_>,
    data: &ArrayData,
    path: &str,
) {
    let fields = |a: &ArrowArray| (a.length, a.null_count, a.offset, a.n_buffers, a.n_children);
    assert_eq!(
        fields(ours),
        fields(theirs),
        "{path}: length, nulls, offset, counts"
    );
    let buffer =
        |a: &ArrowArray, index| at(a.buffers.cast_mut().cast::<*mut u8>(), a.n_buffers, index);
    let view = schema.data_type().has_variadic_buffers();
    let n_buffers = usize::try_from(ours.n_buffers).unwrap();
    for index in 0..n_buffers {
        let (a, b) = (buffer(ours, index), buffer(theirs, index));
        let realigned = data.nulls().is_some_and(|n| n.offset() != data.offset());
        if index == 0 && realigned && schema.data_type().has_validity() {
            let bits = |p: *mut u8| {
                let offset = usize::try_from(ours.offset).unwrap();
                let len = usize::try_from(ours.length).unwrap();
                // SAFETY: a validity bitmap of `offset + length` bits.
                let bytes = unsafe { std::slice::from_raw_parts(p, (offset + len).div_ceil(8)) };
                (offset..offset + len)
                    .map(|bit| bytes[bit / 8] >> (bit % 8) & 1)
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(a), bits(b), "{path}: realigned validity");
        } else if view && index == n_buffers - 1 {
            // The sizes of the data buffers: each side allocates its own.
            let count = n_buffers - 3;
            // SAFETY: the last buffer of a view array holds one int64 per data buffer.
            let sizes = |p: *mut u8| unsafe { std::slice::from_raw_parts(p.cast::<i64>(), count) };
            assert_eq!(sizes(a), sizes(b), "{path}: view buffer sizes");
        } else {
            assert_eq!(a, b, "{path}: buffer {index} is the same memory");
        }
    }
    let child = |a: &ArrowArray, index| {
        // SAFETY: a live child of a live array.
        unsafe { &*at(a.children, a.n_children, index) }
    };
    for (index, field) in schema.children().enumerate() {
        let path = format!("{path}.{index}");
        let data = &data.child_data()[index];
        same_array(child(ours, index), child(theirs, index), field, data, &path);
    }
    if let Some(values) = schema.dictionary() {
        // SAFETY: a dictionary-encoded array's live dictionary.
        let (a, b) = unsafe { (&*ours.dictionary, &*theirs.dictionary) };
        let data = &data.child_data()[0];
        same_array(a, b, values, data, &format!("{path}.dictionary"));
    }
}

/// arrow-rs's export of `array`, read as a raw struct (released when dropped).
fn as_raw(exported: &FFI_ArrowArray) -> &ArrowArray {
    // SAFETY: an `FFI_ArrowArray` is an `ArrowArray` (the bridge asserts their layouts).
    unsafe { &*std::ptr::from_ref(exported).cast::<ArrowArray>() }
}

/// Checks our export of `data` against arrow-rs's: its `reference` schema, and its export of
/// `data`.
fn agree(ours: (&Schema, &Array), reference: FFI_ArrowSchema, data: &ArrayData, path: &str) {
    let (schema, array) = ours;
    same_schema(schema.view(), theirs(reference).view(), path);
    let exported = FFI_ArrowArray::new(data);
    same_array(array.as_raw(), as_raw(&exported), schema.view(), data, path);
}

#[test]
fn arrays_export_as_arrow_rs_exports_them() {
    for (name, array) in super::arrays() {
        let len = array.len();
        // Every slice (two under Miri, which is slow).
        let slices: Vec<(usize, usize)> = match cfg!(miri) {
            true => vec![(0, len), (1, len - 1)],
            false => (0..=len)
                .flat_map(|offset| (0..=len - offset).map(move |length| (offset, length)))
                .collect(),
        };
        for (offset, length) in slices {
            let array = array.slice(offset, length);
            let path = format!("{name}[{offset}..{}]", offset + length);
            let (schema, ours) = export_array(array.as_ref()).expect("exported");
            let reference = FFI_ArrowSchema::try_from(array.data_type()).unwrap();
            agree((&schema, &ours), reference, &array.to_data(), &path);
        }
    }
}

#[test]
fn record_batches_export_as_arrow_rs_exports_them() {
    let columns: Vec<(&str, ArrayRef)> = super::arrays()
        .into_iter()
        .map(|(name, array)| (name, array.slice(1, 1)))
        .collect();
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    // Fields with what only a field carries: nullability, metadata, an ordered dictionary,
    // sorted map keys; and metadata on the batch.
    let ordered: DictionaryArray<Int16Type> = vec!["a", "b", "a"].into_iter().collect();
    let named = |wanted: &str| {
        let mut arrays = super::arrays().into_iter();
        arrays
            .find(|(name, _)| *name == wanted)
            .unwrap()
            .1
            .slice(0, 3)
    };
    let map = named("map");
    let map = map.as_any().downcast_ref::<MapArray>().unwrap();
    let DataType::Map(entries, _) = map.data_type() else {
        unreachable!("a map")
    };
    let sorted = MapArray::try_new(
        Arc::clone(entries),
        map.offsets().clone(),
        map.entries().clone(),
        map.nulls().cloned(),
        true,
    )
    .unwrap();
    let structs = named("struct");
    let metadata = HashMap::from([("unit".to_string(), "m".to_string())]);
    let fields = vec![
        Field::new("n", DataType::Int32, false).with_metadata(metadata.clone()),
        Field::new("d", ordered.data_type().clone(), true).with_dict_is_ordered(true),
        Field::new("m", sorted.data_type().clone(), true),
        Field::new("s", structs.data_type().clone(), true),
    ];
    let schema = ArrowSchemaDef::new(fields).with_metadata(metadata);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(arrow_array::Int32Array::from(vec![1, 2, 3])),
        Arc::new(ordered),
        Arc::new(sorted),
        structs,
    ];
    let flagged = RecordBatch::try_new(Arc::new(schema), columns).unwrap();
    for batch in [batch, flagged] {
        let (schema, ours) = export_record_batch(&batch).expect("exported");
        let reference = FFI_ArrowSchema::try_from(batch.schema().as_ref()).unwrap();
        let data = StructArray::from(batch.clone()).to_data();
        agree((&schema, &ours), reference, &data, "batch");
    }
}
