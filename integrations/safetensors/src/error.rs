//! [`SafetensorsError`]: why a file or one of its tensors was refused, split by contract, and
//! its stable numeric [`codes`] (11xx).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use dlpack_abi::dlpack::ExportError;
use dlpack_abi::error_code::{ErrorCode, HasErrorCode};

/// Why a safetensors file could not be opened, or a tensor could not be taken from it.
///
/// The file-level errors ([`File`](Self::File), [`Io`](Self::Io), [`Format`](Self::Format),
/// [`TensorSize`](Self::TensorSize)) come from
/// [`SafeTensorsFile`](super::SafeTensorsFile)'s constructors; the others from
/// [`SafeTensorsFile::tensor`](super::SafeTensorsFile::tensor), naming the tensor, so that one bad
/// tensor leaves the others usable.
///
/// Each variant has a stable numeric code ([`code`](Self::code), in [`codes`]);
/// [`Export`](Self::Export) has its [`ExportError`]'s code.
///
/// ```
/// use dlpack_abi_safetensors::{codes, SafeTensorsFile, SafetensorsError};
///
/// // A header length that points past the end of the file.
/// let error = SafeTensorsFile::from_bytes(&[200, 0, 0, 0, 0, 0, 0, 0, b'{', b'}']).unwrap_err();
/// assert!(matches!(error, SafetensorsError::Format(_)));
/// assert!(error.to_string().starts_with("not a valid safetensors file: "));
/// assert_eq!(error.code(), codes::FORMAT);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum SafetensorsError {
    /// An I/O error that is no file's: out of memory for [`SafeTensorsFile::from_bytes`]'s
    /// copy, or a caller's own `?` on an `io::Error`.
    ///
    /// [`SafeTensorsFile::from_bytes`]: super::SafeTensorsFile::from_bytes
    Io(std::io::Error),
    /// Opening, reading or mapping the file at `path` failed: `error` says why (a directory is
    /// `EISDIR`, "Is a directory", where there is an errno for it).
    File {
        /// The path given.
        path: std::path::PathBuf,
        /// What the operating system said.
        error: std::io::Error,
    },
    /// The file is not a valid safetensors file: the `safetensors` crate's verdict on the header
    /// (its length, its JSON, dtypes, shapes, and offsets that must tile the data exactly, with
    /// nothing missing, overlapping or left over).
    Format(::safetensors::SafeTensorError),
    /// A tensor's data is not as long as its shape and dtype say: the header's `data_offsets`
    /// span `found` bytes where `shape` of `dtype` needs `expected`. (The `safetensors` crate's
    /// verdict names no tensor; this one does.)
    TensorSize {
        /// The tensor's name.
        name: String,
        /// Its dtype, as the file spells it.
        dtype: String,
        /// Its shape.
        shape: Vec<usize>,
        /// The bytes its shape and dtype need.
        expected: usize,
        /// The bytes its `data_offsets` span.
        found: usize,
    },
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
            Self::File { path, error } => write!(
                f,
                "cannot read the safetensors file {}: {error}",
                path.display()
            ),
            Self::TensorSize {
                name,
                dtype,
                shape,
                expected,
                found,
            } => write!(
                f,
                "not a valid safetensors file: tensor {name:?} has shape {shape:?} of {dtype}, \
                 {expected} bytes, but its data_offsets span {found}"
            ),
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
            Self::Io(error) | Self::File { error, .. } => Some(error),
            Self::Format(error) => Some(error),
            Self::Export { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<std::io::Error> for SafetensorsError {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error)
    }
}

impl From<::safetensors::SafeTensorError> for SafetensorsError {
    fn from(error: ::safetensors::SafeTensorError) -> Self {
        Self::Format(error)
    }
}

impl SafetensorsError {
    /// This error's stable [`ErrorCode`] (11xx, one of [`codes`]); for
    /// [`Export`](Self::Export), the code of the [`ExportError`] it holds.
    ///
    /// ```
    /// use dlpack_abi_safetensors::{codes, SafetensorsError};
    ///
    /// let error = SafetensorsError::NoTensor { name: "weight".into() };
    /// assert_eq!(error.code(), codes::NO_TENSOR);
    /// assert_eq!(error.code().0, 1103);
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Io(_) | Self::File { .. } => codes::IO,
            Self::Format(_) => codes::FORMAT,
            Self::TensorSize { .. } => codes::TENSOR_SIZE,
            Self::NoTensor { .. } => codes::NO_TENSOR,
            Self::UnsupportedDtype { .. } => codes::UNSUPPORTED_DTYPE,
            Self::Misaligned { .. } => codes::MISALIGNED,
            Self::ExtentTooLarge { .. } => codes::EXTENT_TOO_LARGE,
            Self::Export { error, .. } => error.code(),
        }
    }
}

