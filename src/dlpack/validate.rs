//! Validation of a `DLTensor`: everything is checked before any value is used as a size, an
//! index or an address.
//!
//! This module is the one home of the tensor rules: how an element is stored ([`Storage`]), how
//! many bytes a shape occupies, which bytes its strides reach, and contiguity. Import, export,
//! typed access, the bridge, the exchange API's allocator and `Tensor.from_bytes` all ask here.
#![allow(unsafe_code)]

use core::slice;

use super::{ImportError, MAX_NDIM};
#[cfg(feature = "alloc")]
use crate::raw::DLDevice;
use crate::raw::{DLDataType, DLPackFlags, DLPackVersion, DLTensor};

#[cfg(any(feature = "alloc", feature = "fast-path", test, fuzzing))]
pub(crate) use super::meta::ElementStorage;
pub(crate) use super::meta::{Meta, Storage, KNOWN_FLAGS};

/// Returns the `len` values behind `ptr`, or an empty slice for `len == 0` (never a slice from
/// NULL).
///
/// # Safety
/// When `len > 0`, `ptr` must be non-NULL and point to `len` readable, initialised `i64`s that
/// stay valid and unchanged for `'a`.
#[inline(always)]
pub(crate) unsafe fn i64_array<'a>(ptr: *const i64, len: usize) -> &'a [i64] {
    if len == 0 {
        return &[];
    }
    // SAFETY: `len > 0`, so the caller guarantees `ptr` is non-NULL and valid for `len` reads
    // for `'a`; `len <= MAX_NDIM` keeps the byte size far below `isize::MAX`.
    unsafe { slice::from_raw_parts(ptr, len) }
}

/// The validated `ndim` of a tensor that passed [`validate`].
#[inline(always)]
pub(crate) fn ndim(t: &DLTensor) -> usize {
    usize::try_from(t.ndim).unwrap_or(0)
}

/// Validates `t` (`version` is `None` for a legacy tensor). The common case (non-empty,
/// row-major, whole-byte elements, only known flags) is accepted by [`accept_compact`], which
/// builds no error; everything else, and every refusal, goes through [`validate_with`] out of
/// line, whose contiguous tensors take a fast path for their reach. `validate_full` is the same
/// validation with neither fast path.
///
/// # Safety
/// `t.shape` (when `0 < ndim <= MAX_NDIM`) and `t.strides` (when non-NULL and likewise) point to
/// `ndim` readable `i64`s that stay valid while the result is used.
#[inline(always)]
pub(crate) unsafe fn validate(
    t: &DLTensor,
    version: Option<DLPackVersion>,
    flags: DLPackFlags,
) -> Result<Meta, ImportError> {
    #[cfg(feature = "fast-path")]
    {
        // SAFETY: forwarded from the caller.
        match unsafe { accept_compact(t, version, flags) } {
            Some(meta) => Ok(meta),
            // SAFETY: forwarded from the caller.
            None => unsafe { validate_out_of_line(t, version, flags) },
        }
    }
    // SAFETY: forwarded from the caller.
    #[cfg(not(feature = "fast-path"))]
    unsafe {
        validate_general(t, version, flags)
    }
}

/// The general validation, for any tensor (what [`accept_compact`] leaves, or anything):
/// [`validate_with`] with its shortcut for a contiguous tensor's reach, inline. Not to be confused
/// with `validate_full`, the reference without any shortcut.
///
/// # Safety
/// As for [`validate`].
#[inline(always)]
pub(crate) unsafe fn validate_general(
    t: &DLTensor,
    version: Option<DLPackVersion>,
    flags: DLPackFlags,
) -> Result<Meta, ImportError> {
    // SAFETY: forwarded from the caller.
    unsafe { validate_with::<true>(t, version, flags) }
}

/// [`validate_general`] out of line: what [`accept_compact`] leaves.
///
/// # Safety
/// As for [`validate`].
#[cfg(feature = "fast-path")]
#[cold]
#[inline(never)]
unsafe fn validate_out_of_line(
    t: &DLTensor,
    version: Option<DLPackVersion>,
    flags: DLPackFlags,
) -> Result<Meta, ImportError> {
    // SAFETY: forwarded from the caller.
    unsafe { validate_general(t, version, flags) }
}

