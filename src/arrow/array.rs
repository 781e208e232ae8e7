//! `ArrowArray`: the owning [`Array`] and the validated, borrowed [`ArrayView`].
#![allow(unsafe_code)]

use core::ffi::c_void;

use super::binding::Binding;
use super::format::BufferCount;
use super::owned::Owned;
use super::{DataType, Excerpt, ReadError, SchemaRef, ValidationError, MAX_DEPTH, MAX_NODES};
use crate::dlpack::Element;
use crate::raw::{kDLCPU, ArrowArray, DLDeviceType};

/// An `ArrowArray` this crate owns: validated against a schema at import, released exactly once
/// on drop.
///
/// An array does not keep its schema (the C Data Interface exchanges them separately, and a
/// stream shares one schema between many arrays): [`view`](Self::view) takes the schema again
/// and re-checks the structure against it, which reads only the structs, never the data.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Array, SchemaDef};
///
/// let schema = SchemaDef::new("i")?.export()?;
/// let mut c_array = Array::from_vec(vec![1i32, 2, 3])?.into_raw(); // as a producer would fill it
/// let array = unsafe { Array::from_raw(&mut c_array, schema.view()) }?;
/// assert_eq!(array.view(schema.view())?.values::<i32>()?, &[1, 2, 3]);
/// # }
/// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
/// ```
pub struct Array {
    inner: Owned<ArrowArray>,
    /// What the buffers were sized for: `view` accepts only that.
    binding: Binding,
}

// SAFETY: an array's buffers are immutable and owned through `private_data`; the C Data
// Interface lets a consumer move it and release it from any thread.
unsafe impl Send for Array {}
// SAFETY: shared access only reads.
unsafe impl Sync for Array {}

impl Array {
    /// Takes ownership of a producer's array and validates it against `schema`: lengths,
    /// offsets, null counts, buffer and child counts for the type, the buffers the type needs
    /// (fixed-width data, validity when there are nulls), child lengths, the dictionary.
    ///
    /// On every error except [`ValidationError::NullPointer`] and [`ValidationError::Released`] the array
    /// has been released, exactly once, when this returns.
    ///
    /// # Safety
    /// `ptr` is NULL or points to an `ArrowArray` the caller owns, which follows the C Data
    /// Interface for `schema`'s type: `buffers` and `children` hold `n_buffers` and
    /// `n_children` pointers, each buffer is as large as the type's layout needs for
    /// `offset + length` values, and nothing changes until release. Its buffers are CPU memory.
    pub unsafe fn from_raw(
        ptr: *mut ArrowArray,
        schema: SchemaRef<'_>,
    ) -> Result<Self, ValidationError> {
        // SAFETY: forwarded from the caller.
        let inner = unsafe { Owned::take(ptr) }?;
        let mut budget = MAX_NODES;
        // SAFETY: the tree follows the C Data Interface (caller).
        unsafe { validate(inner.raw(), schema, 0, &mut budget) }?;
        Ok(Self {
            inner,
            binding: Binding::of(schema),
        })
    }

