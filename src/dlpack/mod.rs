//! The safe DLPack layer: import of foreign tensors, and zero-copy export of Rust memory.
//!
//! **Import.** A producer (C, C++, Python through a capsule, another Rust crate) hands over a
//! `DLManagedTensorVersioned*` or a legacy `DLManagedTensor*`. [`VersionedTensor::from_raw`] and
//! [`LegacyTensor::from_raw`] take ownership, check the version and validate every field before
//! anything is used, and call the deleter exactly once: on drop, or at once when the tensor is
//! refused. [`TensorView`] then exposes the validated description, and typed access
//! ([`TensorView::as_slice`], [`TensorView::get`], [`TensorView::iter`],
//! [`VersionedTensor::as_mut_slice`]) reads the elements as [`Element`] types with `bytemuck`.
//! Converting reads ([`TensorView::iter_as`], and `TensorView::to_vec_as` with `alloc`) read
//! any dtype that converts losslessly into one type ([`ReadAs`]), and
//! [`dispatch_dtype!`](crate::dispatch_dtype) runs one generic body for the element type a
//! tensor holds. Import never allocates.
//!
//! **Borrowed tensors** (no `alloc`). A kernel called with a bare `DLTensor*` validates it by the
//! same rules with [`TensorView::from_raw`] (an input) or [`TensorViewMut::from_raw`] (an
//! output it writes); nothing is owned, so nothing is freed. The other way, [`BorrowedTensor`]
//! and [`BorrowedTensorMut`] lend a `&[T]` or `&mut [T]` to C as a `DLTensor` whose shape and
//! strides live inline, refusing any description that reaches outside the slice.
//!
//! **Export** (feature `alloc`). `Export` turns a `Vec<T>`, `Box<[T]>` or `Arc<[T]>` into a
//! tensor without copying it, and `ManagedTensor::from_owner` does the same for any
//! `TensorOwner`. The owner, the managed struct and the shape/strides arrays share one
//! allocation, which the deleter frees after dropping the owner. Every export is checked: the
//! description as an import would check it, and every byte it reaches against the owner's
//! buffer. `LegacyTensor::into_versioned`
//! and `VersionedTensor::into_legacy` adapt between the two structs.
//!
//! # What import checks
//!
//! | field | rule | error |
//! |---|---|---|
//! | pointer | non-NULL | [`ImportError::NullTensor`] |
//! | `version.major` | 1 (any minor); otherwise only the deleter is touched | [`ImportError::UnsupportedVersion`] |
//! | `ndim` | `0..=MAX_NDIM` | [`ImportError::NegativeNdim`], [`ImportError::TooManyDims`] |
//! | `dtype` | `lanes >= 1`, `bits >= 1`, FP4 `bits == 4`, FP6 `bits == 6` | [`ImportError::ZeroLanes`], [`ImportError::ZeroBits`], [`ImportError::SubByteBits`] |
//! | `shape` | non-NULL when `ndim > 0`, extents `>= 0` | [`ImportError::NullShape`], [`ImportError::NegativeExtent`] |
//! | size | elements and bytes (zero extents counted as one) fit in `isize` | [`ImportError::SizeOverflow`] |
//! | `strides` | NULL only for legacy tensors, versions before 1.2, or `ndim == 0` | [`ImportError::NullStrides`] |
//! | `byte_offset` | `data + byte_offset` does not overflow | [`ImportError::ByteOffsetOverflow`] |
//! | `data` | NULL only when there are no elements | [`ImportError::NullData`] |
//! | reach | the bytes reachable through the strides (negative ones too) lie in the address space and span at most `isize::MAX`; without strides, the compact extent ends inside the address space | [`ImportError::StridesOverflow`], [`ImportError::AddressOverflow`] |
//!
//! Unknown device types, dtype codes and flag bits are kept and reported; only typed access
//! refuses them.
//!
//! ```
//! # #[cfg(feature = "alloc")] {
//! use dlpack_abi::dlpack::{Export, VersionedTensor};
//!
//! // Export a Vec (zero-copy): a C consumer would get this pointer.
//! let raw = Export::new(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).finish()?.into_raw();
//! // Import it as a consumer does: validated first; the deleter runs when `tensor` drops.
//! // SAFETY: `raw` is a live tensor whose deleter has not run, handed over to `from_raw`.
//! let tensor = unsafe { VersionedTensor::from_raw(raw) }?;
//! let view = tensor.view();
//! assert_eq!(view.shape(), [2, 2]);
//! assert_eq!(view.get::<f32>(&[1, 0])?, 3.0);
//! # }
//! # Ok::<(), dlpack_abi::dlpack::TensorError>(())
//! ```

// Patterns name the C constants (`kDLCPU`, ...).
#![allow(non_upper_case_globals)]

#[cfg(feature = "alloc")]
mod adapt;
#[cfg(feature = "alloc")]
mod aligned;
mod borrowed;
mod convert;
mod description;
mod device_ptr;
mod element;
mod error;
#[cfg(feature = "alloc")]
mod export;
mod extent;
#[cfg(feature = "alloc")]
mod host;
mod host_slice;
mod lend;
mod managed;
mod meta;
#[cfg(feature = "alloc")]
mod placed;
#[cfg(feature = "alloc")]
mod runtime;
mod stream;
mod strides;
mod tracking;
mod validate;
mod view;

#[cfg(feature = "alloc")]
pub use adapt::IntoLegacyError;
#[cfg(feature = "alloc")]
pub use aligned::{AlignedVec, HOST_ALIGNMENT};
pub use borrowed::TensorViewMut;
pub use convert::{ElementsAs, ReadAs};
pub use description::{Dims, TensorDescription};
pub(crate) use element::assert_size_matches;
pub use element::{Bool8, Element};
pub use error::{AccessError, ExportError, ImportError, TensorError};
#[cfg(feature = "alloc")]
pub use export::TensorOwner;
pub use extent::MemoryExtent;
#[cfg(feature = "alloc")]
pub use host::{Export, HostBuffer, HostMemory};
pub use host_slice::HostSlice;
pub use lend::{BorrowedTensor, BorrowedTensorMut, DLTensorMut, DLTensorRef};
pub use managed::{
    call_deleter, flagless_representable, LegacyTensor, ManagedStruct, ManagedTensor, Validated,
    VersionedTensor,
};
#[cfg(feature = "alloc")]
pub use runtime::{
    canonical_stream, work_stream, OnStream, RuntimeEvent, StreamReady, StreamRuntime,
};
pub use stream::{ConsumerStream, ConsumerStreamError, DeviceEvent, OrderError, StreamOrder};
pub use strides::Strides;
pub use tracking::{HookInstalled, ReleaseHook};
pub use validate::compact_byte_size;
#[cfg(fuzzing)]
#[doc(hidden)]
pub use validate::fuzzing;
#[cfg(feature = "alloc")]
pub(crate) use validate::{element_size, row_major_stride};
pub use view::{Elements, ElementsMut, TensorView};

/// The most dimensions an imported tensor may have (NumPy's limit). Larger `ndim` values are
/// refused with [`ImportError::TooManyDims`].
///
/// ```
/// assert_eq!(dlpack_abi::dlpack::MAX_NDIM, 64);
/// ```
pub const MAX_NDIM: usize = 64;
