//! Unit tests of the tensor rules: storage sizes, the reach walk, and the fast paths' agreement
//! with full validation.

use super::*;
use crate::raw::{
    kDLBool, kDLCPU, kDLCUDA, kDLFloat, kDLFloat4_e2m1fn, kDLFloat6_e2m3fn, kDLFloat6_e3m2fn,
    kDLInt, kDLUInt, DLDataType, DLDataTypeCode, DLDevice,
};

fn dtype(code: DLDataTypeCode, bits: u8, lanes: u16) -> DLDataType {
    DLDataType { code, bits, lanes }
}

/// A CPU tensor at address 0x1000 with the given shape and strides (borrowed: keep them alive).
fn cpu_tensor(shape: &[i64], strides: &[i64], dtype: DLDataType) -> DLTensor {
    DLTensor {
        data: core::ptr::null_mut::<u8>().wrapping_add(0x1000).cast(),
        device: DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        },
        ndim: i32::try_from(shape.len()).unwrap(),
        dtype,
        shape: shape.as_ptr().cast_mut(),
        strides: strides.as_ptr().cast_mut(),
        byte_offset: 0,
    }
}

fn storage(code: DLDataTypeCode, bits: u8, lanes: u16) -> Storage {
    Storage::of(dtype(code, bits, lanes), DLPackFlags::empty()).unwrap()
}

#[test]
fn storage_rounds_odd_widths_per_element_and_packs_sub_byte_ones() {
    // Whole bytes.
    assert_eq!(storage(kDLFloat, 32, 1).element_bytes(), Some(4));
    assert_eq!(storage(kDLFloat, 32, 4).element_bytes(), Some(16));
    // Odd widths above 8 bits round up per element, as the header's size formula does.
    let int12 = storage(kDLInt, 12, 1);
    assert_eq!(int12.element_bytes(), Some(2));
    assert_eq!(int12.bytes_for(10), Some(20));
    let fp6x2 = storage(kDLFloat6_e3m2fn, 6, 2);
    assert_eq!(fp6x2.bytes_for(3), Some(6));
    // Below 8 bits: packed, little bit-endian, ceil(n * bits / 8) bytes.
    let fp4 = storage(kDLFloat4_e2m1fn, 4, 1);
    assert!(fp4.is_packed());
    assert_eq!((fp4.element_bytes(), fp4.bytes_for(3)), (None, Some(2)));
    assert_eq!(storage(kDLUInt, 1, 1).bytes_for(9), Some(2));
    // ... or one byte each when padded.
    let padded = Storage::of(
        dtype(kDLFloat4_e2m1fn, 4, 1),
        DLPackFlags::IS_SUBBYTE_TYPE_PADDED,
    )
    .unwrap();
    assert_eq!(padded.bytes_for(3), Some(3));
    // The largest dtype still fits.
    assert_eq!(
        storage(kDLBool, 255, u16::MAX).element_bytes(),
        Some(2_088_929)
    );
}

#[test]
fn storage_refuses_what_the_spec_forbids_and_sizes_that_overflow() {
    let zero_lanes = dtype(kDLFloat, 32, 0);
    assert_eq!(
        Storage::of(zero_lanes, DLPackFlags::empty()),
        Err(ImportError::ZeroLanes { dtype: zero_lanes })
    );
    let fp6_as_8 = dtype(kDLFloat6_e2m3fn, 8, 1);
    assert_eq!(
        Storage::of(fp6_as_8, DLPackFlags::empty()),
        Err(ImportError::SubByteBits {
            dtype: fp6_as_8,
            expected: 6
        })
    );
    let f64s = storage(kDLFloat, 64, 1);
    assert_eq!(
        f64s.bytes_for(isize::MAX as usize / 8),
        Some(isize::MAX as usize / 8 * 8)
    );
    assert_eq!(f64s.bytes_for(isize::MAX as usize / 8 + 1), None);
    assert_eq!(storage(kDLUInt, 7, 1).bytes_for(usize::MAX), None);
}

