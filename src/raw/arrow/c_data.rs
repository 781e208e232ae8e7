//! The C Data Interface (`ARROW_C_DATA_INTERFACE`): `ArrowSchema`, `ArrowArray`, schema flags.

use core::ffi::{c_char, c_void};

/// Schema flag: the ordering of dictionary indices is meaningful.
///
/// ```
/// use dlpack_abi::raw::arrow::ARROW_FLAG_DICTIONARY_ORDERED;
///
/// assert_eq!(ARROW_FLAG_DICTIONARY_ORDERED, 1);
/// ```
pub const ARROW_FLAG_DICTIONARY_ORDERED: i64 = 1;

/// Schema flag: the field is semantically nullable.
///
/// ```
/// use dlpack_abi::raw::arrow::ARROW_FLAG_NULLABLE;
///
/// assert_eq!(ARROW_FLAG_NULLABLE, 2);
/// ```
pub const ARROW_FLAG_NULLABLE: i64 = 2;

/// Schema flag: map keys are sorted within each map value.
///
/// ```
/// use dlpack_abi::raw::arrow::ARROW_FLAG_MAP_KEYS_SORTED;
///
/// assert_eq!(ARROW_FLAG_MAP_KEYS_SORTED, 4);
/// ```
pub const ARROW_FLAG_MAP_KEYS_SORTED: i64 = 4;

/// The type of an array, and of its children. Everything it points to is owned by the
/// producer and freed by `release`.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::SchemaDef;
/// use dlpack_abi::raw::arrow::{ArrowSchema, ARROW_FLAG_NULLABLE};
///
/// // A producer fills the struct (here this crate's own exporter does).
/// let mut schema: ArrowSchema = SchemaDef::new("i")?.nullable().export()?.into_raw();
/// // SAFETY: `format` is a NUL-terminated string owned by the schema.
/// assert_eq!(unsafe { core::ffi::CStr::from_ptr(schema.format) }, c"i");
/// assert_eq!(schema.flags & ARROW_FLAG_NULLABLE, ARROW_FLAG_NULLABLE);
/// // Its owner releases it exactly once; a released struct has `release == None`.
/// // SAFETY: the schema is live and owned here.
/// unsafe { schema.release.expect("live")(&mut schema) };
/// assert!(schema.release.is_none());
/// # }
/// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
/// ```
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
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::Array;
/// use dlpack_abi::raw::arrow::ArrowArray;
///
/// let mut array: ArrowArray = Array::from_vec(vec![7i64, 8, 9])?.into_raw();
/// assert_eq!((array.length, array.null_count, array.n_buffers), (3, 0, 2));
/// // Buffer 1 of a primitive array holds the values (buffer 0 is the validity bitmap).
/// // SAFETY: `buffers` holds `n_buffers` pointers; buffer 1 holds `length` i64 values.
/// let values = unsafe { *array.buffers.add(1) }.cast::<i64>();
/// assert_eq!(unsafe { *values.add(2) }, 9);
/// // SAFETY: the array is live and owned here; it is released exactly once.
/// unsafe { array.release.expect("live")(&mut array) };
/// # }
/// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
/// ```
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
