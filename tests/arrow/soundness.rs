//! Regressions from the soundness review of the Arrow layer: each test failed before its fix.
//! The 32-bit cases run natively on i686 and under Miri with `--target i686-unknown-linux-gnu`.

use std::ptr;

use crate::fixture::arrow::*;
use dlpack_abi::arrow::*;
use dlpack_abi::raw::*;

/// A dictionary-encoded array's buffers hold indices: bridging it as the values would hand out
/// the wrong data (an int32-indexed f64 dictionary came out as int32 `[1, 0, 1]`).
#[test]
fn dictionary_encoded_arrays_are_refused_by_the_bridge() {
    let mut raw = with_dictionary(schema(b"i", None, None, vec![], &counter()), leaf("g"));
    let indexed = import_schema(&mut raw).unwrap();
    let calls = counter();
    let values = array(
        2,
        0,
        0,
        vec![None, bytes_of(&[0.5f64, 1.5])],
        vec![],
        &counter(),
    );
    let mut raw = with_array_dictionary(int32s(&[1, 0, 1], &calls), values);
    let cpu = DeviceArray::from_cpu(import_array(&mut raw, indexed.view()).unwrap());
    assert_eq!(
        cpu.into_tensor(indexed.view()).unwrap_err(),
        BridgeError::DictionaryEncoded
    );
    assert_eq!(count(&calls), 1, "released once");

    // The same inside a fixed_shape_tensor: its value child is dictionary-encoded.
    let meta = metadata(&[
        (EXTENSION_NAME_KEY, FIXED_SHAPE_TENSOR.as_bytes()),
        (EXTENSION_METADATA_KEY, br#"{"shape":[2]}"#),
    ]);
    let child = with_dictionary(schema(b"i", None, None, vec![], &counter()), leaf("g"));
    let mut raw = schema(b"+w:2", None, Some(meta), vec![child], &counter());
    let cells = import_schema(&mut raw).unwrap();
    let calls = counter();
    let values = array(
        2,
        0,
        0,
        vec![None, bytes_of(&[0.5f64, 1.5])],
        vec![],
        &counter(),
    );
    let indices = with_array_dictionary(int32s(&[1, 0], &counter()), values);
    let mut raw = array(1, 0, 0, vec![None], vec![indices], &calls);
    let cpu = DeviceArray::from_cpu(import_array(&mut raw, cells.view()).unwrap());
    assert_eq!(
        cpu.into_tensor(cells.view()).unwrap_err(),
        BridgeError::DictionaryEncoded
    );
    assert_eq!(count(&calls), 1, "released once");
}

/// Alignment is a property of addresses: the bridge checks it on every device whose buffers are
/// addresses (it did on the CPU only), and not for devices that pass handles.
#[test]
fn the_bridge_checks_alignment_on_every_addressable_device() {
    let mut raw = leaf("f");
    let floats = import_schema(&mut raw).unwrap();
    for (device_type, refused) in [
        (ARROW_DEVICE_CPU, true),
        (ARROW_DEVICE_CUDA_HOST, true),
        (ARROW_DEVICE_CUDA, true),
        (ARROW_DEVICE_OPENCL, false),
    ] {
        let calls = counter();
        let values = array(2, 0, 0, vec![None, bytes_of(&[0u32; 3])], vec![], &calls);
        // The values one byte into their words: misaligned for f32.
        // SAFETY: `buffers` holds two pointers, the second to 12 bytes of the fixture's own.
        unsafe {
            let buffer = values.buffers.add(1);
            *buffer = (*buffer).cast::<u8>().add(1).cast();
        }
        let mut raw = device_array(values, device_type, ptr::null_mut());
        let array = import_device_array(&mut raw, floats.view()).unwrap();
        let bridged = array.into_tensor(floats.view());
        assert_eq!(
            bridged.as_ref().err(),
            refused.then_some(&BridgeError::Misaligned),
            "{device_type:?}"
        );
        drop(bridged);
        assert_eq!(count(&calls), 1, "{device_type:?}: released once");
    }
}

/// The error value of `Array::fixed_size_list` wrapped to a negative `needed`.
#[test]
fn fixed_size_list_reports_a_needed_length_that_does_not_wrap() {
    let values = [1i32, 2, 3, 4, 5];
    for list_size in [usize::MAX, usize::MAX / 2 + 1, 3] {
        let parts = ArrayParts::new(5, vec![ptr::null(), values.as_ptr().cast()]);
        // SAFETY: five i32s that outlive the array, read by nobody (the list is refused).
        let vouched = unsafe { Array::from_parts(parts, ()) };
        let error = Array::fixed_size_list(vouched, list_size).unwrap_err();
        // The next multiple of the list size above 5, capped where it does not fit an i64.
        let needed = if list_size == 3 {
            6
        } else {
            i64::try_from(list_size).unwrap_or(i64::MAX)
        };
        assert_eq!(
            error,
            ValidationError::ChildTooShort {
                index: 0,
                needed,
                found: 5
            },
            "{list_size}"
        );
    }
}

/// A `w:1000000000` field with a NULL data buffer: accepted on i686 (the bit width overflowed a
/// 32-bit `usize`, so no buffer was required) and refused on x86_64.
#[test]
fn a_wide_fixed_size_binary_needs_its_buffer_on_every_target() {
    let mut raw = leaf("w:1000000000");
    let wide = import_schema(&mut raw).unwrap();
    let calls = counter();
    let mut raw = array(1, 0, 0, vec![None, None], vec![], &calls);
    assert_eq!(
        import_array(&mut raw, wide.view()).unwrap_err(),
        ValidationError::NullBuffer { index: 1 }
    );
    assert_eq!(count(&calls), 1);
    assert_eq!(
        DataType::FixedSizeBinary(1_000_000_000).bit_width(),
        Some(8_000_000_000)
    );
}

/// `n_children` of 2^32 + 1 was read as 1 on i686 (accepted with one child), and walked past
/// the children array on x86_64. Counts above the node budget are refused before any child is
/// read, on every target.
#[test]
fn a_schema_child_count_above_the_node_budget_is_refused_unread() {
    let calls = counter();
    let mut raw = schema(b"+s", None, None, vec![leaf("i")], &calls);
    raw.n_children = (1 << 32) + 1;
    assert_eq!(
        import_schema(&mut raw).unwrap_err(),
        ValidationError::TooManyNodes
    );
    assert_eq!(count(&calls), 1, "released once");

    let calls = counter();
    let mut raw = schema(b"+s", None, None, vec![leaf("i")], &calls);
    raw.n_children = MAX_NODES as i64;
    assert_eq!(
        import_schema(&mut raw).unwrap_err(),
        ValidationError::TooManyNodes
    );
    assert_eq!(count(&calls), 1);
}

/// An array's `n_children` is compared with its schema's as a 64-bit count: 2^32 + 1 is not 1.
#[test]
fn an_array_child_count_is_compared_in_full() {
    let mut raw = schema(b"+s", None, None, vec![leaf("i")], &counter());
    let structs = import_schema(&mut raw).unwrap();
    let calls = counter();
    let mut raw = array(1, 0, 0, vec![None], vec![int32s(&[7], &counter())], &calls);
    raw.n_children = (1 << 32) + 1;
    assert_eq!(
        import_array(&mut raw, structs.view()).unwrap_err(),
        ValidationError::ChildCount {
            expected: 1,
            found: (1 << 32) + 1
        }
    );
    assert_eq!(count(&calls), 1);
}

/// A view type's buffer count is open-ended; on 32-bit targets 2^32 + 3 was read as 3.
#[cfg(target_pointer_width = "32")]
#[test]
fn a_view_buffer_count_above_the_address_space_is_refused() {
    let mut raw = leaf("vu");
    let views = import_schema(&mut raw).unwrap();
    let calls = counter();
    let mut raw = array(0, 0, 0, vec![None, None, None], vec![], &calls);
    raw.n_buffers = (1 << 32) + 3;
    assert_eq!(
        import_array(&mut raw, views.view()).unwrap_err(),
        ValidationError::TooManyBuffers {
            n_buffers: (1 << 32) + 3
        }
    );
    assert_eq!(count(&calls), 1);
}

/// The Arrow errors by contract, and a typed read's `Result`, stay small.
#[test]
fn errors_are_small() {
    use std::mem::size_of;
    let sizes = [
        size_of::<ValidationError>(),
        size_of::<ReadError>(),
        size_of::<BridgeError>(),
        size_of::<ArrowError>(),
        size_of::<Result<&[f32], ReadError>>(),
    ];
    #[cfg(target_pointer_width = "64")]
    assert_eq!(sizes, [32, 32, 40, 40, 32]);
    #[cfg(target_pointer_width = "32")] // i686 (`u64` aligned to 4)
    assert_eq!(sizes, [28, 32, 28, 32, 32]);
}
