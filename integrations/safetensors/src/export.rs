//! [`SafeTensorsFile`]: a safetensors file, mapped or read, whose tensors go out as DLPack
//! tensors without a copy (the source of this crate's exports).
#![allow(unsafe_code)]

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ffi::c_void;
use std::io::Read;
use std::path::Path;

use ::safetensors::tensor::{Metadata, TensorInfo};
use ::safetensors::{Dtype, SafeTensors};

use dlpack_abi::dlpack::{AlignedVec, TensorDescription, TensorOwner, VersionedTensor};
use dlpack_abi::raw::*;

use crate::SafetensorsError;

/// What keeps a whole file's bytes alive: a private mapping, or a copy aligned to
/// `HOST_ALIGNMENT`. Only read through [`Shared::base`] once parsed: no Rust reference to the
/// bytes exists while tensors are out (a consumer that ignores `READ_ONLY` may write them).
enum Bytes {
    Mapped(#[allow(dead_code)] memmap2::MmapRaw),
    Owned(#[allow(dead_code)] AlignedVec<u8>),
}

/// A parsed file: its bytes and what its header says, shared by the file and its tensors.
struct Shared {
    /// Keeps the memory at `base` alive; dropped (unmapped, freed) with the last holder.
    bytes: Bytes,
    /// The first byte of the file, and its length.
    base: *mut u8,
    len: usize,
    /// Where the data section starts: 8 bytes of header length plus the header.
    data_start: usize,
    metadata: Metadata,
    /// The header's `__metadata__` (free-form strings).
    user_metadata: BTreeMap<String, String>,
    /// The tensors' names in the order of their data.
    names: Vec<String>,
}

/// A safetensors file, checked, whose tensors are taken as DLPack tensors without copying.
///
/// Cloning is cheap (a reference count); every clone and every tensor taken shares one mapping
/// or buffer. `Send` and `Sync`: take tensors from any thread.
///
/// ```
/// use dlpack_abi_safetensors::SafeTensorsFile;
///
/// let header = br#"{"__metadata__":{"format":"pt"},"b":{"dtype":"U8","shape":[2,2],"data_offsets":[0,4]}}"#;
/// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
/// bytes.extend_from_slice(header);
/// bytes.extend_from_slice(&[1, 2, 3, 4]);
/// let file = SafeTensorsFile::from_bytes(&bytes)?; // one copy, into aligned memory
/// assert_eq!(file.names().collect::<Vec<_>>(), ["b"]);
/// assert_eq!(file.metadata()["format"], "pt");
/// assert_eq!(file.tensor("b")?.view().get::<u8>(&[1, 0])?, 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct SafeTensorsFile {
    shared: Arc<Shared>,
}

impl SafeTensorsFile {
    /// Maps the file at `path` (private, copy-on-write pages) and checks its header. The file
    /// handle is closed before this returns; the mapping lives as long as this value or any
    /// tensor taken from it.
    ///
    /// # Safety
    /// The file must not be modified or truncated, by this process or another, while the
    /// mapping lives (until the last tensor taken from it is dropped): its bytes are read as
    /// immutable memory, by Rust and by every consumer of the tensors.
    ///
    /// # Errors
    /// [`SafetensorsError::File`] (with the path) when the file cannot be opened or mapped, or
    /// is a directory, and [`SafetensorsError::Format`] or [`SafetensorsError::TensorSize`]
    /// when it is not a valid safetensors file.
    ///
    /// ```
    /// use dlpack_abi_safetensors::{SafeTensorsFile, SafetensorsError};
    ///
    /// let path = std::env::temp_dir().join("dlpack-abi-open-example.safetensors");
    /// std::fs::write(&path, b"not a safetensors file")?;
    /// // SAFETY: nothing modifies the file while it is mapped.
    /// let error = unsafe { SafeTensorsFile::open(&path) }.err().unwrap();
    /// assert!(matches!(error, SafetensorsError::Format(_)));
    /// std::fs::remove_file(&path)?;
    /// // A directory is refused as one (EISDIR), with its path.
    /// let error = unsafe { SafeTensorsFile::open(std::env::temp_dir()) }.err().unwrap();
    /// assert!(matches!(&error, SafetensorsError::File { path, .. } if *path == std::env::temp_dir()));
    /// # #[cfg(unix)] // elsewhere without an errno for it
    /// assert!(error.to_string().contains("Is a directory"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub unsafe fn open(path: impl AsRef<Path>) -> Result<Self, SafetensorsError> {
        let path = path.as_ref();
        let file = open_file(path)?;
        // SAFETY: the caller promises that the file is not modified while mapped; the pages are
        // private, so writes through the mapping never reach the file.
        let map = unsafe { memmap2::MmapOptions::new().map_copy(&file) }.map_err(at(path))?;
        let header = Header::parse(&map)?;
        // From here on only raw pointers reach the pages.
        let map = memmap2::MmapRaw::from(map);
        let (base, len) = (map.as_mut_ptr(), map.len());
        Ok(header.into_file(Bytes::Mapped(map), base, len))
    }

