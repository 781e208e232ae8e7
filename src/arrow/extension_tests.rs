//! Unit tests of the `arrow.fixed_shape_tensor` metadata parser and writer.

use super::*;

/// The refusal's text (every refusal is checked by its full text, which names the key and value).
fn refusal(json: &[u8]) -> alloc::string::String {
    use alloc::string::ToString;
    match TensorShape::parse(json) {
        Err(error) => error.to_string(),
        other => panic!("{:?}: {other:?}", core::str::from_utf8(json)),
    }
}

const PREFIX: &str = "extension metadata of arrow.fixed_shape_tensor: ";

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
    let json = br#"{"x": {"a": [1, -2.5e3, "s\"}\u00e9", true, null, {"b": []}]}, "shape": [2]}"#;
    assert_eq!(TensorShape::parse(json).unwrap().shape(), &[2]);
    let deep = alloc::format!(
        r#"{{"x": {}1{}, "shape": [1]}}"#,
        "[".repeat(17),
        "]".repeat(17)
    );
    assert_eq!(
        refusal(deep.as_bytes()),
        alloc::format!(
            "{PREFIX}JSON syntax error at byte 22: expected at most 16 levels of nesting"
        )
    );
    let fine = alloc::format!(
        r#"{{"x": {}1{}, "shape": [1]}}"#,
        "[".repeat(16),
        "]".repeat(16)
    );
    assert!(TensorShape::parse(fine.as_bytes()).is_ok());
}

