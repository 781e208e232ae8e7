//! The errors of the safe Arrow layer.

use core::ffi::c_int;
use core::fmt;

use crate::dlpack::TensorError;
use crate::raw::{DLDataType, DLDeviceType};

/// Up to 23 bytes of a foreign string, copied so that an error can outlive the struct it came
/// from. Printed lossily; longer strings end in `...`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Excerpt {
    bytes: [u8; 23],
    len: u8,
    truncated: bool,
}

impl Excerpt {
    /// Copies the start of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let len = bytes.len().min(23);
        let mut copy = [0; 23];
        copy[..len].copy_from_slice(&bytes[..len]);
        Self {
            bytes: copy,
            len: len as u8,
            truncated: bytes.len() > 23,
        }
    }

    /// The copied bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Display for Excerpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.as_bytes().utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{FFFD}")?;
            }
        }
        if self.truncated {
            f.write_str("...")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Excerpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

/// Why a metadata map (the `ArrowSchema.metadata` binary encoding) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetadataError {
    /// The map is shorter than its counts and lengths say: `needed` bytes at byte `at`, past the
    /// end of the `len` bytes given.
    Truncated {
        /// Where the missing bytes start.
        at: usize,
        /// How many bytes were needed there.
        needed: usize,
        /// The length of the map.
        len: usize,
    },
    /// The pair count is negative.
    NegativeCount {
        /// The count found.
        count: i32,
    },
    /// A key or value length is negative.
    NegativeLength {
        /// Byte offset of the length.
        at: usize,
        /// The length found.
        length: i32,
    },
    /// A key is not UTF-8.
    KeyNotUtf8 {
        /// Index of the pair.
        pair: usize,
    },
    /// The map's total size does not fit in `isize`.
    TooLarge,
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Truncated { at, needed, len } => write!(
                f,
                "metadata needs {needed} bytes at byte {at}, past its end at {len}"
            ),
            Self::NegativeCount { count } => write!(f, "metadata pair count is {count}"),
            Self::NegativeLength { at, length } => {
                write!(f, "metadata length at byte {at} is {length}")
            }
            Self::KeyNotUtf8 { pair } => write!(f, "metadata key {pair} is not UTF-8"),
            Self::TooLarge => f.write_str("metadata size overflows isize"),
        }
    }
}