/// `SizeOverflow` names the first dimension, from the last, at which the extents from there to
/// the last stop fitting `isize` in bytes (as its documentation says), and a shape's first fault
/// from the last dimension is the one reported: a negative extent met later is not.
#[test]
fn the_size_error_names_the_first_dimension_from_the_last_that_overflows() {
    let f64s = dtype(kDLFloat, 64, 1);
    let none = DLPackFlags::empty();
    let overflow = |dim, extent| Err(ImportError::SizeOverflow { dim, extent });
    // 8 * 2^61 bytes already leave `isize` at the last dimension (its element count fits).
    assert_eq!(
        compact_byte_size(&[1 << 61, 1 << 61], f64s, none),
        overflow(1, 1 << 61)
    );
    assert_eq!(
        compact_byte_size(&[-1, 1 << 62], f64s, none),
        overflow(1, 1 << 62)
    );
    assert_eq!(
        compact_byte_size(&[-1, 4], f64s, none),
        Err(ImportError::NegativeExtent { dim: 0, extent: -1 })
    );
    // The largest that fits: isize::MAX bytes of bytes.
    let most = i64::try_from(isize::MAX).unwrap();
    let u8s = dtype(kDLUInt, 8, 1);
    assert_eq!(
        compact_byte_size(&[1, most], u8s, none),
        Ok(isize::MAX as usize)
    );
    assert_eq!(compact_byte_size(&[2, most], u8s, none), overflow(0, 2));
}

#[test]
fn byte_ranges_of_packed_elements_cover_partial_bytes() {
    let fp4 = storage(kDLFloat4_e2m1fn, 4, 1);
    assert_eq!(fp4.byte_range(0, 1), (0, 1));
    assert_eq!(fp4.byte_range(1, 3), (0, 2));
    assert_eq!(fp4.byte_range(-1, 1), (-1, 1));
    let f32s = storage(kDLFloat, 32, 1);
    assert_eq!(f32s.byte_range(-2, 3), (-8, 12));
}

#[test]
fn walk_finds_the_reach_and_the_first_dimension_that_leaves() {
    let f32s = storage(kDLFloat, 32, 1);
    // A transposed 2 x 3: elements 0..=5.
    assert_eq!(walk(&[3, 2], &[1, 3], f32s, |_, _| true), Ok((0, 5)));
    // Negative strides reach before the first element (element offsets, not bytes).
    assert_eq!(walk(&[4], &[-2], f32s, |_, _| true), Ok((-6, 0)));
    // Extent-1 dimensions contribute nothing, whatever their stride.
    assert_eq!(walk(&[1, 2], &[i64::MIN, 1], f32s, |_, _| true), Ok((0, 1)));
    // The predicate is asked after each dimension; the first refusal names it.
    let small = |first: Offset, end: Offset| first >= 0 && end <= 16;
    assert_eq!(walk(&[2, 4], &[1, 2], f32s, small), Err(1));
    // From the top of the address space, the last byte must still have an address.
    let top = usize::MAX - 7;
    assert_eq!(walk(&[2], &[1], f32s, in_address_space(top)), Ok((0, 1)));
    assert_eq!(walk(&[3], &[1], f32s, in_address_space(top)), Err(0));
    // The span is bounded by isize::MAX even inside the address space.
    assert_eq!(
        walk(&[2], &[i64::MAX / 4], f32s, in_address_space(0)),
        Err(0)
    );
}

/// Packed elements are bounded by count, not bytes: a dimension reaching 2^126 elements of 4 bits
/// overflowed `i128` when turned into bytes (a panic in debug builds, a wrapped reach accepted in
/// release builds).
#[test]
fn walk_refuses_packed_reaches_before_their_bytes_overflow() {
    let int4 = storage(kDLInt, 4, 1);
    for (shape, stride) in [([i64::MAX], i64::MAX), ([i64::MAX], i64::MIN)] {
        assert_eq!(walk(&shape, &[stride], int4, |_, _| true), Err(0));
    }
    let (shape, strides) = ([i64::MAX], [i64::MAX]);
    let t = cpu_tensor(&shape, &strides, dtype(kDLInt, 4, 1));
    // SAFETY: `shape` and `strides` hold one value each, alive for the call.
    let refused = unsafe { validate(&t, Some(DLPackVersion::CURRENT), DLPackFlags::empty()) };
    // A 32-bit `usize` cannot even count the elements.
    let expected = if cfg!(target_pointer_width = "64") {
        ImportError::StridesOverflow {
            dim: 0,
            stride: i64::MAX,
        }
    } else {
        ImportError::SizeOverflow {
            dim: 0,
            extent: i64::MAX,
        }
    };
    assert_eq!(refused, Err(expected));
}

/// A xorshift generator: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<T: Copy>(&mut self, values: &[T]) -> T {
        values[(self.next() % values.len() as u64) as usize]
    }
}