/// The common case, accepted in one pass with no error to build: `1 <= ndim <= MAX_NDIM`, only
/// known flags, an element of whole bytes, every extent at least 1, row-major strides (those of
/// extent-1 dimensions too; or NULL ones where `version` allows them), non-NULL `data`, and
/// `data + byte_offset` plus the bytes inside the address space. `None` for anything else, valid
/// or not: [`validate_with`] decides. Where it accepts, it returns exactly what [`validate_with`]
/// returns (unit tests and the fuzz property `check_fast_paths` check it).
///
/// The element count is bounded by `isize::MAX / 32` rather than multiplied out: on 32-bit
/// targets a tensor of 2^26 elements or more always takes the general validation (the same
/// result, slower).
///
/// # Safety
/// As for [`validate`].
#[cfg(any(feature = "fast-path", test, fuzzing))]
#[inline(always)]
pub(crate) unsafe fn accept_compact(
    t: &DLTensor,
    version: Option<DLPackVersion>,
    flags: DLPackFlags,
) -> Option<Meta> {
    // SAFETY: forwarded from the caller.
    unsafe { accept_compact_with(t, version, flags, Storage::of_whole_bytes, false) }
}

/// [`accept_compact`] with its dtype rule given: `storage_of` returns the dtype's storage where
/// the caller accepts the dtype (what `Storage::of` returns for it, under any flags), `None`
/// otherwise; elements not of whole bytes, or of more than 31 bytes, are left to the general
/// path here. A caller that knows its element type compares the dtype with one instruction
/// (`HostSlice`). With `readable_only`, a tensor that typed access may not read (not host
/// memory) is left to the general path too, so that the caller knows the fact.
///
/// # Safety
/// As for [`validate`].
#[cfg(any(feature = "fast-path", test, fuzzing))]
#[inline(always)]
pub(crate) unsafe fn accept_compact_with(
    t: &DLTensor,
    version: Option<DLPackVersion>,
    flags: DLPackFlags,
    storage_of: impl FnOnce(DLDataType) -> Option<Storage>,
    readable_only: bool,
) -> Option<Meta> {
    // One range check on the `i32`, then a conversion that cannot fail.
    const _: () = assert!(MAX_NDIM <= i32::MAX as usize);
    if !(1..=MAX_NDIM as i32).contains(&t.ndim) || t.shape.is_null() {
        return None;
    }
    let n = usize::try_from(t.ndim).ok()?;
    let storage = storage_of(t.dtype)?;
    let element_bytes = storage.element_bytes()?;
    // The element-count bound below holds for elements of at most 31 bytes: larger ones (many
    // lanes) take the general path. Both rules' storages are known to be small or constant here,
    // so the check folds away.
    if element_bytes > MOST_ELEMENT_BYTES {
        return None;
    }
    // SAFETY: `shape` is non-NULL and `0 < n`: it points to `n` readable values (caller).
    let shape = unsafe { i64_array(t.shape, n) };
    let strides = if t.strides.is_null() {
        if !strides_may_be_null(version) {
            return None;
        }
        None
    } else {
        // SAFETY: a non-NULL `strides` points to `n` readable values (caller).
        Some(unsafe { i64_array(t.strides, n) })
    };
    // Each stride must be the product of the later extents, the last 1: the row-major strides,
    // with those of extent-1 dimensions too (others take `validate_with`); NULL strides stand for
    // them. One loop from the last dimension, entered at least once (`n >= 1`): a tensor of one
    // dimension takes no branch.
    let mut elements: i64 = 1;
    for dim in (0..n).rev() {
        if strides.map_or(elements, |strides| strides[dim]) != elements {
            return None;
        }
        elements = row_major_step(shape[dim], elements)?;
    }
    // An element is at most 31 bytes (checked above): up to this many elements, the bytes fit in
    // `isize` (no multiply to check). One range check, which also finds a negative product.
    const MOST: i64 = (isize::MAX / (MOST_ELEMENT_BYTES as isize + 1)) as i64;
    if !(1..=MOST).contains(&elements) || t.data.is_null() {
        return None;
    }
    let elements = usize::try_from(elements).ok()?;
    let byte_size = elements * element_bytes;
    let start = (t.data as usize).checked_add(usize::try_from(t.byte_offset).ok()?)?;
    // `byte_size >= 1`: the last byte must have an address.
    start.checked_add(byte_size - 1)?;
    // Unknown flags (which only typed access refuses) take the general path, so that here the
    // tensor is readable where its device is host memory.
    if !KNOWN_FLAGS.contains(flags) {
        return None;
    }
    let readable = Meta::readable(t.device, flags);
    if readable_only && !readable {
        return None;
    }
    Some(Meta::with_facts(elements, storage, true, readable, flags))
}