/// Why an Arrow struct was refused at import, why an access was refused, or why a bridge between
/// DLPack and Arrow could not be built.
///
/// Import errors are returned after the struct's `release` has run (exactly once); access errors
/// leave the struct untouched; bridge errors are returned after the input has been released (or
/// its DLPack deleter has run), exactly once.
///
/// ```
/// use dlpack_abi::arrow::ArrowError;
///
/// let error = ArrowError::BufferCount { expected: 2, found: 3 };
/// assert_eq!(error.to_string(), "ArrowArray.n_buffers is 3, the type needs 2");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArrowError {
    // ---- import: the struct ----
    /// The pointer handed over was NULL.
    NullPointer,
    /// The struct is already released (`release` is NULL): there is nothing to import.
    Released,
    /// The schema tree is deeper than [`MAX_DEPTH`](super::MAX_DEPTH) (or has a cycle).
    TooDeep,
    /// The schema or array tree has more than [`MAX_NODES`](super::MAX_NODES) nodes (or
    /// shares nodes).
    TooManyNodes,

    /// A callback the interface requires (e.g. a stream's `get_next`) is NULL.
    NullCallback {
        /// The callback's field name.
        name: &'static str,
    },

    // ---- ArrowSchema ----
    /// `format` is NULL.
    NullFormat,
    /// `format` is not a format string of the C Data Interface.
    InvalidFormat {
        /// The start of the format string.
        format: Excerpt,
    },
    /// `name` is not UTF-8.
    NameNotUtf8,
    /// `metadata` is malformed.
    Metadata(MetadataError),
    /// A dictionary-encoded field whose own format is not an integer type (the index type).
    DictionaryIndex {
        /// The field's format string.
        format: Excerpt,
    },
    /// `n_children` is negative.
    NegativeChildren {
        /// The value found.
        n_children: i64,
    },
    /// `children` is NULL although `n_children > 0`.
    NullChildren,
    /// `children[index]` is NULL.
    NullChild {
        /// The child's index.
        index: usize,
    },
    /// `children[index]` is already released.
    ReleasedChild {
        /// The child's index.
        index: usize,
    },
    /// The dictionary is already released.
    ReleasedDictionary,
    /// The number of children does not fit the type (e.g. a list with two children), or an
    /// array has a different number of children than its schema.
    ChildCount {
        /// How many the type needs.
        expected: i64,
        /// How many there are.
        found: i64,
    },
    /// An extension type's metadata is malformed (e.g. `arrow.fixed_shape_tensor` JSON without
    /// `shape`, or a shape whose product is not the list size).
    ExtensionMetadata {
        /// What is wrong.
        reason: &'static str,
    },

    // ---- ArrowArray ----
    /// `length` is negative.
    NegativeLength {
        /// The value found.
        length: i64,
    },
    /// `offset` is negative.
    NegativeOffset {
        /// The value found.
        offset: i64,
    },
    /// `null_count` is below -1 or above `length`.
    InvalidNullCount {
        /// The value found.
        null_count: i64,
        /// The array's length.
        length: i64,
    },
    /// `n_buffers` does not fit the type.
    BufferCount {
        /// How many the type needs (at least this many for view types).
        expected: i64,
        /// How many there are.
        found: i64,
    },
    /// `buffers` is NULL although `n_buffers > 0`.
    NullBuffers,
    /// `buffers[index]` is NULL although the buffer is needed (a validity bitmap with nulls, or
    /// a data buffer with elements).
    NullBuffer {
        /// The buffer's index.
        index: usize,
    },
    /// `offset + length`, or the size in bytes of a buffer, does not fit in `isize`.
    SizeOverflow,
    /// A child array is shorter than its parent needs.
    ChildTooShort {
        /// The child's index.
        index: usize,
        /// The length it needs.
        needed: i64,
        /// The length it has.
        found: i64,
    },
    /// The array has a dictionary and its schema does not, or the other way round.
    DictionaryMismatch,

    // ---- access ----
    /// The buffers are not in host memory (or a `sync_event` is pending), so they cannot be read
    /// as slices.
    NotHostAccessible {
        /// The array's device type, as a DLPack device type.
        device_type: DLDeviceType,
    },
    /// The requested Rust type does not match the array's type.
    TypeMismatch {
        /// The array's format string.
        format: Excerpt,
        /// The DLPack type of the requested Rust type.
        requested: DLDataType,
    },
    /// The array is viewed with a schema other than the one it was imported with (or, for an
    /// array this crate built, one of another layout): its buffers were not sized for it.
    SchemaMismatch,
    /// A data buffer is not aligned for the requested Rust type.
    Misaligned {
        /// The buffer's index.
        index: usize,
    },

    /// A device stream produced an array on another device type than the stream's.
    DeviceMismatch {
        /// The stream's device type.
        stream: DLDeviceType,
        /// The array's device type.
        array: DLDeviceType,
    },

    // ---- bridge ----
    /// The array has nulls, which a DLPack tensor cannot express.
    NullsPresent {
        /// The null count (-1: unknown with a validity bitmap present).
        null_count: i64,
    },
    /// The Arrow type has no DLPack equivalent (only primitive integers and floats, `bool8`,
    /// and `fixed_shape_tensor` of those bridge).
    UnsupportedType {
        /// The format string.
        format: Excerpt,
    },
    /// The DLPack element type has no Arrow primitive equivalent.
    UnsupportedDtype {
        /// The element type.
        dtype: DLDataType,
    },
    /// The tensor is not compact row-major.
    NotContiguous,
    /// The tensor has no dimensions (a 0-d tensor has no Arrow length).
    ZeroDims,
    /// The Arrow offset, in bytes, does not fit a DLPack `byte_offset`.
    OffsetNotRepresentable {
        /// The offset in elements.
        offset: i64,
    },
    /// The DLPack device type has no Arrow value (e.g. `kDLMAIA`, `kDLTrn`).
    DeviceNotInArrow {
        /// The device type.
        device_type: DLDeviceType,
    },
    /// The Arrow `device_id` does not fit DLPack's `int32_t`.
    DeviceIdOutOfRange {
        /// The value found.
        device_id: i64,
    },
    /// Building or reading the DLPack side failed.
    Tensor(TensorError),
}

