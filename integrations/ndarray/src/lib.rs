#![doc = include_str!("../README.md")]
#![no_std]
#![deny(unsafe_op_in_unsafe_fn, missing_docs, unsafe_code)]
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::missing_errors_doc,
    clippy::missing_panics_doc
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod export;
mod import;

pub use export::{export_array, lend_array, lend_array_mut, OwnedStorage};
pub use import::{view_array, view_array_as, view_array_mut};
