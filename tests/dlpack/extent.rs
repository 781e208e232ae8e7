//! `TensorView::memory_extent` and `MemoryExtent::may_overlap` (the rule the Python borrow
//! registry refuses aliasing by), against the bytes each tensor really occupies.

use std::collections::BTreeSet;

use dlpack_abi::dlpack::{MemoryExtent, TensorView};
use dlpack_abi::raw::{kDLCPU, kDLUInt, DLDataType, DLDevice, DLTensor};
use proptest::prelude::*;

/// A tensor over `buffer`: `element_bytes`-byte unsigned elements, the first at `offset`.
#[derive(Debug)]
struct Described {
    offset: usize,
    element_bytes: u8,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

impl Described {
    /// Every byte an element occupies, as an offset into the buffer (negative ones lie before
    /// it).
    fn bytes(&self) -> BTreeSet<i64> {
        let mut out = BTreeSet::new();
        let count: i64 = self.shape.iter().product();
        for mut linear in 0..count {
            let mut at = self.offset as i64;
            for (&extent, &stride) in self.shape.iter().zip(&self.strides).rev() {
                at += (linear % extent) * stride * i64::from(self.element_bytes);
                linear /= extent;
            }
            for byte in 0..i64::from(self.element_bytes) {
                out.insert(at + byte);
            }
        }
        out
    }

    /// The crate's extent of this tensor over `buffer`.
    fn extent(&mut self, buffer: &mut [u8]) -> MemoryExtent {
        let tensor = DLTensor {
            data: buffer.as_mut_ptr().cast(),
            device: DLDevice {
                device_type: kDLCPU,
                device_id: 0,
            },
            ndim: i32::try_from(self.shape.len()).unwrap(),
            dtype: DLDataType {
                code: kDLUInt,
                bits: 8 * self.element_bytes,
                lanes: 1,
            },
            shape: self.shape.as_mut_ptr(),
            strides: self.strides.as_mut_ptr(),
            byte_offset: self.offset as u64,
        };
        // SAFETY: `shape` and `strides` hold `ndim` values and outlive the view.
        let view = unsafe { TensorView::from_raw(&tensor) }.expect("a valid tensor");
        view.memory_extent()
    }
}

/// Tensors whose bytes all lie in a 512-byte buffer: up to 3 dimensions, strides of either
/// sign (zero too), 1-, 2-, 4- or 8-byte elements.
fn described() -> impl Strategy<Value = Described> {
    (
        prop::sample::select(vec![1u8, 2, 4, 8]),
        prop::collection::vec((1i64..4, -6i64..7), 0..=3),
        0usize..512,
    )
        .prop_filter_map("fits the buffer", |(element_bytes, dims, offset)| {
            let (shape, strides): (Vec<i64>, Vec<i64>) = dims.into_iter().unzip();
            let described = Described {
                offset,
                element_bytes,
                shape,
                strides,
            };
            let bytes = described.bytes();
            (bytes.first().is_some_and(|&first| first >= 0)
                && bytes.last().is_some_and(|&last| last < 512)
                && described.offset % usize::from(element_bytes) == 0)
                .then_some(described)
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 8 } else { 2000 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The extent covers exactly the bytes from the lowest to the highest occupied one, and
    /// `may_overlap` never answers `false` for two tensors that share a byte.
    #[test]
    fn may_overlap_is_never_wrong_about_sharing(mut a in described(), mut b in described()) {
        let mut buffer = vec![0u8; 512];
        let base = buffer.as_ptr() as i64;
        let (extent_a, extent_b) = (a.extent(&mut buffer), b.extent(&mut buffer));
        let (bytes_a, bytes_b) = (a.bytes(), b.bytes());
        prop_assert_eq!(extent_a.start as i64 - base, *bytes_a.first().unwrap());
        prop_assert_eq!(extent_a.end as i64 - base, bytes_a.last().unwrap() + 1);
        prop_assert_eq!(extent_a.first as i64 - base, a.offset as i64);
        let shared = bytes_a.intersection(&bytes_b).next().is_some();
        if shared {
            prop_assert!(extent_a.may_overlap(&extent_b) && extent_b.may_overlap(&extent_a));
        }
        if bytes_a.last() < bytes_b.first() || bytes_b.last() < bytes_a.first() {
            prop_assert!(!extent_a.may_overlap(&extent_b), "disjoint ranges never conflict");
        }
    }
}

#[test]
fn interleaved_and_split_halves_are_told_apart() {
    let mut buffer = vec![0u8; 96];
    let slice = |offset, shape: &[i64], strides: &[i64]| Described {
        offset,
        element_bytes: 8,
        shape: shape.to_vec(),
        strides: strides.to_vec(),
    };
    let mut extent = |mut d: Described| d.extent(&mut buffer);
    let even = extent(slice(0, &[6], &[2]));
    let odd = extent(slice(8, &[6], &[2]));
    let all = extent(slice(0, &[12], &[1]));
    let head = extent(slice(0, &[6], &[1]));
    let tail = extent(slice(48, &[6], &[1]));
    let overlapping_tail = extent(slice(40, &[7], &[1]));
    let reversed = extent(slice(88, &[12], &[-1]));
    let column = extent(slice(8, &[4], &[3])); // column 1 of a 4 x 3 matrix
    assert!(!even.may_overlap(&odd), "a[::2] and a[1::2]");
    assert!(!head.may_overlap(&tail), "a[:6] and a[6:]");
    assert!(head.may_overlap(&overlapping_tail), "a[:6] and a[5:]");
    assert!(all.may_overlap(&even) && all.may_overlap(&reversed) && reversed.may_overlap(&odd));
    assert!(column.may_overlap(&odd) && !column.may_overlap(&extent(slice(0, &[4], &[3]))));
}

#[test]
fn empty_tensors_occupy_nothing() {
    let mut buffer = vec![0u8; 16];
    let empty = Described {
        offset: 0,
        element_bytes: 4,
        shape: vec![0, 3],
        strides: vec![3, 1],
    }
    .extent(&mut buffer);
    let all = Described {
        offset: 0,
        element_bytes: 4,
        shape: vec![4],
        strides: vec![1],
    }
    .extent(&mut buffer);
    assert!(empty.is_empty());
    assert!(!empty.may_overlap(&all) && !all.may_overlap(&empty));
}

#[test]
fn a_single_element_meets_a_strided_one_inside_its_gap() {
    // A 2-byte 0-d element at 450 and 1-byte elements at 448 and 451: byte 451 is shared,
    // though neither element starts where the other does (a case proptest once found).
    let mut buffer = vec![0u8; 512];
    let single = Described {
        offset: 450,
        element_bytes: 2,
        shape: vec![],
        strides: vec![],
    }
    .extent(&mut buffer);
    let strided = Described {
        offset: 448,
        element_bytes: 1,
        shape: vec![2],
        strides: vec![3],
    }
    .extent(&mut buffer);
    assert!(single.may_overlap(&strided) && strided.may_overlap(&single));
}

#[test]
fn may_overlap_does_not_overflow_on_extreme_extents() {
    let high = MemoryExtent {
        start: usize::MAX - 16,
        end: usize::MAX,
        first: usize::MAX - 16,
        stride_gcd: usize::MAX / 2 + 1,
        element_bytes: 8,
    };
    let low = MemoryExtent {
        first: usize::MAX - 8,
        start: usize::MAX - 8,
        ..high
    };
    assert!(!high.may_overlap(&low) && !low.may_overlap(&high));
}