/// The largest element, in bytes, that [`accept_compact_with`] takes: the widest one-lane
/// element (`u8::MAX` bits, whole bytes: 31), so that [`Storage::of_whole_bytes`]'s are all
/// taken.
#[cfg(any(feature = "fast-path", test, fuzzing))]
const MOST_ELEMENT_BYTES: usize = u8::MAX as usize / 8;

/// The dtype rule of a caller that accepts one element type alone (`HostSlice`), for
/// [`accept_compact_with`]: `T`'s storage for `T`'s dtype (one comparison), `None` for any other,
/// and for every dtype where `T::DTYPE` is not a valid dtype (a user's `Element` may declare one:
/// the general path refuses the tensor then).
#[cfg(any(feature = "fast-path", test, fuzzing))]
#[inline(always)]
pub(crate) fn element_rule<T: super::Element>(dtype: DLDataType) -> Option<Storage> {
    if super::element::is_dtype_of::<T>(dtype) {
        ElementStorage::<T>::VALID
    } else {
        None
    }
}

/// `stride * extent` for an extent of at least 1, when it fits in `i64`: the row-major stride of
/// the dimension before. (The strides need no sign check: the last is 1 and each other must
/// equal such a product, so all are positive where all are accepted.)
#[cfg(any(feature = "fast-path", test, fuzzing))]
#[inline(always)]
fn row_major_step(extent: i64, stride: i64) -> Option<i64> {
    if extent < 1 {
        return None;
    }
    stride.checked_mul(extent)
}

/// Whether a tensor of `version` may have NULL strides for compact row-major ones: legacy
/// tensors and versions before 1.2.
#[inline(always)]
fn strides_may_be_null(version: Option<DLPackVersion>) -> bool {
    version.map_or(true, |v| v.major == 1 && v.minor < 2)
}

/// [`validate`] without the fast path: the reach is always walked through the strides and
/// contiguity is computed on its own. It must agree with [`validate`] on every input (a fuzz
/// property and a unit test check it).
///
/// # Safety
/// As for [`validate`].
#[cfg(any(test, fuzzing))]
pub(crate) unsafe fn validate_full(
    t: &DLTensor,
    version: Option<DLPackVersion>,
    flags: DLPackFlags,
) -> Result<Meta, ImportError> {
    // SAFETY: forwarded from the caller.
    unsafe { validate_with::<false>(t, version, flags) }
}

