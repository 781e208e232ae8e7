//! Converting reads ([`TensorView::iter_as`], `TensorView::to_vec_as`) under the lossless
//! rule [`ReadAs`] documents, and [`dispatch_dtype!`](crate::dispatch_dtype), which runs one
//! generic body for the element type a tensor holds. No unsafe code: the reads are
//! [`TensorView::iter`]'s.

use super::{AccessError, Element, Elements, TensorView};
use crate::raw::DLDataType;
use core::fmt;
use sealed::{Convert, Source};

/// A Rust element type that the elements of other dtypes convert into without loss: what
/// [`TensorView::iter_as`] and (with `alloc`) `TensorView::to_vec_as` (and `dlpack-abi-ndarray`'s
/// `view_array_as`) read as. Sealed: the conversions are the crate's.
///
/// **What goes in and out.** The elements of a host tensor whose dtype is any of
/// [`SOURCES`](Self::SOURCES), in row-major order through any strides, converted to `Self`.
/// Nothing is written and nothing is kept: the tensor's owner keeps its memory, and the values
/// are copies.
///
/// **The rule: lossless only** (NumPy's "safe" casting, minus the casts that round). A source
/// dtype converts into `Self` when every value it can hold is exactly a value of `Self`:
/// integers into wider integers (signed ones into signed ones; unsigned ones into wider signed
/// or unsigned ones), integers of up to 8 bits into `f16`/`bf16`, up to 16 into `f32`, up to 32
/// into `f64`, narrower floats into wider ones, and any of these into a complex number of the
/// same or wider parts (imaginary part 0). `i64` → `f64` is refused (NumPy allows it, but it
/// rounds above 2^53), and so are float → integer and every narrowing. `kDLBool` is no source:
/// a foreign bool byte may hold any value, and [`Element`] has no `bool`. Any other dtype is
/// refused with [`AccessError::UnsupportedDtype`], which lists `SOURCES`.
///
/// | `Self` | sources besides `Self` |
/// |---|---|
/// | `i8`, `u8` | none |
/// | `i16`, `i32`, `i64`, `i128` | narrower `i*`, and `u*` narrower than `Self` |
/// | `u16`, `u32`, `u64`, `u128` | narrower `u*` |
/// | `f16`, `bf16` (`half`) | `i8`, `u8` |
/// | `f32` | `i8`, `u8`, `i16`, `u16`, `f16`, `bf16` |
/// | `f64` | `i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `f16`, `bf16`, `f32` |
/// | `Complex<f32>` (`num-complex`) | the sources of `f32`, and `f32` |
/// | `Complex<f64>` (`num-complex`) | the sources of `f64`, `f64`, and `Complex<f32>` |
///
/// **Cost.** The source dtype is matched once per call; the loop that follows is
/// [`TensorView::iter`]'s, with the conversion inlined. Internal iteration (`fold`, `for_each`,
/// `sum`, ...) runs one monomorphic loop, as fast as `iter::<S>().map(convert)`. `next()` (a
/// `for` loop) is `iter`'s own when the dtype is `Self`'s, and otherwise also matches the
/// source per element: prefer `fold`/`sum`/`for_each` in hot loops over converted dtypes.
/// `to_vec_as` converts a C-contiguous tensor from a slice (a loop the compiler vectorises; one
/// `memcpy` when the dtype is `Self`'s), and any other through the strides.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::{AccessError, Element, Export, ReadAs};
///
/// assert!(f64::SOURCES.contains(&i32::DTYPE));
/// assert!(!f64::SOURCES.contains(&i64::DTYPE)); // it would round above 2^53
///
/// // A column-major 2 x 2 tensor of i16, read as f64 in row-major order.
/// let tensor = Export::new(vec![1i16, 3, 2, 4], &[2, 2]).strides(&[1, 2]).finish()?;
/// assert_eq!(tensor.view().to_vec_as::<f64>()?, [1.0, 2.0, 3.0, 4.0]);
/// assert!(matches!(tensor.view().to_vec_as::<i8>(), Err(AccessError::UnsupportedDtype { .. })));
/// # }
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub trait ReadAs: Element + Convert {
    /// The dtypes whose elements convert into `Self` exactly, `Self::DTYPE` among them.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, ReadAs};
    ///
    /// assert_eq!(i16::SOURCES, [i8::DTYPE, u8::DTYPE, i16::DTYPE]);
    /// ```
    const SOURCES: &'static [DLDataType];
}

