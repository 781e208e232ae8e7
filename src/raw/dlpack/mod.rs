//! `dlpack/dlpack.h` v1.3, in header order: version, device, data type, tensor, managed tensors
//! and flags, and the C exchange API.

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
