//! `DLDataTypeCode` and `DLDataType`: the element type of a tensor.

/// The type code stored in [`DLDataType::code`] (C `DLDataTypeCode`).
///
/// An open C enum: newer producers send codes this crate does not name,
/// so this is a newtype and every value is valid. The C enum type is 4 bytes, but the ABI only
/// ever stores a code in the one-byte `DLDataType::code`, so the Rust newtype wraps a `u8`.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat, DLDataTypeCode};
///
/// assert_eq!(kDLFloat, DLDataTypeCode(2));
/// assert_eq!(format!("{kDLFloat:?}"), "kDLFloat");
/// // A code from a newer producer is a valid value too.
/// assert_eq!(format!("{:?}", DLDataTypeCode(42)), "DLDataTypeCode(42)");
/// assert_eq!(DLDataTypeCode(42).name(), None);
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DLDataTypeCode(pub u8);

/// Signed integer.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLInt, DLDataTypeCode};
///
/// assert_eq!(kDLInt, DLDataTypeCode(0));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLInt")), Some(&kDLInt));
/// ```
pub const kDLInt: DLDataTypeCode = DLDataTypeCode(0);

/// Unsigned integer.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLUInt, DLDataTypeCode};
///
/// assert_eq!(kDLUInt, DLDataTypeCode(1));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLUInt")), Some(&kDLUInt));
/// ```
pub const kDLUInt: DLDataTypeCode = DLDataTypeCode(1);

/// IEEE 754 binary floating point.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat, DLDataTypeCode};
///
/// assert_eq!(kDLFloat, DLDataTypeCode(2));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat")), Some(&kDLFloat));
/// ```
pub const kDLFloat: DLDataTypeCode = DLDataTypeCode(2);

/// Opaque handle whose meaning both sides must agree on; reserved for testing.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLOpaqueHandle, DLDataTypeCode};
///
/// assert_eq!(kDLOpaqueHandle, DLDataTypeCode(3));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLOpaqueHandle")), Some(&kDLOpaqueHandle));
/// ```
pub const kDLOpaqueHandle: DLDataTypeCode = DLDataTypeCode(3);

/// bfloat16; `bits` is 16.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLBfloat, DLDataTypeCode};
///
/// assert_eq!(kDLBfloat, DLDataTypeCode(4));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLBfloat")), Some(&kDLBfloat));
/// ```
pub const kDLBfloat: DLDataTypeCode = DLDataTypeCode(4);

/// Complex number stored as two consecutive parts; `bits` counts both (complex64 is 64).
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLComplex, DLDataTypeCode};
///
/// assert_eq!(kDLComplex, DLDataTypeCode(5));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLComplex")), Some(&kDLComplex));
/// ```
pub const kDLComplex: DLDataTypeCode = DLDataTypeCode(5);

/// Boolean, one byte per element; `bits` is 8.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLBool, DLDataTypeCode};
///
/// assert_eq!(kDLBool, DLDataTypeCode(6));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLBool")), Some(&kDLBool));
/// ```
pub const kDLBool: DLDataTypeCode = DLDataTypeCode(6);

/// FP8 e3m4; `bits` is 8.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat8_e3m4, DLDataTypeCode};
///
/// assert_eq!(kDLFloat8_e3m4, DLDataTypeCode(7));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat8_e3m4")), Some(&kDLFloat8_e3m4));
/// ```
pub const kDLFloat8_e3m4: DLDataTypeCode = DLDataTypeCode(7);

/// FP8 e4m3; `bits` is 8.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat8_e4m3, DLDataTypeCode};
///
/// assert_eq!(kDLFloat8_e4m3, DLDataTypeCode(8));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat8_e4m3")), Some(&kDLFloat8_e4m3));
/// ```
pub const kDLFloat8_e4m3: DLDataTypeCode = DLDataTypeCode(8);

/// FP8 e4m3b11fnuz; `bits` is 8.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat8_e4m3b11fnuz, DLDataTypeCode};
///
/// assert_eq!(kDLFloat8_e4m3b11fnuz, DLDataTypeCode(9));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat8_e4m3b11fnuz")), Some(&kDLFloat8_e4m3b11fnuz));
/// ```
pub const kDLFloat8_e4m3b11fnuz: DLDataTypeCode = DLDataTypeCode(9);

/// FP8 e4m3fn; `bits` is 8.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat8_e4m3fn, DLDataTypeCode};
///
/// assert_eq!(kDLFloat8_e4m3fn, DLDataTypeCode(10));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat8_e4m3fn")), Some(&kDLFloat8_e4m3fn));
/// ```
pub const kDLFloat8_e4m3fn: DLDataTypeCode = DLDataTypeCode(10);

/// FP8 e4m3fnuz; `bits` is 8.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat8_e4m3fnuz, DLDataTypeCode};
///
/// assert_eq!(kDLFloat8_e4m3fnuz, DLDataTypeCode(11));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat8_e4m3fnuz")), Some(&kDLFloat8_e4m3fnuz));
/// ```
pub const kDLFloat8_e4m3fnuz: DLDataTypeCode = DLDataTypeCode(11);