/// As [`SafetensorsError::code`], so that `ErrorReport::from(&error)` hands the error to C.
impl HasErrorCode for SafetensorsError {
    fn error_code(&self) -> ErrorCode {
        self.code()
    }
}

/// The stable numeric codes of [`SafetensorsError`]'s own variants: `1101..=1107`, the range of
/// `dlpack-abi-safetensors` (11xx). Values are never renumbered or reused.
///
/// ```
/// use dlpack_abi::error_code::ErrorReport;
/// use dlpack_abi_safetensors::{codes, SafeTensorsFile};
///
/// let error = SafeTensorsFile::from_bytes(b"short").unwrap_err();
/// let report = ErrorReport::from(&error); // for C: the code and the message
/// assert_eq!(report.code(), codes::FORMAT);
/// assert_eq!(report.code().0, 1102);
/// ```
pub mod codes {
    use dlpack_abi::error_code::ErrorCode;

    /// Opening, reading or mapping the safetensors file failed.
    ///
    /// ```
    /// use dlpack_abi_safetensors::{codes, SafeTensorsFile};
    ///
    /// let error = SafeTensorsFile::read("/no/such/dir/model.safetensors").unwrap_err();
    /// assert_eq!(error.code(), codes::IO);
    /// assert_eq!(codes::IO.0, 1101);
    /// ```
    pub const IO: ErrorCode = ErrorCode(1101);

    /// The file is not a valid safetensors file.
    ///
    /// ```
    /// use dlpack_abi_safetensors::{codes, SafeTensorsFile};
    ///
    /// let error = SafeTensorsFile::from_bytes(b"not a safetensors file").unwrap_err();
    /// assert_eq!(error.code(), codes::FORMAT);
    /// assert_eq!(codes::FORMAT.0, 1102);
    /// ```
    pub const FORMAT: ErrorCode = ErrorCode(1102);

    /// The safetensors file has no tensor of the name asked for.
    ///
    /// ```
    /// use dlpack_abi_safetensors::{codes, SafeTensorsFile};
    ///
    /// let mut bytes = 2u64.to_le_bytes().to_vec();
    /// bytes.extend_from_slice(b"{}"); // a file with no tensors
    /// let error = SafeTensorsFile::from_bytes(&bytes)?.tensor("w").unwrap_err();
    /// assert_eq!(error.code(), codes::NO_TENSOR);
    /// assert_eq!(codes::NO_TENSOR.0, 1103);
    /// # Ok::<(), dlpack_abi_safetensors::SafetensorsError>(())
    /// ```
    pub const NO_TENSOR: ErrorCode = ErrorCode(1103);

    /// A safetensors tensor's dtype has no DLPack equivalent.
    ///
    /// ```
    /// use dlpack_abi_safetensors::{codes, SafetensorsError};
    ///
    /// let error = SafetensorsError::UnsupportedDtype { name: "w".into(), dtype: "F3".into() };
    /// assert_eq!(error.code(), codes::UNSUPPORTED_DTYPE);
    /// assert_eq!(codes::UNSUPPORTED_DTYPE.0, 1104);
    /// ```
    pub const UNSUPPORTED_DTYPE: ErrorCode = ErrorCode(1104);

    /// A safetensors tensor's data is not aligned for its dtype.
    ///
    /// ```
    /// use dlpack_abi_safetensors::{codes, SafetensorsError};
    ///
    /// let error = SafetensorsError::Misaligned { name: "w".into(), offset: 130, align: 4 };
    /// assert_eq!(error.code(), codes::MISALIGNED);
    /// assert_eq!(codes::MISALIGNED.0, 1105);
    /// ```
    pub const MISALIGNED: ErrorCode = ErrorCode(1105);

