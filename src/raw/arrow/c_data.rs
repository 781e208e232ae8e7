//! The C Data Interface (`ARROW_C_DATA_INTERFACE`): `ArrowSchema`, `ArrowArray`, schema flags.

use core::ffi::{c_char, c_void};

/// Schema flag: the ordering of dictionary indices is meaningful.
pub const ARROW_FLAG_DICTIONARY_ORDERED: i64 = 1;
/// Schema flag: the field is semantically nullable.
pub const ARROW_FLAG_NULLABLE: i64 = 2;
/// Schema flag: map keys are sorted within each map value.
pub const ARROW_FLAG_MAP_KEYS_SORTED: i64 = 4;

/// The type of an array, and of its children. Everything it points to is owned by the
/// producer and freed by `release`.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowSchema {
    /// Mandatory NUL-terminated UTF-8 format string (`"f"` is float32, `"+w:4"` a fixed-size list).
    pub format: *const c_char,
    /// Optional NUL-terminated UTF-8 field name; NULL or empty.
    pub name: *const c_char,
    /// Optional binary key/value map (native-endian `int32` counts and lengths); NULL when absent.
    pub metadata: *const c_char,
    /// Bit set of `ARROW_FLAG_*` values; unknown bits must be kept.
    pub flags: i64,
    /// Number of children.
    pub n_children: i64,
    /// `n_children` pointers to the child schemas; NULL only when there are none.
    pub children: *mut *mut ArrowSchema,
    /// The dictionary's value type, non-NULL iff the field is dictionary-encoded.
    pub dictionary: *mut ArrowSchema,
    /// Releases this schema, its children and dictionary, and sets itself to NULL. NULL means
    /// already released. Only the consumer of the base struct calls it.
    pub release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    /// Producer's bookkeeping; consumers never touch it.
    pub private_data: *mut c_void,
}

/// The data of an array, and of its children. Buffers are immutable and owned by the producer
/// until `release`.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArray {
    /// Logical length in elements.
    pub length: i64,
    /// Number of null elements, or -1 if not computed.
    pub null_count: i64,
    /// Logical offset into the buffers, in elements; never negative.
    pub offset: i64,
    /// Number of buffers, fixed by the data type's layout.
    pub n_buffers: i64,
    /// Number of children.
    pub n_children: i64,
    /// `n_buffers` buffer pointers; an entry may be NULL only for an absent validity bitmap or a
    /// zero-size buffer.
    pub buffers: *mut *const c_void,
    /// `n_children` pointers to the child arrays.
    pub children: *mut *mut ArrowArray,
    /// The dictionary values, non-NULL iff the array is dictionary-encoded.
    pub dictionary: *mut ArrowArray,
    /// Releases this array, its children and dictionary, and sets itself to NULL. NULL means
    /// already released. Only the consumer of the base struct calls it.
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    /// Producer's bookkeeping; consumers never touch it.
    pub private_data: *mut c_void,
}