/// # Safety
/// As for [`validate`].
#[inline(always)]
unsafe fn validate_with<const FAST: bool>(
    t: &DLTensor,
    version: Option<DLPackVersion>,
    flags: DLPackFlags,
) -> Result<Meta, ImportError> {
    let n = match usize::try_from(t.ndim) {
        Err(_) => return Err(ImportError::NegativeNdim { ndim: t.ndim }),
        Ok(n) if n > MAX_NDIM => return Err(ImportError::TooManyDims { ndim: t.ndim }),
        Ok(n) => n,
    };
    let storage = Storage::of(t.dtype, flags)?;
    if n > 0 && t.shape.is_null() {
        return Err(ImportError::NullShape { ndim: t.ndim });
    }
    // SAFETY: `shape` is non-NULL when `n > 0`, and points to `n` readable values (caller).
    let shape = unsafe { i64_array(t.shape, n) };
    let strides = if t.strides.is_null() {
        None
    } else {
        // SAFETY: a non-NULL `strides` points to `n` readable values (caller).
        Some(unsafe { i64_array(t.strides, n) })
    };
    let measured = measure(shape, strides, storage, |_, _| {})?;
    if strides.is_none() && n > 0 && !strides_may_be_null(version) {
        return Err(ImportError::NullStrides {
            ndim: t.ndim,
            version: version.unwrap_or(DLPackVersion::CURRENT),
        });
    }
    let start = start_address(t)?;
    let elements = measured.elements;
    if elements > 0 {
        if t.data.is_null() {
            return Err(ImportError::NullData { elements });
        }
        // A 0-d tensor (no strides to walk) and one without strides take the compact rule: the
        // last byte of `[start, start + byte_size)` must have an address (`byte_size >= 1`).
        // So may a C-contiguous one; where it fails, the walk finds the dimension (it fails
        // exactly when this does).
        let compact = strides.map_or(true, <[i64]>::is_empty) || (FAST && measured.c_contiguous);
        let fits_compactly = start.checked_add(measured.byte_size - 1).is_some();
        if !(compact && fits_compactly) {
            match strides {
                Some(strides) if !strides.is_empty() => {
                    walk(shape, strides, storage, in_address_space(start))
                        .map_err(|dim| strides_overflow(dim, strides))?;
                }
                _ => {}
            }
            if compact {
                return Err(ImportError::AddressOverflow {
                    address: start,
                    byte_size: measured.byte_size,
                });
            }
        }
    }
    let c_contiguous = if FAST {
        measured.c_contiguous
    } else {
        elements == 0 || strides.map_or(true, |s| is_contiguous(shape, s, Order::C))
    };
    Ok(Meta::new(elements, storage, c_contiguous, t.device, flags))
}

/// What one pass over the shape (and the strides) finds.
struct Measured {
    elements: usize,
    /// The bytes of `elements` compactly stored.
    byte_size: usize,
    /// C-contiguous strides (NumPy's rule); always `true` for empty tensors.
    c_contiguous: bool,
}

/// One pass, last dimension first: refuses negative extents and shapes whose size (with zero
/// extents counted as one, which bounds every stride a compact layout uses) does not fit in
/// `isize` in bytes (nor, so, in elements), counts the elements and checks C-contiguity. `visit`
/// sees each dimension's compact stride (what an export writes).
#[inline(always)]
fn measure(
    shape: &[i64],
    strides: Option<&[i64]>,
    storage: Storage,
    mut visit: impl FnMut(usize, usize),
) -> Result<Measured, ImportError> {
    let mut empty = false;
    let mut c_contiguous = true;
    // Packed elements take less than a byte: bounding the element count bounds the bytes.
    let element_bytes = storage.element_bytes().unwrap_or(1);
    let capacity = row_major(shape, element_bytes, |dim, stride| {
        let extent = shape[dim];
        if let Some(strides) = strides {
            // Exact: `stride <= isize::MAX`.
            c_contiguous &= extent == 1 || strides[dim] == stride as i64;
        }
        empty |= extent == 0;
        visit(dim, stride);
    })
    .map_err(|dim| match shape[dim] {
        extent @ ..=-1 => ImportError::NegativeExtent { dim, extent },
        extent => ImportError::SizeOverflow { dim, extent },
    })?;
    let elements = if empty { 0 } else { capacity };
    Ok(Measured {
        elements,
        byte_size: match storage.is_packed() {
            // Checked by `row_major`.
            false if !empty => capacity * element_bytes,
            // Fits: at most `elements` bytes.
            _ => storage.bytes_for(elements).unwrap_or(0),
        },
        c_contiguous: c_contiguous || empty,
    })
}

