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

mod error;
mod export;
mod import;
mod order;
#[cfg(feature = "pyo3")]
mod python;
mod runtime;

pub use error::{codes, CudaError};
pub use export::{export_shared_slice, export_slice, CudaExport};
pub use import::{import_device_array, import_slice, CudaTensor};
pub use order::{CudaOrder, CudaWait};
pub use runtime::{consumer_stream, cuda_available, CudaRuntime};
