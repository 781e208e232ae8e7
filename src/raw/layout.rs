//! Compile-time proof of every size, alignment and field offset, for the three ABI families,
//! and [`LAYOUTS`], the same table as data for the current target.
//!
//! Each expectation is `[LP64, i686, ILP32-a8]`: LP64 is x86_64 and aarch64; i686 is 32-bit with
//! `u64` aligned to 4 (i686 SysV); ILP32-a8 is 32-bit with `u64` aligned to 8 (armv7, thumbv7em,
//! wasm32). The numbers come from the upstream headers compiled by gcc; `layout-checks/` proves
//! them against the real headers on x86_64 and i686.
//!
//! ```
//! use dlpack_abi::raw::layout::{ABI_FAMILY, LAYOUTS};
//!
//! // Print this target's table, e.g. to compare it with a C compiler's `offsetof`.
//! for ty in LAYOUTS {
//!     println!("{ABI_FAMILY} {}: size {}, align {}", ty.name, ty.size, ty.align);
//!     for field in ty.fields {
//!         println!("  {} at {} ({} bytes)", field.name, field.offset, field.size);
//!     }
//! }
//! assert!(LAYOUTS.iter().any(|ty| ty.name == "ArrowDeviceArray"));
//! ```

use core::mem::{align_of, offset_of, size_of};

use static_assertions::assert_not_impl_any;

use super::*;

/// Size and alignment of one raw type on the current target, and where its fields are.
///
/// ```
/// use dlpack_abi::raw::layout::LAYOUTS;
///
/// let tensor = LAYOUTS.iter().find(|t| t.name == "DLTensor").unwrap();
/// #[cfg(target_pointer_width = "64")]
/// assert_eq!((tensor.size, tensor.align), (48, 8));
/// assert_eq!(tensor.fields[0].name, "data");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TypeLayout {
    /// The C name of the type.
    pub name: &'static str,
    /// `size_of` in bytes.
    pub size: usize,
    /// `align_of` in bytes.
    pub align: usize,
    /// Every field, in declaration order (empty for the open enum newtypes).
    pub fields: &'static [FieldLayout],
}

/// Offset and size of one field on the current target.
///
/// ```
/// use dlpack_abi::raw::layout::LAYOUTS;
///
/// let tensor = LAYOUTS.iter().find(|t| t.name == "DLTensor").unwrap();
/// let byte_offset = tensor.fields.iter().find(|f| f.name == "byte_offset").unwrap();
/// assert_eq!(byte_offset.size, 8);
/// #[cfg(target_pointer_width = "64")]
/// assert_eq!(byte_offset.offset, 40);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct FieldLayout {
    /// The C name of the field.
    pub name: &'static str,
    /// `offset_of` in bytes.
    pub offset: usize,
    /// Size of the field's type in bytes.
    pub size: usize,
}

/// The size of a field's type, named by a projection.
const fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// This target's column in the expectation arrays.
const FAMILY: usize = match (size_of::<usize>(), align_of::<u64>()) {
    (8, 8) => 0,
    (4, 4) => 1,
    (4, 8) => 2,
    _ => panic!(
        "dlpack-abi supports 64-bit targets and 32-bit targets with 4- or 8-byte u64 alignment"
    ),
};

/// The current target's ABI family: `"LP64"` (x86_64, aarch64), `"i686"` (32-bit, `u64` aligned
/// to 4) or `"ILP32-a8"` (32-bit, `u64` aligned to 8: armv7, thumbv7em, wasm32).
///
/// ```
/// use dlpack_abi::raw::layout::ABI_FAMILY;
///
/// #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
/// assert_eq!(ABI_FAMILY, "LP64");
/// #[cfg(target_arch = "x86")]
/// assert_eq!(ABI_FAMILY, "i686");
/// ```
pub const ABI_FAMILY: &str = ["LP64", "i686", "ILP32-a8"][FAMILY];

/// Asserts each type's expected layout for this target's family and lists it in [`LAYOUTS`].
macro_rules! layouts {
    ($($ty:ident { size: $size:expr, align: $align:expr $(, $field:ident: $offset:expr)* $(,)? })+) => {
        $(const _: () = {
            assert!(size_of::<$ty>() == $size[FAMILY], concat!("size of ", stringify!($ty)));
            assert!(align_of::<$ty>() == $align[FAMILY], concat!("alignment of ", stringify!($ty)));
            $(assert!(
                offset_of!($ty, $field) == $offset[FAMILY],
                concat!("offset of ", stringify!($ty), ".", stringify!($field)),
            );)*
        };)+

        /// The layout of every type in [`raw`](super) on the current target, in header order:
        /// the values the compile-time assertions above have checked.
        ///
        /// ```
        /// use dlpack_abi::raw::layout::LAYOUTS;
        /// use std::mem::{align_of, size_of};
        ///
        /// let tensor = LAYOUTS.iter().find(|t| t.name == "DLTensor").unwrap();
        /// let byte_offset = tensor.fields.iter().find(|f| f.name == "byte_offset").unwrap();
        /// // LP64: 48 and 40; i686 (u64 aligned to 4): 36 and 28; armv7, wasm32: 40 and 32.
        /// let expected = match (size_of::<usize>(), align_of::<u64>()) {
        ///     (8, _) => (48, 40),
        ///     (4, 4) => (36, 28),
        ///     _ => (40, 32),
        /// };
        /// assert_eq!((tensor.size, byte_offset.offset), expected);
        /// ```
        pub const LAYOUTS: &[TypeLayout] = &[$(TypeLayout {
            name: stringify!($ty),
            size: size_of::<$ty>(),
            align: align_of::<$ty>(),
            fields: &[$(FieldLayout {
                name: stringify!($field),
                offset: offset_of!($ty, $field),
                size: field_size(|s: &$ty| &s.$field),
            }),*],
        }),+];
    };
}