    /// Reads the file at `path` into memory aligned to
    /// [`HOST_ALIGNMENT`](dlpack_abi::dlpack::HOST_ALIGNMENT) (one copy of the whole file, safe:
    /// later changes to the file do not reach it) and checks its header.
    ///
    /// # Errors
    /// [`SafetensorsError::File`] (with the path) when the file cannot be read (or is larger
    /// than memory, or is a directory), and
    /// [`SafetensorsError::Format`] when it is not a valid safetensors file.
    ///
    /// ```
    /// use dlpack_abi_safetensors::SafeTensorsFile;
    ///
    /// let header = br#"{"x":{"dtype":"I64","shape":[],"data_offsets":[0,8]}}   "#; // 8-byte aligned
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.extend_from_slice(&(-7i64).to_le_bytes());
    /// let path = std::env::temp_dir().join("dlpack-abi-read-example.safetensors");
    /// std::fs::write(&path, &bytes)?;
    /// let file = SafeTensorsFile::read(&path)?;
    /// assert_eq!(file.tensor("x")?.view().get::<i64>(&[])?, -7);
    /// std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(path: impl AsRef<Path>) -> Result<Self, SafetensorsError> {
        let path = path.as_ref();
        let mut file = open_file(path)?;
        let too_large = || std::io::Error::from(std::io::ErrorKind::OutOfMemory);
        let len = file.metadata().map_err(at(path))?.len();
        let len = usize::try_from(len).map_err(|_| at(path)(too_large()))?;
        let mut bytes = AlignedVec::<u8>::try_zeroed(len).ok_or_else(|| at(path)(too_large()))?;
        file.read_exact(&mut bytes).map_err(at(path))?;
        // A file that grew while read: refuse rather than parse a prefix.
        if file.read(&mut [0u8]).map_err(at(path))? != 0 {
            let message = "the file is longer than its length said (it grew while read, or is \
                           not a regular file)";
            return Err(at(path)(std::io::Error::other(message)));
        }
        Self::owned(bytes)
    }

    /// Copies a whole file's bytes (already in memory) into memory aligned to
    /// [`HOST_ALIGNMENT`](dlpack_abi::dlpack::HOST_ALIGNMENT) and checks its header.
    ///
    /// # Errors
    /// [`SafetensorsError::Format`] when the bytes are not a valid safetensors file, and
    /// [`SafetensorsError::Io`] (`OutOfMemory`) when the copy cannot be allocated.
    ///
    /// ```
    /// use dlpack_abi_safetensors::SafeTensorsFile;
    ///
    /// let header = br#"{}"#; // a file with no tensors
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// assert!(SafeTensorsFile::from_bytes(&bytes)?.is_empty());
    /// // Truncated: the header says 2 bytes, 1 follows.
    /// assert!(SafeTensorsFile::from_bytes(&bytes[..9]).is_err());
    /// # Ok::<(), dlpack_abi_safetensors::SafetensorsError>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, SafetensorsError> {
        let mut copy = AlignedVec::<u8>::try_zeroed(bytes.len())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        copy.copy_from_slice(bytes);
        Self::owned(copy)
    }

    fn owned(mut bytes: AlignedVec<u8>) -> Result<Self, SafetensorsError> {
        let header = Header::parse(&bytes)?;
        // From here on only raw pointers reach the bytes (moving the vector moves no byte).
        let (base, len) = (bytes.as_mut_slice().as_mut_ptr(), bytes.len());
        Ok(header.into_file(Bytes::Owned(bytes), base, len))
    }

    /// The tensors' names, in the order of their data in the file.
    ///
    /// ```
    /// use dlpack_abi_safetensors::SafeTensorsFile;
    ///
    /// let header = br#"{"z":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.extend_from_slice(&[9, 8]);
    /// let file = SafeTensorsFile::from_bytes(&bytes)?;
    /// assert_eq!(file.names().collect::<Vec<_>>(), ["z", "a"]);
    /// # Ok::<(), dlpack_abi_safetensors::SafetensorsError>(())
    /// ```
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.shared.names.iter().map(String::as_str)
    }

    /// The number of tensors in the file.
    ///
    /// ```
    /// use dlpack_abi_safetensors::SafeTensorsFile;
    ///
    /// let mut bytes = 2u64.to_le_bytes().to_vec();
    /// bytes.extend_from_slice(b"{}");
    /// assert_eq!(SafeTensorsFile::from_bytes(&bytes)?.len(), 0);
    /// # Ok::<(), dlpack_abi_safetensors::SafetensorsError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.shared.names.len()
    }

    /// Whether the file has no tensors.
    ///
    /// ```
    /// use dlpack_abi_safetensors::SafeTensorsFile;
    ///
    /// let mut bytes = 2u64.to_le_bytes().to_vec();
    /// bytes.extend_from_slice(b"{}");
    /// assert!(SafeTensorsFile::from_bytes(&bytes)?.is_empty());
    /// # Ok::<(), dlpack_abi_safetensors::SafetensorsError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.shared.names.is_empty()
    }

    /// The header's free-form `__metadata__` strings (empty when it has none).
    ///
    /// ```
    /// use dlpack_abi_safetensors::SafeTensorsFile;
    ///
    /// let header = br#"{"__metadata__":{"format":"np"}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// let file = SafeTensorsFile::from_bytes(&bytes)?;
    /// assert_eq!(file.metadata().get("format").map(String::as_str), Some("np"));
    /// # Ok::<(), dlpack_abi_safetensors::SafetensorsError>(())
    /// ```
    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.shared.user_metadata
    }

    /// The DLPack dtype and the shape of tensor `name`, without taking it.
    ///
    /// # Errors
    /// [`SafetensorsError::NoTensor`] and [`SafetensorsError::UnsupportedDtype`].
    ///
    /// ```
    /// use dlpack_abi::raw::{kDLBfloat, DLDataType};
    /// use dlpack_abi_safetensors::SafeTensorsFile;
    ///
    /// let header = br#"{"h":{"dtype":"BF16","shape":[1,2],"data_offsets":[0,4]}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.extend_from_slice(&[0; 4]);
    /// let file = SafeTensorsFile::from_bytes(&bytes)?;
    /// let (dtype, shape) = file.describe("h")?;
    /// assert_eq!((dtype, shape), (DLDataType { code: kDLBfloat, bits: 16, lanes: 1 }, &[1, 2][..]));
    /// # Ok::<(), dlpack_abi_safetensors::SafetensorsError>(())
    /// ```
    pub fn describe(&self, name: &str) -> Result<(DLDataType, &[usize]), SafetensorsError> {
        let info = self.info(name)?;
        Ok((dlpack_dtype(name, info.dtype)?, &info.shape))
    }

    /// Tensor `name` as a DLPack tensor over the file's bytes: `READ_ONLY`, `kDLCPU`,
    /// C-contiguous, no copy. It keeps the mapping (or buffer) alive.
    ///
    /// # Errors
    /// [`SafetensorsError::NoTensor`], [`SafetensorsError::UnsupportedDtype`],
    /// [`SafetensorsError::Misaligned`], [`SafetensorsError::ExtentTooLarge`] and
    /// [`SafetensorsError::Export`].
    ///
    /// ```
    /// use dlpack_abi::raw::DLPackFlags;
    /// use dlpack_abi_safetensors::{SafeTensorsFile, SafetensorsError};
    ///
    /// let header = br#"{"v":{"dtype":"I16","shape":[3],"data_offsets":[0,6]}}  "#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.extend([1i16, -2, 3].iter().flat_map(|v| v.to_le_bytes()));
    /// let file = SafeTensorsFile::from_bytes(&bytes)?;
    /// let tensor = file.tensor("v")?;
    /// assert_eq!(tensor.view().as_slice::<i16>()?, [1, -2, 3]);
    /// assert!(tensor.view().flags().contains(DLPackFlags::READ_ONLY));
    /// assert!(matches!(file.tensor("w"), Err(SafetensorsError::NoTensor { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn tensor(&self, name: &str) -> Result<VersionedTensor, SafetensorsError> {
        let info = self.info(name)?;
        let dtype = dlpack_dtype(name, info.dtype)?;
        let (begin, end) = info.data_offsets;
        // `read_metadata` checked that the data section holds every tensor's range.
        let offset = self.shared.data_start + begin;
        let align = info.dtype.bitsize().div_ceil(8);
        // An empty tensor reads nothing: its offset does not matter.
        if offset % align != 0 && end > begin {
            return Err(SafetensorsError::Misaligned {
                name: name.to_string(),
                offset,
                align,
            });
        }
        let export_error = |error| SafetensorsError::Export {
            name: name.to_string(),
            error,
        };
        let shape = (info.shape.iter().enumerate())
            .map(|(dim, &extent)| {
                i64::try_from(extent).map_err(|_| SafetensorsError::ExtentTooLarge {
                    name: name.to_string(),
                    dim,
                    extent,
                })
            })
            .collect::<Result<Vec<i64>, _>>()?;
        let owner = MappedTensor {
            shared: Arc::clone(&self.shared),
            offset,
            len: end - begin,
            dtype,
            shape,
        };
        VersionedTensor::from_owner(owner).map_err(export_error)
    }

    /// Every tensor, in the order of their data: `(name, tensor or why not)`.
    ///
    /// ```
    /// use dlpack_abi_safetensors::SafeTensorsFile;
    ///
    /// let header = br#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#;
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend_from_slice(header);
    /// bytes.extend_from_slice(&[5, 6]);
    /// let file = SafeTensorsFile::from_bytes(&bytes)?;
    /// let total: u8 = file
    ///     .tensors()
    ///     .map(|(_, tensor)| tensor?.view().get::<u8>(&[0]).map_err(Into::into))
    ///     .sum::<Result<u8, Box<dyn std::error::Error>>>()?;
    /// assert_eq!(total, 11);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn tensors(
        &self,
    ) -> impl Iterator<Item = (&str, Result<VersionedTensor, SafetensorsError>)> {
        self.names().map(|name| (name, self.tensor(name)))
    }

    fn info(&self, name: &str) -> Result<&TensorInfo, SafetensorsError> {
        self.shared
            .metadata
            .info(name)
            .ok_or_else(|| SafetensorsError::NoTensor {
                name: name.to_string(),
            })
    }
}