    /// A safetensors tensor's extent does not fit DLPack's int64_t.
    ///
    /// ```
    /// use dlpack_abi_safetensors::{codes, SafetensorsError};
    ///
    /// let error = SafetensorsError::ExtentTooLarge { name: "w".into(), dim: 0, extent: usize::MAX };
    /// assert_eq!(error.code(), codes::EXTENT_TOO_LARGE);
    /// assert_eq!(codes::EXTENT_TOO_LARGE.0, 1106);
    /// ```
    pub const EXTENT_TOO_LARGE: ErrorCode = ErrorCode(1106);

    /// A safetensors tensor's data is not as long as its shape and dtype say.
    ///
    /// ```
    /// use dlpack_abi_safetensors::{codes, SafeTensorsFile, SafetensorsError};
    ///
    /// let header = br#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.extend_from_slice(&[0; 4]);
    /// let error = SafeTensorsFile::from_bytes(&bytes).unwrap_err();
    /// assert!(matches!(&error, SafetensorsError::TensorSize { name, .. } if name == "w"));
    /// assert_eq!(error.code(), codes::TENSOR_SIZE);
    /// assert_eq!(codes::TENSOR_SIZE.0, 1107);
    /// ```
    pub const TENSOR_SIZE: ErrorCode = ErrorCode(1107);
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use dlpack_abi::dlpack::ExportError;
    use dlpack_abi::error_code::{ErrorCode, ErrorReport, HasErrorCode};
    use dlpack_abi::raw::DLPackFlags;

    use super::{codes, SafetensorsError};

    /// One value of every variant that is this crate's own (exhaustive: a new variant fails to
    /// compile here until it is listed).
    fn own_variants() -> Vec<SafetensorsError> {
        let all = [
            SafetensorsError::Io(std::io::ErrorKind::NotFound.into()),
            SafetensorsError::Format(::safetensors::SafeTensorError::HeaderTooSmall),
            SafetensorsError::NoTensor { name: "w".into() },
            SafetensorsError::UnsupportedDtype {
                name: "w".into(),
                dtype: "F3".into(),
            },
            SafetensorsError::Misaligned {
                name: "w".into(),
                offset: 3,
                align: 4,
            },
            SafetensorsError::ExtentTooLarge {
                name: "w".into(),
                dim: 0,
                extent: usize::MAX,
            },
            SafetensorsError::TensorSize {
                name: "w".into(),
                dtype: "F32".into(),
                shape: [2].into(),
                expected: 8,
                found: 4,
            },
        ];
        for error in &all {
            match error {
                SafetensorsError::Io(_)
                | SafetensorsError::File { .. }
                | SafetensorsError::TensorSize { .. }
                | SafetensorsError::Format(_)
                | SafetensorsError::NoTensor { .. }
                | SafetensorsError::UnsupportedDtype { .. }
                | SafetensorsError::Misaligned { .. }
                | SafetensorsError::ExtentTooLarge { .. } => {}
                SafetensorsError::Export { .. } => unreachable!("wraps"),
            }
        }
        all.into()
    }

    /// Codes are stable: these values are pinned, whatever is added.
    #[test]
    fn pinned_values() {
        let pinned = [
            (codes::IO, 1101),
            (codes::FORMAT, 1102),
            (codes::NO_TENSOR, 1103),
            (codes::UNSUPPORTED_DTYPE, 1104),
            (codes::MISALIGNED, 1105),
            (codes::EXTENT_TOO_LARGE, 1106),
            (codes::TENSOR_SIZE, 1107),
        ];
        for (code, value) in pinned {
            assert_eq!(code, ErrorCode(value));
        }
        let codes: Vec<ErrorCode> = own_variants().iter().map(SafetensorsError::code).collect();
        assert_eq!(codes, pinned.map(|(code, _)| code));
    }

    /// Every own variant has a code of its own, in 11xx; `Export` its error's.
    #[test]
    fn every_variant_has_its_own_code() {
        let mut codes: Vec<ErrorCode> = own_variants().iter().map(SafetensorsError::code).collect();
        assert!(codes.iter().all(|code| (1100..1200).contains(&code.0)));
        let count = codes.len();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), count, "two variants share a code");

        let export = ExportError::FlagsNotRepresentable {
            flags: DLPackFlags::IS_SUBBYTE_TYPE_PADDED,
        };
        let error = SafetensorsError::Export {
            name: "w".into(),
            error: export,
        };
        assert_eq!(error.code(), export.code());
        assert_eq!(error.error_code(), export.code());
        assert_eq!(ErrorReport::from(&error).code(), export.code());
    }
}
