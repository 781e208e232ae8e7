//! What validation learns about a tensor: how one element is stored ([`Storage`], the element
//! rule every size in the crate comes from) and the cached [`Meta`].

#[cfg(any(feature = "alloc", feature = "fast-path", test, fuzzing))]
use core::marker::PhantomData;

use super::validate::Offset;
#[cfg(any(feature = "alloc", feature = "fast-path", test, fuzzing))]
use super::Element;
use super::ImportError;
use crate::raw::{
    kDLFloat4_e2m1fn, kDLFloat6_e2m3fn, kDLFloat6_e3m2fn, DLDataType, DLDataTypeCode, DLDevice,
    DLPackFlags,
};

/// Flag bits DLPack 1.3 defines; typed access refuses any other.
pub(crate) const KNOWN_FLAGS: DLPackFlags = DLPackFlags::READ_ONLY
    .union(DLPackFlags::IS_COPIED)
    .union(DLPackFlags::IS_SUBBYTE_TYPE_PADDED);

/// How one element is stored: a whole number of bytes, or packed sub-byte bits (little
/// bit-endian). Kept in one `u32` (the high bit marks packed bits), the high half of [`Meta`]'s
/// word.
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
        let fixed = Self::fixed_bits(dtype.code);
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

    /// The one width the spec allows a fixed-width sub-byte code (FP4: 4 bits, FP6: 6), or 0
    /// for a code of any width.
    #[inline(always)]
    const fn fixed_bits(code: DLDataTypeCode) -> u8 {
        match code {
            kDLFloat4_e2m1fn => 4,
            kDLFloat6_e2m3fn | kDLFloat6_e3m2fn => 6,
            _ => 0,
        }
    }

    /// [`of`](Self::of) for the common dtypes alone, under any flags: one lane of whole bytes
    /// and none of the fixed-width sub-byte codes. `None` for every other dtype, valid or not,
    /// which `of` decides. Validation's fast path asks this, for fewer instructions than `of`; a
    /// unit test checks it against `of` for every code and width.
    #[cfg(any(feature = "fast-path", test, fuzzing))]
    #[inline(always)]
    pub(crate) const fn of_whole_bytes(dtype: DLDataType) -> Option<Self> {
        // `lanes == 1`, `bits % 8 == 0` and `bits != 0`, on the three fields as one word (two
        // masked compares).
        let word = (dtype.lanes as u32) << 16 | (dtype.bits as u32) << 8;
        if word & 0xFFFF_0700 != 0x0001_0000 || word & 0xFF00 == 0 {
            return None;
        }
        if Self::fixed_bits(dtype.code) != 0 {
            return None;
        }
        // Lossless widening.
        Some(Self(dtype.bits as u32 / 8))
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
    pub(crate) fn byte_range(self, first_element: Offset, end_element: Offset) -> (Offset, Offset) {
        match self.element_bytes() {
            // Lossless: at most 2^21 bytes.
            Some(size) => (first_element * size as Offset, end_element * size as Offset),
            None => {
                let bits = Offset::from(self.0 & !Self::PACKED);
                (
                    (first_element * bits).div_euclid(8),
                    (end_element * bits + 7).div_euclid(8),
                )
            }
        }
    }
}

/// How an element of `T` is stored, computed at compile time by validation's rule
/// ([`Storage::of`]). `T`'s size is a whole number of bytes (`assert_size_matches`), so no flag
/// changes it.
#[cfg(any(feature = "alloc", feature = "fast-path", test, fuzzing))]
pub(crate) struct ElementStorage<T>(PhantomData<T>);

#[cfg(any(feature = "alloc", feature = "fast-path", test, fuzzing))]
impl<T: Element> ElementStorage<T> {
    /// The storage, or `None` where `T::DTYPE` is not a valid dtype (a user's `Element` may
    /// declare one).
    pub(crate) const VALID: Option<Storage> = match Storage::of(T::DTYPE, DLPackFlags::empty()) {
        Ok(storage) => Some(storage),
        Err(_) => None,
    };

