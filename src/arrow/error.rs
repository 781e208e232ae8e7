//! The errors of the safe Arrow layer, one type per contract: [`ValidationError`] (structs that
//! break the C interfaces), [`ReadError`] (typed reads), [`BridgeError`] (the DLPack <-> Arrow
//! bridge), and [`ArrowError`], which each of them converts into, so that `?` works across
//! contracts. Stream errors are in `stream/error.rs`.

use core::fmt;

use crate::dlpack::ExportError;
use crate::raw::{DLDataType, DLDeviceType};

/// Up to 23 bytes of a foreign string, copied so that an error can outlive the struct it came
/// from. Printed lossily; longer strings end in `...`.
///
/// ```
/// use dlpack_abi::arrow::Excerpt;
///
/// let long = Excerpt::of(b"a format string far too long to copy whole");
/// assert_eq!(long.to_string(), "a format string far too...");
/// assert_eq!(Excerpt::of(b"ok\xff").to_string(), "ok\u{FFFD}");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Excerpt {
    bytes: [u8; 23],
    len: u8,
    truncated: bool,
}

impl Excerpt {
    /// Copies the start of `bytes`.
    ///
    /// ```
    /// use dlpack_abi::arrow::Excerpt;
    ///
    /// assert_eq!(format!("{:?}", Excerpt::of(b"+w:x")), "\"+w:x\"");
    /// ```
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
    ///
    /// ```
    /// use dlpack_abi::arrow::Excerpt;
    ///
    /// assert_eq!(Excerpt::of(&[b'z'; 40]).as_bytes(), [b'z'; 23]);
    /// ```
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
///
/// ```
/// use dlpack_abi::arrow::{Metadata, MetadataError};
///
/// assert_eq!(Metadata::parse(&(-1i32).to_ne_bytes()).unwrap_err(), MetadataError::NegativeCount { count: -1 });
/// ```
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

/// Why an Arrow struct breaks the C Data, Stream or Device Data Interface: refused at import
/// (after its `release` has run, exactly once), by a view, or when this crate checks a struct it
/// builds.
///
/// ```
/// use dlpack_abi::arrow::ValidationError;
///
/// let error = ValidationError::BufferCount { expected: 2, found: 3 };
/// assert_eq!(error.to_string(), "ArrowArray.n_buffers is 3, the type needs 2");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValidationError {
    // ---- the struct ----
    /// The pointer handed over was NULL.
    NullPointer,
    /// The struct is already released (`release` is NULL): there is nothing to import.
    Released,
    /// The schema tree is deeper than [`MAX_DEPTH`](super::MAX_DEPTH) (or has a cycle).
    TooDeep,
    /// The tree has more than [`MAX_NODES`](super::MAX_NODES) nodes (or shares nodes), or a
    /// node announces more children than that.
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
    /// An extension type does not fit its storage, or lacks its metadata (e.g. an
    /// `arrow.fixed_shape_tensor` whose storage is not a fixed-size list).
    ExtensionMetadata {
        /// What is wrong.
        reason: &'static str,
    },
    /// `arrow.fixed_shape_tensor` metadata is not JSON (or nests deeper than 16 levels).
    TensorJson {
        /// The byte offset of the error in the metadata.
        at: usize,
        /// What the JSON grammar needed there (e.g. `':'`).
        expected: &'static str,
    },
    /// `arrow.fixed_shape_tensor` metadata lacks a required parameter (`shape`).
    TensorParameterMissing {
        /// The missing key.
        key: super::TensorKey,
    },
    /// A parameter of `arrow.fixed_shape_tensor` metadata is refused.
    TensorParameter {
        /// The key, as the producer spelled it (e.g. arrow-rs's `permutations`).
        key: super::TensorKey,
        /// The start of its value, as written.
        value: Excerpt,
        /// What is wrong with it.
        problem: super::ParameterProblem,
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
    /// `n_buffers` is more than a `buffers` array in this address space can hold.
    TooManyBuffers {
        /// The value found.
        n_buffers: i64,
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
        /// The length it needs (at most `i64::MAX`).
        needed: i64,
        /// The length it has.
        found: i64,
    },
    /// The array has a dictionary and its schema does not, or the other way round.
    DictionaryMismatch,
    /// The array is viewed with a schema other than the one it was imported with (or, for an
    /// array this crate built, one of another layout): its buffers were not sized for it.
    SchemaMismatch,

    // ---- producing ----
    /// A [`SchemaSource`](super::SchemaSource) described what no schema can hold (a NUL inside
    /// a name or a format), or a different tree on its second walk, or the tree did not fit in
    /// memory.
    InvalidSource {
        /// What was wrong.
        reason: &'static str,
    },

    // ---- streams ----
    /// A device stream produced an array on another device type than the stream's.
    DeviceMismatch {
        /// The stream's device type.
        stream: DLDeviceType,
        /// The array's device type.
        array: DLDeviceType,
    },
}

/// Why a typed read of an array ([`ArrayView::values`](super::ArrayView::values) and friends)
/// was refused. The array is untouched.
///
/// ```
/// use dlpack_abi::arrow::ReadError;
///
/// assert_eq!(ReadError::Misaligned { index: 1 }.to_string(), "buffers[1] is not aligned for the type");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
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
    /// A data buffer is not aligned for the requested Rust type.
    Misaligned {
        /// The buffer's index.
        index: usize,
    },
}

