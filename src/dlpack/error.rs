//! The one error type of the safe DLPack layer.

use core::fmt;

use crate::raw::{DLDataType, DLDevice, DLPackFlags, DLPackVersion};

/// Why a foreign tensor was refused at import, why a typed access was refused, or why an export
/// could not be built.
///
/// Every message names the offending field and its value. Import errors are returned after the
/// producer's deleter has run (exactly once); access errors leave the tensor untouched; export
/// errors are returned after the owner has been dropped (exactly once).
///
/// ```
/// use dlpack_abi::dlpack::{TensorError, MAX_NDIM};
///
/// let error = TensorError::TooManyDims { ndim: 65 };
/// assert_eq!(error.to_string(), format!("DLTensor.ndim is 65, above the maximum of {MAX_NDIM}"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TensorError {
    // ---- import: the managed struct ----
    /// The pointer handed over was NULL (there is nothing to import and no deleter to call).
    NullTensor,
    /// `version.major` is not 1: nothing but the version and the deleter was read.
    UnsupportedVersion {
        /// The version the producer wrote.
        found: DLPackVersion,
    },

    // ---- import: DLTensor ----
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
    /// The product of the extents (zero extents counted as one), in elements or in bytes, does
    /// not fit in `isize`.
    SizeOverflow {
        /// The `shape` array.
        dims: ShapeSummary,
    },
    /// `strides` is NULL although `ndim > 0` and the producer's version is 1.2 or later.
    NullStrides {
        /// The value of `ndim`.
        ndim: i32,
        /// The producer's version.
        version: DLPackVersion,
    },
    /// Going through `strides` up to `dim` reaches bytes outside the address space, or spans more
    /// than `isize::MAX` bytes.
    StridesOverflow {
        /// The first dimension at which the reachable byte range left the address space.
        dim: usize,
        /// `strides[dim]`.
        stride: i64,
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

    // ---- typed access ----
    /// The memory is not host-accessible (typed access needs `kDLCPU`, `kDLCUDAHost`,
    /// `kDLROCMHost` or `kDLCUDAManaged`).
    NotHostAccessible {
        /// The tensor's device.
        device: DLDevice,
    },
    /// The requested Rust type does not describe the tensor's dtype.
    DtypeMismatch {
        /// The dtype of the requested Rust type.
        requested: DLDataType,
        /// The tensor's dtype.
        found: DLDataType,
    },
    /// The tensor's flags carry bits this crate does not know, which may change their meaning.
    UnknownFlags {
        /// The whole flags word.
        flags: DLPackFlags,
    },
    /// The first element's address is not aligned for the requested type.
    Misaligned {
        /// The address of the first element (`data + byte_offset`).
        address: usize,
        /// The alignment the type needs.
        align: usize,
    },
    /// A slice was requested but the tensor is not contiguous in the required order.
    NotContiguous,
    /// Mutable access to a tensor whose `READ_ONLY` flag is set.
    ReadOnly,
    /// An index with the wrong number of coordinates.
    IndexRank {
        /// The tensor's `ndim`.
        ndim: usize,
        /// The number of coordinates given.
        given: usize,
    },
    /// A coordinate outside its dimension.
    IndexOutOfBounds {
        /// The dimension.
        dim: usize,
        /// The coordinate given.
        index: usize,
        /// `shape[dim]`.
        extent: i64,
    },

    // ---- export ----
    /// The strides given for an export do not have one entry per dimension.
    StridesLength {
        /// The number of dimensions (`shape.len()`).
        ndim: usize,
        /// The number of strides given.
        strides: usize,
    },
    /// The elements an export's shape, strides and offset reach are not all inside its buffer.
    OutsideBuffer {
        /// The lowest element index reached (negative: before the buffer's start).
        first: i128,
        /// The highest element index reached.
        last: i128,
        /// The number of elements in the buffer.
        len: usize,
    },
    /// The legacy `DLManagedTensor` has no flags word, so these flags cannot be carried.
    FlagsNotRepresentable {
        /// The flags that would be lost.
        flags: DLPackFlags,
    },
    /// A `TensorOwner` (feature `alloc`) described a different number of dimensions than its
    /// `ndim()` announced.
    NdimChanged {
        /// What `ndim()` returned (the allocation was sized for it).
        announced: usize,
        /// The length of the shape `describe()` returned.
        described: usize,
    },
}

/// The first extents of a shape, kept in an error without allocating.
///
/// ```
/// use dlpack_abi::dlpack::ShapeSummary;
///
/// let shape = ShapeSummary::new(&[1 << 40, 1 << 40]);
/// assert_eq!(shape.to_string(), "[1099511627776, 1099511627776]");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ShapeSummary {
    first: [i64; ShapeSummary::KEPT],
    ndim: usize,
}

