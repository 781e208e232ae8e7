//! The schema metadata encoding: a native-endian `int32` pair count, then per pair an `int32`
//! key length, the key's UTF-8 bytes, an `int32` value length and the value's bytes. No NUL, no
//! padding.
#![allow(unsafe_code)]

use super::MetadataError;

/// A parsed, bounds-checked metadata map. Keys are UTF-8; values are bytes (extension metadata is
/// usually, but not always, text).
///
/// ```
/// use dlpack_abi::arrow::Metadata;
///
/// let mut bytes = Vec::new();
/// bytes.extend(1i32.to_ne_bytes());
/// bytes.extend(3i32.to_ne_bytes());
/// bytes.extend(b"key");
/// bytes.extend(5i32.to_ne_bytes());
/// bytes.extend(b"value");
/// let metadata = Metadata::parse(&bytes)?;
/// assert_eq!(metadata.get("key"), Some(&b"value"[..]));
///
/// // A length that points past the end is an error, never a read out of bounds.
/// let error = Metadata::parse(&bytes[..bytes.len() - 1]).unwrap_err();
/// assert_eq!(error.to_string(), "metadata needs 5 bytes at byte 15, past its end at 19");
/// # Ok::<(), dlpack_abi::arrow::MetadataError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Metadata<'a> {
    bytes: &'a [u8],
    len: usize,
}

fn read_i32(bytes: &[u8], at: usize) -> Result<i32, MetadataError> {
    let end = at.checked_add(4).ok_or(MetadataError::TooLarge)?;
    let word = bytes.get(at..end).ok_or(MetadataError::Truncated {
        at,
        needed: 4,
        len: bytes.len(),
    })?;
    Ok(i32::from_ne_bytes([word[0], word[1], word[2], word[3]]))
}

/// Reads a length at `at` and returns the byte range it announces, after it.
fn read_part(bytes: &[u8], at: usize) -> Result<(usize, usize), MetadataError> {
    let length = read_i32(bytes, at)?;
    let length =
        usize::try_from(length).map_err(|_| MetadataError::NegativeLength { at, length })?;
    let start = at + 4;
    let end = start.checked_add(length).ok_or(MetadataError::TooLarge)?;
    if end > bytes.len() {
        return Err(MetadataError::Truncated {
            at: start,
            needed: length,
            len: bytes.len(),
        });
    }
    Ok((start, end))
}

impl<'a> Metadata<'a> {
    /// Parses a whole map from `bytes` (trailing bytes are ignored; see [`size`](Self::size)).
    ///
    /// # Errors
    /// [`MetadataError`] when the map is truncated, has a negative count or length, or a key that
    /// is not UTF-8.
    ///
    /// ```
    /// use dlpack_abi::arrow::{Metadata, MetadataError};
    ///
    /// // The C Data Interface's encoding: int32 count, then per pair int32 length + key, int32
    /// // length + value, in native byte order.
    /// let mut bytes = Vec::new();
    /// bytes.extend(1i32.to_ne_bytes());
    /// for part in [&b"unit"[..], b"metre"] {
    ///     bytes.extend(i32::try_from(part.len()).unwrap().to_ne_bytes());
    ///     bytes.extend(part);
    /// }
    /// let metadata = Metadata::parse(&bytes)?;
    /// assert_eq!(metadata.get("unit"), Some(&b"metre"[..]));
    /// assert!(matches!(Metadata::parse(&bytes[..10]), Err(MetadataError::Truncated { .. })));
    /// # Ok::<(), MetadataError>(())
    /// ```
    pub fn parse(bytes: &'a [u8]) -> Result<Self, MetadataError> {
        let count = read_i32(bytes, 0)?;
        let count = usize::try_from(count).map_err(|_| MetadataError::NegativeCount { count })?;
        let mut at = 4;
        for pair in 0..count {
            let (start, end) = read_part(bytes, at)?;
            if core::str::from_utf8(&bytes[start..end]).is_err() {
                return Err(MetadataError::KeyNotUtf8 { pair });
            }
            (_, at) = read_part(bytes, end)?;
        }
        Ok(Self {
            bytes: &bytes[..at],
            len: count,
        })
    }