/// Why a DLPack tensor and an Arrow array could not be bridged (either way). The input has been
/// released (or its DLPack deleter has run), exactly once, when this is returned.
///
/// ```
/// use dlpack_abi::arrow::BridgeError;
///
/// assert_eq!(BridgeError::ZeroDims.to_string(), "a 0-d tensor has no Arrow length");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BridgeError {
    /// The array has nulls, which a DLPack tensor cannot express.
    NullsPresent {
        /// The null count (-1: unknown with a validity bitmap present).
        null_count: i64,
    },
    /// The array is dictionary-encoded: its buffers hold indices, not the values.
    DictionaryEncoded,
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
    /// The Arrow offset, in bytes, does not fit a DLPack `byte_offset` (or, from DLPack, a
    /// `byte_offset` cannot be folded into an address).
    OffsetNotRepresentable {
        /// The offset in elements (Arrow) or bytes (DLPack).
        offset: i64,
    },
    /// The values buffer is not aligned for the element type.
    Misaligned,
    /// The device array has a pending `sync_event`: wait on it before bridging.
    PendingEvent,
    /// A `sync_event` cannot be attached: the array is CPU data (which has none, by the
    /// spec), or it already carries one.
    EventNotAttachable,
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
    /// The Arrow side is malformed (or built for another schema).
    Arrow(ValidationError),
    /// The DLPack side could not be built.
    Tensor(ExportError),
}

/// Any error of the safe Arrow layer: what a function that imports, reads, bridges and produces
/// returns with `?`. Each contract's error converts into it.
///
/// ```
/// use dlpack_abi::arrow::{ArrowError, DataType, ValidationError};
///
/// let error: ArrowError = DataType::parse(b"x").unwrap_err().into();
/// assert!(matches!(error, ArrowError::Validation(ValidationError::InvalidFormat { .. })));
/// assert_eq!(error.to_string(), "ArrowSchema.format \"x\" is not valid");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArrowError {
    /// A struct breaks the C interfaces.
    Validation(ValidationError),
    /// A typed read was refused.
    Read(ReadError),
    /// The DLPack <-> Arrow bridge refused.
    Bridge(BridgeError),
}

// Each contract's error converts into the one that wraps it.
wraps! {
    ValidationError::Metadata(MetadataError),
    BridgeError::Arrow(ValidationError),
    BridgeError::Tensor(ExportError),
    ArrowError::Validation(ValidationError),
    ArrowError::Read(ReadError),
    ArrowError::Bridge(BridgeError),
}

impl From<MetadataError> for ArrowError {
    fn from(error: MetadataError) -> Self {
        Self::Validation(error.into())
    }
}

