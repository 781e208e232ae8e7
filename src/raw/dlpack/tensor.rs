//! `DLTensor`, the managed tensors that own one, and the flags of the versioned one.

// The flag macros are C `unsigned long`: `u64` on LP64, `u32` on i686, so `as u64` is a no-op on
// one family and a widening on the other.
#![allow(clippy::unnecessary_cast)]

use core::ffi::{c_ulong, c_void};

use super::{DLDataType, DLDevice, DLPackVersion};

/// A non-owning view of a strided array. It owns nothing; `shape` and `strides` live as long as
/// whatever produced the view (for a managed tensor: until its deleter runs).
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLCPU, kDLFloat, DLDataType, DLDevice, DLTensor};
///
/// // A 2 x 3 float32 view of a caller's buffer: the struct a C kernel receives.
/// let mut values = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let mut shape = [2i64, 3];
/// let mut strides = [3i64, 1]; // in elements, not bytes
/// let tensor = DLTensor {
///     data: values.as_mut_ptr().cast(),
///     device: DLDevice { device_type: kDLCPU, device_id: 0 },
///     ndim: 2,
///     dtype: DLDataType { code: kDLFloat, bits: 32, lanes: 1 },
///     shape: shape.as_mut_ptr(),
///     strides: strides.as_mut_ptr(),
///     byte_offset: 0,
/// };
/// // Element [1][2] lives at data + byte_offset + (1 * 3 + 2 * 1) * 4 bytes.
/// // SAFETY: `data` points to six f32 values that outlive this read.
/// let last = unsafe { *tensor.data.cast::<f32>().add(1 * 3 + 2 * 1) };
/// assert_eq!(last, 6.0);
/// ```
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
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi::raw::dlpack::DLManagedTensor;
///
/// // A producer hands out a `*mut DLManagedTensor` (the legacy "dltensor" capsule's pointer).
/// let raw: *mut DLManagedTensor = Export::new(vec![1i32, 2, 3], &[3]).finish_legacy()?.into_raw();
/// // SAFETY: `raw` is live until its deleter runs.
/// let managed = unsafe { &*raw };
/// assert_eq!(managed.dl_tensor.ndim, 1);
/// // The consumer is done: it calls the deleter exactly once, which frees everything.
/// let deleter = managed.deleter.expect("this producer sets a deleter");
/// // SAFETY: `raw` came from this producer and its deleter has not run.
/// unsafe { deleter(raw) };
/// # }
/// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
/// ```
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
///
/// ```
/// use dlpack_abi::raw::dlpack::DLPACK_FLAG_BITMASK_READ_ONLY;
///
/// assert_eq!(DLPACK_FLAG_BITMASK_READ_ONLY, 1 << 0);
/// ```
pub const DLPACK_FLAG_BITMASK_READ_ONLY: c_ulong = 1 << 0;

/// Bit 1 of `flags`: the producer made a copy, which the consumer owns until the deleter runs.
///
/// ```
/// use dlpack_abi::raw::dlpack::DLPACK_FLAG_BITMASK_IS_COPIED;
///
/// assert_eq!(DLPACK_FLAG_BITMASK_IS_COPIED, 1 << 1);
/// ```
pub const DLPACK_FLAG_BITMASK_IS_COPIED: c_ulong = 1 << 1;

/// Bit 2 of `flags`: a sub-byte type (FP4, FP6) is stored one element per byte, not packed.
///
/// ```
/// use dlpack_abi::raw::dlpack::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
///
/// assert_eq!(DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, 1 << 2);
/// ```
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: c_ulong = 1 << 2;