/// Extents at the edges: zero, one, the fast path's element bound on 64-bit targets
/// (`isize::MAX / 32` is 2^58 - 1; 2^59 elements of 31 bytes leave `isize`) and on 32-bit ones
/// (2^26 - 1, and 2^27), `usize` on 32-bit targets, `i64`, negative.
const EXTENTS: [i64; 14] = [
    0,
    1,
    1,
    2,
    3,
    7,
    (1 << 26) - 1,
    1 << 27,
    1 << 31,
    (1 << 58) - 1,
    1 << 59,
    1 << 62,
    i64::MAX,
    -1,
];
const STRIDES: [i64; 10] = [0, 1, 2, 3, -1, -3, 6, 1 << 40, i64::MIN, i64::MAX];

/// The walk in [`Offset`] (`i64` on 32-bit targets) refuses the same dimension, and returns the
/// same offsets, as the exact sum in `i128` with the bound of 64-bit targets, for every address
/// this target has. Its value is on 32-bit targets (`test-i686`, and Miri there), where the walk
/// is the narrow one; on 64-bit ones both are `i128`.
#[test]
#[allow(
    clippy::useless_conversion,
    reason = "the identity where `Offset` is `i128`"
)]
fn the_walk_agrees_with_an_exact_wide_walk() {
    /// The walk in `i128`, exact: every product and sum fits.
    fn exact(
        shape: &[i64],
        strides: &[i64],
        bits: i128,
        start: usize,
    ) -> Result<(i128, i128), usize> {
        let (mut low, mut high) = (0i128, 0i128);
        for (dim, (&extent, &stride)) in shape.iter().zip(strides).enumerate() {
            let reach = i128::from(stride) * i128::from(extent - 1);
            if reach < 0 {
                low += reach;
            } else {
                high += reach;
            }
            if low < -(1 << 70) || high > 1 << 70 {
                return Err(dim);
            }
            let (first, end) = match bits % 8 {
                0 => (low * bits / 8, (high + 1) * bits / 8),
                _ => (
                    (low * bits).div_euclid(8),
                    ((high + 1) * bits + 7).div_euclid(8),
                ),
            };
            let (first_address, end_address) = (start as i128 + first, start as i128 + end);
            if first_address < 0
                || end_address > 1i128 << usize::BITS
                || end - first > isize::MAX as i128
            {
                return Err(dim);
            }
        }
        Ok((low, high))
    }
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    // Each storage with its bits per element.
    let storages = [
        (storage(kDLFloat, 32, 1), 32),
        (storage(kDLUInt, 1, 1), 1),
        (storage(kDLInt, 8, 1), 8),
        // The widest element a header can state (64 bits x 65535 lanes, 512 KiB): the one that
        // brings the narrow walk closest to overflowing its `i64` on 32-bit targets.
        (storage(kDLFloat, 64, u16::MAX), 64 * i128::from(u16::MAX)),
    ];
    let extents = [1, 2, 3, 1 << 20, 1 << 31, 1 << 40, i64::MAX];
    let strides = [
        0,
        1,
        -1,
        7,
        -(1 << 20),
        1 << 31,
        1 << 33,
        1 << 62,
        i64::MIN,
        i64::MAX,
    ];
    let addresses = [0usize, 0x1000, usize::MAX / 2, usize::MAX - 64];
    let cases = if cfg!(miri) { 300 } else { 50_000 };
    let mut accepted = 0;
    for _ in 0..cases {
        let ndim = 1 + (rng.next() % 4) as usize;
        let shape: alloc::vec::Vec<i64> = (0..ndim).map(|_| rng.pick(&extents)).collect();
        let steps: alloc::vec::Vec<i64> = (0..ndim).map(|_| rng.pick(&strides)).collect();
        let ((storage, bits), start) = (rng.pick(&storages), rng.pick(&addresses));
        let narrow = walk(&shape, &steps, storage, in_address_space(start));
        let narrow = narrow.map(|(low, high)| (i128::from(low), i128::from(high)));
        let wide = exact(&shape, &steps, bits, start);
        assert_eq!(narrow, wide, "{shape:?} {steps:?} {start}");
        accepted += usize::from(narrow.is_ok());
    }
    assert!(
        accepted > cases / 20 && accepted < cases - cases / 20,
        "{accepted}"
    );
}