/// The compact row-major strides, last dimension first: `visit(dim, stride)` with the product of
/// the later extents, zeros counted as one (NumPy's convention). Returns the product of all the
/// extents (zeros as one), or the first dimension whose extent is negative or makes the product,
/// times `unit` bytes, exceed `isize::MAX`. The one home of the compact-strides rule.
#[inline(always)]
fn row_major(
    shape: &[i64],
    unit: usize,
    mut visit: impl FnMut(usize, usize),
) -> Result<usize, usize> {
    let mut capacity: usize = 1;
    let mut bytes = unit;
    for dim in (0..shape.len()).rev() {
        visit(dim, capacity);
        let count = usize::try_from(shape[dim]).map_err(|_| dim)?.max(1);
        bytes = bytes
            .checked_mul(count)
            .filter(|&bytes| bytes <= isize::MAX as usize)
            .ok_or(dim)?;
        // At most `bytes` (`unit >= 1`): no overflow.
        capacity *= count;
    }
    Ok(capacity)
}

/// Writes the compact row-major strides of a shape, through `write(dim, stride)`. Wrapping
/// arithmetic for shapes that overflow: callers validate the shape afterwards.
#[inline(always)]
pub(crate) fn write_row_major(shape: &[i64], mut write: impl FnMut(usize, i64)) {
    let mut stride: i64 = 1;
    let done = row_major(shape, 1, |dim, s| {
        stride = s as i64;
        write(dim, stride);
    });
    if let Err(failed) = done {
        // Keep going past the failing dimension, wrapping, so that every slot is written.
        for dim in (0..failed).rev() {
            stride = stride.wrapping_mul(shape[dim + 1].max(1));
            write(dim, stride);
        }
    }
}

/// What [`validate`] returns for a tensor with compact row-major strides on `device` with
/// `flags`, computed from the shape alone (for exports whose other fields are right by
/// construction); `visit(dim, extent, stride)` sees each dimension's extent and compact stride,
/// to write them. It may see a dimension more than once (the fast path's pass, then the full
/// one): the last value stands, and is at most `isize::MAX` when the shape is accepted.
#[cfg(feature = "alloc")]
#[inline(always)]
pub(crate) fn compact_meta(
    shape: &[i64],
    storage: Storage,
    device: DLDevice,
    flags: DLPackFlags,
    mut visit: impl FnMut(usize, i64, usize),
) -> Result<Meta, ImportError> {
    #[cfg(feature = "fast-path")]
    if let Some(meta) = compact_meta_fast(shape, storage, device, flags, &mut visit) {
        return Ok(meta);
    }
    let measured = measure(shape, None, storage, |dim, stride| {
        visit(dim, shape[dim], stride)
    })?;
    Ok(Meta::new(measured.elements, storage, true, device, flags))
}

/// [`compact_meta`] for the common shape, with no error to build: every extent at least 1, and
/// elements of whole bytes. One checked multiply per dimension, and the bytes bounded by a
/// division by the element's size (a constant for an export's element type). `None` for any other
/// shape, valid or not, which `compact_meta` decides, visiting every dimension again. Where it
/// answers, it returns what `compact_meta` returns and visits the same strides (the unit test
/// `the_fast_paths_agree_with_full_validation` and the fuzz property `check_fast_paths` check
/// it).
#[cfg(all(feature = "alloc", any(feature = "fast-path", test, fuzzing)))]
#[inline(always)]
pub(crate) fn compact_meta_fast(
    shape: &[i64],
    storage: Storage,
    device: DLDevice,
    flags: DLPackFlags,
    mut visit: impl FnMut(usize, i64, usize),
) -> Option<Meta> {
    let element_bytes = storage.element_bytes()?;
    let mut elements: usize = 1;
    for (dim, &extent) in shape.iter().enumerate().rev() {
        visit(dim, extent, elements);
        if extent < 1 {
            return None;
        }
        elements = elements.checked_mul(usize::try_from(extent).ok()?)?;
    }
    // `element_bytes >= 1` for a valid storage; `max` spares the division a zero.
    if elements > isize::MAX as usize / element_bytes.max(1) {
        return None;
    }
    Some(Meta::new(elements, storage, true, device, flags))
}