    /// The storage, for an export: one of elements of an invalid dtype does not compile.
    #[cfg(feature = "alloc")]
    pub(crate) const STORAGE: Storage = match Self::VALID {
        Some(storage) => storage,
        None => panic!("an exported Element's dtype is valid"),
    };
}

/// What validation learnt about a tensor, cached in its owner so that views and typed access
/// cost nothing: 16 bytes on 64-bit targets, and on 32-bit ones whose `u64` is 8-aligned (Arm;
/// 12 on i686).
///
/// The storage and the facts share one `u64` ([`Meta::with_facts`] computes it whole), so that a
/// `Meta` is written with two full-width stores and read back with two loads (written field by
/// field and read whole, as a merged `Result` is, it stalled store forwarding), and so that typed
/// access asks all its facts with one masked compare ([`has_all`](Self::has_all)).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta {
    /// Product of the extents.
    elements: usize,
    /// The ownership bits, as the flags have them unless an export rewrote them
    /// ([`with_exclusive`](Self::with_exclusive); read only through
    /// [`is_exclusive`](Self::is_exclusive)) and `IS_SUBBYTE_TYPE_PADDED` (bits 0 to 2), the facts
    /// (`Meta::C_CONTIGUOUS`, ...) in bits 3 to 6 (tested with 32-bit immediates), the
    /// [`Storage`] in the high 32 bits (a register of its own on 32-bit targets).
    word: u64,
}

#[cfg(target_pointer_width = "64")]
static_assertions::assert_eq_size!(Meta, [u8; 16]);

impl Meta {
    /// The flag bits DLPack 1.3 defines, kept as the flags have them (so that a validation that
    /// knows the flags are known ORs them in): `READ_ONLY` and `IS_COPIED` for
    /// [`is_exclusive`](Self::is_exclusive), which an export may rewrite
    /// ([`with_exclusive`](Self::with_exclusive)); `IS_SUBBYTE_TYPE_PADDED`, which the storage
    /// already reflects.
    const FLAGS: u64 = KNOWN_FLAGS.bits();
    /// The two flag bits that say whether the consumer holds the memory alone.
    const OWNERSHIP: u64 = DLPackFlags::READ_ONLY.union(DLPackFlags::IS_COPIED).bits();
    /// Row-major contiguous by NumPy's rule (extent-1 dimensions skipped; empty tensors are).
    pub(crate) const C_CONTIGUOUS: u64 = 1 << 3;
    /// Host-accessible memory and only known flags: typed access checks dtype and alignment only.
    pub(crate) const READABLE: u64 = 1 << 4;
    /// At least one element: a typed slice starts at `data + byte_offset`, which must be aligned.
    pub(crate) const NON_EMPTY: u64 = 1 << 5;
    /// Tracked by a borrow registry: its release hook hears when the owner stops holding the
    /// tensor (`ManagedTensor::track`).
    const TRACKED: u64 = 1 << 6;

    #[inline(always)]
    pub(crate) fn new(
        elements: usize,
        storage: Storage,
        c_contiguous: bool,
        device: DLDevice,
        flags: DLPackFlags,
    ) -> Self {
        let readable = Self::readable(device, flags);
        Self::with_facts(elements, storage, c_contiguous, readable, flags)
    }

    /// Whether typed access may read a tensor on `device` with `flags`: host-accessible memory
    /// and only known flags (the [`READABLE`](Self::READABLE) fact).
    #[inline(always)]
    pub(crate) fn readable(device: DLDevice, flags: DLPackFlags) -> bool {
        device.device_type.is_host_accessible() && KNOWN_FLAGS.contains(flags)
    }

