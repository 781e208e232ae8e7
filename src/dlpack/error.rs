//! The errors of the safe DLPack layer, one type per contract: [`ImportError`] (validation of a
//! tensor's description), [`AccessError`] (typed access), [`ExportError`] (building an export),
//! and [`TensorError`], which each of them converts into, so that `?` works across contracts.

use core::fmt;

use crate::raw::{DLDataType, DLDevice, DLPackFlags, DLPackVersion};

/// Why a tensor's description was refused: at import (after the producer's deleter has run,
/// exactly once), or inside an export's [`ExportError::Invalid`].
///
/// Every message names the offending field and its value.
///
/// ```
/// use dlpack_abi::dlpack::{ImportError, MAX_NDIM};
///
/// let error = ImportError::TooManyDims { ndim: 65 };
/// assert_eq!(error.to_string(), format!("DLTensor.ndim is 65, above the maximum of {MAX_NDIM}"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImportError {
    // ---- the managed struct ----
    /// The pointer handed over was NULL (there is nothing to import and no deleter to call).
    NullTensor,
    /// `version.major` is not 1: nothing but the version and the deleter was read.
    UnsupportedVersion {
        /// The version the producer wrote.
        found: DLPackVersion,
    },

    // ---- DLTensor ----
    /// `ndim` is negative.
    NegativeNdim {
        /// The value found.
        ndim: i32,
    },
    /// `ndim` is above [`MAX_NDIM`](super::MAX_NDIM).
    TooManyDims {
        /// The value found.
        ndim: i32,
    },
    /// `dtype.lanes` is zero.
    ZeroLanes {
        /// The dtype found.
        dtype: DLDataType,
    },
    /// `dtype.bits` is zero.
    ZeroBits {
        /// The dtype found.
        dtype: DLDataType,
    },
    /// A sub-byte code (FP4, FP6) with a bit width other than the one the spec fixes.
    SubByteBits {
        /// The dtype found.
        dtype: DLDataType,
        /// The width the spec requires for this code.
        expected: u8,
    },
    /// `shape` is NULL although `ndim > 0`.
    NullShape {
        /// The value of `ndim`.
        ndim: i32,
    },
    /// `shape[dim]` is negative.
    NegativeExtent {
        /// The dimension.
        dim: usize,
        /// The value found.
        extent: i64,
    },
    /// The product of the extents from `shape[dim]` to the last (zero extents counted as one),
    /// in elements or in bytes, does not fit in `isize`.
    SizeOverflow {
        /// The dimension at which the product overflowed.
        dim: usize,
        /// `shape[dim]`.
        extent: i64,
    },
    /// `strides` is NULL although `ndim > 0` and the producer's version is 1.2 or later.
    NullStrides {
        /// The value of `ndim`.
        ndim: i32,
        /// The producer's version.
        version: DLPackVersion,
    },
    /// `data + byte_offset` overflows the address space.
    ByteOffsetOverflow {
        /// The value of `byte_offset`.
        byte_offset: u64,
    },
    /// `data` is NULL although the tensor has elements.
    NullData {
        /// The number of elements.
        elements: usize,
    },
    /// Going through `strides` up to `dim` reaches bytes outside the address space, or spans more
    /// than `isize::MAX` bytes.
    StridesOverflow {
        /// The first dimension at which the reachable byte range left the address space.
        dim: usize,
        /// `strides[dim]`.
        stride: i64,
    },
    /// A tensor without `strides` (compact row-major) whose bytes, from `data + byte_offset`,
    /// run past the end of the address space.
    AddressOverflow {
        /// `data + byte_offset`.
        address: usize,
        /// The tensor's size in bytes.
        byte_size: usize,
    },
}