/// FP8 e5m2; `bits` is 8.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat8_e5m2, DLDataTypeCode};
///
/// assert_eq!(kDLFloat8_e5m2, DLDataTypeCode(12));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat8_e5m2")), Some(&kDLFloat8_e5m2));
/// ```
pub const kDLFloat8_e5m2: DLDataTypeCode = DLDataTypeCode(12);

/// FP8 e5m2fnuz; `bits` is 8.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat8_e5m2fnuz, DLDataTypeCode};
///
/// assert_eq!(kDLFloat8_e5m2fnuz, DLDataTypeCode(13));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat8_e5m2fnuz")), Some(&kDLFloat8_e5m2fnuz));
/// ```
pub const kDLFloat8_e5m2fnuz: DLDataTypeCode = DLDataTypeCode(13);

/// FP8 e8m0fnu (exponent only); `bits` is 8.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat8_e8m0fnu, DLDataTypeCode};
///
/// assert_eq!(kDLFloat8_e8m0fnu, DLDataTypeCode(14));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat8_e8m0fnu")), Some(&kDLFloat8_e8m0fnu));
/// ```
pub const kDLFloat8_e8m0fnu: DLDataTypeCode = DLDataTypeCode(14);

/// FP6 e2m3fn; `bits` must be 6. Packed unless `IS_SUBBYTE_TYPE_PADDED` is set.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat6_e2m3fn, DLDataTypeCode};
///
/// assert_eq!(kDLFloat6_e2m3fn, DLDataTypeCode(15));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat6_e2m3fn")), Some(&kDLFloat6_e2m3fn));
/// ```
pub const kDLFloat6_e2m3fn: DLDataTypeCode = DLDataTypeCode(15);

/// FP6 e3m2fn; `bits` must be 6. Packed unless `IS_SUBBYTE_TYPE_PADDED` is set.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat6_e3m2fn, DLDataTypeCode};
///
/// assert_eq!(kDLFloat6_e3m2fn, DLDataTypeCode(16));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat6_e3m2fn")), Some(&kDLFloat6_e3m2fn));
/// ```
pub const kDLFloat6_e3m2fn: DLDataTypeCode = DLDataTypeCode(16);

/// FP4 e2m1fn; `bits` must be 4. Packed unless `IS_SUBBYTE_TYPE_PADDED` is set.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLFloat4_e2m1fn, DLDataTypeCode};
///
/// assert_eq!(kDLFloat4_e2m1fn, DLDataTypeCode(17));
/// assert_eq!(DLDataTypeCode::KNOWN.iter().find(|v| v.name() == Some("kDLFloat4_e2m1fn")), Some(&kDLFloat4_e2m1fn));
/// ```
pub const kDLFloat4_e2m1fn: DLDataTypeCode = DLDataTypeCode(17);

/// Complex number of two bfloat16 parts, stored as `kDLComplex` is; `bits` counts both (32).
/// Not in a DLPack release yet: on upstream `main` (dmlc/dlpack#187).
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLBcomplex, DLDataType, DLDataTypeCode};
///
/// assert_eq!(kDLBcomplex, DLDataTypeCode(18));
/// assert!(DLDataTypeCode::UNRELEASED.contains(&kDLBcomplex));
/// assert_eq!(DLDataType { code: kDLBcomplex, bits: 32, lanes: 1 }.to_string(), "bcomplex32");
/// ```
pub const kDLBcomplex: DLDataTypeCode = DLDataTypeCode(18);

open_enum_names!(DLDataTypeCode {
    kDLInt,
    kDLUInt,
    kDLFloat,
    kDLOpaqueHandle,
    kDLBfloat,
    kDLComplex,
    kDLBool,
    kDLFloat8_e3m4,
    kDLFloat8_e4m3,
    kDLFloat8_e4m3b11fnuz,
    kDLFloat8_e4m3fn,
    kDLFloat8_e4m3fnuz,
    kDLFloat8_e5m2,
    kDLFloat8_e5m2fnuz,
    kDLFloat8_e8m0fnu,
    kDLFloat6_e2m3fn,
    kDLFloat6_e3m2fn,
    kDLFloat4_e2m1fn,
} unreleased {
    kDLBcomplex,
});

/// The element type of a tensor: `{kDLFloat, 32, 1}` is `float`, `{kDLFloat, 32, 4}` a float4
/// vector, `{kDLComplex, 64, 1}` `complex<float>`.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLBfloat, kDLFloat, DLDataType};
///
/// let float32 = DLDataType { code: kDLFloat, bits: 32, lanes: 1 };
/// let bfloat16x2 = DLDataType { code: kDLBfloat, bits: 16, lanes: 2 };
/// assert_eq!(float32.to_string(), "float32");
/// assert_eq!(bfloat16x2.to_string(), "bfloat16x2");
/// ```
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DLDataType {
    /// Type code (C `uint8_t` holding a [`DLDataTypeCode`] value).
    pub code: DLDataTypeCode,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes of a vector type; 1 for scalars.
    pub lanes: u16,
}