impl core::fmt::Debug for SafeTensorsFile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SafeTensorsFile")
            .field("tensors", &self.len())
            .field("bytes", &self.shared.len)
            .field("mapped", &matches!(self.shared.bytes, Bytes::Mapped(_)))
            .finish()
    }
}

/// What a file's header says, checked by the `safetensors` crate.
struct Header {
    data_start: usize,
    metadata: Metadata,
}

impl Header {
    fn parse(file: &[u8]) -> Result<Self, SafetensorsError> {
        // `safetensors` 0.8 adds the header's claimed data length to the header's without a
        // check (`buffer_end + N_LEN + n`): a header whose offsets tile nearly 2^64 bytes
        // overflows it, which panics in debug builds (and is refused in release builds). Such a
        // file is refused here in both, as the overflow it is (unless panics abort).
        let parsed = std::panic::catch_unwind(|| SafeTensors::read_metadata(file))
            .unwrap_or(Err(::safetensors::SafeTensorError::ValidationOverflow));
        let (header_len, metadata) = match parsed {
            Ok(parsed) => parsed,
            Err(::safetensors::SafeTensorError::TensorInvalidInfo) => {
                // The crate's verdict names no tensor: find the one whose data is not as long
                // as its shape and dtype say.
                return Err(wrong_size(file)
                    .unwrap_or(::safetensors::SafeTensorError::TensorInvalidInfo.into()));
            }
            Err(error) => return Err(error.into()),
        };
        // `read_metadata` checked that 8 + header + data is exactly the file's length.
        Ok(Self {
            data_start: header_len + 8,
            metadata,
        })
    }