impl From<MetadataError> for ArrowError {
    fn from(error: MetadataError) -> Self {
        Self::Metadata(error)
    }
}

impl From<TensorError> for ArrowError {
    fn from(error: TensorError) -> Self {
        Self::Tensor(error)
    }
}

impl fmt::Display for ArrowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NullPointer => f.write_str("the Arrow struct pointer is NULL"),
            Self::Released => f.write_str("the Arrow struct is already released (release is NULL)"),
            Self::TooDeep => write!(f, "the tree is deeper than {}", super::MAX_DEPTH),
            Self::TooManyNodes => write!(f, "the tree has more than {} nodes", super::MAX_NODES),
            Self::NullCallback { name } => write!(f, "the callback {name} is NULL"),
            Self::NullFormat => f.write_str("ArrowSchema.format is NULL"),
            Self::InvalidFormat { format } => write!(f, "ArrowSchema.format {format:?} is not valid"),
            Self::NameNotUtf8 => f.write_str("ArrowSchema.name is not UTF-8"),
            Self::Metadata(error) => write!(f, "ArrowSchema.metadata: {error}"),
            Self::DictionaryIndex { format } => write!(
                f,
                "ArrowSchema.format {format:?} is not an integer type, as a dictionary's index must be"
            ),
            Self::NegativeChildren { n_children } => write!(f, "n_children is {n_children}"),
            Self::NullChildren => f.write_str("children is NULL although n_children > 0"),
            Self::NullChild { index } => write!(f, "children[{index}] is NULL"),
            Self::ReleasedChild { index } => write!(f, "children[{index}] is released"),
            Self::ReleasedDictionary => f.write_str("the dictionary is released"),
            Self::ChildCount { expected, found } => {
                write!(f, "n_children is {found}, the type needs {expected}")
            }
            Self::ExtensionMetadata { reason } => write!(f, "extension metadata: {reason}"),
            Self::NegativeLength { length } => write!(f, "ArrowArray.length is {length}"),
            Self::NegativeOffset { offset } => write!(f, "ArrowArray.offset is {offset}"),
            Self::InvalidNullCount { null_count, length } => write!(
                f,
                "ArrowArray.null_count is {null_count}, outside -1..={length}"
            ),
            Self::BufferCount { expected, found } => {
                write!(f, "ArrowArray.n_buffers is {found}, the type needs {expected}")
            }
            Self::NullBuffers => f.write_str("ArrowArray.buffers is NULL although n_buffers > 0"),
            Self::NullBuffer { index } => write!(f, "ArrowArray.buffers[{index}] is NULL"),
            Self::SizeOverflow => f.write_str("offset + length or a buffer size overflows isize"),
            Self::ChildTooShort {
                index,
                needed,
                found,
            } => write!(f, "child {index} has length {found}, {needed} needed"),
            Self::DictionaryMismatch => {
                f.write_str("the array and its schema disagree on having a dictionary")
            }
            Self::NotHostAccessible { device_type } => write!(
                f,
                "the buffers are on {device_type:?} or wait on a sync_event, not readable by the host"
            ),
            Self::TypeMismatch { format, requested } => write!(
                f,
                "the array's format is {format:?}, the requested type is {requested:?}"
            ),
            Self::SchemaMismatch => f.write_str(
                "the array was imported or built for another schema than the one it is viewed with",
            ),
            Self::Misaligned { index } => write!(f, "buffers[{index}] is not aligned for the type"),
            Self::DeviceMismatch { stream, array } => {
                write!(f, "a stream of {stream:?} produced an array on {array:?}")
            }
            Self::NullsPresent { null_count } => {
                write!(f, "the array has nulls (null_count {null_count})")
            }
            Self::UnsupportedType { format } => {
                write!(f, "the Arrow type {format:?} has no DLPack equivalent")
            }
            Self::UnsupportedDtype { dtype } => {
                write!(f, "the DLPack type {dtype:?} has no Arrow equivalent")
            }
            Self::NotContiguous => f.write_str("the tensor is not compact row-major"),
            Self::ZeroDims => f.write_str("a 0-d tensor has no Arrow length"),
            Self::OffsetNotRepresentable { offset } => {
                write!(f, "the Arrow offset {offset} does not fit a DLPack byte_offset")
            }
            Self::DeviceNotInArrow { device_type } => {
                write!(f, "the device type {device_type:?} has no Arrow value")
            }
            Self::DeviceIdOutOfRange { device_id } => {
                write!(f, "the device id {device_id} does not fit DLPack's int32_t")
            }
            Self::Tensor(error) => write!(f, "DLPack: {error}"),
        }
    }
}