/// `Meta` keeps the storage and its facts in one word: each reads back as it was given,
/// whatever the others are (a packed sub-byte storage and the widest one too), and setting one
/// fact leaves the rest; `has_all` is the facts asked one by one.
#[test]
fn meta_keeps_each_fact_apart_in_its_one_word() {
    let cpu = DLDevice {
        device_type: kDLCPU,
        device_id: 0,
    };
    let cuda = DLDevice {
        device_type: kDLCUDA,
        device_id: 0,
    };
    let storages = [
        storage(kDLFloat, 64, u16::MAX),
        storage(DLDataTypeCode(u8::MAX), u8::MAX, u16::MAX),
        storage(kDLUInt, 1, 1),
        storage(kDLFloat4_e2m1fn, 4, 1),
    ];
    let facts = [Meta::C_CONTIGUOUS, Meta::READABLE, Meta::NON_EMPTY];
    for storage in storages {
        for (elements, c_contiguous, device, flags) in [
            (usize::MAX, true, cpu, DLPackFlags::IS_COPIED),
            (
                1,
                false,
                cpu,
                DLPackFlags::IS_COPIED | DLPackFlags::READ_ONLY,
            ),
            (0, true, cuda, DLPackFlags::empty()),
            (7, false, cpu, DLPackFlags::from_bits_retain(1 << 40 | 7)),
            (0, false, cpu, DLPackFlags::READ_ONLY),
            (3, true, cpu, DLPackFlags::IS_SUBBYTE_TYPE_PADDED),
        ] {
            let meta = Meta::new(elements, storage, c_contiguous, device, flags);
            assert_eq!(meta.elements(), elements);
            assert_eq!(meta.storage(), storage, "the storage, packed flag included");
            assert_eq!(meta.is_c_contiguous(), c_contiguous);
            // Readable: host memory with only known flags.
            let readable = device == cpu && flags.bits() >> 40 == 0;
            assert_eq!(meta.is_readable(), readable);
            // Exclusive: a copy the consumer may write.
            let exclusive = flags.bits() & 3 == DLPackFlags::IS_COPIED.bits();
            assert_eq!(meta.is_exclusive(), exclusive);
            assert!(!meta.is_tracked());
            let has = [c_contiguous, readable, elements != 0];
            for asked in 0..8usize {
                let is_asked = |i: &usize| asked & 1 << i != 0;
                let mask = (0..3).filter(is_asked).fold(0, |mask, i| mask | facts[i]);
                let holds = (0..3).filter(is_asked).all(|i| has[i]);
                assert_eq!(meta.has_all(mask), holds, "{meta:?} asked {mask:#x}");
            }
            for (tracked, exclusive) in [(true, false), (false, true), (true, true)] {
                let changed = meta.with_tracked(tracked);
                // `with_exclusive` exists for exports, which need `alloc`.
                #[cfg(feature = "alloc")]
                let changed = changed.with_exclusive(exclusive);
                let exclusive = if cfg!(feature = "alloc") {
                    exclusive
                } else {
                    meta.is_exclusive()
                };
                assert_eq!(
                    (changed.is_tracked(), changed.is_exclusive()),
                    (tracked, exclusive)
                );
                assert_eq!(
                    (
                        changed.storage(),
                        changed.is_c_contiguous(),
                        changed.is_readable(),
                        changed.elements()
                    ),
                    (storage, c_contiguous, readable, elements)
                );
                let all = Meta::C_CONTIGUOUS | Meta::READABLE | Meta::NON_EMPTY;
                assert_eq!(changed.has_all(all), meta.has_all(all));
            }
        }
    }
}