/// Why typed access ([`TensorView::as_slice`](super::TensorView::as_slice) and friends) was
/// refused. The tensor is untouched.
///
/// ```
/// use dlpack_abi::dlpack::AccessError;
///
/// let error = AccessError::Misaligned { address: 0x1002, align: 4 };
/// assert_eq!(
///     error.to_string(),
///     "data + byte_offset is 0x1002, not aligned to the 4 bytes the type needs"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AccessError {
    /// The memory is not host-accessible (typed access needs `kDLCPU`, `kDLCUDAHost`,
    /// `kDLROCMHost` or `kDLCUDAManaged`).
    NotHostAccessible {
        /// The tensor's device.
        device: DLDevice,
    },
    /// The device's `data` is an opaque handle (OpenCL, Vulkan, Metal, ...), not an address
    /// device code could offset ([`TensorView::device_ptr`](super::TensorView::device_ptr)).
    NotAddressable {
        /// The tensor's device.
        device: DLDevice,
    },
    /// The tensor's flags carry bits this crate does not know, which may change their meaning.
    UnknownFlags {
        /// The whole flags word.
        flags: DLPackFlags,
    },
    /// The requested Rust type does not describe the tensor's dtype.
    DtypeMismatch {
        /// The dtype of the requested Rust type.
        requested: DLDataType,
        /// The tensor's dtype.
        found: DLDataType,
    },
    /// The tensor's dtype is none of those an operation supports: a converting read
    /// ([`TensorView::iter_as`](super::TensorView::iter_as)) or a
    /// [`dispatch_dtype!`](crate::dispatch_dtype) over element types.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{AccessError, Element};
    ///
    /// let error = AccessError::UnsupportedDtype { found: i8::DTYPE, supported: &[f32::DTYPE, f64::DTYPE] };
    /// assert_eq!(error.to_string(), "DLTensor.dtype is int8, but only float32, float64 are supported here");
    /// ```
    UnsupportedDtype {
        /// The tensor's dtype.
        found: DLDataType,
        /// The dtypes the operation supports.
        supported: &'static [DLDataType],
    },
    /// The first element's address is not aligned for the requested type.
    Misaligned {
        /// The address of the first element (`data + byte_offset`).
        address: usize,
        /// The alignment the type needs.
        align: usize,
    },
    /// A slice was requested but the tensor is not contiguous in the required order. Strided
    /// access takes any layout: [`TensorView::iter`](super::TensorView::iter) and `get` to
    /// read, [`TensorViewMut::iter_mut`](super::TensorViewMut::iter_mut), `get_mut` and `set`
    /// to write.
    ///
    /// ```
    /// use dlpack_abi::dlpack::AccessError;
    ///
    /// assert!(AccessError::NotContiguous.to_string().contains("iter_mut"));
    /// ```
    NotContiguous,
    /// Mutable access to a tensor whose `READ_ONLY` flag is set.
    ReadOnly,
    /// Safe mutable access to a tensor this consumer does not own exclusively: only tensors
    /// marked `IS_COPIED`, and exports of uniquely owned Rust buffers, may be written through a
    /// safe `&mut` (a producer may hand the same memory to others).
    NotExclusive,
    /// An index with the wrong number of coordinates.
    IndexRank {
        /// The tensor's `ndim`.
        ndim: usize,
        /// The number of coordinates given.
        given: usize,
    },
    /// A view with a fixed number of dimensions was requested for a tensor with another.
    DimensionMismatch {
        /// The tensor's `ndim`.
        ndim: usize,
        /// The number of dimensions the requested view has.
        expected: usize,
    },
    /// Mutable access through strides that may reach one element from two indices (a zero
    /// stride, or interleaving ones; the check is conservative, as ndarray's is): a mutable view
    /// or [`iter_mut`](super::TensorViewMut::iter_mut) could alias. One element at a time
    /// ([`TensorViewMut::get_mut`](super::TensorViewMut::get_mut), `set`) takes any layout.
    ///
    /// ```
    /// use dlpack_abi::dlpack::AccessError;
    ///
    /// assert!(AccessError::Overlapping.to_string().contains("get_mut"));
    /// ```
    Overlapping,
    /// A coordinate outside its dimension.
    IndexOutOfBounds {
        /// The dimension.
        dim: usize,
        /// The coordinate given.
        index: usize,
        /// `shape[dim]`.
        extent: i64,
    },
}