impl core::error::Error for ArrowError {}

/// An error a stream's producer reported: an errno-style code and, when the producer gave one,
/// its message (copied at once, as `get_last_error`'s string dies at the next call).
///
/// The message needs feature `alloc`; without it only the code is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerError {
    code: c_int,
    #[cfg(feature = "alloc")]
    message: Option<alloc::string::String>,
}

impl ProducerError {
    /// An error with `code` (non-zero; see [`errno`](super::errno)) and an optional message.
    ///
    /// ```
    /// use dlpack_abi::arrow::{errno, ProducerError};
    ///
    /// let error = ProducerError::new(errno::EIO, Some("disk on fire"));
    /// assert_eq!(error.code(), errno::EIO);
    /// assert_eq!(error.message(), Some("disk on fire"));
    /// ```
    #[cfg(feature = "alloc")]
    pub fn new(code: c_int, message: Option<&str>) -> Self {
        Self {
            message: message.map(alloc::string::String::from),
            ..Self::code_only(code)
        }
    }

    /// An error with `code` and no message. A `code` of 0 (success) becomes `EIO`.
    pub fn code_only(code: c_int) -> Self {
        Self {
            code: if code == 0 { super::errno::EIO } else { code },
            #[cfg(feature = "alloc")]
            message: None,
        }
    }

    /// The errno-style code (never 0).
    pub fn code(&self) -> c_int {
        self.code
    }

    /// The producer's message, if it gave one (always `None` without feature `alloc`).
    pub fn message(&self) -> Option<&str> {
        #[cfg(feature = "alloc")]
        return self.message.as_deref();
        #[cfg(not(feature = "alloc"))]
        None
    }
}

impl fmt::Display for ProducerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the producer returned error {}", self.code)?;
        match self.message() {
            Some(message) => write!(f, ": {message}"),
            None => f.write_str(" without a message"),
        }
    }
}

/// Why a stream yielded no item: the producer failed, or what it produced was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamError {
    /// `get_schema` or `get_next` returned a non-zero code.
    Producer(ProducerError),
    /// The stream itself, or the schema or array it produced, was refused (already released by
    /// then).
    Invalid(ArrowError),
}

impl From<ArrowError> for StreamError {
    fn from(error: ArrowError) -> Self {
        Self::Invalid(error)
    }
}

impl From<ProducerError> for StreamError {
    fn from(error: ProducerError) -> Self {
        Self::Producer(error)
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Producer(error) => error.fmt(f),
            Self::Invalid(error) => error.fmt(f),
        }
    }
}

impl core::error::Error for StreamError {}
impl core::error::Error for ProducerError {}