    fn into_file(self, bytes: Bytes, base: *mut u8, len: usize) -> SafeTensorsFile {
        let user_metadata = self
            .metadata
            .metadata()
            .iter()
            .flatten()
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let names = self.metadata.offset_keys();
        SafeTensorsFile {
            shared: Arc::new(Shared {
                bytes,
                base,
                len,
                data_start: self.data_start,
                metadata: self.metadata,
                user_metadata,
                names,
            }),
        }
    }
}

/// The file at `path`, opened for reading; a directory is refused as one (mapping it would fail
/// with `ENODEV`, which names no cause a user would recognise).
fn open_file(path: &Path) -> Result<std::fs::File, SafetensorsError> {
    let file = std::fs::File::open(path).map_err(at(path))?;
    if file.metadata().map_err(at(path))?.is_dir() {
        return Err(at(path)(is_a_directory()));
    }
    Ok(file)
}

/// `EISDIR`, the error `open()` gives for a directory opened for writing: an errno, so that
/// Python makes it `IsADirectoryError` (`ErrorKind::IsADirectory` is younger than this crate's
/// MSRV).
#[cfg(unix)]
fn is_a_directory() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::EISDIR)
}

#[cfg(not(unix))]
fn is_a_directory() -> std::io::Error {
    std::io::Error::other("is a directory")
}

