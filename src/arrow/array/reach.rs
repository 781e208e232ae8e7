//! How many bytes each buffer of an array node reaches ([`ArrayView::buffer_len`]): the buffer
//! layouts of the C Data Interface in one place, for whoever must know which memory a reader of
//! an import may touch (a borrow registry, a copy).
#![allow(unsafe_code)]

use super::{packed_bytes, ArrayView};
use crate::arrow::{DataType, UnionMode};

impl ArrayView<'_> {
    /// The bytes buffer `index` of this node holds from its address for a reader of the node
    /// (its `offset` and `length` applied), by the C Data Interface's layout of its type:
    /// bitmaps and fixed-width values to `offset + length`, offsets to one past, the data of a
    /// variable-size type to its last offset (none for an empty node), a view type's data
    /// buffers to the sizes its last buffer gives. 0 for a NULL buffer and for buffers no
    /// reader reads. Children and the dictionary are nodes of their own.
    ///
    /// `None` when there is no buffer `index`, or when its size cannot be known: it is written
    /// in memory the host cannot read (the last offset of a device array's strings), or is not
    /// a size (a negative offset).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // ["ab", "cde"]: offsets [0, 2, 5] and five bytes of data.
    /// let (offsets, data) = (vec![0i32, 2, 5], b"abcde".to_vec());
    /// let buffers = vec![core::ptr::null(), offsets.as_ptr().cast(), data.as_ptr().cast()];
    /// // SAFETY: the offsets and data describe 2 strings and live in the owner until release.
    /// let array = unsafe { Array::from_parts(ArrayParts::new(2, buffers), (offsets, data)) };
    /// let schema = SchemaDef::new("u")?.export()?;
    /// let view = array.view(schema.view())?;
    /// assert_eq!(view.buffer_len(0), Some(0)); // no validity bitmap
    /// assert_eq!(view.buffer_len(1), Some(12)); // three i32 offsets
    /// assert_eq!(view.buffer_len(2), Some(5)); // to the last offset
    /// assert_eq!(view.buffer_len(3), None);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn buffer_len(&self, index: usize) -> Option<usize> {
        use DataType::*;
        if self.buffer(index)?.is_null() {
            return Some(0);
        }
        // Validated: `offset + length` and every size below it fits `isize`.
        let end = self.offset() + self.len();
        let data_type = self.data_type();
        if index == 0 && data_type.has_validity() {
            return packed_bytes(end, 1);
        }
        let times = |width: usize| end.checked_mul(width);
        match (data_type, index) {
            (_, 1) if data_type.bit_width().is_some() => packed_bytes(end, data_type.bit_width()?),
            (Binary | Utf8 | List | Map, 1) => (end + 1).checked_mul(4),
            (LargeBinary | LargeUtf8 | LargeList, 1) => (end + 1).checked_mul(8),
            (Binary | Utf8 | LargeBinary | LargeUtf8, 2) if self.is_empty() => Some(0),
            (Binary | Utf8, 2) => self.read_size::<i32>(1, end),
            (LargeBinary | LargeUtf8, 2) => self.read_size::<i64>(1, end),
            (ListView, 1 | 2) => times(4),
            (LargeListView, 1 | 2) => times(8),
            (BinaryView | Utf8View, 1) => times(16),
            (BinaryView | Utf8View, _) => {
                let sizes = self.n_buffers() - 1; // validated: at least 3 buffers
                if index == sizes {
                    (sizes - 2).checked_mul(8)
                } else {
                    self.read_size::<i64>(sizes, index - 2)
                }
            }
            (Union(..), 0) => Some(end), // one i8 type id per slot
            (Union(UnionMode::Dense, _), 1) => times(4),
            _ => Some(0),
        }
    }

    /// Element `at` of buffer `index`, read as a size, when the host can read it.
    fn read_size<T: Copy + TryInto<usize>>(&self, index: usize, at: usize) -> Option<usize> {
        self.host?;
        let base = self.buffer(index)?.cast::<T>();
        if base.is_null() {
            return None;
        }
        // SAFETY: the C Data Interface's layout puts at least `at + 1` elements in this buffer
        // (offsets: `offset + length + 1`; variadic sizes: one per data buffer), the importer's
        // contract that validation relies on too: the element is inside it.
        let slot = unsafe { base.add(at) };
        // SAFETY: as above, in host memory (checked); unaligned producers are read byte-wise.
        let value = unsafe { slot.read_unaligned() };
        value.try_into().ok()
    }
}
