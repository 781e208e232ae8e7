//! Converting reads (`iter_as`, `to_vec_as`) and `dispatch_dtype!`: for every source dtype and
//! every target type, over random shapes and strides (negative and zero ones too) and offsets,
//! the converted elements are the source's own (`iter::<S>()`) converted by `From`, and every
//! pair this file does not list as lossless is refused with the exact error. A small budget
//! under Miri.

use dlpack_abi::dispatch_dtype;
use dlpack_abi::dlpack::{AccessError, Element, Export, ReadAs, TensorView, VersionedTensor};
use dlpack_abi::raw::DLDataType;
use proptest::prelude::*;
use proptest::test_runner::Config;

#[cfg(feature = "half")]
use half::{bf16, f16};
#[cfg(feature = "num-complex")]
use num_complex::Complex;

/// A random tensor layout: per dimension an extent and a stride (in elements, any sign, zero
/// included), or no strides at all (compact row-major).
#[derive(Debug, Clone)]
struct Layout {
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
}

fn layouts() -> impl Strategy<Value = Layout> {
    prop::collection::vec((0i64..4, -3i64..=3), 0..4).prop_flat_map(|dims| {
        let shape: Vec<i64> = dims.iter().map(|&(extent, _)| extent).collect();
        let strides: Vec<i64> = dims.iter().map(|&(_, stride)| stride).collect();
        prop_oneof![Just(None), Just(Some(strides))].prop_map(move |strides| Layout {
            shape: shape.clone(),
            strides,
        })
    })
}

/// A deterministic, finite (never NaN) value of each source type from a random word.
trait Sample: Element + std::fmt::Debug {
    fn sample(word: u64) -> Self;
}

// Test data: truncating casts are the point (every bit pattern of the integer types).
#[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
mod samples {
    use super::*;

    macro_rules! integers {
        ($($ty:ty),+) => {$(
            impl Sample for $ty {
                fn sample(word: u64) -> Self {
                    (u128::from(word) << 64 | u128::from(word.rotate_left(29))) as $ty
                }
            }
        )+};
    }
    integers!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);

    impl Sample for f32 {
        fn sample(word: u64) -> Self {
            f32::from(word as i16) / 8.0
        }
    }
    impl Sample for f64 {
        fn sample(word: u64) -> Self {
            (word as i64 >> 8) as f64 / 1024.0
        }
    }
    #[cfg(feature = "half")]
    impl Sample for f16 {
        fn sample(word: u64) -> Self {
            f16::from_f32(f32::from(word as i8) / 4.0)
        }
    }
    #[cfg(feature = "half")]
    impl Sample for bf16 {
        fn sample(word: u64) -> Self {
            bf16::from_f32(f32::from(word as i16) * 3.0)
        }
    }
    #[cfg(feature = "num-complex")]
    impl Sample for Complex<f32> {
        fn sample(word: u64) -> Self {
            Complex::new(f32::sample(word), f32::sample(word.rotate_left(17)))
        }
    }
    #[cfg(feature = "num-complex")]
    impl Sample for Complex<f64> {
        fn sample(word: u64) -> Self {
            Complex::new(f64::sample(word), f64::sample(word.rotate_left(17)))
        }
    }
}

/// A tensor of `S` in `layout`, its buffer just large enough, filled from `words`; the first
/// element placed so that negative strides stay inside it.
fn tensor<S: Sample + Send>(layout: &Layout, words: &[u64]) -> VersionedTensor {
    let (mut low, mut high) = (0i64, 0i64);
    let empty = layout.shape.contains(&0);
    if let (Some(strides), false) = (&layout.strides, empty) {
        for (&extent, &stride) in layout.shape.iter().zip(strides) {
            let span = (extent - 1) * stride;
            low += span.min(0);
            high += span.max(0);
        }
    } else if !empty {
        high = layout.shape.iter().product::<i64>() - 1;
    }
    let len = usize::try_from(high - low + 1).unwrap();
    let values: Vec<S> = (0..len)
        .map(|i| S::sample(words[i % words.len()] ^ i as u64))
        .collect();
    let export = Export::new(values, &layout.shape).first_element(usize::try_from(-low).unwrap());
    match &layout.strides {
        Some(strides) => export.strides(strides).finish(),
        None => export.finish(),
    }
    .unwrap()
}

