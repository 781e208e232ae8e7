//! [`Bitmap`]: a bit-packed validity or boolean buffer, read bit by bit.
#![allow(unsafe_code)]

/// A bit-packed bitmap (validity or booleans), least significant bit first, starting `offset`
/// bits into its bytes.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
///
/// // Five booleans starting 3 bits into the byte 0b1011_0000.
/// let bits = vec![0b1011_0000u8];
/// let parts = ArrayParts::new(5, vec![core::ptr::null(), bits.as_ptr().cast()]).with_offset(3);
/// // SAFETY: one byte holds offset + length = 8 bits; the owner keeps it alive until release.
/// let array = unsafe { Array::from_parts(parts, bits) };
/// let schema = SchemaDef::new("b")?.export()?;
/// let bitmap = array.view(schema.view())?.booleans()?;
/// assert_eq!(bitmap.iter().collect::<Vec<_>>(), [false, true, true, false, true]);
/// # }
/// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
/// ```
#[derive(Clone, Copy)]
pub struct Bitmap<'a> {
    bytes: &'a [u8],
    offset: usize,
    len: usize,
}

impl<'a> Bitmap<'a> {
    /// # Safety
    /// When `offset + len > 0`, `base` is non-NULL and `(offset + len).div_ceil(8)` bytes from it
    /// are readable and unchanged for `'a`.
    pub(super) unsafe fn new(base: *const u8, offset: usize, len: usize) -> Self {
        // A bitmap of `offset + len` bits (a `usize`): its bytes always fit.
        let size = super::packed_bytes(offset + len, 1).unwrap_or(0);
        let bytes = if size == 0 {
            &[][..]
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { core::slice::from_raw_parts(base, size) }
        };
        Self { bytes, offset, len }
    }

    /// The number of bits.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// let bits = vec![0b1011u8];
    /// let parts = ArrayParts::new(4, vec![core::ptr::null(), bits.as_ptr().cast()]);
    /// // SAFETY: one byte holds the 4 bits; the owner keeps it alive until release.
    /// let array = unsafe { Array::from_parts(parts, bits) };
    /// let schema = SchemaDef::new("b")?.export()?;
    /// assert_eq!(array.view(schema.view())?.booleans()?.len(), 4);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bits.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // SAFETY: no values, so no buffer is read.
    /// let array = unsafe { Array::from_parts(ArrayParts::new(0, vec![core::ptr::null(); 2]), ()) };
    /// let schema = SchemaDef::new("b")?.export()?;
    /// assert!(array.view(schema.view())?.booleans()?.is_empty());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bit `index`.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// let bits = vec![0b10u8];
    /// let parts = ArrayParts::new(2, vec![core::ptr::null(), bits.as_ptr().cast()]);
    /// // SAFETY: one byte holds the 2 bits; the owner keeps it alive until release.
    /// let array = unsafe { Array::from_parts(parts, bits) };
    /// let schema = SchemaDef::new("b")?.export()?;
    /// let booleans = array.view(schema.view())?.booleans()?;
    /// assert_eq!((booleans.get(0), booleans.get(1), booleans.get(2)), (Some(false), Some(true), None));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn get(&self, index: usize) -> Option<bool> {
        if index >= self.len {
            return None;
        }
        Some(self.bit(index))
    }

    /// The bits, in order.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// let bits = vec![0b110u8];
    /// let parts = ArrayParts::new(3, vec![core::ptr::null(), bits.as_ptr().cast()]);
    /// // SAFETY: one byte holds the 3 bits; the owner keeps it alive until release.
    /// let array = unsafe { Array::from_parts(parts, bits) };
    /// let schema = SchemaDef::new("b")?.export()?;
    /// let booleans = array.view(schema.view())?.booleans()?;
    /// assert!(booleans.iter().eq([false, true, true]));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = bool> + 'a {
        let this = *self;
        (0..this.len).map(move |i| this.bit(i))
    }

    /// Bit `index`, which is below `len` (so its byte is in `bytes`).
    fn bit(&self, index: usize) -> bool {
        let bit = self.offset + index;
        self.bytes[bit / 8] & (1 << (bit % 8)) != 0
    }

    /// The number of set bits.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// let bits = vec![0b1101u8];
    /// let parts = ArrayParts::new(4, vec![core::ptr::null(), bits.as_ptr().cast()]);
    /// // SAFETY: one byte holds the 4 bits; the owner keeps it alive until release.
    /// let array = unsafe { Array::from_parts(parts, bits) };
    /// let schema = SchemaDef::new("b")?.export()?;
    /// assert_eq!(array.view(schema.view())?.booleans()?.count_ones(), 3);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn count_ones(&self) -> usize {
        self.iter().filter(|&b| b).count()
    }
}

impl core::fmt::Debug for Bitmap<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter().map(u8::from)).finish()
    }
}
