//! arrow-rs's own canonical extension types (`arrow_schema::extension`, feature
//! `canonical_extension_types`, a dev-dependency) against the bridge: fields arrow-rs builds
//! the typed way become DLPack tensors, and the fields the bridge makes are ones arrow-rs's
//! `FixedShapeTensor` and `Bool8` accept.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{FixedSizeListArray, Float32Array};
use arrow_schema::extension::{Bool8, FixedShapeTensor};
use arrow_schema::{DataType, Field};
use dlpack_abi::dlpack::{Export, TensorDescription, TensorOwner, VersionedTensor};
use dlpack_abi::raw::{kDLBool, kDLCPU, DLDataType, DLDevice};
use dlpack_abi_arrow_rs::{export_fixed_shape_tensor, import_fixed_shape_tensor};

/// Two cells of physical shape `[2, 3, 4]`, values `0..48`, stored as arrow-rs's
/// `FixedShapeTensor` requires (a non-nullable item), under `field`'s name and metadata.
fn cells() -> (Arc<Field>, FixedSizeListArray) {
    let item = Arc::new(Field::new_list_field(DataType::Float32, false));
    let values = Float32Array::from((0..48).map(|v| v as f32).collect::<Vec<_>>());
    let cells = FixedSizeListArray::new(Arc::clone(&item), 24, Arc::new(values), None);
    (item, cells)
}

#[test]
fn arrow_rs_typed_fixed_shape_tensors_become_dlpack_tensors() {
    let names = || Some(vec!["C".to_string(), "H".to_string(), "W".to_string()]);
    let cases = [
        (
            None,
            None,
            r#"{"shape":[2,3,4],"dim_names":null,"permutations":null}"#,
        ),
        (
            names(),
            None,
            r#"{"shape":[2,3,4],"dim_names":["C","H","W"],"permutations":null}"#,
        ),
        (
            None,
            Some(vec![2, 0, 1]),
            r#"{"shape":[2,3,4],"dim_names":null,"permutations":[2,0,1]}"#,
        ),
        (
            names(),
            Some(vec![1, 2, 0]),
            r#"{"shape":[2,3,4],"dim_names":["C","H","W"],"permutations":[1,2,0]}"#,
        ),
    ];
    for (dim_names, permutation, written) in cases {
        let extension =
            FixedShapeTensor::try_new(DataType::Float32, [2, 3, 4], dim_names, permutation.clone())
                .unwrap();
        let (item, cells) = cells();
        let field = Field::new("t", DataType::FixedSizeList(item, 24), false)
            .with_extension_type(extension);
        // What arrow-rs 60 writes: every key, `null` when absent, and `permutations`.
        assert_eq!(
            field
                .metadata()
                .get("ARROW:extension:metadata")
                .map(String::as_str),
            Some(written)
        );
        let tensor = export_fixed_shape_tensor(&field, &cells).unwrap();
        let view = tensor.view();
        let permutation = permutation.unwrap_or(vec![0, 1, 2]);
        let physical = [2i64, 3, 4];
        let physical_strides = [12i64, 4, 1];
        let logical: Vec<i64> = permutation.iter().map(|&p| physical[p]).collect();
        assert_eq!(view.shape(), [&[2][..], &logical].concat(), "{written}");
        let strides: Vec<i64> = permutation.iter().map(|&p| physical_strides[p]).collect();
        assert_eq!(
            view.strides().as_slice(),
            Some(&[&[24][..], &strides].concat()[..]),
            "{written}"
        );
        // Zero-copy, and every value where the permutation puts it.
        let values = cells
            .values()
            .as_primitive::<arrow_array::types::Float32Type>();
        assert_eq!(
            view.data_ptr().cast_const().cast::<f32>(),
            values.values().as_ptr()
        );
        let logical: Vec<usize> = logical.iter().map(|&e| e as usize).collect();
        for cell in 0..2usize {
            for a in 0..logical[0] {
                for b in 0..logical[1] {
                    for c in 0..logical[2] {
                        let mut at = [0usize; 3];
                        for (d, i) in [a, b, c].into_iter().enumerate() {
                            at[permutation[d]] = i;
                        }
                        let expected = cell * 24 + at[0] * 12 + at[1] * 4 + at[2];
                        let got = view.get::<f32>(&[cell, a, b, c]).unwrap();
                        assert_eq!(got, expected as f32, "{written} at {cell},{a},{b},{c}");
                    }
                }
            }
        }
    }
}

