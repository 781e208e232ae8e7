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
#![no_std]

extern crate alloc;

mod dtype;
mod error;
mod export;
mod import;
#[cfg(feature = "pyo3")]
mod python;

pub use dtype::{burn_dtype, dlpack_dtype};
pub use error::{codes, BurnError};
pub use export::export_tensor_data;
pub use import::{copy_tensor_data, import_tensor_data};