/// `U`'s converted reads of `view` (a tensor of `S`) agree with `iter::<S>()` mapped through
/// `convert`, by every way of consuming them.
fn agrees<S: Element, U: ReadAs + PartialEq + std::fmt::Debug>(
    view: &TensorView<'_>,
    convert: impl Fn(S) -> U,
) {
    assert!(U::SOURCES.contains(&S::DTYPE));
    let expected: Vec<U> = view.iter::<S>().unwrap().map(convert).collect();
    // `next`, one element at a time, with the length going down.
    let mut elements = view.iter_as::<U>().unwrap();
    let mut stepped = Vec::new();
    while let Some(value) = elements.next() {
        stepped.push(value);
        assert_eq!(elements.len(), expected.len() - stepped.len());
    }
    assert_eq!(stepped, expected, "next()");
    // `fold`, one loop.
    let folded = view
        .iter_as::<U>()
        .unwrap()
        .fold(Vec::new(), |mut all, value| {
            all.push(value);
            all
        });
    assert_eq!(folded, expected, "fold()");
    assert_eq!(view.to_vec_as::<U>().unwrap(), expected, "to_vec_as()");
}

/// Every pair `(S, U)` not listed as lossless is refused, naming `U::SOURCES`.
fn refused<S: Element, U: ReadAs + std::fmt::Debug>(
    view: &TensorView<'_>,
    lossless: &[(DLDataType, DLDataType)],
) {
    let listed = lossless.contains(&(S::DTYPE, U::DTYPE));
    assert_eq!(
        U::SOURCES.contains(&S::DTYPE),
        listed,
        "{} -> {}",
        S::DTYPE,
        U::DTYPE
    );
    if !listed {
        let error = AccessError::UnsupportedDtype {
            found: S::DTYPE,
            supported: U::SOURCES,
        };
        assert_eq!(view.iter_as::<U>().unwrap_err(), error);
        assert_eq!(view.to_vec_as::<U>().unwrap_err(), error);
    }
}