    /// Parses the map at a foreign `metadata` pointer, which carries no length: the counts and
    /// lengths are read one at a time (negative ones refused) to find the map's extent.
    ///
    /// # Safety
    /// `ptr` points to a map in this encoding, readable for the size its counts and lengths add
    /// up to, and unchanged for `'a` (the producer's promise in the C Data Interface).
    pub(crate) unsafe fn from_ptr(ptr: *const u8) -> Result<Self, MetadataError> {
        // SAFETY: each read is within the map the caller vouches for: a word is read only once
        // the words before it (and the lengths they announce) have been accounted for.
        let word = |at: usize| unsafe { ptr.wrapping_add(at).cast::<[u8; 4]>().read_unaligned() };
        let count = i32::from_ne_bytes(word(0));
        let count = usize::try_from(count).map_err(|_| MetadataError::NegativeCount { count })?;
        let mut at = 4usize;
        for _ in 0..count {
            for _key_then_value in 0..2 {
                let length = i32::from_ne_bytes(word(at));
                let length = usize::try_from(length)
                    .map_err(|_| MetadataError::NegativeLength { at, length })?;
                at = at
                    .checked_add(4 + length)
                    .filter(|&end| end <= isize::MAX as usize)
                    .ok_or(MetadataError::TooLarge)?;
            }
        }
        // SAFETY: `at` bytes from `ptr` make up the map (above), readable for `'a` (caller).
        let bytes = unsafe { core::slice::from_raw_parts(ptr, at) };
        Self::parse(bytes)
    }

    /// The size of the encoded map in bytes.
    ///
    /// ```
    /// use dlpack_abi::arrow::Metadata;
    ///
    /// let mut bytes = 0i32.to_ne_bytes().to_vec(); // an empty map
    /// bytes.extend(b"trailing bytes are not part of it");
    /// assert_eq!(Metadata::parse(&bytes)?.size(), 4);
    /// # Ok::<(), dlpack_abi::arrow::MetadataError>(())
    /// ```
    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    /// The encoded map.
    ///
    /// ```
    /// use dlpack_abi::arrow::Metadata;
    ///
    /// let bytes = 0i32.to_ne_bytes();
    /// assert_eq!(Metadata::parse(&bytes)?.as_bytes(), bytes);
    /// # Ok::<(), dlpack_abi::arrow::MetadataError>(())
    /// ```
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The number of pairs.
    ///
    /// ```
    /// use dlpack_abi::arrow::Metadata;
    ///
    /// let mut bytes = 2i32.to_ne_bytes().to_vec();
    /// for part in [&b"a"[..], b"1", b"b", b"2"] {
    ///     bytes.extend(i32::try_from(part.len()).unwrap().to_ne_bytes());
    ///     bytes.extend(part);
    /// }
    /// assert_eq!(Metadata::parse(&bytes)?.len(), 2);
    /// # Ok::<(), dlpack_abi::arrow::MetadataError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no pairs.
    ///
    /// ```
    /// use dlpack_abi::arrow::Metadata;
    ///
    /// assert!(Metadata::parse(&0i32.to_ne_bytes())?.is_empty());
    /// # Ok::<(), dlpack_abi::arrow::MetadataError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pairs, in order (keys may repeat; the encoding allows it).
    ///
    /// ```
    /// use dlpack_abi::arrow::Metadata;
    ///
    /// let mut bytes = 2i32.to_ne_bytes().to_vec();
    /// for part in [&b"k"[..], b"first", b"k", b"second"] {
    ///     bytes.extend(i32::try_from(part.len()).unwrap().to_ne_bytes());
    ///     bytes.extend(part);
    /// }
    /// let metadata = Metadata::parse(&bytes)?;
    /// let values: Vec<&[u8]> = metadata.iter().map(|(_, value)| value).collect();
    /// assert_eq!(values, [&b"first"[..], b"second"]); // repeated keys are kept, in order
    /// # Ok::<(), dlpack_abi::arrow::MetadataError>(())
    /// ```
    pub fn iter(&self) -> MetadataIter<'a> {
        MetadataIter {
            bytes: self.bytes,
            at: 4,
            left: self.len,
        }
    }

    /// The value of the first pair with `key`.
    ///
    /// ```
    /// use dlpack_abi::arrow::Metadata;
    ///
    /// let mut bytes = 1i32.to_ne_bytes().to_vec();
    /// for part in [&b"ARROW:extension:name"[..], b"arrow.bool8"] {
    ///     bytes.extend(i32::try_from(part.len()).unwrap().to_ne_bytes());
    ///     bytes.extend(part);
    /// }
    /// let metadata = Metadata::parse(&bytes)?;
    /// assert_eq!(metadata.get("ARROW:extension:name"), Some(&b"arrow.bool8"[..]));
    /// assert_eq!(metadata.get("missing"), None);
    /// # Ok::<(), dlpack_abi::arrow::MetadataError>(())
    /// ```
    pub fn get(&self, key: &str) -> Option<&'a [u8]> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