/// An I/O error of the file at `path`.
fn at(path: &Path) -> impl Fn(std::io::Error) -> SafetensorsError + '_ {
    move |error| SafetensorsError::File {
        path: path.to_path_buf(),
        error,
    }
}

/// The first tensor, in the order of its data, whose `data_offsets` do not span the bytes its
/// shape and dtype need (what `safetensors`' `TensorInvalidInfo` means, without the name);
/// `None` when the header cannot be read that far (the crate's error stands).
fn wrong_size(file: &[u8]) -> Option<SafetensorsError> {
    let header_len = usize::try_from(u64::from_le_bytes(file.get(..8)?.try_into().ok()?)).ok()?;
    let header = file.get(8..8usize.checked_add(header_len)?)?;
    let entries: BTreeMap<String, serde_json::Value> = serde_json::from_slice(header).ok()?;
    let mut tensors: Vec<(String, TensorInfo)> = entries
        .into_iter()
        .filter(|(name, _)| name != "__metadata__")
        .filter_map(|(name, value)| Some((name, serde_json::from_value(value).ok()?)))
        .collect();
    tensors.sort_by_key(|(_, info)| info.data_offsets);
    tensors.into_iter().find_map(|(name, info)| {
        let (start, end) = info.data_offsets;
        let bits = info
            .shape
            .iter()
            .try_fold(info.dtype.bitsize(), |bits, &extent| {
                bits.checked_mul(extent)
            })?;
        let expected = bits / 8;
        let found = end.checked_sub(start)?;
        (bits % 8 == 0 && expected != found).then(|| SafetensorsError::TensorSize {
            name,
            dtype: info.dtype.to_string(),
            shape: info.shape,
            expected,
            found,
        })
    })
}