impl fmt::Display for ValidationError {
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
            Self::TensorJson { at, expected } => write!(
                f,
                "extension metadata of arrow.fixed_shape_tensor: JSON syntax error at byte {at}: expected {expected}"
            ),
            Self::TensorParameterMissing { key } => {
                write!(f, "extension metadata of arrow.fixed_shape_tensor: no \"{key}\"")
            }
            Self::TensorParameter {
                key,
                value,
                problem,
            } => write!(
                f,
                "extension metadata of arrow.fixed_shape_tensor: \"{key}\" is {value}, {problem}"
            ),
            Self::NegativeLength { length } => write!(f, "ArrowArray.length is {length}"),
            Self::NegativeOffset { offset } => write!(f, "ArrowArray.offset is {offset}"),
            Self::InvalidNullCount { null_count, length } => write!(
                f,
                "ArrowArray.null_count is {null_count}, outside -1..={length}"
            ),
            Self::BufferCount { expected, found } => {
                write!(f, "ArrowArray.n_buffers is {found}, the type needs {expected}")
            }
            Self::TooManyBuffers { n_buffers } => write!(
                f,
                "ArrowArray.n_buffers is {n_buffers}, more than a buffers array can hold"
            ),
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
            Self::SchemaMismatch => f.write_str(
                "the array was imported or built for another schema than the one it is viewed with",
            ),
            Self::InvalidSource { reason } => write!(f, "invalid schema source: {reason}"),
            Self::DeviceMismatch { stream, array } => {
                write!(f, "a stream of {stream:?} produced an array on {array:?}")
            }
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotHostAccessible { device_type } => write!(
                f,
                "the buffers are on {device_type:?} or wait on a sync_event, not readable by the host"
            ),
            Self::TypeMismatch { format, requested } => write!(
                f,
                "the array's format is {format:?}, the requested type is {requested:?}"
            ),
            Self::Misaligned { index } => write!(f, "buffers[{index}] is not aligned for the type"),
        }
    }
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NullsPresent { null_count } => {
                write!(f, "the array has nulls (null_count {null_count})")
            }
            Self::DictionaryEncoded => {
                f.write_str("the array is dictionary-encoded: its buffers hold indices, not values")
            }
            Self::UnsupportedType { format } => {
                write!(f, "the Arrow type {format:?} has no DLPack equivalent")?;
                if format.as_bytes().starts_with(b"+w:") {
                    // A fixed-size list is a tensor only when its field says so.
                    f.write_str(
                        "; a fixed-size list is a tensor only as the arrow.fixed_shape_tensor \
                         extension type, and this field has no ARROW:extension:name of \
                         \"arrow.fixed_shape_tensor\" (with ARROW:extension:metadata \
                         {\"shape\": [...]})",
                    )?;
                }
                Ok(())
            }
            Self::UnsupportedDtype { dtype } => {
                write!(f, "the DLPack type {dtype} has no Arrow equivalent")
            }
            Self::NotContiguous => f.write_str("the tensor is not compact row-major"),
            Self::ZeroDims => f.write_str("a 0-d tensor has no Arrow length"),
            Self::OffsetNotRepresentable { offset } => {
                write!(f, "the offset {offset} cannot be carried to the other side")
            }
            Self::Misaligned => {
                f.write_str("the values buffer is not aligned for the element type")
            }
            Self::PendingEvent => {
                f.write_str("the device array has a pending sync_event; wait on it before bridging")
            }
            Self::EventNotAttachable => f.write_str(
                "a sync_event attaches only to a device array that has none (and never to CPU data)",
            ),
            Self::DeviceNotInArrow { device_type } => {
                write!(f, "the device type {device_type:?} has no Arrow value")
            }
            Self::DeviceIdOutOfRange { device_id } => {
                write!(f, "the device id {device_id} does not fit DLPack's int32_t")
            }
            Self::Arrow(error) => fmt::Display::fmt(error, f),
            Self::Tensor(error) => write!(f, "DLPack: {error}"),
        }
    }
}

impl fmt::Display for ArrowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Validation(error) => fmt::Display::fmt(error, f),
            Self::Read(error) => fmt::Display::fmt(error, f),
            Self::Bridge(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for ValidationError {}
impl core::error::Error for ReadError {}

impl core::error::Error for BridgeError {}

/// Transparent: the message is the inner error's, and so is the source.
impl core::error::Error for ArrowError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Validation(error) => error.source(),
            Self::Read(error) => error.source(),
            Self::Bridge(error) => error.source(),
        }
    }
}
