//! Validation of a foreign `DLTensor`: everything is checked before any value is used as a size,
//! an index or an address.
#![allow(unsafe_code)]

use core::slice;

use super::{TensorError, MAX_NDIM};
use crate::raw::{
    kDLFloat4_e2m1fn, kDLFloat6_e2m3fn, kDLFloat6_e3m2fn, DLDataType, DLPackFlags, DLPackVersion,
    DLTensor,
};

/// What import learnt about a tensor; cached in the owning wrapper so that views cost nothing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meta {
    /// Product of the extents.
    pub elements: usize,
    /// Bytes occupied by `elements` elements stored compactly.
    pub byte_size: usize,
    /// How one element is stored.
    pub storage: Storage,
    pub c_contiguous: bool,
    pub f_contiguous: bool,
}

/// How one element is stored in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Storage {
    /// Whole bytes per element.
    Bytes(usize),
    /// Packed sub-byte elements, little bit-endian, this many bits each (1..=7).
    PackedBits(u8),
}

impl Storage {
    /// Bytes that `count` compactly stored elements occupy, if that fits in `isize`.
    #[inline]
    pub(crate) fn bytes_for(self, count: usize) -> Option<usize> {
        let bytes = match self {
            // A `usize` product that overflows is above `isize::MAX` as well.
            Storage::Bytes(size) => count.checked_mul(size)?,
            Storage::PackedBits(bits) => {
                usize::try_from((count as u128 * u128::from(bits)).div_ceil(8)).ok()?
            }
        };
        (bytes <= isize::MAX as usize).then_some(bytes)
    }

    /// The byte range `[first, end)` holding the elements at offsets `first_element..end_element`.
    fn byte_range(self, first_element: i128, end_element: i128) -> (i128, i128) {
        match self {
            Storage::Bytes(size) => (first_element * size as i128, end_element * size as i128),
            Storage::PackedBits(bits) => {
                let bits = i128::from(bits);
                (
                    (first_element * bits).div_euclid(8),
                    (end_element * bits + 7).div_euclid(8),
                )
            }
        }
    }
}

/// Returns the `len` values behind `ptr`, or an empty slice for `len == 0` (never a slice from
/// NULL).
///
/// # Safety
/// When `len > 0`, `ptr` must be non-NULL and point to `len` readable, initialised `i64`s that
/// stay valid and unchanged for `'a`.
pub(crate) unsafe fn i64_array<'a>(ptr: *const i64, len: usize) -> &'a [i64] {
    if len == 0 {
        return &[];
    }
    // SAFETY: `len > 0`, so the caller guarantees `ptr` is non-NULL and valid for `len` reads
    // for `'a`; `len <= MAX_NDIM` keeps the byte size far below `isize::MAX`.
    unsafe { slice::from_raw_parts(ptr, len) }
}

/// The validated `ndim`.
pub(crate) fn ndim(t: &DLTensor) -> usize {
    // Import rejected negative values; `max(0)` only keeps this function total.
    t.ndim.max(0) as usize
}

/// Validates `t`. `version` is `None` for a legacy tensor.
///
/// # Safety
/// `t.shape` (when `0 < ndim <= MAX_NDIM`) and `t.strides` (when non-NULL and likewise) must point
/// to `ndim` readable `i64`s that stay valid while the result is used.
pub(crate) unsafe fn validate(
    t: &DLTensor,
    version: Option<DLPackVersion>,
    flags: DLPackFlags,
) -> Result<Meta, TensorError> {
    if t.ndim < 0 {
        return Err(TensorError::NegativeNdim { ndim: t.ndim });
    }
    if t.ndim as usize > MAX_NDIM {
        return Err(TensorError::TooManyDims { ndim: t.ndim });
    }
    let n = t.ndim as usize;
    let storage = storage(t.dtype, flags)?;

    if n > 0 && t.shape.is_null() {
        return Err(TensorError::NullShape { ndim: t.ndim });
    }
    // SAFETY: `shape` is non-NULL when `n > 0`, and the caller guarantees it points to `n`
    // readable values.
    let shape = unsafe { i64_array(t.shape, n) };
    let (elements, byte_size) = sizes(shape, storage)?;

    let strides = if t.strides.is_null() {
        let may_be_null = match version {
            None => true,
            Some(v) => v.major == 1 && v.minor < 2,
        };
        if n > 0 && !may_be_null {
            let version = version.unwrap_or(DLPackVersion::CURRENT);
            return Err(TensorError::NullStrides {
                ndim: t.ndim,
                version,
            });
        }
        None
    } else {
        // SAFETY: non-NULL `strides` points to `n` readable values (the caller's contract).
        Some(unsafe { i64_array(t.strides, n) })
    };

    let start = start_address(t)?;
    if elements > 0 {
        if t.data.is_null() {
            return Err(TensorError::NullData { elements });
        }
        if let Some(strides) = strides {
            check_reach(start, shape, strides, storage)?;
        }
    }

    let (c_contiguous, f_contiguous) = match strides {
        _ if elements == 0 => (true, true),
        None => (
            true,
            is_contiguous(shape, |i| compact_stride(shape, i), Order::F),
        ),
        Some(s) => (
            is_contiguous(shape, |i| s[i], Order::C),
            is_contiguous(shape, |i| s[i], Order::F),
        ),
    };
    Ok(Meta {
        elements,
        byte_size,
        storage,
        c_contiguous,
        f_contiguous,
    })
}

