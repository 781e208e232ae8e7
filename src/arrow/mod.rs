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
//! | pointer, `release` | non-NULL | [`ArrowError::NullPointer`], [`ArrowError::Released`] |
//! | tree | depth at most [`MAX_DEPTH`], at most [`MAX_NODES`] nodes (cycles end here) | [`ArrowError::TooDeep`], [`ArrowError::TooManyNodes`] |
//! | `format` | non-NULL, a format string of the C Data Interface | [`ArrowError::NullFormat`], [`ArrowError::InvalidFormat`] |
//! | `name` | NULL or UTF-8 | [`ArrowError::NameNotUtf8`] |
//! | `metadata` | counts and lengths non-negative, keys UTF-8, within a slice's end ([`Metadata::parse`]) | [`ArrowError::Metadata`] |
//! | children | count fits the type, pointers non-NULL, not released | [`ArrowError::ChildCount`], [`ArrowError::NullChildren`], [`ArrowError::NullChild`], [`ArrowError::ReleasedChild`] |
//! | `arrow.fixed_shape_tensor` | fixed-size list storage, JSON with `shape` whose product is the list size, a valid `permutation` | [`ArrowError::ExtensionMetadata`] |
//! | `length`, `offset`, `null_count` | `>= 0`, `>= 0`, `-1..=length`; `offset + length` and buffer sizes fit `isize` | [`ArrowError::NegativeLength`], [`ArrowError::NegativeOffset`], [`ArrowError::InvalidNullCount`], [`ArrowError::SizeOverflow`] |
//! | `n_buffers` | the type's layout (view types: at least 3) | [`ArrowError::BufferCount`] |
//! | buffers | non-NULL `buffers`; validity present when there are nulls; fixed-width data present when there are values | [`ArrowError::NullBuffers`], [`ArrowError::NullBuffer`] |
//! | children | as many as the schema's, long enough for a fixed-size list or struct parent | [`ArrowError::ChildCount`], [`ArrowError::ChildTooShort`] |
//! | dictionary | an integer index type; present in the array iff the schema has one; not released | [`ArrowError::DictionaryIndex`], [`ArrowError::DictionaryMismatch`], [`ArrowError::ReleasedDictionary`] |
//!
//! A C pointer to metadata carries no length: its extent is the producer's promise, like every
//! other pointer it hands over; [`Metadata::parse`] on a byte slice checks it against the end.
//!
//! **Binding.** Buffers carry no lengths: their sizes follow from the type the producer meant.
//! An array therefore remembers the schema it was imported with (or, for arrays this crate
//! built, their exact layout), and [`Array::view`] refuses any other ([`ArrowError::SchemaMismatch`]).
//!
//! **Access.** [`ArrayView`] reads lengths, buffers and children; typed slices
//! ([`ArrayView::values`], [`ArrayView::validity`], [`ArrayView::booleans`]) need host memory
//! and no pending `sync_event`.

// Patterns name the C constants (`kDLCPU`, ...).
#![allow(non_upper_case_globals)]

mod array;
#[cfg(feature = "alloc")]
mod async_stream;
mod binding;
#[cfg(feature = "alloc")]
mod bridge;
mod device;
mod error;
#[cfg(feature = "alloc")]
mod export;
mod extension;
mod format;
mod metadata;
mod owned;
mod schema;
mod stream;
#[cfg(feature = "alloc")]
mod stream_export;

pub mod errno;

pub use array::{Array, ArrayView, Bitmap};
#[cfg(feature = "alloc")]
pub use async_stream::{AsyncProducer, AsyncState};
pub use device::{arrow_device, dlpack_device, DeviceArray};
pub use error::{ArrowError, Excerpt, MetadataError, ProducerError, StreamError};
#[cfg(feature = "alloc")]
pub use export::{ArrayParts, SchemaDef};
pub use extension::{
    TensorShape, BOOL8, EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, FIXED_SHAPE_TENSOR,
};
pub use format::{DataType, IntervalUnit, TimeUnit, UnionMode};
pub use metadata::{Metadata, MetadataIter};
pub use schema::{Schema, SchemaRef};
pub use stream::{ArrayStream, DeviceArrayStream, Stream};

/// The deepest schema or array tree import accepts (nesting levels below the root).
pub const MAX_DEPTH: usize = 64;

/// The most nodes (the root, children and dictionaries) in a schema or array tree import
/// accepts: a bound on the work a malicious tree (shared nodes, cycles) can cause.
pub const MAX_NODES: usize = 1 << 20;
