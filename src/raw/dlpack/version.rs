//! The DLPack version macros and `DLPackVersion`.

/// Major version of the ABI mirrored here (C `DLPACK_MAJOR_VERSION`). A
/// [`DLManagedTensorVersioned`](super::DLManagedTensorVersioned) whose `version.major` differs
/// has an unknown layout after `flags`: only its `deleter` may be called.
///
/// ```
/// use dlpack_abi::raw::dlpack::DLPACK_MAJOR_VERSION;
///
/// assert_eq!(DLPACK_MAJOR_VERSION, 1);
/// ```
pub const DLPACK_MAJOR_VERSION: u32 = 1;

/// Minor version of the ABI mirrored here (C `DLPACK_MINOR_VERSION`). Minor versions add enum
/// values, flags and API; they never move a field.
///
/// ```
/// use dlpack_abi::raw::dlpack::DLPACK_MINOR_VERSION;
///
/// assert_eq!(DLPACK_MINOR_VERSION, 3);
/// ```
pub const DLPACK_MINOR_VERSION: u32 = 3;

/// A DLPack version, as written by the producer into a versioned tensor or exchange API table.
///
/// ```
/// use dlpack_abi::raw::dlpack::DLPackVersion;
///
/// // A consumer accepts any 1.x producer; a 2.x layout differs after `flags`.
/// let producer = DLPackVersion { major: 1, minor: 1 };
/// assert!(producer.major == DLPackVersion::CURRENT.major);
/// assert!(producer < DLPackVersion::CURRENT);
/// ```
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct DLPackVersion {
    /// Layout version; a different major means an incompatible layout.
    pub major: u32,
    /// Additions within the same layout.
    pub minor: u32,
}

impl DLPackVersion {
    /// The version this crate mirrors, 1.3.
    ///
    /// ```
    /// use dlpack_abi::raw::dlpack::DLPackVersion;
    ///
    /// assert_eq!(DLPackVersion::CURRENT, DLPackVersion { major: 1, minor: 3 });
    /// ```
    pub const CURRENT: DLPackVersion = DLPackVersion {
        major: DLPACK_MAJOR_VERSION,
        minor: DLPACK_MINOR_VERSION,
    };
}