#[test]
fn pyarrow_shaped_fields_become_dlpack_tensors_too() {
    // pyarrow 26 writes `permutation` (the specification's key), leaves absent keys out, and
    // makes the item nullable: arrow-rs's `FixedShapeTensor` refuses such a field, the bridge
    // reads it.
    let item = Arc::new(Field::new_list_field(DataType::Float32, true));
    let values = Float32Array::from((0..48).map(|v| v as f32).collect::<Vec<_>>());
    let cells = FixedSizeListArray::new(Arc::clone(&item), 24, Arc::new(values), None);
    let field =
        Field::new("t", DataType::FixedSizeList(item, 24), true).with_metadata(HashMap::from([
            (
                "ARROW:extension:name".to_string(),
                "arrow.fixed_shape_tensor".to_string(),
            ),
            (
                "ARROW:extension:metadata".to_string(),
                r#"{"shape":[2,3,4],"permutation":[2,0,1],"dim_names":["C","H","W"]}"#.to_string(),
            ),
        ]));
    assert!(field.try_extension_type::<FixedShapeTensor>().is_err());
    let tensor = export_fixed_shape_tensor(&field, &cells).unwrap();
    assert_eq!(tensor.view().shape(), [2, 4, 2, 3]);
    assert_eq!(
        tensor.view().strides().as_slice(),
        Some(&[24, 1, 12, 4][..])
    );
    assert_eq!(tensor.view().get::<f32>(&[1, 3, 1, 2]).unwrap(), 47.0);
}

#[test]
fn metadata_the_bridge_refuses_is_named_by_key_and_value() {
    let (item, cells) = cells();
    let with = |json: &str| {
        Field::new("t", DataType::FixedSizeList(Arc::clone(&item), 24), false).with_metadata(
            HashMap::from([
                (
                    "ARROW:extension:name".to_string(),
                    "arrow.fixed_shape_tensor".to_string(),
                ),
                ("ARROW:extension:metadata".to_string(), json.to_string()),
            ]),
        )
    };
    let cases = [
        (
            r#"{"shape":[2,3,4],"dim_names":null,"permutations":[0,0,1]}"#,
            r#""permutations" is [0,0,1], not a permutation of 0..3"#,
        ),
        (
            r#"{"shape":[2,3,4],"dim_names":["C","H"],"permutations":null}"#,
            r#""dim_names" is ["C","H"], not an array of 3 strings"#,
        ),
        (
            r#"{"shape":[2,3,5],"dim_names":null,"permutations":null}"#,
            r#""shape" is [2,3,5], whose product is not the storage's list size"#,
        ),
        (
            r#"{"shape":[2,3,4],"dim_names":null,"permutations":null"#,
            "JSON syntax error at byte 53: expected ',' or '}'",
        ),
    ];
    for (json, expected) in cases {
        let error = export_fixed_shape_tensor(&with(json), &cells).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("extension metadata of arrow.fixed_shape_tensor: {expected}")
        );
    }
}

#[test]
fn the_bridges_fields_are_arrow_rs_canonical_types() {
    let values: Vec<f32> = (0..24).map(|v| v as f32).collect();
    let tensor = Export::new(values, &[4, 2, 3]).finish().unwrap();
    let (field, array) = import_fixed_shape_tensor(tensor, "t").unwrap();
    assert_eq!(field.name(), "t");
    let extension = field.try_extension_type::<FixedShapeTensor>().unwrap();
    assert_eq!(extension.shape(), [2, 3]);
    assert_eq!(extension.value_type(), &DataType::Float32);
    assert_eq!(
        (extension.dimension_names(), extension.permutations()),
        (None, None)
    );
    let DataType::FixedSizeList(item, 6) = field.data_type() else {
        panic!("{field:?}")
    };
    assert_eq!((item.name().as_str(), item.is_nullable()), ("item", false));
    assert_eq!(array.data_type(), field.data_type());

    // `kDLBool` bytes are `arrow.bool8`, with the empty metadata arrow-rs's `Bool8` requires.
    let tensor = VersionedTensor::from_owner(Bools(vec![1, 0, 1], [3])).unwrap();
    let (field, array) = import_fixed_shape_tensor(tensor, "flags").unwrap();
    field.try_extension_type::<Bool8>().unwrap();
    assert_eq!(
        array
            .as_primitive::<arrow_array::types::Int8Type>()
            .values(),
        &[1, 0, 1]
    );
}

/// One byte per `kDLBool` value.
struct Bools(Vec<u8>, [i64; 1]);

// SAFETY: the vector is the owner's own allocation, described exactly (one byte per value).
unsafe impl TensorOwner for Bools {
    fn describe(&mut self) -> TensorDescription<'_> {
        let bool_byte = DLDataType {
            code: kDLBool,
            bits: 8,
            lanes: 1,
        };
        let cpu = DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        };
        let len = self.0.len();
        TensorDescription::new(self.0.as_mut_ptr().cast(), len, cpu, bool_byte, &self.1)
    }
}
