//! The safe DLPack layer: import of foreign tensors, and zero-copy export of Rust memory.
//!
//! **Import.** A producer (C, C++, Python through a capsule, another Rust crate) hands over a
//! `DLManagedTensorVersioned*` or a legacy `DLManagedTensor*`. [`VersionedTensor::from_raw`] and
//! [`LegacyTensor::from_raw`] take ownership, check the version and validate every field before
//! anything is used, and call the deleter exactly once: on drop, or at once when the tensor is
//! refused. [`TensorView`] then exposes the validated description, and typed access
//! ([`TensorView::as_slice`], [`TensorView::get`], [`TensorView::iter`],
//! [`VersionedTensor::as_mut_slice`]) reads the elements as [`Element`] types with `bytemuck`.
//! Import never allocates.
//!
//! **Export** (feature `alloc`). `Export` turns a `Vec<T>`, `Box<[T]>` or `Arc<[T]>` into a
//! tensor without copying it, and `ManagedTensor::from_owner` does the same for any
//! `TensorOwner`. The owner, the managed struct and the shape/strides arrays share one
//! allocation, which the deleter frees after dropping the owner. `LegacyTensor::into_versioned`
//! and `VersionedTensor::into_legacy` adapt between the two structs.
//!
//! # What import checks
//!
//! | field | rule | error |
//! |---|---|---|
//! | pointer | non-NULL | [`TensorError::NullTensor`] |
//! | `version.major` | 1 (any minor); otherwise only the deleter is touched | [`TensorError::UnsupportedVersion`] |
//! | `ndim` | `0..=MAX_NDIM` | [`TensorError::NegativeNdim`], [`TensorError::TooManyDims`] |
//! | `dtype` | `lanes >= 1`, `bits >= 1`, FP4 `bits == 4`, FP6 `bits == 6` | [`TensorError::ZeroLanes`], [`TensorError::ZeroBits`], [`TensorError::SubByteBits`] |
//! | `shape` | non-NULL when `ndim > 0`, extents `>= 0` | [`TensorError::NullShape`], [`TensorError::NegativeExtent`] |
//! | size | elements and bytes (zero extents counted as one) fit in `isize` | [`TensorError::SizeOverflow`] |
//! | `strides` | NULL only for legacy tensors, versions before 1.2, or `ndim == 0` | [`TensorError::NullStrides`] |
//! | `byte_offset` | `data + byte_offset` does not overflow | [`TensorError::ByteOffsetOverflow`] |
//! | `data` | NULL only when there are no elements | [`TensorError::NullData`] |
//! | reach | the bytes reachable through the strides (negative ones too) lie in the address space and span at most `isize::MAX` | [`TensorError::StridesOverflow`] |
//!
//! Unknown device types, dtype codes and flag bits are kept and reported; only typed access
//! refuses them.

// Patterns name the C constants (`kDLCPU`, ...).
#![allow(non_upper_case_globals)]

#[cfg(feature = "alloc")]
mod adapt;
mod element;
mod error;
#[cfg(feature = "alloc")]
mod export;
#[cfg(feature = "alloc")]
mod host;
mod managed;
mod strides;
mod validate;
mod view;

#[cfg(feature = "alloc")]
pub use adapt::IntoLegacyError;
pub(crate) use element::assert_size_matches;
pub use element::Element;
pub use error::{ShapeSummary, TensorError};
#[cfg(feature = "alloc")]
pub use export::{TensorDescription, TensorOwner};
#[cfg(feature = "alloc")]
pub use host::{Export, HostBuffer, HostMemory};
pub use managed::{LegacyTensor, ManagedStruct, ManagedTensor, VersionedTensor};
pub use strides::Strides;
#[cfg(feature = "pyo3")]
pub(crate) use view::host_accessible;
pub use view::{Elements, TensorView};

/// The most dimensions an imported tensor may have (NumPy's limit). Larger `ndim` values are
/// refused with [`TensorError::TooManyDims`].
///
/// ```
/// assert_eq!(dlpack_abi::dlpack::MAX_NDIM, 64);
/// ```
pub const MAX_NDIM: usize = 64;
