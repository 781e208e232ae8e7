//! `DLTensor`, the managed tensors that own one, and the flags of the versioned one.

// The flag macros are C `unsigned long`: `u64` on LP64, `u32` on i686, so `as u64` is a no-op on
// one family and a widening on the other.
#![allow(clippy::unnecessary_cast)]

use core::ffi::{c_ulong, c_void};

use super::{DLDataType, DLDevice, DLPackVersion};

/// A non-owning view of a strided array. It owns nothing; `shape` and `strides` live as long as
/// whatever produced the view (for a managed tensor: until its deleter runs).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLTensor {
    /// Base of the allocation, or an opaque handle (`cl_mem`, Metal buffer) on devices without
    /// direct addressing. The first element is at `data + byte_offset`. May be NULL for an empty
    /// tensor.
    pub data: *mut c_void,
    /// Where `data` lives.
    pub device: DLDevice,
    /// Number of dimensions; never negative in a valid tensor.
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// `ndim` extents; may be NULL when `ndim == 0`.
    pub shape: *mut i64,
    /// `ndim` strides in elements (not bytes), possibly negative or zero. NULL means compact
    /// row-major, but only from legacy producers and versioned ones older than 1.2.
    pub strides: *mut i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// The legacy managed tensor (deprecated since v0.8, still the `"dltensor"` capsule): a
/// [`DLTensor`] plus the producer's means to free it. It has no version and no flags.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The view; valid until `deleter` runs.
    pub dl_tensor: DLTensor,
    /// Producer's context, for the deleter's use; may be NULL.
    pub manager_ctx: *mut c_void,
    /// Frees `manager_ctx` and this struct. The consumer calls it exactly once when done; NULL
    /// means there is nothing to call.
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

/// Bit 0 of `flags`: the consumer must not write through the view.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: c_ulong = 1 << 0;
/// Bit 1 of `flags`: the producer made a copy, which the consumer owns until the deleter runs.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: c_ulong = 1 << 1;
/// Bit 2 of `flags`: a sub-byte type (FP4, FP6) is stored one element per byte, not packed.
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: c_ulong = 1 << 2;

bitflags::bitflags! {
    /// The `flags` word of a [`DLManagedTensorVersioned`] as a set. Bits this crate does not
    /// name are kept, never dropped: build it with `from_bits_retain`.
    #[repr(transparent)]
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    pub struct DLPackFlags: u64 {
        /// [`DLPACK_FLAG_BITMASK_READ_ONLY`].
        const READ_ONLY = DLPACK_FLAG_BITMASK_READ_ONLY as u64;
        /// [`DLPACK_FLAG_BITMASK_IS_COPIED`].
        const IS_COPIED = DLPACK_FLAG_BITMASK_IS_COPIED as u64;
        /// [`DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`].
        const IS_SUBBYTE_TYPE_PADDED = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED as u64;
        // Bits 3..=63 are undefined in 1.3: keep them through every operation.
        const _ = !0;
    }
}

/// The versioned managed tensor (the `"dltensor_versioned"` capsule). `version`, `manager_ctx`,
/// `deleter` and `flags` are a permanent prefix: whatever `version.major` says, the deleter can
/// be found; nothing after `flags` may be read when the major differs from 1.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// The producer's DLPack version; check `major` before reading anything else.
    pub version: DLPackVersion,
    /// Producer's context, for the deleter's use; may be NULL.
    pub manager_ctx: *mut c_void,
    /// Frees `manager_ctx` and this struct. The consumer calls it exactly once when done, from
    /// any thread; NULL means there is nothing to call.
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    /// Bit set of `DLPACK_FLAG_BITMASK_*` values (see [`DLPackFlags`]); 0 by default.
    pub flags: u64,
    /// The view; valid until `deleter` runs. Last, so that a future major can change it.
    pub dl_tensor: DLTensor,
}

impl DLManagedTensorVersioned {
    /// `flags` as a [`DLPackFlags`] set, unknown bits included.
    pub const fn flag_set(&self) -> DLPackFlags {
        DLPackFlags::from_bits_retain(self.flags)
    }
}