/// How one element of `dtype` is stored.
#[inline(always)]
pub(crate) fn storage(dtype: DLDataType, flags: DLPackFlags) -> Result<Storage, TensorError> {
    if dtype.lanes == 0 {
        return Err(TensorError::ZeroLanes { dtype });
    }
    if dtype.bits == 0 {
        return Err(TensorError::ZeroBits { dtype });
    }
    let fixed = match dtype.code {
        kDLFloat4_e2m1fn => Some(4),
        kDLFloat6_e2m3fn | kDLFloat6_e3m2fn => Some(6),
        _ => None,
    };
    if let Some(expected) = fixed {
        if dtype.bits != expected {
            return Err(TensorError::SubByteBits { dtype, expected });
        }
    }
    let bits = u32::from(dtype.bits) * u32::from(dtype.lanes);
    Ok(if bits % 8 == 0 {
        Storage::Bytes(bits as usize / 8)
    } else if bits < 8 && !flags.contains(DLPackFlags::IS_SUBBYTE_TYPE_PADDED) {
        Storage::PackedBits(bits as u8)
    } else {
        // Padded sub-byte elements take one byte; other odd widths round up per element, as the
        // header's size formula does.
        Storage::Bytes(bits.div_ceil(8) as usize)
    })
}

/// Element count and compact byte size, refusing negative extents and shapes whose size (with
/// zero extents counted as one, which bounds every synthesised stride) does not fit in `isize`.
#[inline(always)]
fn sizes(shape: &[i64], storage: Storage) -> Result<(usize, usize), TensorError> {
    let (elements, capacity) = counts(shape)?;
    if storage.bytes_for(capacity).is_none() {
        return Err(TensorError::SizeOverflow {
            dims: super::ShapeSummary::new(shape),
        });
    }
    // `elements <= capacity`, so this fits too.
    Ok((elements, storage.bytes_for(elements).unwrap_or(0)))
}

/// What [`validate`] returns for a tensor with compact row-major strides, computed from the
/// shape alone (export of host buffers, whose other fields are right by construction).
#[cfg(feature = "alloc")]
#[inline(always)]
pub(crate) fn compact_meta(shape: &[i64], storage: Storage) -> Result<Meta, TensorError> {
    let (elements, byte_size) = sizes(shape, storage)?;
    // Compact row-major strides are also column-major exactly when at most one extent is not 1.
    let f_contiguous = elements == 0 || shape.iter().filter(|&&e| e != 1).count() <= 1;
    Ok(Meta {
        elements,
        byte_size,
        storage,
        c_contiguous: true,
        f_contiguous,
    })
}

/// Element count, and the product with zero extents counted as one (what strides can reach).
#[inline]
fn counts(shape: &[i64]) -> Result<(usize, usize), TensorError> {
    let mut elements: usize = 1;
    let mut capacity: usize = 1;
    for (dim, &extent) in shape.iter().enumerate() {
        if extent < 0 {
            return Err(TensorError::NegativeExtent { dim, extent });
        }
        let overflow = || TensorError::SizeOverflow {
            dims: super::ShapeSummary::new(shape),
        };
        let extent = usize::try_from(extent).map_err(|_| overflow())?;
        elements = elements.saturating_mul(extent);
        capacity = capacity.checked_mul(extent.max(1)).ok_or_else(overflow)?;
    }
    // `elements <= capacity`, so it did not saturate.
    Ok((elements, capacity))
}

/// `data + byte_offset` as an address, checked.
fn start_address(t: &DLTensor) -> Result<usize, TensorError> {
    let overflow = TensorError::ByteOffsetOverflow {
        byte_offset: t.byte_offset,
    };
    let offset = usize::try_from(t.byte_offset).map_err(|_| overflow)?;
    (t.data as usize).checked_add(offset).ok_or(overflow)
}

/// Checks that every byte reachable through `strides` from `start` lies inside the address space
/// and that the whole range spans at most `isize::MAX` bytes. Needs a non-empty tensor.
fn check_reach(
    start: usize,
    shape: &[i64],
    strides: &[i64],
    storage: Storage,
) -> Result<(), TensorError> {
    // Lowest and highest element offsets reachable, in elements. Each step adds at most
    // 2^63 * 2^63 to a value kept below 2^66 by the checks, so i128 cannot overflow.
    let (mut low, mut high) = (0i128, 0i128);
    let address_end = 1i128 << usize::BITS;
    for (dim, (&extent, &stride)) in shape.iter().zip(strides).enumerate() {
        let reach = i128::from(stride) * i128::from(extent - 1);
        if reach < 0 {
            low += reach;
        } else {
            high += reach;
        }
        let (low_byte, end_byte) = storage.byte_range(low, high + 1);
        let first = start as i128 + low_byte;
        let end = start as i128 + end_byte;
        if first < 0 || end > address_end || end - first > isize::MAX as i128 {
            return Err(TensorError::StridesOverflow { dim, stride });
        }
    }
    Ok(())
}

/// The compact row-major stride of dimension `dim`: the product of the later extents. Bounded
/// by the validated capacity, so it fits.
#[inline]
pub(crate) fn compact_stride(shape: &[i64], dim: usize) -> i64 {
    shape
        .iter()
        .skip(dim + 1)
        .fold(1i64, |acc, &e| acc.wrapping_mul(e))
}

#[derive(Clone, Copy)]
enum Order {
    C,
    F,
}

/// NumPy's rule: dimensions of extent 1 are skipped, every other stride must be the product of
/// the faster-varying extents. Needs a non-empty tensor.
fn is_contiguous(shape: &[i64], stride: impl Fn(usize) -> i64, order: Order) -> bool {
    let mut expected: i64 = 1;
    let mut check = |dim: usize| {
        let extent = shape[dim];
        if extent == 1 {
            return true;
        }
        let ok = stride(dim) == expected;
        expected = expected.wrapping_mul(extent);
        ok
    };
    match order {
        Order::C => (0..shape.len()).rev().all(&mut check),
        Order::F => (0..shape.len()).all(&mut check),
    }
}
