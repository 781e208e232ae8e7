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
    ///
    /// # Errors
    /// [`ValidationError`] when the array does not follow the C Data Interface for `schema` (see the
    /// table in the [module docs](crate::arrow)).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, SchemaDef, ValidationError};
    ///
    /// // A producer fills an `ArrowArray` (here this crate's own exporter does).
    /// let schema = SchemaDef::new("l")?.export()?;
    /// let mut c_array = Array::from_vec(vec![1i64, 2, 3])?.into_raw();
    /// // SAFETY: `c_array` is an int64 array the caller owns; `from_raw` moves it out.
    /// let array = unsafe { Array::from_raw(&mut c_array, schema.view()) }?;
    /// assert!(c_array.release.is_none()); // moved: the source is marked released
    /// assert_eq!(array.view(schema.view())?.values::<i64>()?, [1, 2, 3]);
    ///
    /// // An array that is not what its schema says: refused, and released.
    /// let mut short = Array::from_vec(vec![1i64])?.into_raw();
    /// short.length = -1;
    /// let error = unsafe { Array::from_raw(&mut short, schema.view()) }.unwrap_err();
    /// assert_eq!(error, ValidationError::NegativeLength { length: -1 });
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
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
    ///
    /// # Errors
    /// [`ValidationError::SchemaMismatch`] for a schema the array is not bound to; the validation's
    /// errors when the tree does not fit it.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, SchemaDef, ValidationError};
    ///
    /// let array = Array::from_vec(vec![1u16, 2])?;
    /// let schema = SchemaDef::of::<u16>()?.export()?;
    /// assert_eq!(array.view(schema.view())?.values::<u16>()?, [1, 2]);
    /// let wider = SchemaDef::of::<u32>()?.export()?;
    /// assert_eq!(array.view(wider.view()).err(), Some(ValidationError::SchemaMismatch));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn view<'a>(&'a self, schema: SchemaRef<'a>) -> Result<ArrayView<'a>, ValidationError> {
        self.binding.check(schema)?;
        ArrayView::on_device(self.inner.raw(), schema, Some(kDLCPU), kDLCPU)
    }

    /// The number of values.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::Array;
    ///
    /// assert_eq!(Array::from_vec(vec![1.0f32, 2.0, 3.0])?.len(), 3);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn len(&self) -> usize {
        count(self.inner.raw().length)
    }

    /// Whether there are no values.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::Array;
    ///
    /// assert!(Array::from_vec(Vec::<f64>::new())?.is_empty());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The struct, for reading raw fields.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::Array;
    ///
    /// let array = Array::from_vec(vec![7u8, 8])?;
    /// assert_eq!((array.as_raw().length, array.as_raw().n_buffers), (2, 2));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn as_raw(&self) -> &ArrowArray {
        self.inner.raw()
    }

    /// Gives the struct away unreleased.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::Array;
    ///
    /// let mut c_array = Array::from_vec(vec![1i32, 2])?.into_raw();
    /// assert_eq!(c_array.length, 2);
    /// // Whoever holds the struct now calls its `release`, exactly once.
    /// let release = c_array.release.expect("a live array has a release callback");
    /// unsafe { release(&mut c_array) };
    /// assert!(c_array.release.is_none());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
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
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use core::mem::MaybeUninit;
    /// use dlpack_abi::arrow::{Array, SchemaDef};
    /// use dlpack_abi::raw::ArrowArray;
    ///
    /// // A consumer's struct, as `__arrow_c_array__` or a C caller hands it over.
    /// let mut out = MaybeUninit::<ArrowArray>::uninit();
    /// // SAFETY: `out` is valid for writes of an `ArrowArray`.
    /// unsafe { Array::from_vec(vec![5i64, 6])?.export_to(out.as_mut_ptr()) };
    /// // SAFETY: `export_to` initialised it; the consumer owns it now.
    /// let mut c_array = unsafe { out.assume_init() };
    /// let schema = SchemaDef::new("l")?.export()?;
    /// let array = unsafe { Array::from_raw(&mut c_array, schema.view()) }?;
    /// assert_eq!(array.view(schema.view())?.values::<i64>()?, [5, 6]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
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
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Array, DataType, SchemaDef};
///
/// let schema = SchemaDef::new("g")?.with_name("x").export()?;
/// let array = Array::from_vec(vec![0.5f64, 1.5])?;
/// let view = array.view(schema.view())?;
/// assert_eq!((view.data_type(), view.len(), view.null_count()), (DataType::Float64, 2, Some(0)));
/// assert_eq!(view.values::<f64>()?, [0.5, 1.5]);
/// # }
/// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
/// ```
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
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, SchemaDef};
    ///
    /// let schema = SchemaDef::new("C")?.export()?;
    /// let array = Array::from_vec(vec![1u8, 2, 3])?;
    /// assert_eq!(array.view(schema.view())?.raw().length, 3);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn raw(&self) -> &'a ArrowArray {
        self.raw
    }

    /// The schema this view was checked against.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, SchemaDef};
    ///
    /// let schema = SchemaDef::new("C")?.with_name("bytes").export()?;
    /// let array = Array::from_vec(vec![1u8])?;
    /// assert_eq!(array.view(schema.view())?.schema().name(), Some("bytes"));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn schema(&self) -> SchemaRef<'a> {
        self.schema
    }

    /// The type.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, DataType, SchemaDef};
    ///
    /// let schema = SchemaDef::new("s")?.export()?;
    /// let array = Array::from_vec(vec![1i16])?;
    /// assert_eq!(array.view(schema.view())?.data_type(), DataType::Int16);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn data_type(&self) -> DataType<'a> {
        self.schema.data_type()
    }

    /// The number of values.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, SchemaDef};
    ///
    /// let schema = SchemaDef::new("i")?.export()?;
    /// let array = Array::from_vec(vec![1i32, 2, 3])?;
    /// assert_eq!(array.view(schema.view())?.len(), 3);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn len(&self) -> usize {
        count(self.raw.length)
    }

    /// Whether there are no values.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, SchemaDef};
    ///
    /// let schema = SchemaDef::new("i")?.export()?;
    /// let array = Array::from_vec(Vec::<i32>::new())?;
    /// assert!(array.view(schema.view())?.is_empty());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The offset into the buffers, in values.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // Values 20 and 30: two values, one value into the buffer.
    /// let values = vec![10i32, 20, 30];
    /// let parts = ArrayParts::new(2, vec![core::ptr::null(), values.as_ptr().cast()]).with_offset(1);
    /// // SAFETY: the buffer holds offset + length = 3 int32 values, kept alive by the owner.
    /// let array = unsafe { Array::from_parts(parts, values) };
    /// let schema = SchemaDef::new("i")?.export()?;
    /// let view = array.view(schema.view())?;
    /// assert_eq!(view.offset(), 1);
    /// assert_eq!(view.values::<i32>()?, [20, 30]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn offset(&self) -> usize {
        count(self.raw.offset)
    }

    /// The number of nulls, `None` when the producer did not compute it (-1).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // [1, null, 3]: validity bits 0b101, least significant bit first.
    /// let (validity, values) = (vec![0b101u8], vec![1i32, 0, 3]);
    /// let buffers = vec![validity.as_ptr().cast(), values.as_ptr().cast()];
    /// // SAFETY: both buffers cover the 3 values and live in the owner until release.
    /// let array = unsafe { Array::from_parts(ArrayParts::new(3, buffers).with_null_count(1), (validity, values)) };
    /// let schema = SchemaDef::new("i")?.nullable().export()?;
    /// assert_eq!(array.view(schema.view())?.null_count(), Some(1));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn null_count(&self) -> Option<usize> {
        usize::try_from(self.raw.null_count).ok()
    }

    /// The number of buffers.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, SchemaDef};
    ///
    /// // Validity and values, as every fixed-width type has.
    /// let schema = SchemaDef::new("f")?.export()?;
    /// let array = Array::from_vec(vec![1.0f32])?;
    /// assert_eq!(array.view(schema.view())?.n_buffers(), 2);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn n_buffers(&self) -> usize {
        count(self.raw.n_buffers)
    }

    /// Buffer `index`'s address (device memory for a device array; may be NULL).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, SchemaDef};
    ///
    /// let values = vec![1.0f32, 2.0];
    /// let address = values.as_ptr().cast();
    /// let schema = SchemaDef::new("f")?.export()?;
    /// let array = Array::from_vec(values)?;
    /// let view = array.view(schema.view())?;
    /// assert_eq!(view.buffer(0), Some(core::ptr::null())); // no validity bitmap: no nulls
    /// assert_eq!(view.buffer(1), Some(address));
    /// assert_eq!(view.buffer(2), None);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn buffer(&self, index: usize) -> Option<*const c_void> {
        // SAFETY: validated: `buffers` holds `n_buffers` (> index) pointers.
        (index < self.n_buffers()).then(|| unsafe { nth(self.raw.buffers, index) })
    }

    /// Child `index`.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, SchemaDef};
    ///
    /// let schema = SchemaDef::fixed_shape_tensor(SchemaDef::new("i")?, &[2])?.export()?;
    /// let cells = Array::fixed_size_list(Array::from_vec(vec![1i32, 2, 3, 4])?, 2)?;
    /// let view = cells.view(schema.view())?;
    /// assert_eq!(view.child(0).unwrap().values::<i32>()?, [1, 2, 3, 4]);
    /// assert!(view.child(1).is_none());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn child(&self, index: usize) -> Option<ArrayView<'a>> {
        (index < self.schema.n_children()).then(|| self.child_in_range(index))
    }

    /// The children, in order.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // A struct array {a: int64, b: float32} of two rows.
    /// let parts = ArrayParts::new(2, vec![core::ptr::null()])
    ///     .with_child(Array::from_vec(vec![1i64, 2])?)
    ///     .with_child(Array::from_vec(vec![0.5f32, 1.5])?);
    /// // SAFETY: no validity bitmap (no nulls); each child holds two values and is released with it.
    /// let array = unsafe { Array::from_parts(parts, ()) };
    /// let schema = SchemaDef::new("+s")?
    ///     .with_child(SchemaDef::new("l")?.with_name("a"))
    ///     .with_child(SchemaDef::new("f")?.with_name("b"))
    ///     .export()?;
    /// let view = array.view(schema.view())?;
    /// let lengths: Vec<usize> = view.children().map(|child| child.len()).collect();
    /// assert_eq!(lengths, [2, 2]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
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
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // Indices [1, 0, 1] into the dictionary [10, 20].
    /// let indices = vec![1i8, 0, 1];
    /// let parts = ArrayParts::new(3, vec![core::ptr::null(), indices.as_ptr().cast()])
    ///     .with_dictionary(Array::from_vec(vec![10i64, 20])?);
    /// // SAFETY: three int8 indices, below the dictionary's length, kept alive by the owner.
    /// let array = unsafe { Array::from_parts(parts, indices) };
    /// let schema = SchemaDef::new("c")?.with_dictionary(SchemaDef::new("l")?).export()?;
    /// let view = array.view(schema.view())?;
    /// assert_eq!(view.values::<i8>()?, [1, 0, 1]);
    /// assert_eq!(view.dictionary().unwrap().values::<i64>()?, [10, 20]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
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
    ///
    /// # Errors
    /// [`ReadError::TypeMismatch`] when `T` is not the array's type, [`ReadError::NotHostAccessible`]
    /// for device memory (or memory still waiting on its sync event), [`ReadError::Misaligned`] when
    /// the values are not aligned for `T`.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ReadError, SchemaDef};
    ///
    /// let schema = SchemaDef::new("l")?.export()?;
    /// let array = Array::from_vec(vec![1i64, 2])?;
    /// let view = array.view(schema.view())?;
    /// assert_eq!(view.values::<i64>()?, [1, 2]);
    /// assert!(matches!(view.values::<u64>(), Err(ReadError::TypeMismatch { .. })));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
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
    ///
    /// # Errors
    /// [`ReadError::NotHostAccessible`] for device memory, or memory still waiting on its sync event.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // [1, null, 3]: validity bits 0b101, least significant bit first.
    /// let (validity, values) = (vec![0b101u8], vec![1i32, 0, 3]);
    /// let buffers = vec![validity.as_ptr().cast(), values.as_ptr().cast()];
    /// // SAFETY: both buffers cover the 3 values and live in the owner until release.
    /// let array = unsafe { Array::from_parts(ArrayParts::new(3, buffers).with_null_count(1), (validity, values)) };
    /// let schema = SchemaDef::new("i")?.nullable().export()?;
    /// let valid = array.view(schema.view())?.validity()?.expect("the array has nulls");
    /// assert_eq!(valid.iter().collect::<Vec<_>>(), [true, false, true]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
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
    ///
    /// # Errors
    /// [`ReadError::TypeMismatch`] when the array is not `Boolean`; [`ReadError::NotHostAccessible`]
    /// for device memory, or memory still waiting on its sync event.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // [true, true, false, true], bit-packed least significant bit first.
    /// let bits = vec![0b1011u8];
    /// let parts = ArrayParts::new(4, vec![core::ptr::null(), bits.as_ptr().cast()]);
    /// // SAFETY: one byte holds the 4 bits; the owner keeps it alive until release.
    /// let array = unsafe { Array::from_parts(parts, bits) };
    /// let schema = SchemaDef::new("b")?.export()?;
    /// let booleans = array.view(schema.view())?.booleans()?;
    /// assert_eq!(booleans.iter().collect::<Vec<_>>(), [true, true, false, true]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
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
