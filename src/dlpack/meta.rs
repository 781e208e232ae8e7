//! What validation learns about a tensor: how one element is stored ([`Storage`], the element
//! rule every size in the crate comes from) and the cached [`Meta`].

use super::ImportError;
use crate::raw::{
    kDLFloat4_e2m1fn, kDLFloat6_e2m3fn, kDLFloat6_e3m2fn, DLDataType, DLDevice, DLPackFlags,
};

/// Flag bits DLPack 1.3 defines; typed access refuses any other.
pub(crate) const KNOWN_FLAGS: DLPackFlags = DLPackFlags::READ_ONLY
    .union(DLPackFlags::IS_COPIED)
    .union(DLPackFlags::IS_SUBBYTE_TYPE_PADDED);

/// How one element is stored: a whole number of bytes, or packed sub-byte bits (little
/// bit-endian). Kept in one `u32` (the high bit marks packed bits) so that [`Meta`] stays at 16
/// bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Storage(u32);

impl Storage {
    const PACKED: u32 = 1 << 31;

    /// How one element of `dtype` is stored under `flags`, refusing what the spec forbids: zero
    /// lanes or bits, and FP4/FP6 codes with another width. Whole-byte widths take their bytes;
    /// widths below 8 bits are packed unless `IS_SUBBYTE_TYPE_PADDED` gives each element a byte;
    /// other odd widths (12 bits, FP6 with 2 lanes, ...) round up per element, as the header's
    /// size formula does.
    #[inline(always)]
    pub(crate) const fn of(dtype: DLDataType, flags: DLPackFlags) -> Result<Self, ImportError> {
        if dtype.lanes == 0 {
            return Err(ImportError::ZeroLanes { dtype });
        }
        if dtype.bits == 0 {
            return Err(ImportError::ZeroBits { dtype });
        }
        let fixed = match dtype.code {
            kDLFloat4_e2m1fn => 4,
            kDLFloat6_e2m3fn | kDLFloat6_e3m2fn => 6,
            _ => 0,
        };
        if fixed != 0 && dtype.bits != fixed {
            return Err(ImportError::SubByteBits {
                dtype,
                expected: fixed,
            });
        }
        // At most 255 * 65535 bits: the byte count fits in 31 bits (lossless widenings).
        let bits = dtype.bits as u32 * dtype.lanes as u32;
        Ok(
            if bits < 8 && !flags.contains(DLPackFlags::IS_SUBBYTE_TYPE_PADDED) {
                Self(Self::PACKED | bits)
            } else {
                Self(bits.div_ceil(8))
            },
        )
    }

    /// Bytes per element, or `None` for packed sub-byte elements.
    #[inline(always)]
    pub(crate) fn element_bytes(self) -> Option<usize> {
        // A `u32` below 2^31 fits `usize` on every target this crate builds for (>= 32 bits).
        (self.0 & Self::PACKED == 0).then_some(self.0 as usize)
    }

    /// Whether elements are packed sub-byte bits.
    pub(crate) fn is_packed(self) -> bool {
        self.0 & Self::PACKED != 0
    }

    /// Bytes that `count` compactly stored elements occupy, if that fits in `isize`.
    #[inline(always)]
    pub(crate) fn bytes_for(self, count: usize) -> Option<usize> {
        let bytes = match self.element_bytes() {
            // A `usize` product that overflows is above `isize::MAX` as well.
            Some(size) => count.checked_mul(size)?,
            None => {
                let bits = u128::from(self.0 & !Self::PACKED);
                usize::try_from((count as u128 * bits).div_ceil(8)).ok()?
            }
        };
        (bytes <= isize::MAX as usize).then_some(bytes)
    }

    /// The byte range `[first, end)` holding the elements at offsets `first_element..end_element`.
    pub(crate) fn byte_range(self, first_element: i128, end_element: i128) -> (i128, i128) {
        match self.element_bytes() {
            Some(size) => (first_element * size as i128, end_element * size as i128),
            None => {
                let bits = i128::from(self.0 & !Self::PACKED);
                (
                    (first_element * bits).div_euclid(8),
                    (end_element * bits + 7).div_euclid(8),
                )
            }
        }
    }
}

/// What validation learnt about a tensor, cached in its owner so that views and typed access
/// cost nothing: 16 bytes on 64-bit targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    /// Product of the extents.
    elements: usize,
    storage: Storage,
    /// Row-major contiguous by NumPy's rule (extent-1 dimensions skipped; empty tensors are).
    c_contiguous: bool,
    /// Host-accessible memory and only known flags: typed access checks dtype and alignment only.
    readable: bool,
    /// May be written through a safe `&mut`: marked `IS_COPIED` and not `READ_ONLY` (the spec's
    /// "solely owned by the consumer"), or an export of a uniquely owned Rust buffer.
    exclusive: bool,
    /// Tracked by a borrow registry: its release hook hears when the owner stops holding the
    /// tensor (`ManagedTensor::track`).
    tracked: bool,
}

#[cfg(target_pointer_width = "64")]
static_assertions::assert_eq_size!(Meta, [u8; 16]);

impl Meta {
    #[inline(always)]
    pub(crate) fn new(
        elements: usize,
        storage: Storage,
        c_contiguous: bool,
        device: DLDevice,
        flags: DLPackFlags,
    ) -> Self {
        let ownership = flags & (DLPackFlags::IS_COPIED | DLPackFlags::READ_ONLY);
        Self {
            elements,
            storage,
            c_contiguous,
            readable: device.device_type.is_host_accessible() && KNOWN_FLAGS.contains(flags),
            exclusive: ownership == DLPackFlags::IS_COPIED,
            tracked: false,
        }
    }

    /// The product of the extents.
    #[inline(always)]
    pub(crate) fn elements(&self) -> usize {
        self.elements
    }

    /// Bytes the elements occupy stored compactly (validated to fit in `isize`).
    #[inline(always)]
    pub(crate) fn byte_size(&self) -> usize {
        self.storage.bytes_for(self.elements).unwrap_or(0)
    }

    pub(crate) fn storage(&self) -> Storage {
        self.storage
    }

    #[inline(always)]
    pub(crate) fn is_c_contiguous(&self) -> bool {
        self.c_contiguous
    }

    /// Host-accessible memory and only known flags.
    #[inline(always)]
    pub(crate) fn is_readable(&self) -> bool {
        self.readable
    }

    /// See the field.
    #[inline(always)]
    pub(crate) fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Sets whether this consumer holds the memory alone: an `Export` of a uniquely owned buffer
    /// does (unless `READ_ONLY`), a custom owner's export never does (its flags are a claim
    /// about what the consumer may do, not about who else holds the memory).
    #[cfg(feature = "alloc")]
    pub(crate) fn with_exclusive(mut self, exclusive: bool) -> Self {
        self.exclusive = exclusive;
        self
    }

    /// See the field.
    #[inline(always)]
    pub(crate) fn is_tracked(&self) -> bool {
        self.tracked
    }

    /// Marks the tensor tracked (or not) by a borrow registry's release hook.
    pub(crate) fn with_tracked(mut self, tracked: bool) -> Self {
        self.tracked = tracked;
        self
    }
}