/// The common tensors the fast path is for: it accepts each (unless its NULL strides are not
/// allowed for its version), with exactly what full validation returns; and it leaves to full
/// validation the same tensors made empty, strided or of sub-byte elements.
#[test]
fn the_fast_path_takes_the_common_tensors() {
    let shapes: [&[i64]; 6] = [&[1], &[7], &[2, 3], &[1, 5], &[3, 1, 2], &[2, 2, 2, 2]];
    let dtypes = [
        dtype(kDLFloat, 32, 1),
        dtype(kDLInt, 8, 1),
        dtype(kDLUInt, 16, 1),
    ];
    let versions = [
        None,
        Some(DLPackVersion { major: 1, minor: 1 }),
        Some(DLPackVersion::CURRENT),
    ];
    let mut taken = 0;
    for shape in shapes {
        let compact: alloc::vec::Vec<i64> = (0..shape.len())
            .map(|dim| row_major_stride(shape, dim))
            .collect();
        let mut strided = compact.clone();
        strided[0] *= 2;
        let mut empty = shape.to_vec();
        empty[0] = 0;
        for (dtype, version, null_strides) in dtypes
            .iter()
            .flat_map(|&d| versions.iter().map(move |&v| (d, v)))
            .flat_map(|(d, v)| [(d, v, false), (d, v, true)])
        {
            let mut t = cpu_tensor(shape, &compact, dtype);
            t.byte_offset = 8;
            if null_strides {
                t.strides = core::ptr::null_mut();
            }
            let flags = DLPackFlags::empty();
            // SAFETY: `shape` and `strides` hold `ndim` values and outlive the calls.
            let fast = unsafe { accept_compact(&t, version, flags) };
            // SAFETY: as above.
            let full = unsafe { validate_full(&t, version, flags) };
            if null_strides && !strides_may_be_null(version) {
                assert_eq!(fast, None, "{shape:?} {version:?}");
                continue;
            }
            assert_eq!(fast.map(Ok), Some(full), "{shape:?} {dtype:?} {version:?}");
            taken += 1;
            // Left to full validation: empty, strided, packed bits.
            let strided_t = DLTensor {
                strides: strided.as_ptr().cast_mut(),
                ..t
            };
            let empty_t = DLTensor {
                shape: empty.as_ptr().cast_mut(),
                ..t
            };
            let bits_t = DLTensor {
                dtype: dtype_of_bits(4),
                ..t
            };
            for left in [&empty_t, &bits_t]
                .into_iter()
                .chain((shape[0] > 1).then_some(&strided_t))
            {
                // SAFETY: as above (`empty` and `strided` hold `ndim` values too).
                let fast = unsafe { accept_compact(left, version, flags) };
                assert_eq!(fast, None, "{left:?}");
            }
        }
    }
    assert_eq!(taken, 6 * 3 * 5);
    // An extent-1 dimension with a stride other than the row-major one: C-contiguous by NumPy's
    // rule, which full validation applies; the fast path leaves it.
    let (shape, strides) = ([1i64, 5], [7i64, 1]);
    let t = cpu_tensor(&shape, &strides, dtype(kDLFloat, 32, 1));
    let (version, flags) = (Some(DLPackVersion::CURRENT), DLPackFlags::empty());
    // SAFETY: `shape` and `strides` hold two values each and outlive the calls.
    assert_eq!(unsafe { accept_compact(&t, version, flags) }, None);
    // SAFETY: as above.
    let full = unsafe { validate(&t, version, flags) }.unwrap();
    assert!(full.is_c_contiguous() && full.elements() == 5);
}

fn dtype_of_bits(bits: u8) -> DLDataType {
    dtype(kDLUInt, bits, 1)
}

/// The fast path's storage rule agrees with the full one wherever it answers.
#[test]
#[cfg_attr(
    miri,
    ignore = "arithmetic only, 524 288 cases; the native runs cover it"
)]
fn whole_byte_storage_agrees_with_the_full_rule() {
    let mut answered = 0;
    for code in 0..=u8::MAX {
        for bits in 0..=u8::MAX {
            for lanes in [0, 1, 2, u16::MAX] {
                let dtype = DLDataType {
                    code: DLDataTypeCode(code),
                    bits,
                    lanes,
                };
                let Some(storage) = Storage::of_whole_bytes(dtype) else {
                    continue;
                };
                answered += 1;
                for flags in [DLPackFlags::empty(), DLPackFlags::IS_SUBBYTE_TYPE_PADDED] {
                    assert_eq!(Storage::of(dtype, flags), Ok(storage), "{dtype:?}");
                }
            }
        }
    }
    assert_eq!(
        answered,
        253 * 31,
        "every code but the three fixed-width ones, 31 widths"
    );
}