    /// [`new`](Self::new) given `readable` (what [`readable`](Self::readable) returns for the
    /// tensor's device and flags), for a fast path that has asked already.
    #[inline(always)]
    pub(crate) fn with_facts(
        elements: usize,
        storage: Storage,
        c_contiguous: bool,
        readable: bool,
        flags: DLPackFlags,
    ) -> Self {
        const _: () = assert!(Meta::FLAGS < Meta::C_CONTIGUOUS && Meta::TRACKED < 1 << 32);
        let word = u64::from(storage.0) << 32
            | flags.bits() & Self::FLAGS
            | bit(c_contiguous, Self::C_CONTIGUOUS)
            | bit(readable, Self::READABLE)
            | bit(elements != 0, Self::NON_EMPTY);
        Self { elements, word }
    }

    #[inline(always)]
    fn has(&self, mask: u64) -> bool {
        self.word & mask != 0
    }

    /// Whether the tensor has every fact in `facts` (`Meta::C_CONTIGUOUS`, `Meta::READABLE`,
    /// `Meta::NON_EMPTY`): one masked compare.
    #[cfg(any(feature = "fast-path", test))]
    #[inline(always)]
    pub(crate) fn has_all(&self, facts: u64) -> bool {
        self.word & facts == facts
    }

    #[inline(always)]
    fn with(mut self, mask: u64, set: bool) -> Self {
        self.word = (self.word & !mask) | bit(set, mask);
        self
    }

    /// The product of the extents.
    #[inline(always)]
    pub(crate) fn elements(&self) -> usize {
        self.elements
    }

    /// Bytes the elements occupy stored compactly (validated to fit in `isize`).
    #[inline(always)]
    pub(crate) fn byte_size(&self) -> usize {
        match self.storage().element_bytes() {
            // Validated to fit: no check to repeat.
            Some(size) => {
                debug_assert!(self.storage().bytes_for(self.elements).is_some());
                self.elements.wrapping_mul(size)
            }
            None => self.storage().bytes_for(self.elements).unwrap_or(0),
        }
    }

    #[inline(always)]
    pub(crate) fn storage(&self) -> Storage {
        // The high 32 bits (`with_facts`).
        Storage((self.word >> 32) as u32)
    }

    #[inline(always)]
    pub(crate) fn is_c_contiguous(&self) -> bool {
        self.has(Self::C_CONTIGUOUS)
    }

    /// Host-accessible memory and only known flags.
    #[inline(always)]
    pub(crate) fn is_readable(&self) -> bool {
        self.has(Self::READABLE)
    }

    /// May be written through a safe `&mut`: marked `IS_COPIED` and not `READ_ONLY` (the spec's
    /// "solely owned by the consumer"), or an export of a uniquely owned Rust buffer.
    #[inline(always)]
    pub(crate) fn is_exclusive(&self) -> bool {
        self.word & Self::OWNERSHIP == DLPackFlags::IS_COPIED.bits()
    }

    /// Sets whether this consumer holds the memory alone: an `Export` of a uniquely owned buffer
    /// does (unless `READ_ONLY`), a custom owner's export never does (its flags are a claim
    /// about what the consumer may do, not about who else holds the memory).
    #[cfg(feature = "alloc")]
    pub(crate) fn with_exclusive(mut self, exclusive: bool) -> Self {
        let bits = bit(exclusive, DLPackFlags::IS_COPIED.bits());
        self.word = (self.word & !Self::OWNERSHIP) | bits;
        self
    }

    /// See [`Meta::TRACKED`].
    #[inline(always)]
    pub(crate) fn is_tracked(&self) -> bool {
        self.has(Self::TRACKED)
    }

    /// Marks the tensor tracked (or not) by a borrow registry's release hook.
    pub(crate) fn with_tracked(self, tracked: bool) -> Self {
        self.with(Self::TRACKED, tracked)
    }
}

/// `bit` when `set`, else 0.
#[inline(always)]
const fn bit(set: bool, bit: u64) -> u64 {
    if set {
        bit
    } else {
        0
    }
}

impl core::fmt::Debug for Meta {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Meta")
            .field("elements", &self.elements)
            .field("storage", &self.storage())
            .field("c_contiguous", &self.is_c_contiguous())
            .field("readable", &self.is_readable())
            .field("exclusive", &self.is_exclusive())
            .field("tracked", &self.is_tracked())
            .finish()
    }
}