impl DLDataTypeCode {
    /// The name of this code's element family as the Python array API and NumPy spell dtypes,
    /// without the width: `int`, `uint`, `float`, `bfloat`, `complex`, `bool`, `float8_e4m3fn`
    /// and the other small floats, `handle`; `None` for a code this crate does not know.
    ///
    /// ```
    /// use dlpack_abi::raw::{kDLBfloat, kDLFloat8_e5m2, DLDataTypeCode};
    ///
    /// assert_eq!(kDLBfloat.family(), Some("bfloat"));
    /// assert_eq!(kDLFloat8_e5m2.family(), Some("float8_e5m2"));
    /// assert_eq!(DLDataTypeCode(42).family(), None);
    /// ```
    pub const fn family(self) -> Option<&'static str> {
        Some(match self {
            kDLInt => "int",
            kDLUInt => "uint",
            kDLFloat => "float",
            kDLOpaqueHandle => "handle",
            kDLBfloat => "bfloat",
            kDLComplex => "complex",
            kDLBool => "bool",
            kDLFloat8_e3m4 => "float8_e3m4",
            kDLFloat8_e4m3 => "float8_e4m3",
            kDLFloat8_e4m3b11fnuz => "float8_e4m3b11fnuz",
            kDLFloat8_e4m3fn => "float8_e4m3fn",
            kDLFloat8_e4m3fnuz => "float8_e4m3fnuz",
            kDLFloat8_e5m2 => "float8_e5m2",
            kDLFloat8_e5m2fnuz => "float8_e5m2fnuz",
            kDLFloat8_e8m0fnu => "float8_e8m0fnu",
            kDLFloat6_e2m3fn => "float6_e2m3fn",
            kDLFloat6_e3m2fn => "float6_e3m2fn",
            kDLFloat4_e2m1fn => "float4_e2m1fn",
            kDLBcomplex => "bcomplex",
            _ => return None,
        })
    }
}

/// The dtype as the Python array API and NumPy name it: the family and its width (`float32`,
/// `int4`, `uint8`, `bfloat16`, `complex64`), alone where the code fixes the width (`bool`,
/// `float8_e4m3fn`, `float4_e2m1fn`) and the bits are that width, and `x{lanes}` for vectors
/// (`float32x4`). A code this crate does not know, or a width its code forbids, prints its
/// fields.
///
/// ```
/// use dlpack_abi::raw::{kDLBool, kDLComplex, kDLFloat, kDLFloat4_e2m1fn, kDLInt, DLDataType, DLDataTypeCode};
///
/// let dtype = |code, bits, lanes| DLDataType { code, bits, lanes };
/// assert_eq!(dtype(kDLFloat, 32, 1).to_string(), "float32");
/// assert_eq!(dtype(kDLInt, 4, 1).to_string(), "int4");
/// assert_eq!(dtype(kDLComplex, 64, 1).to_string(), "complex64");
/// assert_eq!(dtype(kDLBool, 8, 1).to_string(), "bool");
/// assert_eq!(dtype(kDLFloat4_e2m1fn, 4, 1).to_string(), "float4_e2m1fn");
/// assert_eq!(dtype(kDLFloat, 32, 4).to_string(), "float32x4");
/// assert_eq!(dtype(kDLFloat4_e2m1fn, 8, 1).to_string(), "float4_e2m1fn (bits 8)");
/// assert_eq!(dtype(DLDataTypeCode(42), 8, 1).to_string(), "DLDataTypeCode(42) (bits 8, lanes 1)");
/// ```
impl core::fmt::Display for DLDataType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let Some(family) = self.code.family() else {
            return write!(
                f,
                "{:?} (bits {}, lanes {})",
                self.code, self.bits, self.lanes
            );
        };
        // The width the code itself fixes, if any.
        let fixed = match self.code {
            kDLBool
            | kDLFloat8_e3m4
            | kDLFloat8_e4m3
            | kDLFloat8_e4m3b11fnuz
            | kDLFloat8_e4m3fn
            | kDLFloat8_e4m3fnuz
            | kDLFloat8_e5m2
            | kDLFloat8_e5m2fnuz
            | kDLFloat8_e8m0fnu => Some(8),
            kDLFloat6_e2m3fn | kDLFloat6_e3m2fn => Some(6),
            kDLFloat4_e2m1fn => Some(4),
            _ => None,
        };
        match fixed {
            Some(bits) if bits == self.bits => f.write_str(family)?,
            Some(_) => return write!(f, "{family} (bits {})", self.bits),
            None => write!(f, "{family}{}", self.bits)?,
        }
        if self.lanes != 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}
