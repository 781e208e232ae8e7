//! The safe Arrow layer: the C Data, Stream and Device interfaces, and (feature `alloc`)
//! producers and the zero-copy bridge to DLPack.
//!
//! **Ownership.** [`Schema`], [`Array`], [`DeviceArray`], [`ArrayStream`] and
//! [`DeviceArrayStream`] own one base struct each and call its `release` exactly once, on drop.
//! `from_raw` moves a producer's struct as the C Data Interface says (a bitwise copy, then the
//! source's `release` set to NULL without calling it), refuses an already released one, and
//! never touches the `release` of children or dictionaries, which only their base struct's
//! `release` frees. `into_raw` and `export_to` (a `ptr::write` into a consumer's struct) give
//! ownership away.
//!
//! **Validation.** Import checks everything that can be checked without reading the data, and
//! releases the struct before returning any error:
//!
//! | what | rule | error |
//! |---|---|---|
//! | pointer, `release` | non-NULL | [`ValidationError::NullPointer`], [`ValidationError::Released`] |
//! | tree | depth at most [`MAX_DEPTH`], at most [`MAX_NODES`] nodes (cycles end here) | [`ValidationError::TooDeep`], [`ValidationError::TooManyNodes`] |
//! | `format` | non-NULL, a format string of the C Data Interface | [`ValidationError::NullFormat`], [`ValidationError::InvalidFormat`] |
//! | `name` | NULL or UTF-8 | [`ValidationError::NameNotUtf8`] |
//! | `metadata` | counts and lengths non-negative, keys UTF-8, within a slice's end ([`Metadata::parse`]) | [`ValidationError::Metadata`] |
//! | children | count fits the type and the node budget, pointers non-NULL, not released | [`ValidationError::ChildCount`], [`ValidationError::TooManyNodes`], [`ValidationError::NullChildren`], [`ValidationError::NullChild`], [`ValidationError::ReleasedChild`] |
//! | `arrow.fixed_shape_tensor` | fixed-size list storage; metadata that is JSON, with `shape` whose product is the list size, and a valid `permutation` (or `permutations`) and `dim_names` when present and not `null` ([`TensorShape::parse`]) | [`ValidationError::ExtensionMetadata`], [`ValidationError::TensorJson`], [`ValidationError::TensorParameterMissing`], [`ValidationError::TensorParameter`] |
//! | `length`, `offset`, `null_count` | `>= 0`, `>= 0`, `-1..=length`; `offset + length` and buffer sizes fit `isize` | [`ValidationError::NegativeLength`], [`ValidationError::NegativeOffset`], [`ValidationError::InvalidNullCount`], [`ValidationError::SizeOverflow`] |
//! | `n_buffers` | the type's layout (view types: at least 3, and an array of that many pointers fits the address space) | [`ValidationError::BufferCount`], [`ValidationError::TooManyBuffers`] |
//! | buffers | non-NULL `buffers`; validity present when there are nulls; fixed-width data present when there are values | [`ValidationError::NullBuffers`], [`ValidationError::NullBuffer`] |
//! | children | as many as the schema's, long enough for a fixed-size list or struct parent | [`ValidationError::ChildCount`], [`ValidationError::ChildTooShort`] |
//! | dictionary | an integer index type; present in the array iff the schema has one; not released | [`ValidationError::DictionaryIndex`], [`ValidationError::DictionaryMismatch`], [`ValidationError::ReleasedDictionary`] |
//!
//! A C pointer to metadata carries no length: its extent is the producer's promise, like every
//! other pointer it hands over; [`Metadata::parse`] on a byte slice checks it against the end.
//!
//! **Binding.** Buffers carry no lengths: their sizes follow from the type the producer meant.
//! An array therefore remembers the schema it was imported with (or, for arrays this crate
//! built, their exact layout), and [`Array::view`] refuses any other ([`ValidationError::SchemaMismatch`]).
//!
//! **Access.** [`ArrayView`] reads lengths, buffers and children; typed slices
//! ([`ArrayView::values`], [`ArrayView::validity`], [`ArrayView::booleans`]) need host memory
//! and no pending `sync_event` ([`ReadError`]).
//!
//! **Errors** are split by contract: [`ValidationError`] (the structs), [`ReadError`] (typed
//! reads), [`BridgeError`] (DLPack <-> Arrow), [`StreamError`] (a stream's item), and the
//! umbrella [`ArrowError`] for `?` across them.
//!
//! ```
//! # #[cfg(feature = "alloc")] {
//! use dlpack_abi::arrow::{Array, Schema, SchemaDef};
//!
//! // Export: a Vec becomes an int32 array without a copy; the schema says its type.
//! let mut c_schema = SchemaDef::new("i")?.with_name("n").export()?.into_raw();
//! let mut c_array = Array::from_vec(vec![1i32, 2, 3])?.into_raw();
//! // Import, as a consumer of the two C structs: validated, released exactly once on drop.
//! // SAFETY: both structs are live and owned here; `from_raw` moves them out.
//! let schema = unsafe { Schema::from_raw(&mut c_schema) }?;
//! let array = unsafe { Array::from_raw(&mut c_array, schema.view()) }?;
//! assert_eq!(array.view(schema.view())?.values::<i32>()?, [1, 2, 3]);
//! # }
//! # Ok::<(), dlpack_abi::arrow::ArrowError>(())
//! ```

// Patterns name the C constants (`kDLCPU`, ...).
#![allow(non_upper_case_globals)]

mod array;
mod binding;
#[cfg(feature = "alloc")]
mod bridge;
mod device;
mod error;
#[cfg(feature = "alloc")]
mod event;
#[cfg(feature = "alloc")]
mod export;
mod extension;
mod format;
mod json;
mod metadata;
mod owned;
#[cfg(feature = "alloc")]
mod produce;
mod schema;
mod stream;

pub mod errno;

pub use array::{Array, ArrayView, Bitmap};
pub use device::{arrow_device, dlpack_device, DeviceArray, HostWait, StreamWait};
pub use error::{ArrowError, BridgeError, Excerpt, MetadataError, ReadError, ValidationError};
#[cfg(feature = "alloc")]
pub use export::{ArrayParts, SchemaDef};
pub use extension::{
    ParameterProblem, TensorKey, TensorShape, BOOL8, EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY,
    FIXED_SHAPE_TENSOR,
};
pub use format::{DataType, IntervalUnit, TimeUnit, UnionMode};
pub use metadata::{Metadata, MetadataIter};
#[cfg(feature = "alloc")]
pub use produce::SchemaSource;
pub use schema::{Schema, SchemaRef};
pub use stream::{
    ArrayStream, DeviceArrayStream, ProducerError, Stream, StreamError, StreamStruct,
};
#[cfg(feature = "std")]
pub use stream::{AsyncConsumer, AsyncHandler, AsyncStreamError};
#[cfg(feature = "alloc")]
pub use stream::{AsyncProducer, AsyncState};

/// The deepest schema or array tree import accepts (nesting levels below the root).
///
/// ```
/// use dlpack_abi::arrow::MAX_DEPTH;
///
/// assert_eq!(MAX_DEPTH, 64);
/// ```
pub const MAX_DEPTH: usize = 64;

/// The most nodes (the root, children and dictionaries) in a schema or array tree import
/// accepts: a bound on the work a malicious tree (shared nodes, cycles) can cause.
///
/// ```
/// use dlpack_abi::arrow::MAX_NODES;
///
/// assert_eq!(MAX_NODES, 1 << 20);
/// ```
pub const MAX_NODES: usize = 1 << 20;
