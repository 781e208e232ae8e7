//! The DLPack version macros and `DLPackVersion`.

/// Major version of the ABI mirrored here (C `DLPACK_MAJOR_VERSION`). A
/// [`DLManagedTensorVersioned`](super::DLManagedTensorVersioned) whose `version.major` differs
/// has an unknown layout after `flags`: only its `deleter` may be called.
pub const DLPACK_MAJOR_VERSION: u32 = 1;

/// Minor version of the ABI mirrored here (C `DLPACK_MINOR_VERSION`). Minor versions add enum
/// values, flags and API; they never move a field.
pub const DLPACK_MINOR_VERSION: u32 = 3;

/// A DLPack version, as written by the producer into a versioned tensor or exchange API table.
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
    pub const CURRENT: DLPackVersion = DLPackVersion {
        major: DLPACK_MAJOR_VERSION,
        minor: DLPACK_MINOR_VERSION,
    };
}