#[test]
fn reads_what_arrow_rs_and_pyarrow_write() {
    // arrow-rs 60 (`FixedShapeTensor`, serde): every key, `null` when absent, `permutations`.
    let cell =
        TensorShape::parse(br#"{"shape":[2,3],"dim_names":null,"permutations":null}"#).unwrap();
    assert_eq!((cell.shape(), cell.permutation()), (&[2, 3][..], None));
    let cell = TensorShape::parse(
        br#"{"shape":[2,3,4],"dim_names":["C","H","W"],"permutations":[2,0,1]}"#,
    )
    .unwrap();
    assert_eq!(cell.permutation(), Some(&[2, 0, 1][..]));
    assert_eq!(
        cell.logical_shape().collect::<alloc::vec::Vec<_>>(),
        [4, 2, 3]
    );
    // pyarrow 26 / Arrow C++: compact, shape, permutation, dim_names, absent keys left out.
    let cell =
        TensorShape::parse(br#"{"shape":[2,3,4],"permutation":[2,0,1],"dim_names":["C","H","W"]}"#)
            .unwrap();
    assert_eq!(cell.permutation(), Some(&[2, 0, 1][..]));
    // `null` is absent for both optional keys, under either spelling.
    let cell =
        TensorShape::parse(br#"{"permutation": null, "shape": [5], "dim_names": null}"#).unwrap();
    assert_eq!((cell.shape(), cell.permutation()), (&[5][..], None));
}

#[test]
fn refuses_what_arrow_cpp_refuses_naming_the_key_and_value() {
    let cases: &[(&[u8], &str)] = &[
        (br#"{}"#, r#"no "shape""#),
        (br#"{"dim_names": null}"#, r#"no "shape""#),
        (
            br#"{"shape": null}"#,
            r#""shape" is null, not an array of non-negative integers"#,
        ),
        (
            br#"{"shape": [1.5]}"#,
            r#""shape" is [1.5], not an array of non-negative integers"#,
        ),
        (
            br#"{"shape": [1e3]}"#,
            r#""shape" is [1e3], not an array of non-negative integers"#,
        ),
        (
            br#"{"shape": ["2"]}"#,
            r#""shape" is ["2"], not an array of non-negative integers"#,
        ),
        (
            br#"{"shape": [-1]}"#,
            r#""shape" is [-1], not an array of non-negative integers"#,
        ),
        (
            br#"{"shape": [99999999999999999999]}"#,
            r#""shape" is [99999999999999999999], not an array of non-negative integers"#,
        ),
        (
            br#"{"shape": [2, 3], "permutation": [0]}"#,
            r#""permutation" is [0], not a permutation of 0..2"#,
        ),
        (
            br#"{"shape": [2, 3], "permutations": [0, 0]}"#,
            r#""permutations" is [0, 0], not a permutation of 0..2"#,
        ),
        (
            br#"{"shape": [2, 3], "permutation": [0, 2]}"#,
            r#""permutation" is [0, 2], not a permutation of 0..2"#,
        ),
        (
            br#"{"shape": [2, 3], "permutation": [1.0, 0]}"#,
            r#""permutation" is [1.0, 0], not a permutation of 0..2"#,
        ),
        (
            br#"{"shape": [2, 3], "permutation": "[1, 0]"}"#,
            r#""permutation" is "[1, 0]", not a permutation of 0..2"#,
        ),
        (
            br#"{"shape": [2], "dim_names": ["a", "b"]}"#,
            r#""dim_names" is ["a", "b"], not an array of 1 string"#,
        ),
        (
            br#"{"shape": [2, 2], "dim_names": ["a", 1]}"#,
            r#""dim_names" is ["a", 1], not an array of 2 strings"#,
        ),
        (
            br#"{"shape": [2], "shape": [2]}"#,
            r#""shape" is [2], after "shape" was already given"#,
        ),
        (
            br#"{"shape": [2, 3], "permutation": [1, 0], "permutations": [1, 0]}"#,
            r#""permutations" is [1, 0], after "permutation" was already given"#,
        ),
        (
            br#"{"shape": [1, 2, 3, 4, 5, 6, 7, 8, 9, -10]}"#,
            r#""shape" is [1, 2, 3, 4, 5, 6, 7, 8..., not an array of non-negative integers"#,
        ),
    ];
    for &(json, expected) in cases {
        assert_eq!(refusal(json), alloc::format!("{PREFIX}{expected}"));
    }
    let too_many = alloc::format!(r#"{{"shape": [{}1]}}"#, "1,".repeat(MAX_NDIM));
    assert_eq!(
        refusal(too_many.as_bytes()),
        alloc::format!(r#"{PREFIX}"shape" is [1,1,1,1,1,1,1,1,1,1,1,..., more than 64 dimensions"#)
    );
}

/// `-0` is the integer 0 to Arrow C++ (RapidJSON), which pyarrow's `fixed_shape_tensor` reads
/// (`{"shape": [2, -0]}` gives `shape=[2,0]` there), and is read so here; `-0.0` is a float to
/// both.
#[test]
fn reads_minus_zero_as_arrow_cpp_does() {
    let shape = TensorShape::parse(br#"{"shape": [2, -0], "permutation": [1, -0]}"#).unwrap();
    assert_eq!(shape.shape(), [2, 0]);
    assert_eq!(shape.permutation(), Some(&[1, 0][..]));
    assert_eq!(
        refusal(br#"{"shape": [-0.0]}"#),
        alloc::format!(r#"{PREFIX}"shape" is [-0.0], not an array of non-negative integers"#)
    );
}

#[test]
fn a_syntax_error_says_syntax_and_where() {
    let cases: &[(&[u8], &str)] = &[
        (b"", "at byte 0: expected '{' (an object)"),
        (
            br#"{"shape": [1]} x"#,
            "at byte 15: expected the end of the text",
        ),
        (br#"{"shape": [1,]}"#, "at byte 13: expected a value"),
        (br#"{"shape": [1]"#, "at byte 13: expected ',' or '}'"),
        (
            br#"{"shape": [1], "x": "open}"#,
            "at byte 26: expected '\"' (the string is not closed)",
        ),
        (br#"{"shape" [1]}"#, "at byte 9: expected ':'"),
        (br#"{shape: [1]}"#, "at byte 1: expected '\"'"),
        (br#"{"shape": [01]}"#, "at byte 12: expected ',' or ']'"),
        (br#"{"shape": [1.]}"#, "at byte 13: expected a digit"),
        (
            br#"{"shape": [2], "x": nul}"#,
            "at byte 20: expected a value",
        ),
        (
            br#"{"shape": [2], "x": "\q"}"#,
            "at byte 22: expected an escape character after '\\'",
        ),
        (
            br#"{"shape": [2], "x": "\u12"}"#,
            "at byte 25: expected 4 hex digits after \\u",
        ),
        (
            b"{\"shape\": [2], \"x\": \"\n\"}",
            "at byte 21: expected no control character in a string",
        ),
        (
            b"{\"shape\": [2], \"x\": \"\xff\"}",
            "at byte 21: expected UTF-8 text",
        ),
    ];
    for &(json, expected) in cases {
        assert_eq!(
            refusal(json),
            alloc::format!("{PREFIX}JSON syntax error {expected}"),
            "{:?}",
            core::str::from_utf8(json)
        );
    }
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
