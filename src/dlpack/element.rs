//! Rust types that describe a DLPack element type.

use bytemuck::Pod;

use crate::raw::{kDLFloat, kDLInt, kDLUInt, DLDataType};

/// A Rust type whose values are stored exactly as the elements of [`DTYPE`](Self::DTYPE).
///
/// Implemented for every integer width (`i8`..`i128`, `u8`..`u128`), `f32`, `f64`, and, behind
/// features, `half::f16`/`half::bf16` (`half`), `num_complex::Complex<f32>`/`Complex<f64>`
/// (`num-complex`), and with both, `Complex<f16>` (`kDLComplex` 32) and `Complex<bf16>`
/// (`kDLBcomplex` 32). `bool` is not an element: a foreign `kDLBool` byte may hold any value, which
/// is not a valid `bool`; [`Bool8`] is DLPack's boolean, one byte read as it is.
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

/// One DLPack boolean (`kDLBool`, 8 bits, one lane): the byte as the producer stored it.
/// [`get`](Self::get) reads it as C, NumPy and PyTorch do (any byte but 0 is true);
/// [`to_bool`](Self::to_bool) refuses a byte other than 0 and 1. `bool` itself cannot be an
/// [`Element`]: a foreign byte of 2 read as a `bool` would be undefined behaviour.
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::{Bool8, Export};
///
/// // burn, NumPy and PyTorch booleans come as kDLBool bytes.
/// let mask = Export::new(vec![Bool8::TRUE, Bool8::FALSE, Bool8::from(true)], &[3]).finish()?;
/// let values: Vec<bool> = mask.view().iter::<Bool8>()?.map(Bool8::get).collect();
/// assert_eq!(values, [true, false, true]);
/// assert_eq!(Bool8(2).get(), true);
/// assert_eq!(Bool8(2).to_bool(), None);
/// # }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Bool8(pub u8);

impl Bool8 {
    /// `false`: the byte 0.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Bool8;
    ///
    /// assert_eq!(Bool8::FALSE, Bool8::from(false));
    /// ```
    pub const FALSE: Self = Self(0);
    /// `true`: the byte 1.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Bool8;
    ///
    /// assert_eq!(Bool8::TRUE, Bool8::from(true));
    /// ```
    pub const TRUE: Self = Self(1);

    /// The boolean, as C reads a byte: any value but 0 is `true`.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Bool8;
    ///
    /// assert!(Bool8::TRUE.get() && !Bool8::FALSE.get() && Bool8(255).get());
    /// ```
    pub const fn get(self) -> bool {
        self.0 != 0
    }

    /// The boolean when the byte is 0 or 1 (what DLPack's producers store); `None` otherwise.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Bool8;
    ///
    /// assert_eq!((Bool8(1).to_bool(), Bool8(0).to_bool(), Bool8(7).to_bool()), (Some(true), Some(false), None));
    /// ```
    pub const fn to_bool(self) -> Option<bool> {
        match self.0 {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

impl From<bool> for Bool8 {
    /// `true` as 1, `false` as 0.
    fn from(value: bool) -> Self {
        Self(u8::from(value))
    }
}

impl Element for Bool8 {
    const DTYPE: DLDataType = scalar(crate::raw::kDLBool, 8);
}

/// Whether `dtype` is `T`'s: typed access's and the typed import's one dtype rule, compared as
/// one `u32` (code, bits and lanes).
#[inline(always)]
pub(crate) fn is_dtype_of<T: Element>(dtype: DLDataType) -> bool {
    bytemuck::cast::<_, u32>(dtype) == bytemuck::cast::<_, u32>(T::DTYPE)
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