// SAFETY: `base` points into the memory `bytes` owns (a mapping or a heap buffer, both fine to
// share and free from any thread), which is only read, through raw pointers, after parsing.
unsafe impl Send for Shared {}
// SAFETY: as for `Send`: shared access only reads fields and copies `base`.
unsafe impl Sync for Shared {}

/// The DLPack dtype of a safetensors dtype: the same format, bit for bit.
fn dlpack_dtype(name: &str, dtype: Dtype) -> Result<DLDataType, SafetensorsError> {
    let (code, bits) = match dtype {
        Dtype::BOOL => (kDLBool, 8),
        Dtype::U8 => (kDLUInt, 8),
        Dtype::U16 => (kDLUInt, 16),
        Dtype::U32 => (kDLUInt, 32),
        Dtype::U64 => (kDLUInt, 64),
        Dtype::I8 => (kDLInt, 8),
        Dtype::I16 => (kDLInt, 16),
        Dtype::I32 => (kDLInt, 32),
        Dtype::I64 => (kDLInt, 64),
        Dtype::F16 => (kDLFloat, 16),
        Dtype::F32 => (kDLFloat, 32),
        Dtype::F64 => (kDLFloat, 64),
        Dtype::BF16 => (kDLBfloat, 16),
        Dtype::C64 => (kDLComplex, 64),
        // safetensors' F8_E4M3 is PyTorch's float8_e4m3fn (no infinities, one NaN).
        Dtype::F8_E4M3 => (kDLFloat8_e4m3fn, 8),
        Dtype::F8_E5M2 => (kDLFloat8_e5m2, 8),
        Dtype::F8_E4M3FNUZ => (kDLFloat8_e4m3fnuz, 8),
        Dtype::F8_E5M2FNUZ => (kDLFloat8_e5m2fnuz, 8),
        Dtype::F8_E8M0 => (kDLFloat8_e8m0fnu, 8),
        Dtype::F6_E2M3 => (kDLFloat6_e2m3fn, 6),
        Dtype::F6_E3M2 => (kDLFloat6_e3m2fn, 6),
        Dtype::F4 => (kDLFloat4_e2m1fn, 4),
        // A dtype added to `safetensors` after this crate (`Dtype` is non-exhaustive).
        other => {
            return Err(SafetensorsError::UnsupportedDtype {
                name: name.to_string(),
                dtype: other.to_string(),
            })
        }
    };
    Ok(DLDataType {
        code,
        bits,
        lanes: 1,
    })
}

/// One tensor of a file: the shared bytes, where the tensor's lie, and its description.
struct MappedTensor {
    shared: Arc<Shared>,
    /// Where the data starts, in bytes from the start of the file.
    offset: usize,
    /// The data's length in bytes.
    len: usize,
    dtype: DLDataType,
    shape: Vec<i64>,
}

// SAFETY: `data` and `len` are a range of the shared bytes (the header's offsets were checked to
// lie in the data section), which the `Arc` keeps allocated (or mapped) and initialised for as
// long as the owner lives; the export is `READ_ONLY`, and nothing writes those bytes while any
// file or tensor holds them (a mapping's file is not modified: `open`'s contract).
unsafe impl TensorOwner for MappedTensor {
    fn describe(&mut self) -> TensorDescription<'_> {
        // In bounds (`offset + len <= shared.len`, checked by the header's parse), so the
        // wrapping add never wraps; the export checks `len` against the description.
        let data = self.shared.base.wrapping_add(self.offset).cast::<c_void>();
        let cpu = DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        };
        TensorDescription::new(data, self.len, cpu, self.dtype, &self.shape)
            .with_flags(DLPackFlags::READ_ONLY)
    }

    fn ndim(&mut self) -> usize {
        self.shape.len()
    }
}