/// The lossless pairs, source by source (the table in `ReadAs`'s documentation, written out
/// again here), each with the conversion a user would write; and every target type.
macro_rules! check {
    (
        targets: [$($(#[$tcfg:meta])* $target:ty),+ $(,)?];
        $($(#[$scfg:meta])* $source:ty => [$($(#[$cfg:meta])* $to:ty : $x:ident => $convert:expr),* $(,)?];)+
    ) => {
        /// Every `(source, target)` dtype pair that converts.
        fn lossless() -> Vec<(DLDataType, DLDataType)> {
            let mut pairs = Vec::new();
            $($(#[$scfg])* {
                $($(#[$cfg])* pairs.push((<$source>::DTYPE, <$to>::DTYPE));)*
            })+
            pairs
        }

        /// Every target refuses a tensor of `S` unless the pair is listed.
        fn refused_by_the_rest<S: Element>(view: &TensorView<'_>) {
            let lossless = lossless();
            $($(#[$tcfg])* refused::<S, $target>(view, &lossless);)+
        }

        /// Checks every target against a tensor of the dtype that `view` has.
        fn check_all(view: &TensorView<'_>) {
            $($(#[$scfg])* if view.dtype() == <$source>::DTYPE {
                $($(#[$cfg])* agrees::<$source, $to>(view, |$x: $source| -> $to { $convert });)*
                refused_by_the_rest::<$source>(view);
                return;
            })+
            unreachable!("no source listed for {}", view.dtype());
        }

        proptest! {
            #![proptest_config(config())]

            #[test]
            fn converting_reads_agree_with_the_source_elements_for_every_pair(
                layout in layouts(),
                words in prop::collection::vec(any::<u64>(), 1..8),
            ) {
                $($(#[$scfg])* check_all(&tensor::<$source>(&layout, &words).view());)+
            }
        }
    };
}

check! {
    targets: [
        i8, u8, i16, u16, i32, u32, i64, u64, i128, u128, f32, f64,
        #[cfg(feature = "half")] f16,
        #[cfg(feature = "half")] bf16,
        #[cfg(feature = "num-complex")] Complex<f32>,
        #[cfg(feature = "num-complex")] Complex<f64>,
    ];
    i8 => [
        i8: x => x, i16: x => x.into(), i32: x => x.into(), i64: x => x.into(),
        i128: x => x.into(), f32: x => x.into(), f64: x => x.into(),
        #[cfg(feature = "half")] f16: x => x.into(),
        #[cfg(feature = "half")] bf16: x => x.into(),
        #[cfg(feature = "num-complex")] Complex<f32>: x => Complex::new(x.into(), 0.0),
        #[cfg(feature = "num-complex")] Complex<f64>: x => Complex::new(x.into(), 0.0),
    ];
    u8 => [
        u8: x => x, u16: x => x.into(), u32: x => x.into(), u64: x => x.into(),
        u128: x => x.into(), i16: x => x.into(), i32: x => x.into(), i64: x => x.into(),
        i128: x => x.into(), f32: x => x.into(), f64: x => x.into(),
        #[cfg(feature = "half")] f16: x => x.into(),
        #[cfg(feature = "half")] bf16: x => x.into(),
        #[cfg(feature = "num-complex")] Complex<f32>: x => Complex::new(x.into(), 0.0),
        #[cfg(feature = "num-complex")] Complex<f64>: x => Complex::new(x.into(), 0.0),
    ];
    i16 => [
        i16: x => x, i32: x => x.into(), i64: x => x.into(), i128: x => x.into(),
        f32: x => x.into(), f64: x => x.into(),
        #[cfg(feature = "num-complex")] Complex<f32>: x => Complex::new(x.into(), 0.0),
        #[cfg(feature = "num-complex")] Complex<f64>: x => Complex::new(x.into(), 0.0),
    ];
    u16 => [
        u16: x => x, u32: x => x.into(), u64: x => x.into(), u128: x => x.into(),
        i32: x => x.into(), i64: x => x.into(), i128: x => x.into(),
        f32: x => x.into(), f64: x => x.into(),
        #[cfg(feature = "num-complex")] Complex<f32>: x => Complex::new(x.into(), 0.0),
        #[cfg(feature = "num-complex")] Complex<f64>: x => Complex::new(x.into(), 0.0),
    ];
    i32 => [
        i32: x => x, i64: x => x.into(), i128: x => x.into(), f64: x => x.into(),
        #[cfg(feature = "num-complex")] Complex<f64>: x => Complex::new(x.into(), 0.0),
    ];
    u32 => [
        u32: x => x, u64: x => x.into(), u128: x => x.into(), i64: x => x.into(),
        i128: x => x.into(), f64: x => x.into(),
        #[cfg(feature = "num-complex")] Complex<f64>: x => Complex::new(x.into(), 0.0),
    ];
    i64 => [i64: x => x, i128: x => x.into()];
    u64 => [u64: x => x, u128: x => x.into(), i128: x => x.into()];
    i128 => [i128: x => x];
    u128 => [u128: x => x];
    f32 => [
        f32: x => x, f64: x => x.into(),
        #[cfg(feature = "num-complex")] Complex<f32>: x => Complex::new(x, 0.0),
        #[cfg(feature = "num-complex")] Complex<f64>: x => Complex::new(x.into(), 0.0),
    ];
    f64 => [
        f64: x => x,
        #[cfg(feature = "num-complex")] Complex<f64>: x => Complex::new(x, 0.0),
    ];
    #[cfg(feature = "half")]
    f16 => [
        f16: x => x, f32: x => x.into(), f64: x => x.into(),
        #[cfg(feature = "num-complex")] Complex<f32>: x => Complex::new(x.into(), 0.0),
        #[cfg(feature = "num-complex")] Complex<f64>: x => Complex::new(x.into(), 0.0),
    ];
    #[cfg(feature = "half")]
    bf16 => [
        bf16: x => x, f32: x => x.into(), f64: x => x.into(),
        #[cfg(feature = "num-complex")] Complex<f32>: x => Complex::new(x.into(), 0.0),
        #[cfg(feature = "num-complex")] Complex<f64>: x => Complex::new(x.into(), 0.0),
    ];
    #[cfg(feature = "num-complex")]
    Complex<f32> => [
        Complex<f32>: x => x,
        Complex<f64>: x => Complex::new(x.re.into(), x.im.into()),
    ];
    #[cfg(feature = "num-complex")]
    Complex<f64> => [Complex<f64>: x => x];
}

fn config() -> Config {
    Config {
        cases: if cfg!(miri) { 2 } else { 64 },
        failure_persistence: None,
        ..Config::default()
    }
}

#[test]
fn the_largest_values_convert_exactly() {
    let tensor = Export::new(vec![u32::MAX, 0, 1 << 31], &[3])
        .finish()
        .unwrap();
    let exact: Vec<f64> = tensor.view().to_vec_as::<f64>().unwrap();
    assert_eq!(exact, [4294967295.0, 0.0, 2147483648.0]);
    let tensor = Export::new(vec![i16::MIN, i16::MAX], &[2])
        .finish()
        .unwrap();
    assert!(tensor
        .view()
        .iter_as::<f32>()
        .unwrap()
        .eq([-32768.0, 32767.0]));
}

#[test]
fn a_tensor_of_u_itself_is_copied_as_it_is() {
    // C-contiguous: the memcpy path; strided: the loop.
    let tensor = Export::new(vec![1.5f64, -0.0, f64::MAX, 4.0], &[2, 2])
        .finish()
        .unwrap();
    assert_eq!(
        tensor.view().to_vec_as::<f64>().unwrap(),
        [1.5, -0.0, f64::MAX, 4.0]
    );
    let tensor = Export::new(vec![1.5f64, -0.0, f64::MAX, 4.0], &[2, 2])
        .strides(&[1, 2])
        .finish()
        .unwrap();
    assert_eq!(
        tensor.view().to_vec_as::<f64>().unwrap(),
        [1.5, f64::MAX, -0.0, 4.0]
    );
}

#[test]
fn refusals_other_than_the_dtype_are_typed_accesses() {
    // Unknown flag bits, then a foreign dtype (bool), on a converting read.
    let raw = Export::new(vec![1i16, 2], &[2])
        .finish()
        .unwrap()
        .into_raw();
    // SAFETY: `raw` is a live export, its flags written before it is handed over once.
    unsafe { (*raw).flags |= 1 << 40 };
    // SAFETY: as above.
    let tensor = unsafe { VersionedTensor::from_raw(raw) }.unwrap();
    assert!(matches!(
        tensor.view().iter_as::<f64>(),
        Err(AccessError::UnknownFlags { .. })
    ));
    let bools = Export::new(vec![1u8, 0], &[2]).finish().unwrap().into_raw();
    // SAFETY: as above: a `kDLBool` tensor of one-byte elements.
    unsafe { (*bools).dl_tensor.dtype.code = dlpack_abi::raw::kDLBool };
    // SAFETY: as above.
    let bools = unsafe { VersionedTensor::from_raw(bools) }.unwrap();
    let error = bools.view().iter_as::<i32>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "DLTensor.dtype is bool, but only int8, uint8, int16, uint16, int32 are supported here"
    );
}

/// A dtype-generic kernel as a user writes it: the sum, in the tensor's own type.
fn sum(view: &TensorView<'_>) -> Result<f64, AccessError> {
    dispatch_dtype!(view.dtype(), [f32, f64, i32], T => {
        let total: T = view.iter::<T>()?.sum();
        f64::from(total)
    })
}

#[test]
fn dispatch_runs_the_body_for_each_listed_type_and_refuses_the_rest() {
    let floats = Export::new(vec![0.5f32, 0.25], &[2]).finish().unwrap();
    assert_eq!(sum(&floats.view()), Ok(0.75));
    let doubles = Export::new(vec![1e300f64, 1e300], &[2]).finish().unwrap();
    assert_eq!(sum(&doubles.view()), Ok(2e300));
    let ints = Export::new(vec![40i32, 2], &[2])
        .strides(&[-1])
        .first_element(1)
        .finish()
        .unwrap();
    assert_eq!(sum(&ints.view()), Ok(42.0));
    let bytes = Export::new(vec![1i8], &[1]).finish().unwrap();
    let error = sum(&bytes.view()).unwrap_err();
    assert_eq!(
        error,
        AccessError::UnsupportedDtype {
            found: i8::DTYPE,
            supported: &[f32::DTYPE, f64::DTYPE, i32::DTYPE],
        }
    );
    assert_eq!(
        error.to_string(),
        "DLTensor.dtype is int8, but only float32, float64, int32 are supported here"
    );
}

#[test]
fn dispatch_returns_what_the_body_returns_and_its_question_marks_act_outside() {
    fn first_as_bytes(view: &TensorView<'_>) -> Result<Vec<u8>, AccessError> {
        let bytes = dispatch_dtype!(view.dtype(), [u16, u32,], Element => {
            let first: Element = view.get::<Element>(&[0])?;
            bytemuck::bytes_of(&first).to_vec()
        })?;
        Ok(bytes)
    }
    let tensor = Export::new(vec![0x0102u16], &[1]).finish().unwrap();
    assert_eq!(
        first_as_bytes(&tensor.view()).unwrap(),
        0x0102u16.to_ne_bytes()
    );
    let tensor = Export::new(vec![7u32, 8], &[2]).finish().unwrap();
    assert_eq!(first_as_bytes(&tensor.view()).unwrap(), 7u32.to_ne_bytes());
    // The body's own error (an index out of bounds on an empty tensor) comes out as it is.
    let empty = Export::new(Vec::<u32>::new(), &[0]).finish().unwrap();
    assert_eq!(
        first_as_bytes(&empty.view()).unwrap_err(),
        AccessError::IndexOutOfBounds {
            dim: 0,
            index: 0,
            extent: 0
        }
    );
}