/// Bytes a compact (row-major, no gaps) tensor of `shape` and `dtype` occupies under `flags`:
/// what an allocator must provide for it, by validation's own rules (sub-byte dtypes packed
/// unless `flags` has `IS_SUBBYTE_TYPE_PADDED`, zero extents counted as one for the overflow
/// check).
///
/// # Errors
/// What import would refuse in the shape or dtype: [`ImportError::NegativeExtent`],
/// [`ImportError::SizeOverflow`], [`ImportError::ZeroBits`], ...
///
/// ```
/// use dlpack_abi::dlpack::compact_byte_size;
/// use dlpack_abi::raw::{kDLFloat, DLDataType, DLPackFlags};
///
/// let f32_type = DLDataType { code: kDLFloat, bits: 32, lanes: 1 };
/// assert_eq!(compact_byte_size(&[2, 3], f32_type, DLPackFlags::empty()), Ok(24));
/// assert!(compact_byte_size(&[-1], f32_type, DLPackFlags::empty()).is_err());
/// ```
pub fn compact_byte_size(
    shape: &[i64],
    dtype: DLDataType,
    flags: DLPackFlags,
) -> Result<usize, ImportError> {
    let storage = Storage::of(dtype, flags)?;
    Ok(measure(shape, None, storage, |_, _| {})?.byte_size)
}

/// Bytes per element of `dtype` (unpadded), `None` for an invalid dtype or packed sub-byte one.
#[cfg(feature = "alloc")]
pub(crate) fn element_size(dtype: DLDataType) -> Option<usize> {
    Storage::of(dtype, DLPackFlags::empty())
        .ok()?
        .element_bytes()
}

/// `data + byte_offset` as an address, checked.
#[inline(always)]
fn start_address(t: &DLTensor) -> Result<usize, ImportError> {
    let overflow = ImportError::ByteOffsetOverflow {
        byte_offset: t.byte_offset,
    };
    let offset = usize::try_from(t.byte_offset).map_err(|_| overflow)?;
    (t.data as usize).checked_add(offset).ok_or(overflow)
}

fn strides_overflow(dim: usize, strides: &[i64]) -> ImportError {
    ImportError::StridesOverflow {
        dim,
        // `walk` names a dimension it walked: never the default.
        stride: strides.get(dim).copied().unwrap_or(0),
    }
}

/// The predicate [`walk`] checks for import: the byte range lies in the address space when
/// counted from `start`, and spans at most `isize::MAX` bytes.
fn in_address_space(start: usize) -> impl Fn(Offset, Offset) -> bool {
    let address_end: Offset = 1 << usize::BITS;
    // Lossless: `Offset` is wider than `usize`.
    let start = start as Offset;
    move |first, end| {
        let (first_address, end_address) = (start + first, start + end);
        first_address >= 0 && end_address <= address_end && end - first <= isize::MAX as Offset
    }
}

/// Element (and byte) offsets from a tensor's first element, in an integer wide enough for every
/// reach that fits an address space, a step of one dimension more, and its bytes: `i128` where
/// addresses have 64 bits, `i64` where they have 32 or 16 (the walk is three times smaller there).
#[cfg(target_pointer_width = "64")]
pub(crate) type Offset = i128;
#[cfg(not(target_pointer_width = "64"))]
pub(crate) type Offset = i64;

/// Element offsets farther than this (2^70 on 64-bit targets, 2^38 on 32-bit ones) from the first
/// element are outside the address space, even for one-bit elements (2^67 or 2^35 bytes).
const MAX_REACH: Offset = 1 << (usize::BITS + 6);

