//! `ArrowArray`: the owning [`Array`] (this file: import, export, ownership), its validation
//! against a schema (`validate.rs`), the validated, borrowed [`ArrayView`] (`view.rs`) and the
//! [`Bitmap`]s it reads (`bitmap.rs`).
#![allow(unsafe_code)]

mod bitmap;
mod reach;
mod validate;
mod view;

pub use bitmap::Bitmap;
pub(crate) use validate::{count, nth, packed_bytes, validate};
pub use view::ArrayView;

use super::binding::Binding;
use super::owned::Owned;
use super::{SchemaRef, ValidationError, MAX_NODES};
use crate::raw::{kDLCPU, ArrowArray};

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
