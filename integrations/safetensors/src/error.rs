//! [`SafetensorsError`]: why a file or one of its tensors was refused, split by contract.

use alloc::string::String;
use core::fmt;

use dlpack_abi::dlpack::ExportError;

/// Why a safetensors file could not be opened, or a tensor could not be taken from it.
///
/// The file-level errors ([`Io`](Self::Io), [`Format`](Self::Format)) come from
/// [`SafeTensorsFile`](super::SafeTensorsFile)'s constructors; the others from
/// [`SafeTensorsFile::tensor`](super::SafeTensorsFile::tensor), naming the tensor, so that one bad
/// tensor leaves the others usable.
///
/// ```
/// use dlpack_abi_safetensors::{SafeTensorsFile, SafetensorsError};
///
/// // A header length that points past the end of the file.
/// let error = SafeTensorsFile::from_bytes(&[200, 0, 0, 0, 0, 0, 0, 0, b'{', b'}']).unwrap_err();
/// assert!(matches!(error, SafetensorsError::Format(_)));
/// assert!(error.to_string().starts_with("not a valid safetensors file: "));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum SafetensorsError {
    /// Opening, reading or mapping the file failed.
    Io(std::io::Error),
    /// The file is not a valid safetensors file: the `safetensors` crate's verdict on the header
    /// (its length, its JSON, dtypes, shapes, and offsets that must tile the data exactly, with
    /// nothing missing, overlapping or left over).
    Format(::safetensors::SafeTensorError),
    /// The file has no tensor of this name.
    NoTensor {
        /// The name asked for.
        name: String,
    },
    /// The tensor's dtype has no DLPack equivalent (a dtype newer than this crate).
    UnsupportedDtype {
        /// The tensor's name.
        name: String,
        /// The dtype, as the file spells it.
        dtype: String,
    },
    /// The tensor's data does not start at a multiple of its element size, counted from the
    /// start of the file (whose mapping or buffer is page- or 64-byte aligned): typed readers
    /// would read it misaligned. Writers that sort tensors by alignment, as the `safetensors`
    /// libraries do, never produce this.
    Misaligned {
        /// The tensor's name.
        name: String,
        /// Where its data starts, in bytes from the start of the file.
        offset: usize,
        /// The alignment its dtype needs, in bytes.
        align: usize,
    },
    /// An extent does not fit DLPack's `int64_t` (possible in a valid file when another extent
    /// is 0).
    ExtentTooLarge {
        /// The tensor's name.
        name: String,
        /// The dimension.
        dim: usize,
        /// Its extent in the header.
        extent: usize,
    },
    /// The tensor could not be described as a DLPack tensor (a description the export's checks
    /// refuse).
    Export {
        /// The tensor's name.
        name: String,
        /// What the export refused.
        error: ExportError,
    },
}

impl fmt::Display for SafetensorsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(error) => write!(f, "cannot read the safetensors file: {error}"),
            Self::Format(error) => write!(f, "not a valid safetensors file: {error}"),
            Self::NoTensor { name } => write!(f, "the file has no tensor named {name:?}"),
            Self::UnsupportedDtype { name, dtype } => write!(
                f,
                "tensor {name:?} has dtype {dtype}, which has no DLPack equivalent"
            ),
            Self::Misaligned {
                name,
                offset,
                align,
            } => write!(
                f,
                "tensor {name:?} starts at byte {offset} of the file, which is not a multiple \
                 of its dtype's alignment, {align}"
            ),
            Self::ExtentTooLarge { name, dim, extent } => write!(
                f,
                "tensor {name:?} has extent {extent} in dimension {dim}, above DLPack's int64_t"
            ),
            Self::Export { name, error } => write!(f, "tensor {name:?}: {error}"),
        }
    }
}

impl std::error::Error for SafetensorsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(error) => Some(error),
            Self::Format(error) => Some(error),
            Self::Export { error, .. } => Some(error),
            _ => None,
        }
    }
}

wraps! {
    SafetensorsError::Io(std::io::Error),
    SafetensorsError::Format(::safetensors::SafeTensorError),
}
