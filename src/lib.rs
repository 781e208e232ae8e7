//! Exact, `no_std` Rust mirror of the two C ABIs that array libraries use to hand memory to each
//! other: **DLPack 1.3** and the **Apache Arrow C interfaces** (C Data, C Stream, C Device Data,
//! C Device Stream and the experimental async device stream).
//!
//! [`raw`] mirrors the C headers item for item: the same names, field types and layouts, checked
//! at compile time for every ABI family (LP64, i686, and 32-bit targets with 8-byte `u64`). It has
//! no `Drop` and no `unsafe` code.
//!
//! [`dlpack`] is the safe layer for DLPack: owning wrappers for tensors received from another
//! library ([`dlpack::VersionedTensor`], [`dlpack::LegacyTensor`]) that validate every field
//! before use and call the producer's deleter exactly once, a borrowed [`dlpack::TensorView`],
//! typed access through `bytemuck`, and (feature `alloc`) zero-copy export of Rust memory in one
//! allocation, with legacy ↔ versioned adapters. All `unsafe` code lives there, in [`arrow`], and in the `bytemuck`
//! [`Pod`](bytemuck::Pod)/[`Zeroable`](bytemuck::Zeroable) implementations for the raw types;
//! every block names the rule it relies on.
//!
//! [`arrow`] is the safe layer for the Arrow C interfaces: owning [`arrow::Schema`],
//! [`arrow::Array`], [`arrow::DeviceArray`] and streams that release exactly once, validation of
//! every struct against its schema, streams as iterators, producers, and (feature `alloc`) a
//! zero-copy bridge between DLPack tensors and Arrow arrays.
//!
//! The crate ships a generated C header, `include/dlpack_abi.h`, that is a drop-in for upstream
//! `dlpack/dlpack.h` and `arrow/c/abi.h` (see the README).
//!
//! ```
//! use dlpack_abi::raw::{kDLCPU, kDLFloat, DLDataType, DLDevice};
//!
//! let device = DLDevice { device_type: kDLCPU, device_id: 0 };
//! let f32_type = DLDataType { code: kDLFloat, bits: 32, lanes: 1 };
//! assert_eq!(format!("{device:?}"), "DLDevice { device_type: kDLCPU, device_id: 0 }");
//! assert_eq!(bytemuck::bytes_of(&f32_type).len(), 4);
//! ```
#![no_std]
// docs.rs (`--cfg docsrs`): every item says which features it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_op_in_unsafe_fn, missing_docs, unsafe_code)]
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::missing_errors_doc,
    clippy::missing_panics_doc
)]

#[cfg(any(feature = "alloc", test))]
extern crate alloc;
#[cfg(any(
    feature = "pyo3",
    feature = "arrow-rs",
    feature = "cudarc",
    feature = "safetensors",
    feature = "std"
))]
extern crate std;

/// `From` impls for errors that wrap others: `wraps! { Outer::Variant(Inner), ... }`.
macro_rules! wraps {
    ($($outer:ident :: $variant:ident ($inner:ty)),+ $(,)?) => {$(
        impl From<$inner> for $outer {
            fn from(error: $inner) -> Self {
                Self::$variant(error)
            }
        }
    )+};
}

#[forbid(unsafe_code)]
pub mod raw;

pub mod arrow;
#[cfg(feature = "arrow-rs")]
pub mod arrow_rs;
#[cfg(feature = "burn")]
pub mod burn;
#[cfg(feature = "candle")]
pub mod candle;
#[cfg(feature = "cudarc")]
pub mod cudarc;
pub mod dlpack;
pub mod error_code;
#[cfg(feature = "image")]
pub mod image;
#[cfg(feature = "ndarray")]
pub mod ndarray;
#[cfg(feature = "pyo3")]
pub mod python;
#[cfg(feature = "safetensors")]
pub mod safetensors;

mod pod;

/// The README's and the guide's Rust examples, compiled and run as doctests (they use export:
/// `alloc`).
#[cfg(all(doctest, feature = "alloc"))]
mod guide {
    #[doc = include_str!("../README.md")]
    struct Readme;
    #[doc = include_str!("../docs/ownership.md")]
    struct Ownership;
    #[doc = include_str!("../docs/tensors.md")]
    struct Tensors;
    #[doc = include_str!("../docs/exchange-api.md")]
    struct ExchangeApi;
    #[doc = include_str!("../docs/arrow.md")]
    struct Arrow;
    #[doc = include_str!("../docs/devices.md")]
    struct Devices;
    #[doc = include_str!("../docs/python.md")]
    struct Python;
    #[doc = include_str!("../docs/layout.md")]
    struct Layout;
    #[doc = include_str!("../docs/errors.md")]
    struct Errors;
}