    /// Validates the array against `schema` and binds it there: afterwards only `schema` reads
    /// it. For an array built by [`from_parts`](Self::from_parts), whose caller vouched for the
    /// schemas it is used with, this makes the first use a check and refuses any other schema.
    ///
    /// # Errors
    /// [`ValidationError::SchemaMismatch`] when the array is bound to another schema; the
    /// validation's errors when it does not fit `schema`. The array has been released then.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, SchemaDef, ValidationError};
    ///
    /// let schema = SchemaDef::new("i")?.export()?;
    /// let array = Array::from_vec(vec![1i32, 2])?.bind(schema.view())?;
    /// assert_eq!(array.view(schema.view())?.values::<i32>()?, [1, 2]);
    /// let same_layout = SchemaDef::new("i")?.export()?;
    /// assert_eq!(array.view(same_layout.view()).err(), Some(ValidationError::SchemaMismatch));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn bind(self, schema: SchemaRef<'_>) -> Result<Self, ValidationError> {
        self.binding.check(schema)?;
        let mut budget = MAX_NODES;
        // SAFETY: an `Array` follows the C Data Interface for the schemas its binding accepts
        // (validated at import, built by this crate, or vouched for by `from_parts`' caller),
        // and `schema` is one of them (checked above).
        unsafe { validate(self.inner.raw(), schema, 0, &mut budget) }?;
        Ok(Self {
            binding: Binding::of(schema),
            ..self
        })
    }

    #[cfg(feature = "alloc")]
    pub(crate) fn from_owned(inner: Owned<ArrowArray>, binding: Binding) -> Self {
        Self { inner, binding }
    }

    /// Binds an array this crate built to its exact layout.
    #[cfg(feature = "alloc")]
    pub(crate) fn bound_to(mut self, layout: super::SchemaDef) -> Self {
        self.binding = Binding::Layout(alloc::boxed::Box::new(layout));
        self
    }

    #[cfg(feature = "alloc")]
    pub(crate) fn binding(&self) -> &Binding {
        &self.binding
    }

    /// The struct and what it is bound to.
    pub(crate) fn into_parts(self) -> (ArrowArray, Binding) {
        (self.inner.into_raw(), self.binding)
    }

    /// A validated view for reading with `schema`, which must be the schema the array was
    /// imported with (or, for an array this crate built, one of exactly its layout); any other
    /// is [`ValidationError::SchemaMismatch`], as the buffers were not sized for it.
    pub fn view<'a>(&'a self, schema: SchemaRef<'a>) -> Result<ArrayView<'a>, ValidationError> {
        self.binding.check(schema)?;
        ArrayView::on_device(self.inner.raw(), schema, Some(kDLCPU), kDLCPU)
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        count(self.inner.raw().length)
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The struct, for reading raw fields.
    pub fn as_raw(&self) -> &ArrowArray {
        self.inner.raw()
    }

    /// Gives the struct away unreleased.
    pub fn into_raw(self) -> ArrowArray {
        self.inner.into_raw()
    }

    #[cfg(feature = "alloc")]
    pub(crate) fn into_owned(self) -> Owned<ArrowArray> {
        self.inner
    }

    /// Moves the array into a consumer's struct (`ptr::write`: the old content is neither
    /// read nor released). The consumer then owns it.
    ///
    /// # Safety
    /// `out` is valid for writes of an `ArrowArray`.
    pub unsafe fn export_to(self, out: *mut ArrowArray) {
        // SAFETY: forwarded from the caller.
        unsafe { self.inner.export_to(out) }
    }
}

impl core::fmt::Debug for Array {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let raw = self.as_raw();
        f.debug_struct("Array")
            .field("length", &raw.length)
            .field("null_count", &raw.null_count)
            .field("offset", &raw.offset)
            .field("n_buffers", &raw.n_buffers)
            .field("n_children", &raw.n_children)
            .finish_non_exhaustive()
    }
}

/// Element `index` of a C array of the structs (`buffers`, `children`), by value.
///
/// # Safety
/// `array` points to at least `index + 1` readable, initialised elements.
#[inline(always)]
pub(crate) unsafe fn nth<T: Copy>(array: *const T, index: usize) -> T {
    // SAFETY: `index` is within the array (caller's contract).
    let slot = unsafe { array.add(index) };
    // SAFETY: readable and initialised (caller's contract).
    unsafe { slot.read() }
}

/// A count validation has bounded (a length, offset or buffer count: `0..=isize::MAX`), as a
/// `usize`. Total: anything else (never seen once validated) is 0.
pub(crate) fn count(value: i64) -> usize {
    usize::try_from(value).unwrap_or(0)
}

