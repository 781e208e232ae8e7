//! Every kind of array the Arrow layer validates, built with arrow-rs.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryViewBuilder, Int32Builder, LargeListBuilder, ListBuilder, MapBuilder, StringBuilder,
    StringDictionaryBuilder, StringViewBuilder,
};
use arrow_array::types::{Int32Type, Int8Type};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Date64Array, Decimal128Array,
    Decimal256Array, DurationNanosecondArray, FixedSizeBinaryArray, FixedSizeListArray,
    Float64Array, Int32Array, Int64Array, IntervalMonthDayNanoArray, LargeBinaryArray,
    LargeListViewArray, LargeStringArray, ListViewArray, NullArray, RunArray, StringArray,
    StructArray, Time32SecondArray, TimestampMicrosecondArray, UnionArray,
};
use arrow_buffer::{i256, IntervalMonthDayNano, ScalarBuffer};
use arrow_schema::{DataType, Field, UnionFields};

/// Every kind of array the Arrow layer validates, with nulls where the type has them.
pub fn arrays() -> Vec<(&'static str, ArrayRef)> {
    let ints: ArrayRef = Arc::new(Int32Array::from(vec![
        Some(1),
        None,
        Some(3),
        Some(4),
        None,
    ]));
    let mut list = ListBuilder::new(Int32Builder::new());
    list.append_value([Some(1), Some(2)]);
    list.append_null();
    list.append_value([None, Some(4), Some(5)]);
    let mut views = StringViewBuilder::new();
    views.append_value("short");
    views.append_null();
    views.append_value("a string longer than twelve bytes, out of line");
    let mut binary_views = BinaryViewBuilder::new();
    binary_views.append_value(b"\x00\x01");
    binary_views.append_value(b"bytes that do not fit inline at all");
    let mut dictionary = StringDictionaryBuilder::<Int8Type>::new();
    dictionary.append_value("red");
    dictionary.append_null();
    dictionary.append_value("green");
    dictionary.append_value("red");
    let structs = StructArray::from(vec![
        (
            Arc::new(Field::new("a", DataType::Int32, true)),
            Arc::clone(&ints),
        ),
        (
            Arc::new(Field::new("b", DataType::Utf8, true)),
            Arc::new(StringArray::from(vec![
                Some("x"),
                Some("y"),
                None,
                Some("w"),
                Some("v"),
            ])) as ArrayRef,
        ),
    ]);
    let mut large_list = LargeListBuilder::new(Int32Builder::new());
    large_list.append_value([Some(9)]);
    large_list.append_value([None, Some(8)]);
    large_list.append_null();
    let mut map = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    map.keys().append_value("k");
    map.values().append_value(1);
    map.append(true).expect("a map entry");
    map.append(false).expect("a null map");
    map.keys().append_value("j");
    map.values().append_null();
    map.append(true).expect("a map entry");
    let union_fields = UnionFields::try_new(
        [0, 1],
        [
            Field::new("i", DataType::Int32, false),
            Field::new("s", DataType::Utf8, false),
        ],
    )
    .expect("distinct type ids");
    let runs = RunArray::<Int32Type>::try_new(
        &Int32Array::from(vec![2, 5, 6]),
        &StringArray::from(vec![Some("a"), None, Some("c")]),
    )
    .expect("valid run ends");
    let list_values: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3), Some(4)]));
    let item = Arc::new(Field::new("item", DataType::Int32, true));
    let list_view = ListViewArray::try_new(
        Arc::clone(&item),
        ScalarBuffer::from(vec![2, 0, 0, 1]),
        ScalarBuffer::from(vec![2, 0, 3, 1]),
        Arc::clone(&list_values),
        Some(vec![true, false, true, true].into()),
    )
    .expect("a valid list view");
    let large_list_view = LargeListViewArray::try_new(
        item,
        ScalarBuffer::from(vec![3i64, 0, 1]),
        ScalarBuffer::from(vec![1i64, 2, 0]),
        list_values,
        None,
    )
    .expect("a valid large list view");
    vec![
        ("list view", Arc::new(list_view)),
        ("large list view", Arc::new(large_list_view)),
        ("int32", ints),
        (
            "float64",
            Arc::new(Float64Array::from(vec![0.5, -1.5, 2.25])),
        ),
        (
            "bool",
            Arc::new(BooleanArray::from(vec![
                Some(true),
                None,
                Some(false),
                Some(true),
            ])),
        ),
        (
            "utf8",
            Arc::new(StringArray::from(vec![Some("ab"), None, Some("")])),
        ),
        (
            "large utf8",
            Arc::new(LargeStringArray::from(vec!["large", "offsets"])),
        ),
        ("utf8 view", Arc::new(views.finish())),
        ("binary view", Arc::new(binary_views.finish())),
        ("list", Arc::new(list.finish())),
        (
            "fixed-size list",
            Arc::new(FixedSizeListArray::new(
                Arc::new(Field::new("item", DataType::Int64, false)),
                2,
                Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5, 6])),
                None,
            )),
        ),
        ("struct", Arc::new(structs)),
        ("dictionary", Arc::new(dictionary.finish())),
        ("run-end encoded", Arc::new(runs)),
        (
            "decimal128",
            Arc::new(
                Decimal128Array::from(vec![Some(12345), None])
                    .with_precision_and_scale(10, 2)
                    .expect("valid precision"),
            ),
        ),
        ("date32", Arc::new(Date32Array::from(vec![19000, 19001]))),
        (
            "timestamp with a zone",
            Arc::new(TimestampMicrosecondArray::from(vec![1, 2]).with_timezone("UTC")),
        ),
        ("null", Arc::new(NullArray::new(3))),
        (
            "binary",
            Arc::new(BinaryArray::from(vec![Some(&b"\x00\xff"[..]), None])),
        ),
        ("date64", Arc::new(Date64Array::from(vec![86_400_000, 0]))),
        ("time32", Arc::new(Time32SecondArray::from(vec![1, 59]))),
        (
            "duration",
            Arc::new(DurationNanosecondArray::from(vec![Some(5), None])),
        ),
        (
            "decimal256",
            Arc::new(Decimal256Array::from(vec![
                i256::from_i128(-7),
                i256::from_i128(9),
            ])),
        ),
        (
            "interval",
            Arc::new(IntervalMonthDayNanoArray::from(vec![
                IntervalMonthDayNano::new(1, 2, 3),
                IntervalMonthDayNano::new(-4, 0, 6),
            ])),
        ),
        (
            "large binary",
            Arc::new(LargeBinaryArray::from(vec![&b"ab"[..], b"", b"cde"])),
        ),
        (
            "fixed-size binary",
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    [Some(b"xy"), None, Some(b"zw")].into_iter(),
                    2,
                )
                .expect("two bytes each"),
            ),
        ),
        ("large list", Arc::new(large_list.finish())),
        ("map", Arc::new(map.finish())),
        (
            "sparse union",
            Arc::new(
                UnionArray::try_new(
                    union_fields.clone(),
                    ScalarBuffer::from(vec![0i8, 1, 0]),
                    None,
                    vec![
                        Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef,
                        Arc::new(StringArray::from(vec!["a", "b", "c"])),
                    ],
                )
                .expect("a valid sparse union"),
            ),
        ),
        (
            "dense union",
            Arc::new(
                UnionArray::try_new(
                    union_fields,
                    ScalarBuffer::from(vec![0i8, 1, 0]),
                    Some(ScalarBuffer::from(vec![0i32, 0, 1])),
                    vec![
                        Arc::new(Int32Array::from(vec![1, 3])) as ArrayRef,
                        Arc::new(StringArray::from(vec!["b"])),
                    ],
                )
                .expect("a valid dense union"),
            ),
        ),
    ]
}
