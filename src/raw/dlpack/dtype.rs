//! `DLDataTypeCode` and `DLDataType`: the element type of a tensor.

/// The type code stored in [`DLDataType::code`] (C `DLDataTypeCode`).
///
/// An open C enum: newer producers send codes this crate does not name (DLPack `main` has 18),
/// so this is a newtype and every value is valid. The C enum type is 4 bytes, but the ABI only
/// ever stores a code in the one-byte `DLDataType::code`, so the Rust newtype wraps a `u8`.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DLDataTypeCode(pub u8);

/// Signed integer.
pub const kDLInt: DLDataTypeCode = DLDataTypeCode(0);
/// Unsigned integer.
pub const kDLUInt: DLDataTypeCode = DLDataTypeCode(1);
/// IEEE 754 binary floating point.
pub const kDLFloat: DLDataTypeCode = DLDataTypeCode(2);
/// Opaque handle whose meaning both sides must agree on; reserved for testing.
pub const kDLOpaqueHandle: DLDataTypeCode = DLDataTypeCode(3);
/// bfloat16; `bits` is 16.
pub const kDLBfloat: DLDataTypeCode = DLDataTypeCode(4);
/// Complex number stored as two consecutive parts; `bits` counts both (complex64 is 64).
pub const kDLComplex: DLDataTypeCode = DLDataTypeCode(5);
/// Boolean, one byte per element; `bits` is 8.
pub const kDLBool: DLDataTypeCode = DLDataTypeCode(6);
/// FP8 e3m4; `bits` is 8.
pub const kDLFloat8_e3m4: DLDataTypeCode = DLDataTypeCode(7);
/// FP8 e4m3; `bits` is 8.
pub const kDLFloat8_e4m3: DLDataTypeCode = DLDataTypeCode(8);
/// FP8 e4m3b11fnuz; `bits` is 8.
pub const kDLFloat8_e4m3b11fnuz: DLDataTypeCode = DLDataTypeCode(9);
/// FP8 e4m3fn; `bits` is 8.
pub const kDLFloat8_e4m3fn: DLDataTypeCode = DLDataTypeCode(10);
/// FP8 e4m3fnuz; `bits` is 8.
pub const kDLFloat8_e4m3fnuz: DLDataTypeCode = DLDataTypeCode(11);
/// FP8 e5m2; `bits` is 8.
pub const kDLFloat8_e5m2: DLDataTypeCode = DLDataTypeCode(12);
/// FP8 e5m2fnuz; `bits` is 8.
pub const kDLFloat8_e5m2fnuz: DLDataTypeCode = DLDataTypeCode(13);
/// FP8 e8m0fnu (exponent only); `bits` is 8.
pub const kDLFloat8_e8m0fnu: DLDataTypeCode = DLDataTypeCode(14);
/// FP6 e2m3fn; `bits` must be 6. Packed unless `IS_SUBBYTE_TYPE_PADDED` is set.
pub const kDLFloat6_e2m3fn: DLDataTypeCode = DLDataTypeCode(15);
/// FP6 e3m2fn; `bits` must be 6. Packed unless `IS_SUBBYTE_TYPE_PADDED` is set.
pub const kDLFloat6_e3m2fn: DLDataTypeCode = DLDataTypeCode(16);
/// FP4 e2m1fn; `bits` must be 4. Packed unless `IS_SUBBYTE_TYPE_PADDED` is set.
pub const kDLFloat4_e2m1fn: DLDataTypeCode = DLDataTypeCode(17);

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
});

/// The element type of a tensor: `{kDLFloat, 32, 1}` is `float`, `{kDLFloat, 32, 4}` a float4
/// vector, `{kDLComplex, 64, 1}` `complex<float>`.
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