/// Why an export ([`Export`](super::Export), `from_owner`, the adapters) was refused. The owner
/// has been dropped, exactly once, when this is returned.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::{Export, ExportError};
///
/// // Three bytes cannot hold a 2 x 2 tensor of u8.
/// let error = Export::new(vec![1u8, 2, 3], &[2, 2]).finish().unwrap_err();
/// assert_eq!(error, ExportError::OutsideBuffer { first: 0, end: 4, len: 3 });
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportError {
    /// The description is refused as an import would refuse it.
    Invalid(ImportError),
    /// The strides given do not have one entry per dimension.
    StridesLength {
        /// The number of dimensions (`shape.len()`).
        ndim: usize,
        /// The number of strides given.
        strides: usize,
    },
    /// The bytes the shape, strides and offset reach are not all inside the buffer.
    OutsideBuffer {
        /// The first byte reached, counted from the buffer's start (negative: before it).
        first: i64,
        /// One past the last byte reached.
        end: i64,
        /// The buffer's length in bytes.
        len: usize,
    },
    /// The legacy `DLManagedTensor` and the bare `DLTensor` have no flags word, so these flags
    /// cannot be carried.
    FlagsNotRepresentable {
        /// The flags that would be lost.
        flags: DLPackFlags,
    },
    /// A `TensorOwner` described a different number of dimensions than its `ndim()` announced.
    NdimChanged {
        /// What `ndim()` returned (the allocation was sized for it).
        announced: usize,
        /// The length of the shape `describe()` returned.
        described: usize,
    },
    /// A borrowed tensor's inline storage has room for fewer dimensions than described (see
    /// [`BorrowedTensor`](super::BorrowedTensor)).
    Capacity {
        /// The number of dimensions described.
        ndim: usize,
        /// The room for dimensions (the type's `N`).
        capacity: usize,
    },
}

/// Any error of the safe DLPack layer: what a function that imports, reads and exports returns
/// with `?`. Each contract's error converts into it.
///
/// ```
/// use dlpack_abi::dlpack::{AccessError, TensorError};
///
/// fn first(values: &[f32]) -> Result<f32, TensorError> {
///     Ok(*values.first().ok_or(AccessError::IndexOutOfBounds { dim: 0, index: 0, extent: 0 })?)
/// }
/// assert_eq!(first(&[]), Err(TensorError::Access(AccessError::IndexOutOfBounds {
///     dim: 0, index: 0, extent: 0,
/// })));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TensorError {
    /// A description was refused by validation.
    Import(ImportError),
    /// Typed access was refused.
    Access(AccessError),
    /// An export was refused.
    Export(ExportError),
}