/// Walks the strides of a non-empty tensor of at least one dimension, dimension by dimension,
/// accumulating the lowest and highest element offsets reachable from the first element, and
/// asks `fits` about the byte range `[first, end)` (relative to the first element) after each
/// dimension. Returns the lowest and highest element offsets, or the first dimension `fits`
/// refused.
///
/// No [`Offset`] overflows: a dimension whose step is farther than [`MAX_REACH`] elements (a
/// product that overflows is) is refused before it is added, so the offsets stay within
/// `2 * MAX_REACH`; bytes are computed only within `MAX_REACH`, and an element is at most 2^21
/// bytes. A step that far leaves the address space whatever the storage (every element is at
/// least one bit), so the dimension refused is the one the exact sum would refuse.
#[inline(always)]
fn walk(
    shape: &[i64],
    strides: &[i64],
    storage: Storage,
    fits: impl Fn(Offset, Offset) -> bool,
) -> Result<(Offset, Offset), usize> {
    debug_assert!(!shape.is_empty(), "a 0-d tensor takes the compact rule");
    let (mut low, mut high): (Offset, Offset) = (0, 0);
    for (dim, (&extent, &stride)) in shape.iter().zip(strides).enumerate() {
        let reach = Offset::from(stride)
            .checked_mul(Offset::from(extent - 1))
            .filter(|reach| (-MAX_REACH..=MAX_REACH).contains(reach))
            .ok_or(dim)?;
        if reach < 0 {
            low += reach;
        } else {
            high += reach;
        }
        if low < -MAX_REACH || high > MAX_REACH {
            return Err(dim);
        }
        let (first, end) = storage.byte_range(low, high + 1);
        if !fits(first, end) {
            return Err(dim);
        }
    }
    Ok((low, high))
}

/// The lowest and highest element offsets, from the first element, that the in-bounds indices of
/// a validated tensor reach; `(0, 0)` for an empty one.
fn element_offsets(shape: &[i64], strides: Option<&[i64]>, meta: &Meta) -> (Offset, Offset) {
    match strides {
        _ if meta.elements() == 0 => (0, 0),
        Some(strides) if !meta.is_c_contiguous() => {
            // Validated: the whole range (so every partial sum) lies in the address space.
            walk(shape, strides, meta.storage(), |_, _| true).unwrap_or((0, 0))
        }
        // Lossless: `Offset` is wider than `usize`.
        _ => (0, meta.elements() as Offset - 1),
    }
}

/// [`element_offsets`], as `i128`.
#[allow(
    clippy::useless_conversion,
    reason = "the identity where `Offset` is `i128`"
)]
pub(crate) fn element_reach(shape: &[i64], strides: Option<&[i64]>, meta: &Meta) -> (i128, i128) {
    let (low, high) = element_offsets(shape, strides, meta);
    (low.into(), high.into())
}

/// [`reach`] of a row-major tensor, `[0, byte_size)`, without its shape: `None` for any other.
/// The one home of that rule, which `ManagedTensor::share` reads too.
#[inline(always)]
pub(crate) fn compact_reach(meta: &Meta) -> Option<(i128, i128)> {
    meta.is_c_contiguous()
        .then(|| (0, meta.byte_size() as i128))
}

/// The bytes `[first, end)` that the elements of a validated, non-empty tensor reach, counted
/// from its first element (`data + byte_offset`): `[0, byte_size)` when compact.
#[allow(
    clippy::useless_conversion,
    reason = "the identity where `Offset` is `i128`"
)]
pub(crate) fn reach(shape: &[i64], strides: Option<&[i64]>, meta: &Meta) -> (i128, i128) {
    if let Some(compact) = compact_reach(meta) {
        return compact;
    }
    let (low, high) = element_offsets(shape, strides, meta);
    let (first, end) = meta.storage().byte_range(low, high + 1);
    (first.into(), end.into())
}

/// The compact row-major stride of `dim` (NumPy's convention: the product of the later extents,
/// zeros counted as one), by [`row_major`]'s rule. Bounded by the validated size, so it fits.
#[inline]
pub(crate) fn row_major_stride(shape: &[i64], dim: usize) -> i64 {
    let mut out = 1;
    let _ = row_major(shape, 1, |d, stride| {
        if d == dim {
            out = stride as i64;
        }
    });
    out
}

