//! The core's buffer sizes (`ArrayView::buffer_len`, what a borrow registry registers) against
//! arrow-rs's own C Data import, which sizes every buffer it wraps by its reading of the
//! layouts: the same size for every buffer of every node, for every type, sliced.

use arrow_array::ffi::{from_ffi, to_ffi};
use arrow_array::Array as _;
use arrow_data::ArrayData;
use dlpack_abi::arrow::{Array, ArrayView, DataType, Schema};
use dlpack_abi::raw::{ArrowArray, ArrowSchema};

use super::types::arrays;

/// Every buffer size of `ours` and its children against arrow-rs's import of the same data.
fn same_sizes(ours: ArrayView<'_>, theirs: &ArrayData, path: &str) {
    let data_type = ours.data_type();
    let first = usize::from(data_type.has_validity());
    if let Some(nulls) = theirs.nulls() {
        assert_eq!(
            ours.buffer_len(0),
            Some(nulls.buffer().len()),
            "{path}: validity"
        );
    }
    for (k, buffer) in theirs.buffers().iter().enumerate() {
        let index = first + k;
        assert_eq!(
            ours.buffer_len(index),
            Some(buffer.len()),
            "{path}: buffer {index}"
        );
    }
    if matches!(data_type, DataType::BinaryView | DataType::Utf8View) {
        let sizes = ours.n_buffers() - 1; // not a buffer of arrow-rs's: the data sizes
        assert_eq!(
            ours.buffer_len(sizes),
            Some(8 * (sizes - 2)),
            "{path}: sizes"
        );
    }
    assert_eq!(
        ours.buffer_len(ours.n_buffers()),
        None,
        "{path}: past the last buffer"
    );
    match ours.dictionary() {
        Some(dictionary) => {
            same_sizes(dictionary, &theirs.child_data()[0], &format!("{path}.dict"))
        }
        None => {
            for (index, (child, theirs)) in ours.children().zip(theirs.child_data()).enumerate() {
                same_sizes(child, theirs, &format!("{path}.{index}"));
            }
        }
    }
}

#[test]
fn buffer_sizes_agree_with_arrow_rs_import() {
    for (name, array) in arrays() {
        for (offset, length) in [(0, array.len()), (1, array.len() - 1), (array.len(), 0)] {
            let data = array.slice(offset, length).to_data();
            let (ffi_array, ffi_schema) = to_ffi(&data).unwrap();
            // SAFETY: arrow-rs exported both; its import takes the array and reads the schema.
            let theirs = unsafe { from_ffi(ffi_array, &ffi_schema) }.unwrap();
            let (mut ffi_array, mut ffi_schema) = to_ffi(&data).unwrap();
            // SAFETY: an `FFI_ArrowSchema` is an `ArrowSchema` (the bridge asserts their
            // layouts), and arrow-rs exported it; `from_raw` moves it out.
            let schema = unsafe {
                Schema::from_raw(std::ptr::from_mut(&mut ffi_schema).cast::<ArrowSchema>())
            }
            .unwrap();
            // SAFETY: as above, for the array.
            let ours = unsafe {
                Array::from_raw(
                    std::ptr::from_mut(&mut ffi_array).cast::<ArrowArray>(),
                    schema.view(),
                )
            }
            .unwrap();
            let path = format!("{name}[{offset}..+{length}]");
            same_sizes(ours.view(schema.view()).unwrap(), &theirs, &path);
        }
    }
}