/// Validates an array node against its schema and, recursively, its children and dictionary.
///
/// # Safety
/// `array` follows the C Data Interface for `schema`'s type (see [`Array::from_raw`]).
pub(crate) unsafe fn validate(
    array: &ArrowArray,
    schema: SchemaRef<'_>,
    depth: usize,
    budget: &mut usize,
) -> Result<(), ValidationError> {
    if depth > MAX_DEPTH {
        return Err(ValidationError::TooDeep);
    }
    *budget = budget.checked_sub(1).ok_or(ValidationError::TooManyNodes)?;
    let &ArrowArray {
        length,
        null_count,
        offset,
        n_buffers,
        n_children,
        ..
    } = array;
    if length < 0 {
        return Err(ValidationError::NegativeLength { length });
    }
    if offset < 0 {
        return Err(ValidationError::NegativeOffset { offset });
    }
    if !(-1..=length).contains(&null_count) {
        return Err(ValidationError::InvalidNullCount { null_count, length });
    }
    let end = offset
        .checked_add(length)
        .filter(|&end| end as u64 <= isize::MAX as u64)
        .ok_or(ValidationError::SizeOverflow)?;
    let data_type = schema.data_type();
    let count_fits = match data_type.buffer_count() {
        BufferCount::Exactly(expected) => (n_buffers == expected, expected),
        BufferCount::AtLeast(expected) => (n_buffers >= expected, expected),
    };
    if !count_fits.0 {
        return Err(ValidationError::BufferCount {
            expected: count_fits.1,
            found: n_buffers,
        });
    }
    // A view type's count is open-ended: an array of that many pointers must fit in memory
    // (and the count in `usize`, which it would not on 32-bit targets from 2^32 on).
    let max_buffers = isize::MAX as usize / core::mem::size_of::<*const c_void>();
    if usize::try_from(n_buffers).map_or(true, |n| n > max_buffers) {
        return Err(ValidationError::TooManyBuffers { n_buffers });
    }
    if n_buffers > 0 && array.buffers.is_null() {
        return Err(ValidationError::NullBuffers);
    }
    // SAFETY: `buffers` holds `n_buffers` pointers (C Data Interface).
    let buffer = |index: usize| unsafe { nth(array.buffers, index) };
    if data_type.has_validity() && null_count > 0 && buffer(0).is_null() {
        return Err(ValidationError::NullBuffer { index: 0 });
    }
    if let Some(bits) = data_type.bit_width() {
        let bytes = (end as u128 * u128::from(bits)).div_ceil(8);
        if bytes > isize::MAX as u128 {
            return Err(ValidationError::SizeOverflow);
        }
        if bytes > 0 && buffer(1).is_null() {
            return Err(ValidationError::NullBuffer { index: 1 });
        }
    }
    // The schema's count was validated (at most `MAX_NODES`), so it converts exactly.
    let expected = i64::try_from(schema.n_children()).unwrap_or(i64::MAX);
    if n_children != expected {
        return Err(ValidationError::ChildCount {
            expected,
            found: n_children,
        });
    }
    if n_children > 0 && array.children.is_null() {
        return Err(ValidationError::NullChildren);
    }
    let needed = match data_type {
        // Capped: a child that long fails its own size check.
        DataType::FixedSizeList(size) => (end as u128 * size as u128).min(i64::MAX as u128),
        DataType::Struct => end as u128,
        _ => 0,
    };
    for (index, child_schema) in schema.children().enumerate() {
        // SAFETY: `children` holds `n_children` pointers (C Data Interface).
        let child = unsafe { nth(array.children, index) };
        // SAFETY: a non-NULL child points to an array (C Data Interface).
        let child = unsafe { child.as_ref() }.ok_or(ValidationError::NullChild { index })?;
        if child.release.is_none() {
            return Err(ValidationError::ReleasedChild { index });
        }
        if (child.length.max(0) as u128) < needed {
            return Err(ValidationError::ChildTooShort {
                index,
                needed: i64::try_from(needed).unwrap_or(i64::MAX),
                found: child.length,
            });
        }
        // SAFETY: a child follows the same rules for its schema.
        unsafe { validate(child, child_schema, depth + 1, budget) }?;
    }
    // SAFETY: a non-NULL dictionary points to an array (C Data Interface).
    match (unsafe { array.dictionary.as_ref() }, schema.dictionary()) {
        (None, None) => {}
        (Some(dictionary), Some(dictionary_schema)) => {
            if dictionary.release.is_none() {
                return Err(ValidationError::ReleasedDictionary);
            }
            // SAFETY: the dictionary follows the same rules.
            unsafe { validate(dictionary, dictionary_schema, depth + 1, budget) }?;
        }
        _ => return Err(ValidationError::DictionaryMismatch),
    }
    Ok(())
}

