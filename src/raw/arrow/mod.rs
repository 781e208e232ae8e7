//! `arrow/c/abi.h`, one module per canonical guard block, in header order.
//!
//! The structs have no C typedefs: C code writes `struct ArrowSchema`. A struct with a `release`
//! member is released iff `release` is `None` (an [`ArrowDeviceArray`] iff `array.release` is);
//! moving one is a bitwise copy followed by setting the source's `release` to `None`.

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
