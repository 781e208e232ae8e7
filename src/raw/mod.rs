//! The raw layer: `#[repr(C)]` mirrors of `dlpack/dlpack.h` (v1.3) and `arrow/c/abi.h`.
//!
//! Names, field types and field order are those of the C headers, so C documentation applies
//! unchanged. Rules that hold for every item here:
//!
//! - Open C enums whose values come from other programs ([`DLDeviceType`], [`DLDataTypeCode`],
//!   [`ArrowDeviceType`]) are `#[repr(transparent)]` integer newtypes with named constants, never
//!   Rust enums: any value a foreign producer writes is valid, and unknown values print as numbers.
//! - Callbacks are `Option<unsafe extern "C" fn ...>`: NULL is `None`.
//! - Nothing that carries a deleter or a release callback is `Copy` or `Clone`, and nothing here
//!   implements `Drop`: releasing is the owner's job.
//! - Sizes, alignments and every field offset are asserted at compile time for LP64, i686 and
//!   32-bit targets with 8-byte `u64` (see the README's layout table).
//!
//! ```
//! use dlpack_abi::raw::{kDLCPU, kDLFloat, DLDataType, DLDevice, DLDeviceType, ArrowDeviceType};
//!
//! // The C enums are open newtypes: whatever a producer writes is a valid value.
//! let device = DLDevice { device_type: kDLCPU, device_id: 0 };
//! assert_eq!(device.to_string(), "cpu:0");
//! assert_eq!(DLDeviceType(42).name(), None);
//! assert_eq!(format!("{:?}", ArrowDeviceType(17)), "ArrowDeviceType(17)");
//! assert_eq!(DLDataType { code: kDLFloat, bits: 16, lanes: 1 }.to_string(), "float16");
//! ```
#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case)]

/// Gives an open C enum newtype its `name()` and a `Debug` that prints the C name of a known
/// value and the number of an unknown one.
macro_rules! open_enum_names {
    ($ty:ident { $($name:ident),* $(,)? }) => {
        open_enum_names!($ty { $($name),* } unreleased {});
    };
    ($ty:ident { $($name:ident),* $(,)? } unreleased { $($new:ident),* $(,)? }) => {
        impl $ty {
            /// Every value this crate names, in upstream order: those of DLPack 1.3, then those
            /// of [`UNRELEASED`](Self::UNRELEASED).
            pub const KNOWN: &'static [$ty] = &[$($name,)* $($new),*];

            #[doc = concat!(
                "The values on DLPack's `main` branch that no release has yet: named and known ",
                "to validation here, and in the C header only under `DLPACK_ABI_UNRELEASED` ",
                "(the header stays a drop-in for DLPack 1.3).\n\n```\nuse dlpack_abi::raw::",
                stringify!($ty), ";\n\nfor value in ", stringify!($ty), "::UNRELEASED {\n",
                "    assert!(", stringify!($ty), "::KNOWN.contains(value) && value.name().is_some());\n}\n```"
            )]
            pub const UNRELEASED: &'static [$ty] = &[$($new),*];

            /// The upstream C name of this value, or `None` for a value this crate does not know
            /// (for example one from a newer producer).
            pub const fn name(self) -> Option<&'static str> {
                match self {
                    $($name => Some(stringify!($name)),)*
                    $($new => Some(stringify!($new)),)*
                    _ => None,
                }
            }
        }

        impl core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, concat!(stringify!($ty), "({})"), self.0),
                }
            }
        }
    };
}

pub mod arrow;
pub mod dlpack;
pub mod layout;

pub use arrow::*;
pub use dlpack::*;
