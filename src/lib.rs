//! Exact, `no_std` Rust mirror of the two C ABIs that array libraries use to hand memory to each
//! other: **DLPack 1.3** and the **Apache Arrow C interfaces** (C Data, C Stream, C Device Data,
//! C Device Stream and the experimental async device stream).
//!
//! # Map
//!
//! | module | what it holds | `unsafe` |
//! |---|---|---|
//! | [`raw`] | the C headers item for item: the same names, field types and layouts, checked at compile time for every ABI family (LP64, i686, and 32-bit targets with 8-byte `u64`); no `Drop` | none (`forbid`) |
//! | [`dlpack`] | the safe DLPack layer: owned imports that validate every field and call the deleter exactly once ([`dlpack::VersionedTensor`]), borrowed views ([`dlpack::TensorView`]), typed access, zero-copy export (`alloc`), stream ordering, release hooks for borrow registries | per file, in the files that touch raw memory |
//! | [`arrow`] | the safe Arrow layer: owned schemas, arrays, device arrays and streams that release exactly once, validation against the schema, producers, the DLPack ↔ Arrow bridge (`alloc`), the async stream consumer (`std`) | per file, likewise |
//! | [`error_code`] | stable numeric codes for every error, and [`error_code::ErrorReport`] for C callers | one file (`report.rs`: the C string copy) |
//! | `pod` (private) | the `bytemuck` `Pod`/`Zeroable` implementations of the raw types | the file |
//!
//! `unsafe_code` is denied for the crate and allowed file by file (`#![allow(unsafe_code)]` at
//! the top of each such file, never for a folder); every block has a `// SAFETY:` line naming
//! the rule it relies on, and every `unsafe fn` a `# Safety` section. The C header
//! `include/dlpack_abi.h`, generated from [`raw`] and the error table, is a drop-in for
//! upstream `dlpack/dlpack.h` and `arrow/c/abi.h` (see the README).
//!
//! # What is not here
//!
//! The integrations with other crates live in crates of their own, built only on this crate's
//! public API (`docs/integrations.md`): `dlpack-abi-pyo3` (Python), `dlpack-abi-arrow-rs`,
//! `dlpack-abi-ndarray`, `dlpack-abi-cudarc`, `dlpack-abi-safetensors`, `dlpack-abi-candle`,
//! `dlpack-abi-burn` and `dlpack-abi-image`. This crate's API changes when DLPack or Arrow
//! change, and otherwise not (the README's section on stability).
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
#[cfg(feature = "std")]
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
pub mod dlpack;
pub mod error_code;

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
    #[doc = include_str!("../docs/layout.md")]
    struct Layout;
    #[doc = include_str!("../docs/errors.md")]
    struct Errors;
}