impl core::fmt::Debug for Metadata<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(k, v)| (k, super::Excerpt::of(v))))
            .finish()
    }
}

/// The pairs of a [`Metadata`] map: `(key, value)`.
///
/// ```
/// use dlpack_abi::arrow::Metadata;
///
/// let mut bytes = 1i32.to_ne_bytes().to_vec();
/// for part in [&b"owner"[..], b"lab"] {
///     bytes.extend(i32::try_from(part.len()).unwrap().to_ne_bytes());
///     bytes.extend(part);
/// }
/// let mut pairs = Metadata::parse(&bytes)?.iter();
/// assert_eq!(pairs.next(), Some(("owner", &b"lab"[..])));
/// assert_eq!(pairs.next(), None);
/// # Ok::<(), dlpack_abi::arrow::MetadataError>(())
/// ```
#[derive(Clone, Debug)]
pub struct MetadataIter<'a> {
    bytes: &'a [u8],
    at: usize,
    left: usize,
}

impl<'a> Iterator for MetadataIter<'a> {
    type Item = (&'a str, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        self.left = self.left.checked_sub(1)?;
        // Parsed and checked before the iterator was made: these cannot fail.
        let (start, end) = read_part(self.bytes, self.at).ok()?;
        let key = core::str::from_utf8(&self.bytes[start..end]).ok()?;
        let (start, value_end) = read_part(self.bytes, end).ok()?;
        self.at = value_end;
        Some((key, &self.bytes[start..value_end]))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// The number of `pairs` and the size of the map that encodes them (`None` for no pairs: no
/// map), checked to fit the encoding's `int32` counts and lengths.
#[cfg(feature = "alloc")]
pub(crate) fn encoded_size<'a>(
    pairs: impl Iterator<Item = (&'a str, &'a [u8])>,
) -> Result<Option<(usize, usize)>, MetadataError> {
    let fits = |n: usize| i32::try_from(n).is_ok();
    let (mut count, mut size) = (0usize, 4usize);
    for (key, value) in pairs {
        count += 1;
        if !fits(key.len()) || !fits(value.len()) {
            return Err(MetadataError::TooLarge);
        }
        size = [8, key.len(), value.len()]
            .into_iter()
            .try_fold(size, usize::checked_add)
            .filter(|&size| size <= isize::MAX as usize)
            .ok_or(MetadataError::TooLarge)?;
    }
    match count {
        0 => Ok(None),
        _ if fits(count) => Ok(Some((count, size))),
        _ => Err(MetadataError::TooLarge),
    }
}

/// Encodes the `count` pairs of `pairs` (sized by [`encoded_size`]) as a map, part by part,
/// through `out`.
#[cfg(feature = "alloc")]
pub(crate) fn encode<'a, E>(
    count: usize,
    pairs: impl Iterator<Item = (&'a str, &'a [u8])>,
    mut out: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    // Checked to fit by `encoded_size`.
    let int32 = |n: usize| i32::try_from(n).unwrap_or(i32::MAX).to_ne_bytes();
    out(&int32(count))?;
    for (key, value) in pairs {
        out(&int32(key.len()))?;
        out(key.as_bytes())?;
        out(&int32(value.len()))?;
        out(value)?;
    }
    Ok(())
}
