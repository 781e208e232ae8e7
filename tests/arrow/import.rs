//! Import of foreign Arrow structs: moves, release counts, the malformed-input table, typed
//! access, device arrays and consumed streams.

use std::ptr;

use crate::fixture::arrow::*;
use dlpack_abi::arrow::*;
use dlpack_abi::raw::*;

fn int32_schema() -> Schema {
    let mut raw = leaf("i");
    import_schema(&mut raw).unwrap()
}

#[test]
fn schema_import_moves_reads_and_releases_once() {
    let calls = counter();
    let child = schema(b"f", Some(b"x"), None, Vec::new(), &counter());
    let meta = metadata(&[("origin", b"test"), ("empty", b"")]);
    let mut raw = schema(b"+l", Some(b"values"), Some(meta), vec![child], &calls);
    raw.flags = ARROW_FLAG_NULLABLE | 64; // an unknown bit is kept
    let imported = import_schema(&mut raw).unwrap();
    assert!(
        raw.release.is_none(),
        "the source is marked released by the move"
    );
    let view = imported.view();
    assert_eq!(view.data_type(), DataType::List);
    assert_eq!(view.name(), Some("values"));
    assert_eq!(view.flags(), ARROW_FLAG_NULLABLE | 64);
    assert!(view.is_nullable());
    let metadata = view.metadata().unwrap();
    assert_eq!(metadata.len(), 2);
    assert_eq!(metadata.get("origin"), Some(&b"test"[..]));
    assert_eq!(
        metadata.iter().map(|(k, _)| k).collect::<Vec<_>>(),
        ["origin", "empty"]
    );
    let child = view.child(0).unwrap();
    assert_eq!(
        (child.data_type(), child.name()),
        (DataType::Float32, Some("x"))
    );
    assert!(view.child(1).is_none());
    assert!(view.dictionary().is_none());
    assert_eq!(count(&calls), 0);
    drop(imported);
    assert_eq!(count(&calls), 1);

    // Dictionary-encoded: int32 indices into utf8 values; one release for the whole tree.
    let calls = counter();
    let mut raw = with_dictionary(schema(b"i", None, None, vec![], &calls), leaf("u"));
    let imported = import_schema(&mut raw).unwrap();
    let dictionary = imported.view().dictionary().unwrap();
    assert_eq!(dictionary.data_type(), DataType::Utf8);
    drop(imported);
    assert_eq!(count(&calls), 1);
}

#[test]
fn released_and_null_structs_are_refused_without_a_release() {
    let calls = counter();
    let mut raw = schema(b"i", None, None, Vec::new(), &calls);
    let release = raw.release.take();
    assert_eq!(
        import_schema(&mut raw).unwrap_err(),
        ValidationError::Released
    );
    assert_eq!(
        // SAFETY: NULL is refused before anything is read.
        unsafe { Schema::from_raw(ptr::null_mut()) }.unwrap_err(),
        ValidationError::NullPointer
    );
    assert_eq!(count(&calls), 0);
    raw.release = release;
    drop(import_schema(&mut raw).unwrap());
    assert_eq!(count(&calls), 1);
}