/// Builds random tensors (shapes and strides from the edge-case tables, compact strides half of
/// the time, addresses anywhere) and checks that the fast path agrees with full validation and
/// that the export's `compact_meta` agrees with validating what export writes.
#[test]
fn the_fast_paths_agree_with_full_validation() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let cases = if cfg!(miri) { 300 } else { 30_000 };
    let dtypes = [
        dtype(kDLFloat, 32, 1),
        dtype(kDLInt, 12, 1),
        dtype(kDLUInt, 1, 1),
        dtype(kDLFloat4_e2m1fn, 4, 1),
        dtype(kDLFloat, 64, 2),
        dtype(kDLUInt, 7, 1),
        dtype(kDLInt, 8, 1),
        dtype(kDLUInt, 16, 1),
        dtype(kDLFloat, 64, 1),
        // The widest whole-byte element: 31 bytes, the fast path's bound.
        dtype(kDLUInt, 248, 1),
    ];
    let addresses = [0usize, 0x1000, usize::MAX / 2, usize::MAX - 64, usize::MAX];
    let (mut accepted, mut contiguous, mut common, mut typed_common) = (0, 0, 0, 0);
    #[cfg_attr(not(feature = "alloc"), allow(unused_mut))]
    let mut exports_fast = 0;
    for _ in 0..cases {
        let ndim = (rng.next() % 5) as usize;
        let shape: alloc::vec::Vec<i64> = (0..ndim).map(|_| rng.pick(&EXTENTS)).collect();
        let compact = rng.next() % 2 == 0;
        let strides: alloc::vec::Vec<i64> = (0..ndim)
            .map(|dim| match compact {
                true => row_major_stride(&shape, dim),
                false => rng.pick(&STRIDES),
            })
            .collect();
        let flags = rng.pick(&[
            DLPackFlags::empty(),
            DLPackFlags::IS_SUBBYTE_TYPE_PADDED,
            DLPackFlags::IS_COPIED,
            DLPackFlags::from_bits_retain(1 << 9),
        ]);
        let t = DLTensor {
            data: core::ptr::null_mut::<u8>()
                .wrapping_add(rng.pick(&addresses))
                .cast(),
            device: DLDevice {
                device_type: rng.pick(&[kDLCPU, kDLCUDA]),
                device_id: 0,
            },
            ndim: ndim as i32,
            dtype: rng.pick(&dtypes),
            shape: shape.as_ptr().cast_mut(),
            strides: if rng.next() % 8 == 0 {
                core::ptr::null_mut()
            } else {
                strides.as_ptr().cast_mut()
            },
            byte_offset: rng.pick(&[0, 4, 1 << 40, u64::MAX]),
        };
        let version = rng.pick(&[
            Some(DLPackVersion { major: 1, minor: 1 }),
            Some(DLPackVersion::CURRENT),
            None,
        ]);
        // SAFETY: `shape` and `strides` hold `ndim` values and outlive the calls.
        let fast = unsafe { validate(&t, version, flags) };
        // SAFETY: as above.
        let full = unsafe { validate_full(&t, version, flags) };
        assert_eq!(fast, full, "{t:?} {shape:?} {strides:?}");
        // SAFETY: as above.
        if let Some(meta) = unsafe { accept_compact(&t, version, flags) } {
            assert_eq!(Ok(meta), full, "{t:?} {shape:?} {strides:?}");
            common += 1;
        }
        // The typed imports' rule (`HostSlice`): `f32` and `f64` alone.
        for typed in [
            // SAFETY: as above.
            unsafe { accept_compact_with(&t, version, flags, element_rule::<f32>, true) },
            // SAFETY: as above.
            unsafe { accept_compact_with(&t, version, flags, element_rule::<f64>, true) },
        ]
        .into_iter()
        .flatten()
        {
            assert_eq!(Ok(typed), full, "{t:?} {shape:?} {strides:?}");
            typed_common += 1;
        }
        if let Ok(meta) = fast {
            accepted += 1;
            contiguous += usize::from(meta.is_c_contiguous() && meta.elements() > 0);
        }
        #[cfg(feature = "alloc")]
        if let Ok(storage) = Storage::of(t.dtype, flags) {
            let exported = compact_meta(&shape, storage, t.device, flags, |_, _, _| {});
            // The export's fast path, where it answers: the same result and the same strides
            // visited as the full pass.
            exports_fast += usize::from(export_fast_path_agrees(&shape, storage, t.device, flags));
            let written = DLTensor {
                data: core::ptr::null_mut::<u8>().wrapping_add(0x1000).cast(),
                strides: strides.as_ptr().cast_mut(),
                byte_offset: 0,
                ..t
            };
            if compact {
                // SAFETY: as above.
                let validated = unsafe { validate(&written, version, flags) };
                assert_eq!(exported, validated, "{shape:?}");
            }
        }
    }
    // The generator reaches both sides of every branch.
    assert!(
        accepted > cases / 20
            && contiguous > cases / 50
            && (common > cases / 200 || cfg!(miri))
            && (typed_common > cases / 1000 || cfg!(miri))
            && (exports_fast > cases / 50 || !cfg!(feature = "alloc")),
        "{accepted} {contiguous} {common} {typed_common} {exports_fast}"
    );
}
