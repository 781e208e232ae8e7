//! [`ArrayView`]: a validated array node with its schema, and typed reads of its buffers.
#![allow(unsafe_code)]

use core::ffi::c_void;

use super::super::{DataType, Excerpt, ReadError, SchemaRef, ValidationError, MAX_NODES};
use super::{count, nth, validate, Bitmap};
use crate::dlpack::Element;
use crate::raw::{ArrowArray, DLDeviceType};

/// A validated array node with its schema, borrowed from an [`Array`](super::Array) or a
/// [`DeviceArray`](crate::arrow::DeviceArray).
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
    pub(super) host: Option<DLDeviceType>,
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
