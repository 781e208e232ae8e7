//! Rust types that describe a DLPack element type.

use bytemuck::Pod;

use crate::raw::{kDLFloat, kDLInt, kDLUInt, DLDataType};

/// A Rust type whose values are stored exactly as the elements of [`DTYPE`](Self::DTYPE).
///
/// Implemented for every integer width (`i8`..`i128`, `u8`..`u128`), `f32`, `f64`, and, behind
/// features, `half::f16`/`half::bf16` (`half`), `num_complex::Complex<f32>`/`Complex<f64>`
/// (`num-complex`), and with both, `Complex<f16>` (`kDLComplex` 32) and `Complex<bf16>`
/// (`kDLBcomplex` 32). `bool` is not an element: a foreign `kDLBool` byte may hold any value, which
/// is not a valid `bool`.
///
/// The trait is safe to implement: typed access also checks that `size_of::<Self>()` is
/// `bits * lanes / 8` (at compile time) and checks alignment at run time.
///
/// ```
/// use dlpack_abi::dlpack::Element;
/// use dlpack_abi::raw::{kDLFloat, DLDataType};
///
/// assert_eq!(f32::DTYPE, DLDataType { code: kDLFloat, bits: 32, lanes: 1 });
/// ```
pub trait Element: Pod {
    /// The DLPack element type this Rust type stores.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Element;
    /// use dlpack_abi::raw::kDLUInt;
    ///
    /// assert_eq!((u16::DTYPE.code, u16::DTYPE.bits, u16::DTYPE.lanes), (kDLUInt, 16, 1));
    /// ```
    const DTYPE: DLDataType;
}

/// `DLDataType` with one lane.
const fn scalar(code: crate::raw::DLDataTypeCode, bits: u8) -> DLDataType {
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

macro_rules! elements {
    ($($ty:ty => $code:expr),+ $(,)?) => {$(
        impl Element for $ty {
            const DTYPE: DLDataType = scalar($code, (core::mem::size_of::<$ty>() * 8) as u8);
        }
    )+};
}

elements! {
    i8 => kDLInt, i16 => kDLInt, i32 => kDLInt, i64 => kDLInt, i128 => kDLInt,
    u8 => kDLUInt, u16 => kDLUInt, u32 => kDLUInt, u64 => kDLUInt, u128 => kDLUInt,
    f32 => kDLFloat, f64 => kDLFloat,
}

#[cfg(feature = "half")]
elements! {
    half::f16 => kDLFloat,
    half::bf16 => crate::raw::kDLBfloat,
}

#[cfg(feature = "num-complex")]
elements! {
    num_complex::Complex<f32> => crate::raw::kDLComplex,
    num_complex::Complex<f64> => crate::raw::kDLComplex,
}

// Both features: complex numbers of 16-bit parts, 32 bits in all (`kDLComplex` of two `f16`s,
// as DLPack's `main` documents, and `kDLBcomplex`, not in a release yet).
#[cfg(all(feature = "half", feature = "num-complex"))]
elements! {
    num_complex::Complex<half::f16> => crate::raw::kDLComplex,
    num_complex::Complex<half::bf16> => crate::raw::kDLBcomplex,
}

/// Fails to compile (when instantiated) unless `size_of::<T>()` matches `T::DTYPE`: what makes
/// `Element` safe to implement. Called by typed access and by export.
pub(crate) fn assert_size_matches<T: Element>() {
    const {
        assert!(
            core::mem::size_of::<T>() * 8 == T::DTYPE.bits as usize * T::DTYPE.lanes as usize,
            "size_of::<T>() must be T::DTYPE's bits * lanes / 8"
        )
    };
}