layouts! {
    DLPackVersion { size: [8; 3], align: [4; 3], major: [0; 3], minor: [4; 3] }
    DLDeviceType { size: [4; 3], align: [4; 3] }
    DLDevice { size: [8; 3], align: [4; 3], device_type: [0; 3], device_id: [4; 3] }
    DLDataType { size: [4; 3], align: [2; 3], code: [0; 3], bits: [1; 3], lanes: [2; 3] }
    DLTensor {
        size: [48, 36, 40],
        align: [8, 4, 8],
        data: [0; 3],
        device: [8, 4, 4],
        ndim: [16, 12, 12],
        dtype: [20, 16, 16],
        shape: [24, 20, 20],
        strides: [32, 24, 24],
        byte_offset: [40, 28, 32],
    }
    DLManagedTensor {
        size: [64, 44, 48],
        align: [8, 4, 8],
        dl_tensor: [0; 3],
        manager_ctx: [48, 36, 40],
        deleter: [56, 40, 44],
    }
    DLManagedTensorVersioned {
        size: [80, 60, 64],
        align: [8, 4, 8],
        version: [0; 3],
        manager_ctx: [8; 3],
        deleter: [16, 12, 12],
        flags: [24, 16, 16],
        dl_tensor: [32, 24, 24],
    }
    DLPackExchangeAPIHeader {
        size: [16, 12, 12],
        align: [8, 4, 4],
        version: [0; 3],
        prev_api: [8; 3],
    }
    DLPackExchangeAPI {
        size: [56, 32, 32],
        align: [8, 4, 4],
        header: [0; 3],
        managed_tensor_allocator: [16, 12, 12],
        managed_tensor_from_py_object_no_sync: [24, 16, 16],
        managed_tensor_to_py_object_no_sync: [32, 20, 20],
        dltensor_from_py_object_no_sync: [40, 24, 24],
        current_work_stream: [48, 28, 28],
    }
    ArrowSchema {
        size: [72, 44, 48],
        align: [8, 4, 8],
        format: [0; 3],
        name: [8, 4, 4],
        metadata: [16, 8, 8],
        flags: [24, 12, 16],
        n_children: [32, 20, 24],
        children: [40, 28, 32],
        dictionary: [48, 32, 36],
        release: [56, 36, 40],
        private_data: [64, 40, 44],
    }
    ArrowArray {
        size: [80, 60, 64],
        align: [8, 4, 8],
        length: [0; 3],
        null_count: [8; 3],
        offset: [16; 3],
        n_buffers: [24; 3],
        n_children: [32; 3],
        buffers: [40; 3],
        children: [48, 44, 44],
        dictionary: [56, 48, 48],
        release: [64, 52, 52],
        private_data: [72, 56, 56],
    }
    ArrowDeviceType { size: [4; 3], align: [4; 3] }
    ArrowDeviceArray {
        size: [128, 100, 104],
        align: [8, 4, 8],
        array: [0; 3],
        device_id: [80, 60, 64],
        device_type: [88, 68, 72],
        sync_event: [96, 72, 76],
        reserved: [104, 76, 80],
    }
    ArrowArrayStream {
        size: [40, 20, 20],
        align: [8, 4, 4],
        get_schema: [0; 3],
        get_next: [8, 4, 4],
        get_last_error: [16, 8, 8],
        release: [24, 12, 12],
        private_data: [32, 16, 16],
    }
    ArrowDeviceArrayStream {
        size: [48, 24, 24],
        align: [8, 4, 4],
        device_type: [0; 3],
        get_schema: [8, 4, 4],
        get_next: [16, 8, 8],
        get_last_error: [24, 12, 12],
        release: [32, 16, 16],
        private_data: [40, 20, 20],
    }
    ArrowAsyncTask {
        size: [16, 8, 8],
        align: [8, 4, 4],
        extract_data: [0; 3],
        private_data: [8, 4, 4],
    }
    ArrowAsyncProducer {
        size: [40, 20, 20],
        align: [8, 4, 4],
        device_type: [0; 3],
        request: [8, 4, 4],
        cancel: [16, 8, 8],
        additional_metadata: [24, 12, 12],
        private_data: [32, 16, 16],
    }
    ArrowAsyncDeviceStreamHandler {
        size: [48, 24, 24],
        align: [8, 4, 4],
        on_schema: [0; 3],
        on_next_task: [8, 4, 4],
        on_error: [16, 8, 8],
        release: [24, 12, 12],
        producer: [32, 16, 16],
        private_data: [40, 20, 20],
    }
}

// Not in the C comparison: in C `DLDataTypeCode` is a 4-byte enum, but the only place the ABI
// stores a code is the one-byte `DLDataType::code`.
const _: () = assert!(
    size_of::<DLDataTypeCode>() == 1,
    "DLDataType.code is a uint8_t"
);
const _: () =
    assert!(size_of::<DLPackFlags>() == 8 && align_of::<DLPackFlags>() == align_of::<u64>());

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
