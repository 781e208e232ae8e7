#![doc = include_str!("../README.md")]
#![deny(unsafe_op_in_unsafe_fn, missing_docs, unsafe_code)]
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::missing_errors_doc,
    clippy::missing_panics_doc
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;

mod async_stream;
mod boundary;
mod error;
mod export;
mod import;
#[cfg(feature = "pyo3")]
#[cfg_attr(docsrs, doc(cfg(feature = "pyo3")))]
pub mod python;
mod schema;
mod stream;

use core::mem::{align_of, size_of};

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_schema::ffi::FFI_ArrowSchema;

use dlpack_abi::raw::{ArrowArray, ArrowArrayStream, ArrowSchema};

pub use async_stream::AsyncBatchStream;
pub use boundary::{
    device_reader_from_raw, device_reader_into_raw, device_record_batch_from_raw,
    device_record_batch_into_raw, export_device_record_batch, import_device_record_batch,
    reader_from_raw, reader_into_raw, record_batch_from_raw, record_batch_into_raw,
};
pub use error::{codes, ArrowRsError};
pub use export::{
    export_array, export_device_array, export_field, export_field_array, export_fixed_shape_tensor,
    export_record_batch, export_schema,
};
pub use import::{
    import_array, import_device_array, import_device_array_synchronized, import_field,
    import_field_array, import_fixed_shape_tensor, import_record_batch, import_schema,
};
pub use stream::{
    export_device_reader, export_reader, import_device_stream, import_stream, StreamReader,
};

// arrow-rs's FFI structs are `#[repr(C)]` mirrors of the same C structs as dlpack-abi's: moving
// one into the other is a bitwise move.
static_assertions::assert_eq_size!(FFI_ArrowSchema, ArrowSchema);
static_assertions::assert_eq_size!(FFI_ArrowArray, ArrowArray);
static_assertions::assert_eq_size!(FFI_ArrowArrayStream, ArrowArrayStream);
static_assertions::const_assert_eq!(align_of::<FFI_ArrowSchema>(), align_of::<ArrowSchema>());
static_assertions::const_assert_eq!(align_of::<FFI_ArrowArray>(), align_of::<ArrowArray>());
static_assertions::const_assert_eq!(
    align_of::<FFI_ArrowArrayStream>(),
    align_of::<ArrowArrayStream>()
);
const _: () = assert!(size_of::<ArrowArray>() == 80 || size_of::<usize>() != 8);
