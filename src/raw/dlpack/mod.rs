//! `dlpack/dlpack.h` v1.3, in header order: version, device, data type, tensor, managed tensors
//! and flags, and the C exchange API.
//!
//! ```
//! use core::mem::size_of;
//! use dlpack_abi::raw::dlpack::{DLManagedTensorVersioned, DLPackVersion, DLTensor};
//!
//! assert_eq!(DLPackVersion::CURRENT, DLPackVersion { major: 1, minor: 3 });
//! #[cfg(target_pointer_width = "64")]
//! assert_eq!((size_of::<DLTensor>(), size_of::<DLManagedTensorVersioned>()), (48, 80));
//! ```

mod device;
mod dtype;
mod exchange_api;
mod tensor;
mod version;

pub use device::*;
pub use dtype::*;
pub use exchange_api::*;
pub use tensor::*;
pub use version::*;