#[test]
fn malformed_schemas_are_refused_and_released_once() {
    let invalid = |f: &str| ValidationError::InvalidFormat { format: excerpt(f) };
    let fst = |json: &str| {
        Some(metadata(&[
            ("ARROW:extension:name", b"arrow.fixed_shape_tensor"),
            ("ARROW:extension:metadata", json.as_bytes()),
        ]))
    };
    type Case = (
        &'static str,
        Box<dyn Fn(&Counter) -> ArrowSchema>,
        ValidationError,
    );
    let cases: Vec<Case> = vec![
        (
            "unknown format",
            Box::new(|c| schema(b"q", None, None, vec![], c)),
            invalid("q"),
        ),
        (
            "empty format",
            Box::new(|c| schema(b"", None, None, vec![], c)),
            invalid(""),
        ),
        (
            "list size missing",
            Box::new(|c| schema(b"+w:", None, None, vec![leaf("i")], c)),
            invalid("+w:"),
        ),
        (
            "negative size",
            Box::new(|c| schema(b"w:-1", None, None, vec![], c)),
            invalid("w:-1"),
        ),
        (
            "decimal width",
            Box::new(|c| schema(b"d:10,2,100", None, None, vec![], c)),
            invalid("d:10,2,100"),
        ),
        (
            "union id > 127",
            Box::new(|c| schema(b"+us:200", None, None, vec![leaf("i")], c)),
            invalid("+us:200"),
        ),
        (
            "time unit",
            Box::new(|c| schema(b"ttx", None, None, vec![], c)),
            invalid("ttx"),
        ),
        (
            "NULL format",
            Box::new(|c| ArrowSchema {
                format: ptr::null(),
                ..schema(b"i", None, None, vec![], c)
            }),
            ValidationError::NullFormat,
        ),
        (
            "name not UTF-8",
            Box::new(|c| schema(b"i", Some(b"\xff"), None, vec![], c)),
            ValidationError::NameNotUtf8,
        ),
        (
            "metadata count < 0",
            Box::new(|c| schema(b"i", None, Some((-1i32).to_ne_bytes().to_vec()), vec![], c)),
            ValidationError::Metadata(MetadataError::NegativeCount { count: -1 }),
        ),
        (
            "metadata length < 0",
            Box::new(|c| {
                let mut m = 1i32.to_ne_bytes().to_vec();
                m.extend((-5i32).to_ne_bytes());
                schema(b"i", None, Some(m), vec![], c)
            }),
            ValidationError::Metadata(MetadataError::NegativeLength { at: 4, length: -5 }),
        ),
        (
            "metadata key not UTF-8",
            Box::new(|c| schema(b"i", None, Some(bad_key()), vec![], c)),
            ValidationError::Metadata(MetadataError::KeyNotUtf8 { pair: 0 }),
        ),
        (
            "list without child",
            Box::new(|c| schema(b"+l", None, None, vec![], c)),
            ValidationError::ChildCount {
                expected: 1,
                found: 0,
            },
        ),
        (
            "int with a child",
            Box::new(|c| schema(b"i", None, None, vec![leaf("i")], c)),
            ValidationError::ChildCount {
                expected: 0,
                found: 1,
            },
        ),
        (
            "negative n_children",
            Box::new(|c| ArrowSchema {
                n_children: -2,
                ..schema(b"+s", None, None, vec![], c)
            }),
            ValidationError::NegativeChildren { n_children: -2 },
        ),
        (
            "NULL children",
            Box::new(|c| ArrowSchema {
                n_children: 1,
                ..schema(b"+s", None, None, vec![], c)
            }),
            ValidationError::NullChildren,
        ),
        (
            "released child",
            Box::new(|c| {
                // A consumer moved the child out and released it: it stays released here.
                let mut child = leaf("i");
                // SAFETY: the fixture's own release, called once by the test as a consumer would.
                unsafe { child.release.unwrap()(&mut child) };
                schema(b"+s", None, None, vec![child], c)
            }),
            ValidationError::ReleasedChild { index: 0 },
        ),
        (
            "child with a bad format",
            Box::new(|c| {
                schema(
                    b"+s",
                    None,
                    None,
                    vec![leaf("i"), schema(b"?", None, None, vec![], &counter())],
                    c,
                )
            }),
            invalid("?"),
        ),
        (
            "float dictionary index",
            Box::new(|c| with_dictionary(schema(b"f", None, None, vec![], c), leaf("u"))),
            ValidationError::DictionaryIndex {
                format: excerpt("f"),
            },
        ),
        (
            "released dictionary",
            Box::new(|c| {
                // A consumer moved the dictionary out and released it.
                let mut dictionary = leaf("u");
                // SAFETY: the fixture's own release, called once by the test as a consumer would.
                unsafe { dictionary.release.unwrap()(&mut dictionary) };
                with_dictionary(schema(b"i", None, None, vec![], c), dictionary)
            }),
            ValidationError::ReleasedDictionary,
        ),
        (
            "dictionary with a bad format",
            Box::new(|c| with_dictionary(schema(b"i", None, None, vec![], c), leaf("w:"))),
            invalid("w:"),
        ),
        (
            "tensor shape product",
            Box::new(move |c| schema(b"+w:6", None, fst(r#"{"shape":[2,4]}"#), vec![leaf("f")], c)),
            ValidationError::TensorParameter {
                key: TensorKey::Shape,
                value: Excerpt::of(b"[2,4]"),
                problem: ParameterProblem::NotListSize,
            },
        ),
        (
            "tensor JSON",
            Box::new(move |c| schema(b"+w:6", None, fst(r#"{"shape":[2,3"#), vec![leaf("f")], c)),
            ValidationError::TensorJson {
                at: 13,
                expected: "',' or ']'",
            },
        ),
        (
            "tensor permutation",
            Box::new(move |c| {
                schema(
                    b"+w:6",
                    None,
                    fst(r#"{"shape":[2,3],"permutation":[0,0]}"#),
                    vec![leaf("f")],
                    c,
                )
            }),
            ValidationError::TensorParameter {
                key: TensorKey::Permutation,
                value: Excerpt::of(b"[0,0]"),
                problem: ParameterProblem::NotPermutation { ndim: 2 },
            },
        ),
        (
            "tensor storage",
            Box::new(move |c| schema(b"+l", None, fst(r#"{"shape":[6]}"#), vec![leaf("f")], c)),
            ValidationError::ExtensionMetadata {
                reason: "fixed_shape_tensor storage is not a fixed-size list",
            },
        ),
    ];
    for (name, make, expected) in cases {
        let calls = counter();
        let mut raw = make(&calls);
        let error = import_schema(&mut raw).unwrap_err();
        assert_eq!(error, expected, "{name}");
        assert!(!error.to_string().is_empty());
        assert_eq!(count(&calls), 1, "{name}: released exactly once");
        assert!(raw.release.is_none(), "{name}");
    }
}

fn bad_key() -> Vec<u8> {
    let mut m = 1i32.to_ne_bytes().to_vec();
    m.extend(1i32.to_ne_bytes());
    m.push(0xff);
    m.extend(0i32.to_ne_bytes());
    m
}

fn excerpt(text: &str) -> Excerpt {
    Excerpt::of(text.as_bytes())
}

#[test]
fn malformed_arrays_are_refused_and_released_once() {
    let i32_schema = int32_schema();
    let fsl_raw = schema(b"+w:2", None, None, vec![leaf("i")], &counter());
    let fsl_schema = import_schema(&mut { fsl_raw }).unwrap();
    let values = || bytes_of(&[1i32, 2, 3, 4]);
    type Case = (
        &'static str,
        bool,
        Box<dyn Fn(&Counter) -> ArrowArray>,
        ValidationError,
    );
    let cases: Vec<Case> = vec![
        (
            "negative length",
            false,
            Box::new(move |c| array(-1, 0, 0, vec![None, values()], vec![], c)),
            ValidationError::NegativeLength { length: -1 },
        ),
        (
            "negative offset",
            false,
            Box::new(move |c| array(2, 0, -3, vec![None, values()], vec![], c)),
            ValidationError::NegativeOffset { offset: -3 },
        ),
        (
            "null_count -2",
            false,
            Box::new(move |c| array(2, -2, 0, vec![None, values()], vec![], c)),
            ValidationError::InvalidNullCount {
                null_count: -2,
                length: 2,
            },
        ),
        (
            "null_count > length",
            false,
            Box::new(move |c| array(2, 3, 0, vec![bytes_of(&[0u8]), values()], vec![], c)),
            ValidationError::InvalidNullCount {
                null_count: 3,
                length: 2,
            },
        ),
        (
            "three buffers",
            false,
            Box::new(move |c| array(2, 0, 0, vec![None, values(), None], vec![], c)),
            ValidationError::BufferCount {
                expected: 2,
                found: 3,
            },
        ),
        (
            "one buffer",
            false,
            Box::new(move |c| array(2, 0, 0, vec![None], vec![], c)),
            ValidationError::BufferCount {
                expected: 2,
                found: 1,
            },
        ),
        (
            "NULL buffers",
            false,
            Box::new(move |c| ArrowArray {
                buffers: ptr::null_mut(),
                ..array(2, 0, 0, vec![None, values()], vec![], c)
            }),
            ValidationError::NullBuffers,
        ),
        (
            "NULL data",
            false,
            Box::new(|c| array(2, 0, 0, vec![None, None], vec![], c)),
            ValidationError::NullBuffer { index: 1 },
        ),
        (
            "nulls without bitmap",
            false,
            Box::new(move |c| array(2, 1, 0, vec![None, values()], vec![], c)),
            ValidationError::NullBuffer { index: 0 },
        ),
        (
            "offset + length overflow",
            false,
            Box::new(move |c| array(2, 0, i64::MAX, vec![None, values()], vec![], c)),
            ValidationError::SizeOverflow,
        ),
        (
            "bytes overflow isize",
            false,
            Box::new(move |c| array(1, 0, i64::MAX / 2, vec![None, values()], vec![], c)),
            ValidationError::SizeOverflow,
        ),
        (
            "child where none",
            false,
            Box::new(move |c| {
                array(
                    2,
                    0,
                    0,
                    vec![None, values()],
                    vec![int32s(&[1], &counter())],
                    c,
                )
            }),
            ValidationError::ChildCount {
                expected: 0,
                found: 1,
            },
        ),
        (
            "list child too short",
            true,
            Box::new(|c| {
                array(
                    3,
                    0,
                    0,
                    vec![None],
                    vec![int32s(&[1, 2, 3, 4, 5], &counter())],
                    c,
                )
            }),
            ValidationError::ChildTooShort {
                index: 0,
                needed: 6,
                found: 5,
            },
        ),
        (
            "NULL children",
            true,
            Box::new(|c| ArrowArray {
                n_children: 1,
                ..array(1, 0, 0, vec![None], vec![], c)
            }),
            ValidationError::NullChildren,
        ),
        (
            "released child",
            true,
            Box::new(|c| {
                // A consumer moved the child out and released it: it stays released here.
                let mut child = int32s(&[1, 2], &counter());
                // SAFETY: the fixture's own release, called once by the test as a consumer would.
                unsafe { child.release.unwrap()(&mut child) };
                array(1, 0, 0, vec![None], vec![child], c)
            }),
            ValidationError::ReleasedChild { index: 0 },
        ),
        (
            "child negative length",
            true,
            Box::new(|c| {
                array(
                    0,
                    0,
                    0,
                    vec![None],
                    vec![array(-4, 0, 0, vec![None, None], vec![], &counter())],
                    c,
                )
            }),
            ValidationError::NegativeLength { length: -4 },
        ),
        (
            "dictionary the schema lacks",
            false,
            Box::new(move |c| {
                with_array_dictionary(
                    array(2, 0, 0, vec![None, values()], vec![], c),
                    int32s(&[1], &counter()),
                )
            }),
            ValidationError::DictionaryMismatch,
        ),
    ];
    for (name, list, make, expected) in cases {
        let calls = counter();
        let mut raw = make(&calls);
        let schema = if list {
            fsl_schema.view()
        } else {
            i32_schema.view()
        };
        let error = import_array(&mut raw, schema).unwrap_err();
        assert_eq!(error, expected, "{name}");
        assert_eq!(count(&calls), 1, "{name}: released exactly once");
    }
}

#[test]
fn typed_access_applies_offset_validity_and_types() {
    let schema = int32_schema();
    let calls = counter();
    // Values 10..15, offset 1, length 4, the value at index 1 (buffer slot 2) null.
    let validity = 0b1111_1011u8;
    let mut raw = array(
        4,
        1,
        1,
        vec![Some(vec![validity]), bytes_of(&[10i32, 11, 12, 13, 14])],
        vec![],
        &calls,
    );
    let imported = import_array(&mut raw, schema.view()).unwrap();
    let view = imported.view(schema.view()).unwrap();
    assert_eq!(view.values::<i32>().unwrap(), &[11, 12, 13, 14]);
    let bitmap = view.validity().unwrap().unwrap();
    assert_eq!(bitmap.iter().collect::<Vec<_>>(), [true, false, true, true]);
    assert_eq!((view.null_count(), bitmap.count_ones()), (Some(1), 3));
    assert!(matches!(
        view.values::<u32>(),
        Err(ReadError::TypeMismatch { .. })
    ));
    assert!(matches!(
        view.values::<f32>(),
        Err(ReadError::TypeMismatch { .. })
    ));
    drop(imported);
    assert_eq!(count(&calls), 1);

    let mut bool_schema = leaf("b");
    let bool_schema = import_schema(&mut bool_schema).unwrap();
    let mut raw = array(
        10,
        0,
        3,
        vec![None, Some(vec![0b0101_1000, 0b0001_0110])],
        vec![],
        &counter(),
    );
    let booleans = import_array(&mut raw, bool_schema.view()).unwrap();
    let bits = booleans
        .view(bool_schema.view())
        .unwrap()
        .booleans()
        .unwrap();
    let expected = [
        true, true, false, true, false, false, true, true, false, true,
    ];
    assert_eq!(bits.iter().collect::<Vec<_>>(), expected);
}

#[test]
fn misaligned_values_are_refused() {
    let mut raw = leaf("l");
    let schema = import_schema(&mut raw).unwrap();
    let mut raw = array(
        1,
        0,
        0,
        vec![None, bytes_of(&[0u8; 16])],
        vec![],
        &counter(),
    );
    // Point the data buffer one byte in.
    // SAFETY: the fixture's `buffers` array holds the 2 pointers counted, owned by the test.
    let buffers = unsafe { std::slice::from_raw_parts_mut(raw.buffers, 2) };
    buffers[1] = buffers[1].cast::<u8>().wrapping_add(1).cast();
    let array = import_array(&mut raw, schema.view()).unwrap();
    assert_eq!(
        array.view(schema.view()).unwrap().values::<i64>(),
        Err(ReadError::Misaligned { index: 1 })
    );
}

#[test]
fn device_arrays_import_and_guard_host_access() {
    let schema = int32_schema();
    let calls = counter();
    let mut raw = device_array(
        int32s(&[1, 2, 3], &calls),
        ARROW_DEVICE_CPU,
        ptr::null_mut(),
    );
    let cpu = import_device_array(&mut raw, schema.view()).unwrap();
    assert!(raw.array.release.is_none());
    assert_eq!(
        cpu.view(schema.view()).unwrap().values::<i32>().unwrap(),
        &[1, 2, 3]
    );
    drop(cpu);
    assert_eq!(count(&calls), 1);

    let mut raw = device_array(int32s(&[1], &counter()), ARROW_DEVICE_CUDA, ptr::null_mut());
    let gpu = import_device_array(&mut raw, schema.view()).unwrap();
    let view = gpu.view(schema.view()).unwrap();
    assert!(view.buffer(1).is_some());
    assert_eq!(
        view.values::<i32>(),
        Err(ReadError::NotHostAccessible {
            device_type: kDLCUDA
        })
    );

    // 20 is DLPack's TPU pinned host memory (not in a release yet), which Arrow does not define:
    // not taken to be host memory in an Arrow array.
    let mut raw = device_array(
        int32s(&[1], &counter()),
        ArrowDeviceType(20),
        ptr::null_mut(),
    );
    let unknown = import_device_array(&mut raw, schema.view()).unwrap();
    assert_eq!(
        unknown.view(schema.view()).unwrap().values::<i32>(),
        Err(ReadError::NotHostAccessible {
            device_type: kDLTPUHost
        })
    );
    assert!(unknown.check_host_readable(true).is_err());

    let mut event = 0u64;
    let mut raw = device_array(
        int32s(&[5], &counter()),
        ARROW_DEVICE_CUDA_HOST,
        (&raw mut event).cast(),
    );
    let pinned = import_device_array(&mut raw, schema.view()).unwrap();
    assert_eq!(
        pinned.sync_event().map(|e| e.as_ptr().cast::<u64>()),
        Some(&raw mut event)
    );
    assert!(pinned.view(schema.view()).unwrap().values::<i32>().is_err());
    // SAFETY: the "event" is a test integer with nothing pending; the buffers are host memory.
    let synced = unsafe { pinned.view_synchronized(schema.view()) }.unwrap();
    assert_eq!(synced.values::<i32>().unwrap(), &[5]);
}

#[test]
fn device_types_convert_losslessly() {
    for &arrow in ArrowDeviceType::KNOWN {
        let dlpack = DLDeviceType::from(arrow);
        assert_eq!(dlpack.0, arrow.0);
        assert_eq!(ArrowDeviceType::try_from(dlpack), Ok(arrow));
        assert!(
            dlpack.name().is_some(),
            "{arrow:?} is a DLPack device type too"
        );
    }
    for device_type in [
        kDLMAIA,
        kDLTrn,
        DLDeviceType(19),
        DLDeviceType(5),
        DLDeviceType(-1),
    ] {
        assert_eq!(
            ArrowDeviceType::try_from(device_type),
            Err(BridgeError::DeviceNotInArrow { device_type })
        );
    }
    let huge = i64::from(i32::MAX) + 1;
    assert_eq!(
        dlpack_device(ARROW_DEVICE_CUDA, huge),
        Err(BridgeError::DeviceIdOutOfRange { device_id: huge })
    );
}

#[test]
fn metadata_lengths_past_the_end_are_errors() {
    let good = metadata(&[("k", b"value")]);
    assert!(Metadata::parse(&good).is_ok());
    for cut in 0..good.len() {
        let error = Metadata::parse(&good[..cut]).unwrap_err();
        assert!(
            matches!(error, MetadataError::Truncated { len, .. } if len == cut),
            "cut {cut}: {error:?}"
        );
    }
    let mut past = 1i32.to_ne_bytes().to_vec();
    past.extend(1000i32.to_ne_bytes());
    past.extend(b"k");
    assert_eq!(
        Metadata::parse(&past),
        Err(MetadataError::Truncated {
            at: 8,
            needed: 1000,
            len: 9
        })
    );
}

fn stream_of(items: Vec<Result<Vec<i32>, ProducerError>>) -> ArrowArrayStream {
    let arrays = items
        .into_iter()
        .map(|item| item.map(|v| Array::from_vec(v).unwrap()));
    ArrayStream::from_iter(SchemaDef::new("i").unwrap(), arrays)
        .unwrap()
        .into_raw()
}

#[test]
fn streams_iterate_to_the_end() {
    let mut raw = stream_of(vec![Ok(vec![1, 2]), Ok(vec![]), Ok(vec![3])]);
    let mut stream = import_stream(&mut raw).unwrap();
    assert!(raw.release.is_none());
    assert_eq!(stream.schema().unwrap().data_type(), DataType::Int32);
    let arrays: Vec<Array> = stream.by_ref().map(Result::unwrap).collect();
    assert!(stream.next().is_none());
    let schema = stream.into_schema().unwrap(); // the stream is released; arrays outlive it
    let values: Vec<i32> = arrays
        .iter()
        .flat_map(|a| {
            a.view(schema.view())
                .unwrap()
                .values::<i32>()
                .unwrap()
                .to_vec()
        })
        .collect();
    assert_eq!(values, [1, 2, 3]);
}

#[test]
fn stream_errors_carry_code_and_message_or_none() {
    for message in [Some("disk on fire"), None] {
        let error = match message {
            Some(m) => ProducerError::new(errno::EIO, Some(m)),
            None => ProducerError::code_only(errno::EINVAL),
        };
        let mut raw = stream_of(vec![Ok(vec![1]), Err(error.clone()), Ok(vec![2])]);
        let mut stream = import_stream(&mut raw).unwrap();
        assert!(stream.next().unwrap().is_ok());
        let Some(Err(StreamError::Producer(got))) = stream.next() else {
            panic!("error expected")
        };
        assert_eq!(got, error);
        assert_eq!(got.message(), message);
        assert!(stream.next().is_none(), "fused after an error");
    }
    // A producer without get_last_error: the code, no message.
    let mut raw = stream_of(vec![Err(ProducerError::new(errno::ENOMEM, Some("lost")))]);
    raw.get_last_error = None;
    let mut stream = import_stream(&mut raw).unwrap();
    let Some(Err(StreamError::Producer(got))) = stream.next() else {
        panic!("error expected")
    };
    assert_eq!((got.code(), got.message()), (errno::ENOMEM, None));
    // No get_next: refused at import, and released.
    let mut raw = stream_of(vec![]);
    raw.get_next = None;
    assert_eq!(
        import_stream(&mut raw).unwrap_err(),
        ValidationError::NullCallback { name: "get_next" }
    );
}

#[test]
fn stream_items_that_do_not_fit_the_schema_end_the_stream() {
    // f64 values under an int32 schema: the buffer was sized for f64, so it is refused.
    let items = vec![Ok(Array::from_vec(vec![1.0f64]).unwrap())];
    let mut stream = ArrayStream::from_iter(SchemaDef::new("i").unwrap(), items).unwrap();
    let Some(Err(StreamError::Producer(error))) = stream.next() else {
        panic!("error expected")
    };
    assert_eq!(error.code(), errno::EINVAL);
    assert_eq!(
        error.message(),
        Some(&*ValidationError::SchemaMismatch.to_string())
    );
    let items = vec![Ok(Array::fixed_size_list(
        Array::from_vec(vec![1i32, 2]).unwrap(),
        2,
    )
    .unwrap())];
    let mut stream = ArrayStream::from_iter(SchemaDef::new("i").unwrap(), items).unwrap();
    let Some(Err(StreamError::Producer(error))) = stream.next() else {
        panic!("error expected")
    };
    assert_eq!(error.code(), errno::EINVAL);
    assert_eq!(
        error.message(),
        Some(&*ValidationError::SchemaMismatch.to_string())
    );
}

#[test]
fn device_streams_check_the_device_type() {
    let cpu = || Ok(DeviceArray::from_cpu(Array::from_vec(vec![1i32]).unwrap()));
    let mut raw = DeviceArrayStream::from_iter(
        SchemaDef::new("i").unwrap(),
        ARROW_DEVICE_CPU,
        vec![cpu(), cpu()],
    )
    .unwrap()
    .into_raw();
    let stream = import_device_stream(&mut raw).unwrap();
    assert_eq!(stream.device_type(), ARROW_DEVICE_CPU);
    assert_eq!(stream.map(Result::unwrap).count(), 2);
    let mut wrong =
        DeviceArrayStream::from_iter(SchemaDef::new("i").unwrap(), ARROW_DEVICE_CUDA, vec![cpu()])
            .unwrap();
    let Some(Err(StreamError::Producer(error))) = wrong.next() else {
        panic!("error expected")
    };
    assert_eq!(
        error.message(),
        Some("a stream of kDLCUDA produced an array on kDLCPU")
    );
}

#[test]
fn export_into_caller_memory_moves_without_reading() {
    let calls = counter();
    let schema = int32_schema();
    let mut raw = int32s(&[4, 5], &calls);
    let array = import_array(&mut raw, schema.view()).unwrap();
    let mut out = std::mem::MaybeUninit::<ArrowArray>::uninit();
    // SAFETY: `out` is writable memory for one struct.
    unsafe { array.export_to(out.as_mut_ptr()) };
    // SAFETY: `export_to` wrote the whole struct.
    let mut out = unsafe { out.assume_init() };
    assert_eq!(count(&calls), 0);
    // SAFETY: the test now owns the base struct and releases it once, as a C consumer would.
    unsafe { out.release.unwrap()(&mut out) };
    assert_eq!(count(&calls), 1);
}

#[test]
fn arrays_are_only_read_with_the_schema_they_were_sized_for() {
    // A Rust-built int32 array read through an int64 schema would read past its buffer.
    let values = Array::from_vec(vec![1i32, 2]).unwrap();
    let wide = SchemaDef::new("l").unwrap().export().unwrap();
    assert_eq!(
        values.view(wide.view()).unwrap_err(),
        ValidationError::SchemaMismatch
    );
    let exact = SchemaDef::new("i")
        .unwrap()
        .with_name("any name")
        .export()
        .unwrap();
    assert_eq!(
        values.view(exact.view()).unwrap().values::<i32>().unwrap(),
        &[1, 2]
    );

    // An imported array is bound to the schema (the object) it was validated with: another
    // schema, even of the same layout, and a child node of the right one are refused.
    let schema = int32_schema();
    let mut raw = int32s(&[5, 6], &counter());
    let imported = import_array(&mut raw, schema.view()).unwrap();
    assert!(imported.view(schema.view()).is_ok());
    let twin = int32_schema();
    assert_eq!(
        imported.view(twin.view()).unwrap_err(),
        ValidationError::SchemaMismatch
    );
    let mut raw = schema_with_child();
    let list = import_schema(&mut raw).unwrap();
    let child = list.view().child(0).unwrap();
    assert_eq!(
        imported.view(child).unwrap_err(),
        ValidationError::SchemaMismatch
    );
    // Nor can it be wrapped into a list whose layout this crate would have to vouch for.
    assert_eq!(
        Array::fixed_size_list(imported, 2).unwrap_err(),
        ValidationError::SchemaMismatch
    );

    // A device array from a moved Schema still matches (the root's identity is the object).
    let moved = Box::new(schema);
    let mut raw = ArrowDeviceArray {
        array: int32s(&[7], &counter()),
        device_id: -1,
        device_type: ARROW_DEVICE_CPU,
        sync_event: ptr::null_mut(),
        reserved: [0; 3],
    };
    let device = import_device_array(&mut raw, moved.view()).unwrap();
    let moved_again = *moved;
    assert_eq!(
        device
            .view(moved_again.view())
            .unwrap()
            .values::<i32>()
            .unwrap(),
        &[7]
    );
    assert_eq!(
        device.view(twin.view()).unwrap_err(),
        ValidationError::SchemaMismatch
    );
}

fn schema_with_child() -> ArrowSchema {
    schema(b"+l", None, None, vec![leaf("i")], &counter())
}
