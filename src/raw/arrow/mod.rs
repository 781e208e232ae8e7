//! `arrow/c/abi.h`, one module per canonical guard block, in header order.
//!
//! The structs have no C typedefs: C code writes `struct ArrowSchema`. A struct with a `release`
//! member is released iff `release` is `None` (an [`ArrowDeviceArray`] iff `array.release` is);
//! moving one is a bitwise copy followed by setting the source's `release` to `None`.
//!
//! ```
//! # #[cfg(feature = "alloc")] {
//! use dlpack_abi::arrow::SchemaDef;
//! use dlpack_abi::raw::arrow::ArrowSchema;
//!
//! /// Moves a C struct as the C Data Interface allows: copy the bytes, mark the source released.
//! fn move_out(source: &mut ArrowSchema) -> ArrowSchema {
//!     // SAFETY: `source` is initialised; it is marked released at once, so only the copy is
//!     // ever released.
//!     let moved = unsafe { core::ptr::read(source) };
//!     source.release = None;
//!     moved
//! }
//! let mut source = SchemaDef::new("u")?.export()?.into_raw();
//! let mut moved = move_out(&mut source);
//! assert!(source.release.is_none() && moved.release.is_some());
//! // SAFETY: `moved` is live and owned here; it is released exactly once.
//! unsafe { moved.release.unwrap()(&mut moved) };
//! # }
//! # Ok::<(), dlpack_abi::arrow::ArrowError>(())
//! ```

mod c_async_stream;
mod c_data;
mod c_device_data;
mod c_device_stream;
mod c_stream;

pub use c_async_stream::*;
pub use c_data::*;
pub use c_device_data::*;
pub use c_device_stream::*;
pub use c_stream::*;
