//! Unit tests of the `arrow.fixed_shape_tensor` metadata parser and writer.

use super::*;

fn reason(json: &[u8]) -> &'static str {
    match TensorShape::parse(json) {
        Err(ValidationError::ExtensionMetadata { reason }) => reason,
        other => panic!("{:?}: {other:?}", core::str::from_utf8(json)),
    }
}

#[test]
fn parses_the_keys_in_any_order_with_any_spacing() {
    let cell = TensorShape::parse(
        b" {\n\t\"dim_names\" : [\"C\", \"H\", \"W\"], \"permutation\":[2,0,1] ,\"shape\":[3,4,5]} ",
    )
    .unwrap();
    assert_eq!(cell.shape(), &[3, 4, 5]);
    assert_eq!(cell.permutation(), Some(&[2, 0, 1][..]));
    assert_eq!(
        cell.logical_shape().collect::<alloc::vec::Vec<_>>(),
        [5, 3, 4]
    );
    assert_eq!(cell.list_size(), Some(60));
    // A 0-d cell holds one value.
    assert_eq!(
        TensorShape::parse(br#"{"shape":[]}"#).unwrap().list_size(),
        Some(1)
    );
}

#[test]
fn skips_unknown_keys_whatever_their_value_up_to_a_nesting_limit() {
    let json = br#"{"x": {"a": [1, -2.5e3, "s\"}", true, null, {"b": []}]}, "shape": [2]}"#;
    assert_eq!(TensorShape::parse(json).unwrap().shape(), &[2]);
    let deep = alloc::format!(
        r#"{{"x": {}1{}, "shape": [1]}}"#,
        "[".repeat(17),
        "]".repeat(17)
    );
    assert_eq!(reason(deep.as_bytes()), "JSON nested too deeply");
    let fine = alloc::format!(
        r#"{{"x": {}1{}, "shape": [1]}}"#,
        "[".repeat(16),
        "]".repeat(16)
    );
    assert!(TensorShape::parse(fine.as_bytes()).is_ok());
}

#[test]
fn refuses_what_arrow_cpp_refuses() {
    assert_eq!(reason(br#"{}"#), "no \"shape\"");
    assert_eq!(reason(br#"{"shape": null}"#), "malformed JSON");
    assert_eq!(reason(br#"{"shape": [1.5]}"#), "expected an integer");
    assert_eq!(reason(br#"{"shape": [1e3]}"#), "expected an integer");
    assert_eq!(
        reason(br#"{"shape": [-1]}"#),
        "negative extent in \"shape\""
    );
    assert_eq!(
        reason(br#"{"shape": [99999999999999999999]}"#),
        "integer out of range"
    );
    assert_eq!(
        reason(br#"{"shape": [1]} x"#),
        "trailing bytes after the JSON object"
    );
    assert_eq!(reason(br#"{"shape": [1,]}"#), "expected an integer");
    assert_eq!(reason(br#"{"shape": [1]"#), "malformed JSON object");
    assert_eq!(
        reason(br#"{"shape": [1], "x": "open}"#),
        "unterminated JSON string"
    );
    assert_eq!(
        reason(br#"{"shape": [2, 3], "permutation": [0]}"#),
        "\"permutation\" length differs from \"shape\""
    );
    assert_eq!(
        reason(br#"{"shape": [2, 3], "permutation": [0, 0]}"#),
        "\"permutation\" is not a permutation of 0..ndim"
    );
    assert_eq!(
        reason(br#"{"shape": [2, 3], "permutation": [0, 2]}"#),
        "\"permutation\" is not a permutation of 0..ndim"
    );
    assert_eq!(
        reason(br#"{"shape": [2], "dim_names": ["a", "b"]}"#),
        "\"dim_names\" length differs from \"shape\""
    );
    let too_many = alloc::format!(r#"{{"shape": [{}1]}}"#, "1,".repeat(MAX_NDIM));
    assert_eq!(reason(too_many.as_bytes()), "more than 64 dimensions");
}

#[test]
fn list_size_is_none_on_overflow() {
    let cell = TensorShape::parse(br#"{"shape": [4294967296, 4294967296, 4294967296]}"#).unwrap();
    assert_eq!(cell.list_size(), None);
}

#[cfg(feature = "alloc")]
#[test]
fn writes_what_it_reads() {
    for json in [
        r#"{"shape":[2,3]}"#,
        r#"{"shape":[]}"#,
        r#"{"shape":[100,200,500],"permutation":[2,0,1]}"#,
    ] {
        let cell = TensorShape::parse(json.as_bytes()).unwrap();
        assert_eq!(cell.to_json(), json);
        assert_eq!(TensorShape::parse(cell.to_json().as_bytes()).unwrap(), cell);
    }
    assert_eq!(
        TensorShape::row_major(&[4, 5]).unwrap().to_json(),
        r#"{"shape":[4,5]}"#
    );
    assert!(TensorShape::row_major(&[1; MAX_NDIM + 1]).is_none());
}