/// Whether two in-bounds indices of a validated tensor may reach the same element: ndarray's
/// rule, conservative. The dimensions of extent above 1, by increasing `|stride|`, must each step
/// past everything the faster ones reach; a zero stride on such a dimension always overlaps.
pub(crate) fn may_overlap(shape: &[i64], strides: Option<&[i64]>, meta: &Meta) -> bool {
    let Some(strides) = strides else {
        return false; // compact row-major
    };
    if meta.elements() == 0 {
        return false;
    }
    let mut dims = [(0u64, 0u64); MAX_NDIM];
    let mut n = 0;
    for (&extent, &stride) in shape.iter().zip(strides) {
        if extent > 1 {
            dims[n] = (stride.unsigned_abs(), extent.unsigned_abs());
            n += 1;
        }
    }
    let dims = &mut dims[..n];
    dims.sort_unstable();
    // Elements reachable by the faster dimensions, as an offset span; validated to fit i128.
    let mut span: u128 = 0;
    for &(stride, extent) in dims.iter() {
        if u128::from(stride) <= span {
            return true;
        }
        span += u128::from(stride) * u128::from(extent - 1);
    }
    false
}

#[derive(Clone, Copy)]
enum Order {
    C,
    F,
}

/// Column-major contiguity of a validated tensor (NumPy's rule), computed when asked.
pub(crate) fn is_f_contiguous(shape: &[i64], strides: Option<&[i64]>, meta: &Meta) -> bool {
    if meta.elements() == 0 {
        return true;
    }
    match strides {
        Some(strides) => is_contiguous(shape, strides, Order::F),
        // Compact row-major strides are column-major exactly when at most one extent is not 1.
        None => shape.iter().filter(|&&e| e != 1).count() <= 1,
    }
}

/// NumPy's rule: dimensions of extent 1 are skipped, every other stride must be the product of
/// the faster-varying extents. Needs a non-empty tensor.
fn is_contiguous(shape: &[i64], strides: &[i64], order: Order) -> bool {
    let mut expected: i64 = 1;
    let mut check = |dim: usize| {
        let extent = shape[dim];
        if extent == 1 {
            return true;
        }
        let ok = strides[dim] == expected;
        expected = expected.wrapping_mul(extent);
        ok
    };
    match order {
        Order::C => (0..shape.len()).rev().all(&mut check),
        Order::F => (0..shape.len()).all(&mut check),
    }
}

/// The fast paths' property, for the fuzz targets (`cargo fuzz` builds with `--cfg fuzzing`);
/// not part of the API.
#[cfg(fuzzing)]
#[doc(hidden)]
#[path = "validate_fuzzing.rs"]
pub mod fuzzing;

/// Panics unless [`compact_meta_fast`], where it answers, returns what the full pass returns and
/// leaves the same strides visited; returns whether it answered. For the fuzz property and the
/// unit test.
#[cfg(all(feature = "alloc", any(test, fuzzing)))]
fn export_fast_path_agrees(
    shape: &[i64],
    storage: Storage,
    device: DLDevice,
    flags: DLPackFlags,
) -> bool {
    let (mut fast_strides, mut full_strides) = ([0usize; MAX_NDIM], [0usize; MAX_NDIM]);
    let fast = compact_meta_fast(shape, storage, device, flags, |dim, extent, stride| {
        assert_eq!(
            extent, shape[dim],
            "the export's fast path visits {dim} with {extent}"
        );
        fast_strides[dim] = stride;
    });
    let full = measure(shape, None, storage, |dim, stride| {
        full_strides[dim] = stride
    })
    .map(|measured| Meta::new(measured.elements, storage, true, device, flags));
    let Some(meta) = fast else {
        return false;
    };
    assert_eq!(
        Ok(meta),
        full,
        "the export's fast path disagrees: {shape:?}"
    );
    assert_eq!(
        fast_strides, full_strides,
        "the export's fast path visits: {shape:?}"
    );
    true
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
