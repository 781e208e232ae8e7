//! Compile-time proof of every size, alignment and field offset, for the three ABI families.
//!
//! Each expectation is `[LP64, i686, ILP32-a8]`: LP64 is x86_64 and aarch64; i686 is 32-bit with
//! `u64` aligned to 4 (i686 SysV); ILP32-a8 is 32-bit with `u64` aligned to 8 (armv7, thumbv7em,
//! wasm32). The numbers come from the upstream headers compiled by gcc; `layout-checks/` proves
//! them against the real headers on x86_64 and i686.

use core::mem::{align_of, offset_of, size_of};

use static_assertions::assert_not_impl_any;

use super::*;

/// This target's column in the expectation arrays.
const FAMILY: usize = match (size_of::<usize>(), align_of::<u64>()) {
    (8, 8) => 0,
    (4, 4) => 1,
    (4, 8) => 2,
    _ => panic!(
        "dlpack-abi supports 64-bit targets and 32-bit targets with 4- or 8-byte u64 alignment"
    ),
};

macro_rules! assert_layout {
    ($ty:ty { size: $size:expr, align: $align:expr, $($field:ident: $offset:expr),+ $(,)? }) => {
        const _: () = {
            assert!(size_of::<$ty>() == $size[FAMILY], concat!("size of ", stringify!($ty)));
            assert!(align_of::<$ty>() == $align[FAMILY], concat!("alignment of ", stringify!($ty)));
            $(assert!(
                offset_of!($ty, $field) == $offset[FAMILY],
                concat!("offset of ", stringify!($ty), ".", stringify!($field)),
            );)+
        };
    };
}

/// The same number on all three families.
const fn same(n: usize) -> [usize; 3] {
    [n, n, n]
}

// dlpack/dlpack.h
assert_layout!(DLPackVersion {
    size: same(8),
    align: same(4),
    major: same(0),
    minor: same(4)
});
const _: () = assert!(size_of::<DLDeviceType>() == 4 && align_of::<DLDeviceType>() == 4);
assert_layout!(DLDevice {
    size: same(8),
    align: same(4),
    device_type: same(0),
    device_id: same(4)
});
const _: () = assert!(
    size_of::<DLDataTypeCode>() == 1,
    "DLDataType.code is a uint8_t"
);
assert_layout!(DLDataType {
    size: same(4),
    align: same(2),
    code: same(0),
    bits: same(1),
    lanes: same(2)
});
assert_layout!(DLTensor {
    size: [48, 36, 40],
    align: [8, 4, 8],
    data: same(0),
    device: [8, 4, 4],
    ndim: [16, 12, 12],
    dtype: [20, 16, 16],
    shape: [24, 20, 20],
    strides: [32, 24, 24],
    byte_offset: [40, 28, 32],
});
assert_layout!(DLManagedTensor {
    size: [64, 44, 48],
    align: [8, 4, 8],
    dl_tensor: same(0),
    manager_ctx: [48, 36, 40],
    deleter: [56, 40, 44],
});
const _: () =
    assert!(size_of::<DLPackFlags>() == 8 && align_of::<DLPackFlags>() == align_of::<u64>());
assert_layout!(DLManagedTensorVersioned {
    size: [80, 60, 64],
    align: [8, 4, 8],
    version: same(0),
    manager_ctx: same(8),
    deleter: [16, 12, 12],
    flags: [24, 16, 16],
    dl_tensor: [32, 24, 24],
});
assert_layout!(DLPackExchangeAPIHeader {
    size: [16, 12, 12],
    align: [8, 4, 4],
    version: same(0),
    prev_api: same(8)
});
assert_layout!(DLPackExchangeAPI {
    size: [56, 32, 32],
    align: [8, 4, 4],
    header: same(0),
    managed_tensor_allocator: [16, 12, 12],
    managed_tensor_from_py_object_no_sync: [24, 16, 16],
    managed_tensor_to_py_object_no_sync: [32, 20, 20],
    dltensor_from_py_object_no_sync: [40, 24, 24],
    current_work_stream: [48, 28, 28],
});

// arrow/c/abi.h
assert_layout!(ArrowSchema {
    size: [72, 44, 48],
    align: [8, 4, 8],
    format: same(0),
    name: [8, 4, 4],
    metadata: [16, 8, 8],
    flags: [24, 12, 16],
    n_children: [32, 20, 24],
    children: [40, 28, 32],
    dictionary: [48, 32, 36],
    release: [56, 36, 40],
    private_data: [64, 40, 44],
});
assert_layout!(ArrowArray {
    size: [80, 60, 64],
    align: [8, 4, 8],
    length: same(0),
    null_count: same(8),
    offset: same(16),
    n_buffers: same(24),
    n_children: same(32),
    buffers: same(40),
    children: [48, 44, 44],
    dictionary: [56, 48, 48],
    release: [64, 52, 52],
    private_data: [72, 56, 56],
});
const _: () = assert!(size_of::<ArrowDeviceType>() == 4 && align_of::<ArrowDeviceType>() == 4);
assert_layout!(ArrowDeviceArray {
    size: [128, 100, 104],
    align: [8, 4, 8],
    array: same(0),
    device_id: [80, 60, 64],
    device_type: [88, 68, 72],
    sync_event: [96, 72, 76],
    reserved: [104, 76, 80],
});
assert_layout!(ArrowArrayStream {
    size: [40, 20, 20],
    align: [8, 4, 4],
    get_schema: same(0),
    get_next: [8, 4, 4],
    get_last_error: [16, 8, 8],
    release: [24, 12, 12],
    private_data: [32, 16, 16],
});
assert_layout!(ArrowDeviceArrayStream {
    size: [48, 24, 24],
    align: [8, 4, 4],
    device_type: same(0),
    get_schema: [8, 4, 4],
    get_next: [16, 8, 8],
    get_last_error: [24, 12, 12],
    release: [32, 16, 16],
    private_data: [40, 20, 20],
});
assert_layout!(ArrowAsyncTask {
    size: [16, 8, 8],
    align: [8, 4, 4],
    extract_data: same(0),
    private_data: [8, 4, 4]
});
assert_layout!(ArrowAsyncProducer {
    size: [40, 20, 20],
    align: [8, 4, 4],
    device_type: same(0),
    request: [8, 4, 4],
    cancel: [16, 8, 8],
    additional_metadata: [24, 12, 12],
    private_data: [32, 16, 16],
});
assert_layout!(ArrowAsyncDeviceStreamHandler {
    size: [48, 24, 24],
    align: [8, 4, 4],
    on_schema: same(0),
    on_next_task: [8, 4, 4],
    on_error: [16, 8, 8],
    release: [24, 12, 12],
    producer: [32, 16, 16],
    private_data: [40, 20, 20],
});

// Whatever carries a deleter or release callback must not be duplicated by accident.
assert_not_impl_any!(DLManagedTensor: Copy, Clone);
assert_not_impl_any!(DLManagedTensorVersioned: Copy, Clone);
assert_not_impl_any!(ArrowSchema: Copy, Clone);
assert_not_impl_any!(ArrowArray: Copy, Clone);
assert_not_impl_any!(ArrowDeviceArray: Copy, Clone);
assert_not_impl_any!(ArrowArrayStream: Copy, Clone);
assert_not_impl_any!(ArrowDeviceArrayStream: Copy, Clone);
assert_not_impl_any!(ArrowAsyncTask: Copy, Clone);
assert_not_impl_any!(ArrowAsyncProducer: Copy, Clone);
assert_not_impl_any!(ArrowAsyncDeviceStreamHandler: Copy, Clone);
