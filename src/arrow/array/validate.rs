//! Validation of an array node against its schema, recursively: everything the C Data
//! Interface lets a consumer check without reading the data (the table in the `arrow` module).
#![allow(unsafe_code)]

use core::ffi::c_void;

use super::super::format::BufferCount;
use super::super::{DataType, SchemaRef, ValidationError, MAX_DEPTH};
use crate::raw::ArrowArray;

/// Element `index` of a C array of the structs (`buffers`, `children`), by value.
///
/// # Safety
/// `array` points to at least `index + 1` readable, initialised elements.
#[inline(always)]
pub(crate) unsafe fn nth<T: Copy>(array: *const T, index: usize) -> T {
    // SAFETY: `index` is within the array (caller's contract).
    let slot = unsafe { array.add(index) };
    // SAFETY: readable and initialised (caller's contract).
    unsafe { slot.read() }
}

/// The bytes `slots` values of `bits` bits each occupy, packed (bitmaps: 1 bit; fixed-width
/// values): the one home of that size, which validation bounds and readers and the borrow
/// registry use. `None` above `isize::MAX` bytes (no buffer is that large).
#[inline]
pub(crate) fn packed_bytes(slots: usize, bits: u64) -> Option<usize> {
    let bytes = (slots as u128 * u128::from(bits)).div_ceil(8);
    usize::try_from(bytes)
        .ok()
        .filter(|&bytes| bytes <= isize::MAX as usize)
}

/// A count validation has bounded (a length, offset or buffer count: `0..=isize::MAX`), as a
/// `usize`. Total: anything else (never seen once validated) is 0.
pub(crate) fn count(value: i64) -> usize {
    usize::try_from(value).unwrap_or(0)
}

/// Validates an array node against its schema and, recursively, its children and dictionary.
///
/// # Safety
/// `array` follows the C Data Interface for `schema`'s type (see [`Array::from_raw`]).
pub(crate) unsafe fn validate(
    array: &ArrowArray,
    schema: SchemaRef<'_>,
    depth: usize,
    budget: &mut usize,
) -> Result<(), ValidationError> {
    if depth > MAX_DEPTH {
        return Err(ValidationError::TooDeep);
    }
    *budget = budget.checked_sub(1).ok_or(ValidationError::TooManyNodes)?;
    let &ArrowArray {
        length,
        null_count,
        offset,
        n_buffers,
        n_children,
        ..
    } = array;
    if length < 0 {
        return Err(ValidationError::NegativeLength { length });
    }
    if offset < 0 {
        return Err(ValidationError::NegativeOffset { offset });
    }
    if !(-1..=length).contains(&null_count) {
        return Err(ValidationError::InvalidNullCount { null_count, length });
    }
    let end = offset
        .checked_add(length)
        .filter(|&end| end as u64 <= isize::MAX as u64)
        .ok_or(ValidationError::SizeOverflow)?;
    let data_type = schema.data_type();
    let count_fits = match data_type.buffer_count() {
        BufferCount::Exactly(expected) => (n_buffers == expected, expected),
        BufferCount::AtLeast(expected) => (n_buffers >= expected, expected),
    };
    if !count_fits.0 {
        return Err(ValidationError::BufferCount {
            expected: count_fits.1,
            found: n_buffers,
        });
    }
    // A view type's count is open-ended: an array of that many pointers must fit in memory
    // (and the count in `usize`, which it would not on 32-bit targets from 2^32 on).
    let max_buffers = isize::MAX as usize / core::mem::size_of::<*const c_void>();
    if usize::try_from(n_buffers).map_or(true, |n| n > max_buffers) {
        return Err(ValidationError::TooManyBuffers { n_buffers });
    }
    if n_buffers > 0 && array.buffers.is_null() {
        return Err(ValidationError::NullBuffers);
    }
    // SAFETY: `buffers` holds `n_buffers` pointers (C Data Interface).
    let buffer = |index: usize| unsafe { nth(array.buffers, index) };
    if data_type.has_validity() && null_count > 0 && buffer(0).is_null() {
        return Err(ValidationError::NullBuffer { index: 0 });
    }
    if let Some(bits) = data_type.bit_width() {
        let bytes = packed_bytes(count(end), bits).ok_or(ValidationError::SizeOverflow)?;
        if bytes > 0 && buffer(1).is_null() {
            return Err(ValidationError::NullBuffer { index: 1 });
        }
    }
    // The schema's count was validated (at most `MAX_NODES`), so it converts exactly.
    let expected = i64::try_from(schema.n_children()).unwrap_or(i64::MAX);
    if n_children != expected {
        return Err(ValidationError::ChildCount {
            expected,
            found: n_children,
        });
    }
    if n_children > 0 && array.children.is_null() {
        return Err(ValidationError::NullChildren);
    }
    let needed = match data_type {
        // Capped: a child that long fails its own size check.
        DataType::FixedSizeList(size) => (end as u128 * size as u128).min(i64::MAX as u128),
        DataType::Struct => end as u128,
        _ => 0,
    };
    for (index, child_schema) in schema.children().enumerate() {
        // SAFETY: `children` holds `n_children` pointers (C Data Interface).
        let child = unsafe { nth(array.children, index) };
        // SAFETY: a non-NULL child points to an array (C Data Interface).
        let child = unsafe { child.as_ref() }.ok_or(ValidationError::NullChild { index })?;
        if child.release.is_none() {
            return Err(ValidationError::ReleasedChild { index });
        }
        if (child.length.max(0) as u128) < needed {
            return Err(ValidationError::ChildTooShort {
                index,
                needed: i64::try_from(needed).unwrap_or(i64::MAX),
                found: child.length,
            });
        }
        // SAFETY: a child follows the same rules for its schema.
        unsafe { validate(child, child_schema, depth + 1, budget) }?;
    }
    // SAFETY: a non-NULL dictionary points to an array (C Data Interface).
    match (unsafe { array.dictionary.as_ref() }, schema.dictionary()) {
        (None, None) => {}
        (Some(dictionary), Some(dictionary_schema)) => {
            if dictionary.release.is_none() {
                return Err(ValidationError::ReleasedDictionary);
            }
            // SAFETY: the dictionary follows the same rules.
            unsafe { validate(dictionary, dictionary_schema, depth + 1, budget) }?;
        }
        _ => return Err(ValidationError::DictionaryMismatch),
    }
    Ok(())
}