// Each contract's error converts into the one that wraps it.
wraps! {
    TensorError::Import(ImportError),
    TensorError::Access(AccessError),
    TensorError::Export(ExportError),
    ExportError::Invalid(ImportError),
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ImportError::*;
        match *self {
            NullTensor => f.write_str("the tensor pointer is NULL"),
            UnsupportedVersion { found } => write!(
                f,
                "DLManagedTensorVersioned.version is {}.{}; only major version 1 can be read",
                found.major, found.minor
            ),
            NegativeNdim { ndim } => write!(f, "DLTensor.ndim is {ndim}, which is negative"),
            TooManyDims { ndim } => write!(
                f,
                "DLTensor.ndim is {ndim}, above the maximum of {}",
                super::MAX_NDIM
            ),
            ZeroLanes { dtype } => write!(f, "DLTensor.dtype is {dtype}: lanes is 0"),
            ZeroBits { dtype } => write!(f, "DLTensor.dtype is {dtype}: bits is 0"),
            SubByteBits { dtype, expected } => write!(
                f,
                "DLTensor.dtype is {dtype}: this code requires bits = {expected}"
            ),
            NullShape { ndim } => write!(f, "DLTensor.shape is NULL but DLTensor.ndim is {ndim}"),
            NegativeExtent { dim, extent } => {
                write!(f, "DLTensor.shape[{dim}] is {extent}, which is negative")
            }
            SizeOverflow { dim, extent } => write!(
                f,
                "DLTensor.shape[{dim}] is {extent}: the extents from there to the last make more \
                 elements or bytes than fit in isize"
            ),
            NullStrides { ndim, version } => write!(
                f,
                "DLTensor.strides is NULL with DLTensor.ndim {ndim}; producers of version {}.{} \
                 (1.2 or later) must send strides",
                version.major, version.minor
            ),
            ByteOffsetOverflow { byte_offset } => write!(
                f,
                "DLTensor.byte_offset is {byte_offset}; data + byte_offset overflows the address space"
            ),
            NullData { elements } => {
                write!(f, "DLTensor.data is NULL but the tensor has {elements} elements")
            }
            StridesOverflow { dim, stride } => write!(
                f,
                "DLTensor.strides[{dim}] is {stride}, which reaches bytes outside the address space"
            ),
            AddressOverflow { address, byte_size } => write!(
                f,
                "data + byte_offset is {address:#x}; the tensor's {byte_size} bytes from there \
                 run past the end of the address space"
            ),
        }
    }
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use AccessError::*;
        match *self {
            NotHostAccessible { device } => write!(
                f,
                "DLTensor.device is {device}, whose memory the host cannot read"
            ),
            NotAddressable { device } => write!(
                f,
                "DLTensor.device is {device}, whose data is a handle, not an address"
            ),
            UnknownFlags { flags } => write!(
                f,
                "DLManagedTensorVersioned.flags is {:#x}, with bits this crate does not know",
                flags.bits()
            ),
            DtypeMismatch { requested, found } => write!(
                f,
                "DLTensor.dtype is {found}, but the requested type is {requested}"
            ),
            UnsupportedDtype { found, supported } => {
                write!(f, "DLTensor.dtype is {found}, but only ")?;
                for (i, dtype) in supported.iter().enumerate() {
                    let separator = if i == 0 { "" } else { ", " };
                    write!(f, "{separator}{dtype}")?;
                }
                f.write_str(" are supported here")
            }
            Misaligned { address, align } => write!(
                f,
                "data + byte_offset is {address:#x}, not aligned to the {align} bytes the type needs"
            ),
            NotContiguous => f.write_str(
                "DLTensor.strides are not contiguous in the required order, so the elements are \
                 not one slice; use strided access, which takes any layout: iter or get to \
                 read, iter_mut, get_mut or set to write",
            ),
            ReadOnly => f.write_str(
                "DLManagedTensorVersioned.flags has READ_ONLY set; the tensor cannot be written",
            ),
            NotExclusive => f.write_str(
                "the tensor is not IS_COPIED (nor a unique export of this crate), so others may \
                 hold the same memory; a pyo3 function takes a ReadwriteTensor argument to write \
                 it (checked at run time), other code the unsafe as_mut_slice_unchecked",
            ),
            IndexRank { ndim, given } => write!(
                f,
                "the index has {given} coordinates but DLTensor.ndim is {ndim}"
            ),
            DimensionMismatch { ndim, expected } => write!(
                f,
                "a view of {expected} dimensions was requested but DLTensor.ndim is {ndim}"
            ),
            Overlapping => f.write_str(
                "DLTensor.strides may reach one element from two indices (a zero stride, as a \
                 broadcast has), so the tensor cannot be viewed or iterated mutably; write it \
                 one element at a time (get_mut or set), or copy it to a compact array first",
            ),
            IndexOutOfBounds { dim, index, extent } => write!(
                f,
                "index {index} is out of bounds for DLTensor.shape[{dim}] = {extent}"
            ),
        }
    }
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ExportError::*;
        match *self {
            Invalid(error) => fmt::Display::fmt(&error, f),
            StridesLength { ndim, strides } => write!(
                f,
                "{strides} strides were given for a shape of {ndim} dimensions"
            ),
            OutsideBuffer { first, end, len } => write!(
                f,
                "the shape, strides and offset reach bytes {first}..{end}, outside the buffer's \
                 {len} bytes"
            ),
            FlagsNotRepresentable { flags } => {
                f.write_str("DLManagedTensorVersioned.flags has ")?;
                bitflags::parser::to_writer(&flags, &mut *f)?;
                f.write_str(
                    " set, which a legacy DLManagedTensor cannot carry (nor a bare DLTensor)",
                )
            }
            NdimChanged {
                announced,
                described,
            } => write!(
                f,
                "the owner announced {announced} dimensions but described a shape of {described}"
            ),
            Capacity { ndim, capacity } => write!(
                f,
                "{ndim} dimensions do not fit in a borrowed tensor with room for {capacity}"
            ),
        }
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Import(error) => fmt::Display::fmt(error, f),
            Self::Access(error) => fmt::Display::fmt(error, f),
            Self::Export(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for ImportError {}
impl core::error::Error for AccessError {}

/// Transparent: the message is the inner error's, and so is the source.
impl core::error::Error for ExportError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Invalid(error) => error.source(),
            _ => None,
        }
    }
}

/// Transparent: the message is the inner error's, and so is the source.
impl core::error::Error for TensorError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Import(error) => error.source(),
            Self::Access(error) => error.source(),
            Self::Export(error) => error.source(),
        }
    }
}