impl ShapeSummary {
    /// How many extents are kept; longer shapes print `, ...` after them.
    ///
    /// ```
    /// use dlpack_abi::dlpack::ShapeSummary;
    ///
    /// assert_eq!(ShapeSummary::KEPT, 4);
    /// assert_eq!(ShapeSummary::new(&[1, 2, 3, 4, 5]).to_string(), "[1, 2, 3, 4, ...]");
    /// ```
    pub const KEPT: usize = 4;

    /// Keeps the first [`KEPT`](Self::KEPT) extents of `shape` and its length.
    ///
    /// ```
    /// use dlpack_abi::dlpack::ShapeSummary;
    ///
    /// assert_eq!(ShapeSummary::new(&[]).to_string(), "[]");
    /// ```
    pub fn new(shape: &[i64]) -> Self {
        let mut first = [0; Self::KEPT];
        for (kept, &extent) in first.iter_mut().zip(shape) {
            *kept = extent;
        }
        Self {
            first,
            ndim: shape.len(),
        }
    }
}

impl fmt::Display for ShapeSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, extent) in self.first.iter().take(self.ndim).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{extent}")?;
        }
        if self.ndim > Self::KEPT {
            f.write_str(", ...")?;
        }
        f.write_str("]")
    }
}

impl fmt::Debug for ShapeSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use TensorError::*;
        match *self {
            NullTensor => f.write_str("the managed tensor pointer is NULL"),
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
            NullShape { ndim } => write!(f, "DLTensor.shape is NULL but DLTensor.ndim is {ndim}"),
            NegativeExtent { dim, extent } => {
                write!(f, "DLTensor.shape[{dim}] is {extent}, which is negative")
            }
            SizeOverflow { dims } => write!(
                f,
                "DLTensor.shape {dims} describes more elements or bytes than fit in isize"
            ),
            NullStrides { ndim, version } => write!(
                f,
                "DLTensor.strides is NULL with DLTensor.ndim {ndim}; producers of version {}.{} \
                 (1.2 or later) must send strides",
                version.major, version.minor
            ),
            StridesOverflow { dim, stride } => write!(
                f,
                "DLTensor.strides[{dim}] is {stride}, which reaches bytes outside the address space"
            ),
            ByteOffsetOverflow { byte_offset } => write!(
                f,
                "DLTensor.byte_offset is {byte_offset}; data + byte_offset overflows the address space"
            ),
            NullData { elements } => {
                write!(f, "DLTensor.data is NULL but the tensor has {elements} elements")
            }
            ZeroLanes { dtype } => write!(f, "DLTensor.dtype is {dtype:?}: lanes is 0"),
            ZeroBits { dtype } => write!(f, "DLTensor.dtype is {dtype:?}: bits is 0"),
            SubByteBits { dtype, expected } => write!(
                f,
                "DLTensor.dtype is {dtype:?}: this code requires bits = {expected}"
            ),
            NotHostAccessible { device } => write!(
                f,
                "DLTensor.device is {:?} (id {}), whose memory the host cannot read",
                device.device_type, device.device_id
            ),
            DtypeMismatch { requested, found } => write!(
                f,
                "DLTensor.dtype is {found:?}, but the requested type is {requested:?}"
            ),
            UnknownFlags { flags } => write!(
                f,
                "DLManagedTensorVersioned.flags is {:#x}, with bits this crate does not know",
                flags.bits()
            ),
            Misaligned { address, align } => write!(
                f,
                "data + byte_offset is {address:#x}, not aligned to the {align} bytes the type needs"
            ),
            NotContiguous => f.write_str(
                "DLTensor.strides are not contiguous in the required order; use strided access",
            ),
            ReadOnly => f.write_str(
                "DLManagedTensorVersioned.flags has READ_ONLY set; the tensor cannot be written",
            ),
            IndexRank { ndim, given } => write!(
                f,
                "the index has {given} coordinates but DLTensor.ndim is {ndim}"
            ),
            IndexOutOfBounds { dim, index, extent } => write!(
                f,
                "index {index} is out of bounds for DLTensor.shape[{dim}] = {extent}"
            ),
            StridesLength { ndim, strides } => write!(
                f,
                "{strides} strides were given for a shape of {ndim} dimensions"
            ),
            OutsideBuffer { first, last, len } => write!(
                f,
                "the shape, strides and offset reach elements {first}..={last}, outside the \
                 buffer's {len} elements"
            ),
            FlagsNotRepresentable { flags } => {
                f.write_str("DLManagedTensorVersioned.flags has ")?;
                bitflags::parser::to_writer(&flags, &mut *f)?;
                f.write_str(" set, which a legacy DLManagedTensor cannot carry")
            }
            NdimChanged {
                announced,
                described,
            } => write!(
                f,
                "the owner announced {announced} dimensions but described a shape of {described}"
            ),
        }
    }
}

impl core::error::Error for TensorError {}