/// A validated array node with its schema, borrowed from an [`Array`] or a
/// [`DeviceArray`](super::DeviceArray).
#[derive(Clone, Copy)]
pub struct ArrayView<'a> {
    raw: &'a ArrowArray,
    schema: SchemaRef<'a>,
    /// The device, when the host may read the buffers.
    host: Option<DLDeviceType>,
    device_type: DLDeviceType,
}

impl<'a> ArrayView<'a> {
    /// Validates `raw` against `schema`; `host` is the device type when the host may read the
    /// buffers (`None` for device memory, or memory waiting on an event).
    pub(crate) fn on_device(
        raw: &'a ArrowArray,
        schema: SchemaRef<'a>,
        host: Option<DLDeviceType>,
        device_type: DLDeviceType,
    ) -> Result<Self, ValidationError> {
        let mut budget = MAX_NODES;
        // SAFETY: `raw` belongs to an imported (or produced) array, which follows the C Data
        // Interface by the importer's contract; here it is checked against `schema`.
        unsafe { validate(raw, schema, 0, &mut budget) }?;
        Ok(Self {
            raw,
            schema,
            host,
            device_type,
        })
    }

    /// The struct, for reading raw fields.
    pub fn raw(&self) -> &'a ArrowArray {
        self.raw
    }

    /// The schema this view was checked against.
    pub fn schema(&self) -> SchemaRef<'a> {
        self.schema
    }

    /// The type.
    pub fn data_type(&self) -> DataType<'a> {
        self.schema.data_type()
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        count(self.raw.length)
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The offset into the buffers, in values.
    pub fn offset(&self) -> usize {
        count(self.raw.offset)
    }

    /// The number of nulls, `None` when the producer did not compute it (-1).
    pub fn null_count(&self) -> Option<usize> {
        usize::try_from(self.raw.null_count).ok()
    }

    /// The number of buffers.
    pub fn n_buffers(&self) -> usize {
        count(self.raw.n_buffers)
    }

    /// Buffer `index`'s address (device memory for a device array; may be NULL).
    pub fn buffer(&self, index: usize) -> Option<*const c_void> {
        // SAFETY: validated: `buffers` holds `n_buffers` (> index) pointers.
        (index < self.n_buffers()).then(|| unsafe { nth(self.raw.buffers, index) })
    }

    /// Child `index`.
    pub fn child(&self, index: usize) -> Option<ArrayView<'a>> {
        (index < self.schema.n_children()).then(|| self.child_in_range(index))
    }

    /// The children, in order.
    pub fn children(&self) -> impl ExactSizeIterator<Item = ArrayView<'a>> + 'a {
        let this = *self;
        (0..this.schema.n_children()).map(move |i| this.child_in_range(i))
    }

    fn child_in_range(&self, index: usize) -> ArrayView<'a> {
        let schema = self.schema.child_in_range(index);
        // SAFETY: validated: as many children as the schema has (> index).
        let raw = unsafe { nth(self.raw.children, index) };
        // SAFETY: validated: non-NULL and live while the array is.
        let raw = unsafe { &*raw };
        ArrayView {
            raw,
            schema,
            ..*self
        }
    }

    /// The dictionary values, when the array is dictionary-encoded.
    pub fn dictionary(&self) -> Option<ArrayView<'a>> {
        let schema = self.schema.dictionary()?;
        // SAFETY: validated: non-NULL and live when the schema has a dictionary.
        let raw = unsafe { self.raw.dictionary.as_ref() }?;
        Some(ArrayView {
            raw,
            schema,
            ..*self
        })
    }

    fn host_buffer(&self, index: usize) -> Result<*const u8, ReadError> {
        if self.host.is_none() {
            return Err(ReadError::NotHostAccessible {
                device_type: self.device_type,
            });
        }
        Ok(self.buffer(index).unwrap_or(core::ptr::null()).cast())
    }

    /// The values of a primitive integer or float array as a slice (`offset` applied; null
    /// slots hold whatever the producer left there). `T`'s DLPack type must be the array's.
    pub fn values<T: Element>(&self) -> Result<&'a [T], ReadError> {
        crate::dlpack::assert_size_matches::<T>();
        if self.data_type().dlpack_dtype() != Some(T::DTYPE) {
            return Err(ReadError::TypeMismatch {
                format: Excerpt::of(self.schema.format()),
                requested: T::DTYPE,
            });
        }
        let base = self.host_buffer(1)?;
        if self.is_empty() {
            return Ok(&[]);
        }
        // Validation: the buffer is non-NULL and holds `offset + length` values (its size fits
        // isize), so the offset stays inside it.
        let start = base.wrapping_add(self.offset() * core::mem::size_of::<T>());
        if start.align_offset(core::mem::align_of::<T>()) != 0 {
            return Err(ReadError::Misaligned { index: 1 });
        }
        // SAFETY: `start` is aligned, non-NULL and followed by `length` values of the array's
        // type, which `T` stores exactly (`Element`); host memory, immutable until release
        // (C Data Interface), and the view borrows the owner.
        Ok(unsafe { core::slice::from_raw_parts(start.cast::<T>(), self.len()) })
    }

    /// The validity bitmap; `None` when there is none (no nulls) or the type has none.
    pub fn validity(&self) -> Result<Option<Bitmap<'a>>, ReadError> {
        let base = self.host_buffer(0)?;
        if !self.data_type().has_validity() || base.is_null() {
            return Ok(None);
        }
        // SAFETY: a non-NULL validity buffer holds `offset + length` bits (C Data Interface);
        // host memory (checked), immutable until release.
        Ok(Some(unsafe {
            Bitmap::new(base, self.offset(), self.len())
        }))
    }

    /// The values of a `Boolean` array, bit-packed.
    pub fn booleans(&self) -> Result<Bitmap<'a>, ReadError> {
        if self.data_type() != DataType::Boolean {
            return Err(ReadError::TypeMismatch {
                format: Excerpt::of(self.schema.format()),
                requested: crate::raw::DLDataType {
                    code: crate::raw::kDLBool,
                    bits: 1,
                    lanes: 1,
                },
            });
        }
        let base = self.host_buffer(1)?;
        // SAFETY: validated: non-NULL when there are bits, `offset + length` bits long; host
        // memory (checked), immutable until release.
        Ok(unsafe { Bitmap::new(base, self.offset(), self.len()) })
    }
}

impl core::fmt::Debug for ArrayView<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ArrayView")
            .field("format", &Excerpt::of(self.schema.format()))
            .field("length", &self.raw.length)
            .field("null_count", &self.raw.null_count)
            .field("offset", &self.raw.offset)
            .finish_non_exhaustive()
    }
}

/// A bit-packed bitmap (validity or booleans), least significant bit first, starting `offset`
/// bits into its bytes.
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
    unsafe fn new(base: *const u8, offset: usize, len: usize) -> Self {
        let size = (offset + len).div_ceil(8);
        let bytes = if size == 0 {
            &[][..]
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { core::slice::from_raw_parts(base, size) }
        };
        Self { bytes, offset, len }
    }

    /// The number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bit `index`.
    pub fn get(&self, index: usize) -> Option<bool> {
        if index >= self.len {
            return None;
        }
        Some(self.bit(index))
    }

    /// The bits, in order.
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
    pub fn count_ones(&self) -> usize {
        self.iter().filter(|&b| b).count()
    }
}

impl core::fmt::Debug for Bitmap<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter().map(u8::from)).finish()
    }
}