bitflags::bitflags! {
    /// The `flags` word of a [`DLManagedTensorVersioned`] as a set. Bits this crate does not
    /// name are kept, never dropped: build it with `from_bits_retain`.
    ///
    /// ```
    /// use dlpack_abi::raw::dlpack::DLPackFlags;
    ///
    /// let flags = DLPackFlags::from_bits_retain(0b101);
    /// assert_eq!(flags, DLPackFlags::READ_ONLY | DLPackFlags::IS_SUBBYTE_TYPE_PADDED);
    /// assert!(!flags.contains(DLPackFlags::IS_COPIED));
    /// ```
    #[repr(transparent)]
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    pub struct DLPackFlags: u64 {
        /// [`DLPACK_FLAG_BITMASK_READ_ONLY`].
        ///
        /// ```
        /// use dlpack_abi::raw::dlpack::DLPackFlags;
        ///
        /// assert_eq!(DLPackFlags::READ_ONLY.bits(), 1);
        /// ```
        const READ_ONLY = DLPACK_FLAG_BITMASK_READ_ONLY as u64;

        /// [`DLPACK_FLAG_BITMASK_IS_COPIED`].
        ///
        /// ```
        /// use dlpack_abi::raw::dlpack::DLPackFlags;
        ///
        /// assert_eq!(DLPackFlags::IS_COPIED.bits(), 2);
        /// ```
        const IS_COPIED = DLPACK_FLAG_BITMASK_IS_COPIED as u64;

        /// [`DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`].
        ///
        /// ```
        /// use dlpack_abi::raw::dlpack::DLPackFlags;
        ///
        /// assert_eq!(DLPackFlags::IS_SUBBYTE_TYPE_PADDED.bits(), 4);
        /// ```
        const IS_SUBBYTE_TYPE_PADDED = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED as u64;
        // Bits 3..=63 are undefined in 1.3: keep them through every operation.
        const _ = !0;
    }
}

/// The versioned managed tensor (the `"dltensor_versioned"` capsule). `version`, `manager_ctx`,
/// `deleter` and `flags` are a permanent prefix: whatever `version.major` says, the deleter can
/// be found; nothing after `flags` may be read when the major differs from 1.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi::raw::dlpack::{DLManagedTensorVersioned, DLPackFlags, DLPackVersion};
///
/// let raw: *mut DLManagedTensorVersioned = Export::new(vec![1.5f64, 2.5], &[2]).read_only().finish()?.into_raw();
/// // SAFETY: `raw` is live until its deleter runs.
/// let managed = unsafe { &*raw };
/// // Check the major version before reading anything after `flags`.
/// assert_eq!(managed.version.major, DLPackVersion::CURRENT.major);
/// assert!(managed.flag_set().contains(DLPackFlags::READ_ONLY));
/// assert_eq!(managed.dl_tensor.ndim, 1);
/// // SAFETY: `raw` came from this producer and its deleter has not run.
/// unsafe { managed.deleter.expect("a deleter")(raw) };
/// # }
/// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
/// ```
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
    ///
    /// ```
    /// use dlpack_abi::raw::dlpack::{DLManagedTensorVersioned, DLPackFlags, DLPackVersion, DLTensor};
    /// use dlpack_abi::raw::dlpack::{kDLCPU, kDLFloat, DLDataType, DLDevice};
    ///
    /// let managed = DLManagedTensorVersioned {
    ///     version: DLPackVersion::CURRENT,
    ///     manager_ctx: core::ptr::null_mut(),
    ///     deleter: None,
    ///     flags: 0b1001, // READ_ONLY and a bit 1.3 does not define
    ///     dl_tensor: DLTensor {
    ///         data: core::ptr::null_mut(),
    ///         device: DLDevice { device_type: kDLCPU, device_id: 0 },
    ///         ndim: 0,
    ///         dtype: DLDataType { code: kDLFloat, bits: 32, lanes: 1 },
    ///         shape: core::ptr::null_mut(),
    ///         strides: core::ptr::null_mut(),
    ///         byte_offset: 0,
    ///     },
    /// };
    /// let flags = managed.flag_set();
    /// assert!(flags.contains(DLPackFlags::READ_ONLY) && !flags.contains(DLPackFlags::IS_COPIED));
    /// assert_eq!(flags.bits(), 0b1001); // the unknown bit is kept
    /// ```
    pub const fn flag_set(&self) -> DLPackFlags {
        DLPackFlags::from_bits_retain(self.flags)
    }
}