/// The sealed half of [`ReadAs`]: one source iterator per element type, and the per-target
/// conversions. Public in a private module, so that no other crate can implement it.
mod sealed {
    use super::super::{AccessError, Elements, TensorView};

    /// The elements of a tensor, read as the Rust type of its dtype: the variant is chosen once
    /// per call.
    #[derive(Debug)]
    pub enum Source<'a> {
        I8(Elements<'a, i8>),
        I16(Elements<'a, i16>),
        I32(Elements<'a, i32>),
        I64(Elements<'a, i64>),
        I128(Elements<'a, i128>),
        U8(Elements<'a, u8>),
        U16(Elements<'a, u16>),
        U32(Elements<'a, u32>),
        U64(Elements<'a, u64>),
        U128(Elements<'a, u128>),
        F32(Elements<'a, f32>),
        F64(Elements<'a, f64>),
        #[cfg(feature = "half")]
        F16(Elements<'a, half::f16>),
        #[cfg(feature = "half")]
        BF16(Elements<'a, half::bf16>),
        #[cfg(feature = "num-complex")]
        C64(Elements<'a, num_complex::Complex<f32>>),
        #[cfg(feature = "num-complex")]
        C128(Elements<'a, num_complex::Complex<f64>>),
    }

    /// Each target's conversions (generated by `read_as!` from one list per target).
    pub trait Convert: Sized {
        /// The source of `view`'s elements, after checking that its dtype converts into `Self`.
        fn source<'a>(view: &TensorView<'a>) -> Result<Source<'a>, AccessError>;
        /// The next element, converted (`None` at the end).
        fn next(source: &mut Source<'_>) -> Option<Self>;
        /// Every remaining element, converted, folded in one monomorphic loop.
        fn fold<B, F: FnMut(B, Self) -> B>(source: Source<'_>, init: B, f: F) -> B;
        /// Every element of `view`, converted, in a new `Vec`: from a slice (a loop the
        /// compiler vectorises) when the tensor is C-contiguous, through the strides otherwise.
        #[cfg(feature = "alloc")]
        fn to_vec(view: &TensorView<'_>) -> Result<alloc::vec::Vec<Self>, AccessError>;
    }
}

impl Source<'_> {
    /// The number of elements left.
    fn len(&self) -> usize {
        macro_rules! len {
            ($($(#[$cfg:meta])* $variant:ident),+) => {
                match self {
                    $($(#[$cfg])* Source::$variant(elements) => elements.len(),)+
                }
            };
        }
        len!(
            I8,
            I16,
            I32,
            I64,
            I128,
            U8,
            U16,
            U32,
            U64,
            U128,
            F32,
            F64,
            #[cfg(feature = "half")]
            F16,
            #[cfg(feature = "half")]
            BF16,
            #[cfg(feature = "num-complex")]
            C64,
            #[cfg(feature = "num-complex")]
            C128
        )
    }
}

/// `ReadAs` and `Convert` for a target, from one list of (source variant, source type) groups,
/// each group with its conversion (`x` is the source value): the list of accepted dtypes, the
/// dispatch and the conversions cannot disagree.
macro_rules! read_as {
    ($($(#[$target_cfg:meta])* $target:ty {
        $($x:ident => $convert:expr; [$($(#[$cfg:meta])* $variant:ident($source:ty)),+ $(,)?])+
    })+) => {$(
        $(#[$target_cfg])*
        impl ReadAs for $target {
            const SOURCES: &'static [DLDataType] =
                &[$($($(#[$cfg])* <$source as Element>::DTYPE,)+)+];
        }

        $(#[$target_cfg])*
        // The identity conversions (`f64::from(x)` of an f64) share the list's syntax.
        #[allow(clippy::useless_conversion)]
        impl Convert for $target {
            #[inline]
            fn source<'a>(view: &TensorView<'a>) -> Result<Source<'a>, AccessError> {
                let dtype = view.dtype();
                $($(
                    $(#[$cfg])*
                    if dtype == <$source as Element>::DTYPE {
                        return Ok(Source::$variant(view.iter::<$source>()?));
                    }
                )+)+
                Err(AccessError::UnsupportedDtype { found: dtype, supported: Self::SOURCES })
            }

            #[inline]
            fn next(source: &mut Source<'_>) -> Option<Self> {
                match source {
                    $($(
                        $(#[$cfg])*
                        Source::$variant(elements) => elements.next().map(|$x: $source| $convert),
                    )+)+
                    // Never built for this target (`source` refuses the dtype).
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }

            #[inline]
            fn fold<B, F: FnMut(B, Self) -> B>(source: Source<'_>, init: B, mut f: F) -> B {
                match source {
                    $($(
                        $(#[$cfg])*
                        Source::$variant(elements) => {
                            elements.fold(init, |acc, $x: $source| f(acc, $convert))
                        }
                    )+)+
                    #[allow(unreachable_patterns)]
                    _ => init,
                }
            }

            // Inline: instantiated where a crate reads `to_vec_as`, not in every build of
            // this one (the conversions were a third of its code when compiled eagerly).
            #[cfg(feature = "alloc")]
            #[inline]
            fn to_vec(view: &TensorView<'_>) -> Result<alloc::vec::Vec<Self>, AccessError> {
                let dtype = view.dtype();
                $($(
                    $(#[$cfg])*
                    if dtype == <$source as Element>::DTYPE {
                        return Ok(if view.is_c_contiguous() {
                            let values = view.as_slice::<$source>()?;
                            values.iter().map(|&$x| -> Self { $convert }).collect()
                        } else {
                            view.iter::<$source>()?.map(|$x| -> Self { $convert }).collect()
                        });
                    }
                )+)+
                Err(AccessError::UnsupportedDtype { found: dtype, supported: Self::SOURCES })
            }
        }
    )+};
}

#[cfg(feature = "half")]
use half::{bf16, f16};
#[cfg(feature = "num-complex")]
use num_complex::Complex;

read_as! {
    i8 { x => x; [I8(i8)] }
    u8 { x => x; [U8(u8)] }
    i16 { x => i16::from(x); [I8(i8), U8(u8), I16(i16)] }
    u16 { x => u16::from(x); [U8(u8), U16(u16)] }
    i32 { x => i32::from(x); [I8(i8), U8(u8), I16(i16), U16(u16), I32(i32)] }
    u32 { x => u32::from(x); [U8(u8), U16(u16), U32(u32)] }
    i64 {
        x => i64::from(x);
        [I8(i8), U8(u8), I16(i16), U16(u16), I32(i32), U32(u32), I64(i64)]
    }
    u64 { x => u64::from(x); [U8(u8), U16(u16), U32(u32), U64(u64)] }
    i128 {
        x => i128::from(x);
        [I8(i8), U8(u8), I16(i16), U16(u16), I32(i32), U32(u32), I64(i64), U64(u64), I128(i128)]
    }
    u128 { x => u128::from(x); [U8(u8), U16(u16), U32(u32), U64(u64), U128(u128)] }
    f32 {
        x => f32::from(x);
        [
            I8(i8), U8(u8), I16(i16), U16(u16),
            #[cfg(feature = "half")] F16(f16),
            #[cfg(feature = "half")] BF16(bf16),
            F32(f32),
        ]
    }
    f64 {
        x => f64::from(x);
        [
            I8(i8), U8(u8), I16(i16), U16(u16), I32(i32), U32(u32),
            #[cfg(feature = "half")] F16(f16),
            #[cfg(feature = "half")] BF16(bf16),
            F32(f32), F64(f64),
        ]
    }
    #[cfg(feature = "half")]
    f16 { x => f16::from(x); [I8(i8), U8(u8), F16(f16)] }
    #[cfg(feature = "half")]
    bf16 { x => bf16::from(x); [I8(i8), U8(u8), BF16(bf16)] }
    #[cfg(feature = "num-complex")]
    Complex<f32> {
        x => Complex::new(f32::from(x), 0.0);
        [
            I8(i8), U8(u8), I16(i16), U16(u16),
            #[cfg(feature = "half")] F16(f16),
            #[cfg(feature = "half")] BF16(bf16),
            F32(f32),
        ]
        x => x; [C64(Complex<f32>)]
    }
    #[cfg(feature = "num-complex")]
    Complex<f64> {
        x => Complex::new(f64::from(x), 0.0);
        [
            I8(i8), U8(u8), I16(i16), U16(u16), I32(i32), U32(u32),
            #[cfg(feature = "half")] F16(f16),
            #[cfg(feature = "half")] BF16(bf16),
            F32(f32), F64(f64),
        ]
        x => Complex::new(f64::from(x.re), f64::from(x.im)); [C64(Complex<f32>), C128(Complex<f64>)]
    }
}

impl<'a> TensorView<'a> {
    /// The elements in row-major order, read through the strides (any layout, as
    /// [`iter`](Self::iter)), converted losslessly to `U` from whichever of
    /// [`U::SOURCES`](ReadAs::SOURCES) the tensor holds (the rule and its table are
    /// [`ReadAs`]'s). The dtype is matched once, here.
    ///
    /// # Errors
    /// [`AccessError::UnsupportedDtype`] when the dtype does not convert into `U` without loss
    /// (its `supported` lists those that do), and what [`iter`](Self::iter) refuses (device,
    /// flags, alignment).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{AccessError, Element, Export, ReadAs};
    ///
    /// // Every other u8 of 0..5, summed as f64: one loop, no allocation.
    /// let tensor = Export::new(vec![0u8, 1, 2, 3, 4], &[3]).strides(&[2]).finish()?;
    /// assert_eq!(tensor.view().iter_as::<f64>()?.sum::<f64>(), 6.0);
    ///
    /// let wide = Export::new(vec![1i64 << 60], &[1]).finish()?;
    /// let error = wide.view().iter_as::<f64>().unwrap_err();
    /// assert_eq!(error, AccessError::UnsupportedDtype { found: i64::DTYPE, supported: f64::SOURCES });
    /// # }
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    #[inline]
    pub fn iter_as<U: ReadAs>(&self) -> Result<ElementsAs<'a, U>, AccessError> {
        // The tensor's own type needs no conversion: `iter`'s iterator itself, in a field of
        // its own (not inside an enum, which would keep its state out of registers).
        Ok(if self.dtype() == U::DTYPE {
            ElementsAs {
                same: self.iter::<U>()?,
                converted: None,
            }
        } else {
            ElementsAs {
                same: Elements::empty(),
                converted: Some(U::source(self)?),
            }
        })
    }

    /// The elements in row-major order, converted losslessly to `U`, in a new `Vec` (a copy;
    /// see [`iter_as`](Self::iter_as)). A C-contiguous tensor of `U` itself is copied with one
    /// `memcpy`.
    ///
    /// # Errors
    /// As [`iter_as`](Self::iter_as).
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    ///
    /// // The transpose of a 2 x 3 row-major buffer of f32, as f64.
    /// let tensor = Export::new(vec![0.5f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[3, 2]).strides(&[1, 3]).finish()?;
    /// assert_eq!(tensor.view().to_vec_as::<f64>()?, [0.5, 3.0, 1.0, 4.0, 2.0, 5.0]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    #[cfg(feature = "alloc")]
    pub fn to_vec_as<U: ReadAs>(&self) -> Result<alloc::vec::Vec<U>, AccessError> {
        if self.dtype() == U::DTYPE && self.is_c_contiguous() {
            return Ok(self.as_slice::<U>()?.to_vec());
        }
        U::to_vec(self)
    }
}

/// The elements of a tensor in row-major order, converted to `U`. Made by
/// [`TensorView::iter_as`]; `fold` (and what runs on it: `for_each`, `sum`, ...) loops once over
/// the source type, with no per-element dispatch.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::Export;
///
/// let tensor = Export::new(vec![1u16, 2, 3, 4], &[2, 2]).finish()?;
/// let elements = tensor.view().iter_as::<u64>()?;
/// assert_eq!(elements.len(), 4);
/// assert_eq!(elements.map(|x| x * x).collect::<Vec<u64>>(), [1, 4, 9, 16]);
/// # }
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub struct ElementsAs<'a, U> {
    /// The elements when the tensor's dtype is `U`'s; empty otherwise.
    same: Elements<'a, U>,
    /// The source dtype's elements when they convert; `None` when the dtype is `U`'s.
    converted: Option<Source<'a>>,
}

impl<U: ReadAs> Iterator for ElementsAs<'_, U> {
    type Item = U;

    #[inline]
    fn next(&mut self) -> Option<U> {
        // A tensor of `U` itself: `iter`'s `next`, the rest only checked at the end.
        if let Some(value) = self.same.next() {
            return Some(value);
        }
        self.converted.as_mut().and_then(next_converted)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.converted.as_ref().map_or(self.same.len(), Source::len);
        (len, Some(len))
    }

    #[inline]
    fn fold<B, F: FnMut(B, U) -> B>(self, init: B, f: F) -> B {
        match self.converted {
            None => self.same.fold(init, f),
            Some(source) => U::fold(source, init, f),
        }
    }
}

/// `U::next`: the per-element match over the sources, for a converted dtype.
#[inline]
fn next_converted<U: ReadAs>(source: &mut Source<'_>) -> Option<U> {
    U::next(source)
}

impl<U: ReadAs> ExactSizeIterator for ElementsAs<'_, U> {}

impl<U> fmt::Debug for ElementsAs<'_, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ElementsAs")
            .field("same", &self.same)
            .field("converted", &self.converted)
            .finish()
    }
}

/// Runs `body` with the type alias `T` set to the element type of `dtype`, one of the listed
/// [`Element`] types: `Ok(body)`, or `Err(`[`AccessError::UnsupportedDtype`]`)` listing them
/// for any other dtype (a `TypeError` in Python, with the `pyo3` feature). The body is compiled
/// once per listed type, so it may use `T` as a type everywhere (`view.iter::<T>()`,
/// `Vec<T>`, ...); `?` and `return` in it act on the enclosing function. Clippy's
/// `useless_conversion` is allowed in the body (`f64::from(x)` is the identity when `T` is
/// `f64`).
///
/// Form: `dispatch_dtype!(dtype, [Type, ...], T => body)`, where `dtype` is a
/// [`DLDataType`](crate::raw::DLDataType) (usually `view.dtype()`) and `T` any name.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::{AccessError, Export, TensorView};
///
/// /// The largest element, as f64, of an f32 or f64 tensor.
/// fn max(view: &TensorView<'_>) -> Result<f64, AccessError> {
///     dlpack_abi::dispatch_dtype!(view.dtype(), [f32, f64], T => {
///         view.iter::<T>()?.map(f64::from).fold(f64::NEG_INFINITY, f64::max)
///     })
/// }
///
/// let floats = Export::new(vec![1.5f32, -2.0, 0.25], &[3]).finish()?;
/// assert_eq!(max(&floats.view())?, 1.5);
/// let bytes = Export::new(vec![1i8], &[1]).finish()?;
/// assert_eq!(
///     max(&bytes.view()).unwrap_err().to_string(),
///     "DLTensor.dtype is int8, but only float32, float64 are supported here"
/// );
/// # }
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
#[macro_export]
macro_rules! dispatch_dtype {
    ($dtype:expr, [$($element:ty),+ $(,)?], $T:ident => $body:expr $(,)?) => {{
        let dtype: $crate::raw::DLDataType = $dtype;
        'dispatch: {
            $(
                if dtype == <$element as $crate::dlpack::Element>::DTYPE {
                    #[allow(dead_code)]
                    type $T = $element;
                    // For one of the types, a conversion in the body may be the identity.
                    #[allow(clippy::useless_conversion)]
                    let value = $body;
                    break 'dispatch ::core::result::Result::Ok(value);
                }
            )+
            const SUPPORTED: &[$crate::raw::DLDataType] =
                &[$(<$element as $crate::dlpack::Element>::DTYPE),+];
            ::core::result::Result::Err($crate::dlpack::AccessError::UnsupportedDtype {
                found: dtype,
                supported: SUPPORTED,
            })
        }
    }};
}
