//! Producing Arrow structs from Rust: [`SchemaDef`] (a schema described in Rust, exported any
//! number of times) and arrays over Rust-owned buffers, with `release` callbacks that free
//! exactly what they own.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::ffi::CString;
use alloc::string::String;
use alloc::vec::Vec;
use core::any::Any;
use core::ffi::c_void;
use core::ptr;

use super::binding::Binding;
use super::owned::{release_produced, Nodes, Owned};
use super::SchemaSource;
use super::{
    Array, BridgeError, DataType, Excerpt, Schema, SchemaRef, TensorShape, ValidationError,
};
use super::{EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, FIXED_SHAPE_TENSOR};
use crate::dlpack::{Element, HostBuffer};
use crate::raw::{ArrowArray, ARROW_FLAG_NULLABLE};

/// A schema described in Rust. [`export`](Self::export) builds a fresh `ArrowSchema` (checked
/// with the same validation as an import) each time it is called, which is what a stream's
/// `get_schema` needs.
///
/// ```
/// use dlpack_abi::arrow::{DataType, SchemaDef};
///
/// let def = SchemaDef::new("+s")?
///     .with_child(SchemaDef::new("l")?.with_name("id"))
///     .with_child(SchemaDef::new("u")?.with_name("label").nullable());
/// let schema = def.export()?;
/// let names: Vec<_> = schema.view().children().map(|c| c.name().unwrap()).collect();
/// assert_eq!(names, ["id", "label"]);
/// assert_eq!(schema.view().child(0).unwrap().data_type(), DataType::Int64);
/// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaDef {
    format: CString,
    name: Option<CString>,
    metadata: Vec<(String, Vec<u8>)>,
    flags: i64,
    children: Vec<SchemaDef>,
    dictionary: Option<Box<SchemaDef>>,
}

impl SchemaDef {
    /// A field of type `format` (checked), without name, metadata, flags or children.
    ///
    /// # Errors
    /// [`ValidationError::InvalidFormat`] when `format` is not a format string of the C Data
    /// Interface (or holds a NUL).
    ///
    /// ```
    /// use dlpack_abi::arrow::{DataType, SchemaDef, ValidationError};
    ///
    /// let decimal = SchemaDef::new("d:9,2")?.export()?;
    /// assert_eq!(decimal.view().data_type(), DataType::Decimal { precision: 9, scale: 2, bit_width: 128 });
    /// assert!(matches!(SchemaDef::new("q"), Err(ValidationError::InvalidFormat { .. })));
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn new(format: &str) -> Result<Self, ValidationError> {
        let invalid = || ValidationError::InvalidFormat {
            format: Excerpt::of(format.as_bytes()),
        };
        DataType::parse(format.as_bytes())?;
        Ok(Self {
            format: CString::new(format).map_err(|_| invalid())?,
            name: None,
            metadata: Vec::new(),
            flags: 0,
            children: Vec::new(),
            dictionary: None,
        })
    }

    /// The primitive type that stores `T` (e.g. `"f"` for `f32`).
    ///
    /// # Errors
    /// [`BridgeError::UnsupportedDtype`] for an element type Arrow has no primitive type for
    /// (`i128`, `bf16`, complex).
    ///
    /// ```
    /// use dlpack_abi::arrow::{BridgeError, SchemaDef};
    ///
    /// assert_eq!(SchemaDef::of::<f32>()?, SchemaDef::new("f")?);
    /// assert_eq!(SchemaDef::of::<u64>()?, SchemaDef::new("L")?);
    /// assert!(matches!(SchemaDef::of::<i128>(), Err(BridgeError::UnsupportedDtype { .. })));
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn of<T: Element>() -> Result<Self, BridgeError> {
        let format = DataType::format_of_dtype(T::DTYPE)
            .ok_or(BridgeError::UnsupportedDtype { dtype: T::DTYPE })?;
        Ok(Self::new(format)?)
    }

    /// An `arrow.fixed_shape_tensor` of cells with physical `shape` (row-major), storing
    /// `value` (`FixedSizeList<value>[product(shape)]`, the child named `item` and not nullable,
    /// the one storage that arrow-rs's `FixedShapeTensor` accepts and that Arrow C++ and pyarrow
    /// import too; the metadata is `{"shape":[...]}`, which all three read).
    ///
    /// ```
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::fixed_shape_tensor(SchemaDef::new("f")?, &[2, 3])?.export()?;
    /// let view = schema.view();
    /// assert_eq!(view.format(), b"+w:6");
    /// assert_eq!(view.extension_name(), Some("arrow.fixed_shape_tensor"));
    /// assert_eq!(view.extension_metadata(), Some(&br#"{"shape":[2,3]}"#[..]));
    /// assert_eq!(view.fixed_shape_tensor().unwrap().shape(), &[2, 3]);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    ///
    /// # Errors
    /// [`ValidationError::ExtensionMetadata`] for more than 64 dimensions, a negative extent or a
    /// cell size that overflows.
    pub fn fixed_shape_tensor(value: SchemaDef, shape: &[i64]) -> Result<Self, ValidationError> {
        let cell = TensorShape::row_major(shape).ok_or(ValidationError::ExtensionMetadata {
            reason: "more than 64 dimensions",
        })?;
        let list_size = cell.list_size().ok_or(ValidationError::ExtensionMetadata {
            reason: "negative extent or overflowing product in \"shape\"",
        })?;
        Ok(Self::new(&alloc::format!("+w:{list_size}"))?
            .with_child(value.with_name("item"))
            .with_metadata(EXTENSION_NAME_KEY, FIXED_SHAPE_TENSOR)
            .with_metadata(EXTENSION_METADATA_KEY, cell.to_json()))
    }

    /// Sets the field name (an interior NUL ends it).
    ///
    /// ```
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::new("u")?.with_name("city").export()?;
    /// assert_eq!(schema.view().name(), Some("city"));
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn with_name(mut self, name: &str) -> Self {
        let name = name.split('\0').next().unwrap_or_default();
        self.name = CString::new(name).ok();
        self
    }

    /// Sets `ARROW_FLAG_NULLABLE`.
    ///
    /// ```
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// assert!(SchemaDef::new("i")?.nullable().export()?.view().is_nullable());
    /// assert!(!SchemaDef::new("i")?.export()?.view().is_nullable());
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn nullable(mut self) -> Self {
        self.flags |= ARROW_FLAG_NULLABLE;
        self
    }

    /// Sets the flags (`ARROW_FLAG_*` bits).
    ///
    /// ```
    /// use dlpack_abi::arrow::SchemaDef;
    /// use dlpack_abi::raw::{ARROW_FLAG_MAP_KEYS_SORTED, ARROW_FLAG_NULLABLE};
    ///
    /// let map = SchemaDef::new("+m")?
    ///     .with_flags(ARROW_FLAG_MAP_KEYS_SORTED | ARROW_FLAG_NULLABLE)
    ///     .with_child(SchemaDef::new("+s")?
    ///         .with_name("entries")
    ///         .with_child(SchemaDef::new("u")?.with_name("key"))
    ///         .with_child(SchemaDef::new("i")?.with_name("value").nullable()));
    /// assert_eq!(map.export()?.view().flags(), ARROW_FLAG_MAP_KEYS_SORTED | ARROW_FLAG_NULLABLE);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn with_flags(mut self, flags: i64) -> Self {
        self.flags = flags;
        self
    }

    /// Appends a metadata pair.
    ///
    /// ```
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::new("g")?.with_metadata("unit", "metre").export()?;
    /// assert_eq!(schema.view().metadata().unwrap().get("unit"), Some(&b"metre"[..]));
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn with_metadata(mut self, key: &str, value: impl AsRef<[u8]>) -> Self {
        self.metadata.push((key.into(), value.as_ref().into()));
        self
    }

    /// Appends a child.
    ///
    /// ```
    /// use dlpack_abi::arrow::{DataType, SchemaDef};
    ///
    /// let list = SchemaDef::new("+l")?.with_child(SchemaDef::new("f")?.with_name("item")).export()?;
    /// assert_eq!(list.view().n_children(), 1);
    /// assert_eq!(list.view().child(0).unwrap().data_type(), DataType::Float32);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn with_child(mut self, child: SchemaDef) -> Self {
        self.children.push(child);
        self
    }

    /// Makes the field dictionary-encoded with values of type `values` (the field's own format
    /// is then the index type).
    ///
    /// ```
    /// use dlpack_abi::arrow::{DataType, SchemaDef};
    ///
    /// // int8 indices into a dictionary of strings.
    /// let category = SchemaDef::new("c")?.with_dictionary(SchemaDef::new("u")?).export()?;
    /// assert_eq!(category.view().data_type(), DataType::Int8);
    /// assert_eq!(category.view().dictionary().unwrap().data_type(), DataType::Utf8);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn with_dictionary(mut self, values: SchemaDef) -> Self {
        self.dictionary = Some(Box::new(values));
        self
    }

    /// A copy of a validated schema (any producer's), to export again.
    ///
    /// ```
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let original = SchemaDef::new("+s")?.with_child(SchemaDef::new("l")?.with_name("id")).export()?;
    /// // A copy to export again (say, as a stream's schema) while the original stays.
    /// let copy = SchemaDef::copy_of(original.view());
    /// assert_eq!(copy.export()?.view().child(0).unwrap().name(), Some("id"));
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn copy_of(schema: SchemaRef<'_>) -> Self {
        let format = CString::new(schema.format()).unwrap_or_default();
        Self {
            format,
            name: schema.name().and_then(|n| CString::new(n).ok()),
            metadata: schema
                .metadata()
                .map(|m| m.iter().map(|(k, v)| (k.into(), v.into())).collect())
                .unwrap_or_default(),
            flags: schema.flags(),
            children: schema.children().map(Self::copy_of).collect(),
            dictionary: schema.dictionary().map(|d| Box::new(Self::copy_of(d))),
        }
    }

    /// Whether `schema` has exactly this layout: the same types (however their format strings
    /// spell them: `d:9,2` is `d:9,2,128`), children and dictionaries, node for node (names,
    /// flags and metadata do not size buffers).
    pub(crate) fn same_layout(&self, schema: SchemaRef<'_>) -> bool {
        DataType::parse(self.format.as_bytes()).is_ok_and(|own| own == schema.data_type())
            && self.children.len() == schema.n_children()
            && self
                .children
                .iter()
                .zip(schema.children())
                .all(|(def, child)| def.same_layout(child))
            && match (&self.dictionary, schema.dictionary()) {
                (None, None) => true,
                (Some(def), Some(dictionary)) => def.same_layout(dictionary),
                _ => false,
            }
    }

    /// Builds a fresh `ArrowSchema` tree owned by a [`Schema`], validated as an import would be
    /// ([`Schema::produce`]: one allocation for the nodes and strings).
    ///
    /// # Errors
    /// As [`Schema::produce`]: a metadata map too large for `int32` counts, or a tree the C
    /// Data Interface refuses (a list without its child, say).
    ///
    /// ```
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let def = SchemaDef::new("tsu:UTC")?.with_name("at");
    /// // Each call builds a fresh, independent schema.
    /// let (a, b) = (def.export()?, def.export()?);
    /// assert_eq!(a.view().name(), b.view().name());
    /// // A list without its child is refused.
    /// assert!(SchemaDef::new("+l")?.export().is_err());
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn export(&self) -> Result<Schema, ValidationError> {
        Schema::produce(&self)
    }
}

/// A definition describes its schema directly.
impl SchemaSource for &SchemaDef {
    fn data_type(&self) -> Result<DataType<'_>, ValidationError> {
        // Parsed when the definition was made (`new`, or a validated schema for `copy_of`).
        DataType::parse(self.format.as_bytes())
    }

    fn name(&self) -> Option<&str> {
        // Made from a `&str` (or a validated, UTF-8 name).
        self.name.as_ref().and_then(|name| name.to_str().ok())
    }

    fn flags(&self) -> i64 {
        self.flags
    }

    fn metadata(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.metadata
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_slice()))
    }

    fn n_children(&self) -> usize {
        self.children.len()
    }

    fn child(&self, index: usize) -> Option<Self> {
        self.children.get(index)
    }

    fn dictionary(&self) -> Option<Self> {
        self.dictionary.as_deref()
    }
}

/// The fields of an array to produce with [`Array::from_parts`].
///
/// ```
/// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
///
/// // Three int32 values and a validity bitmap (bit i set: value i is valid); the middle is null.
/// let validity = vec![0b101u8];
/// let values = vec![10i32, 0, 30];
/// let parts = ArrayParts::new(3, vec![validity.as_ptr().cast(), values.as_ptr().cast()])
///     .with_null_count(1);
/// // SAFETY: both buffers are as long as an int32 array of 3 values needs, and the owner (the
/// // two Vecs) keeps them alive and unchanged until the array is released.
/// let array = unsafe { Array::from_parts(parts, (validity, values)) };
/// let schema = SchemaDef::new("i")?.nullable().export()?;
/// let view = array.view(schema.view())?;
/// assert_eq!(view.null_count(), Some(1));
/// assert_eq!(view.values::<i32>()?, [10, 0, 30]);
/// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ArrayParts {
    /// Number of values.
    pub length: i64,
    /// Number of nulls (-1: unknown).
    pub null_count: i64,
    /// Offset into the buffers, in values.
    pub offset: i64,
    /// The buffer addresses, per the type's layout.
    pub buffers: Vec<*const c_void>,
    /// The child arrays, released by this array's `release`.
    pub children: Vec<Array>,
    /// The dictionary, released by this array's `release`.
    pub dictionary: Option<Array>,
}

impl ArrayParts {
    /// `length` values in `buffers`, no nulls, offset 0, no children.
    ///
    /// ```
    /// use dlpack_abi::arrow::ArrayParts;
    ///
    /// let values = [1u8, 2, 3];
    /// // A primitive array's buffers: validity (NULL: no nulls), then the values.
    /// let parts = ArrayParts::new(3, vec![core::ptr::null(), values.as_ptr().cast()]);
    /// assert_eq!((parts.length, parts.null_count, parts.offset), (3, 0, 0));
    /// ```
    pub fn new(length: usize, buffers: Vec<*const c_void>) -> Self {
        Self {
            // Saturating: a length above `i64::MAX` is refused by validation.
            length: i64::try_from(length).unwrap_or(i64::MAX),
            buffers,
            ..Self::default()
        }
    }

    /// Sets the null count.
    ///
    /// ```
    /// use dlpack_abi::arrow::ArrayParts;
    ///
    /// // -1: the producer did not count its nulls; consumers count them from the bitmap.
    /// let parts = ArrayParts::new(8, vec![core::ptr::null(), core::ptr::null()]).with_null_count(-1);
    /// assert_eq!(parts.null_count, -1);
    /// ```
    pub fn with_null_count(mut self, null_count: i64) -> Self {
        self.null_count = null_count;
        self
    }

    /// Sets the offset.
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // The last two of four values: offset 2, length 2, over the whole buffer.
    /// let values = vec![1i64, 2, 3, 4];
    /// let parts = ArrayParts::new(2, vec![core::ptr::null(), values.as_ptr().cast()]).with_offset(2);
    /// // SAFETY: the buffer holds offset + length int64 values, kept alive by the owner.
    /// let array = unsafe { Array::from_parts(parts, values) };
    /// let schema = SchemaDef::new("l")?.export()?;
    /// assert_eq!(array.view(schema.view())?.values::<i64>()?, [3, 4]);
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn with_offset(mut self, offset: i64) -> Self {
        self.offset = offset;
        self
    }

    /// Appends a child.
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // A struct array of 2 rows: no validity bitmap, one child per column.
    /// let parts = ArrayParts::new(2, vec![core::ptr::null()])
    ///     .with_child(Array::from_vec(vec![1i32, 2])?)
    ///     .with_child(Array::from_vec(vec![0.5f64, 1.5])?);
    /// // SAFETY: a struct array owns no buffers of its own; the children own theirs.
    /// let array = unsafe { Array::from_parts(parts, ()) };
    /// let schema = SchemaDef::new("+s")?
    ///     .with_child(SchemaDef::new("i")?.with_name("id"))
    ///     .with_child(SchemaDef::new("g")?.with_name("score"))
    ///     .export()?;
    /// let view = array.view(schema.view())?;
    /// assert_eq!(view.child(1).unwrap().values::<f64>()?, [0.5, 1.5]);
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn with_child(mut self, child: Array) -> Self {
        self.children.push(child);
        self
    }

    /// Sets the dictionary.
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, ArrayParts, SchemaDef};
    ///
    /// // int8 indices [1, 0, 1] into the dictionary [100, 200].
    /// let indices = vec![1i8, 0, 1];
    /// let parts = ArrayParts::new(3, vec![core::ptr::null(), indices.as_ptr().cast()])
    ///     .with_dictionary(Array::from_vec(vec![100i64, 200])?);
    /// // SAFETY: the index buffer holds 3 int8 values, all inside the dictionary, owned by `indices`.
    /// let array = unsafe { Array::from_parts(parts, indices) };
    /// let schema = SchemaDef::new("c")?.with_dictionary(SchemaDef::new("l")?).export()?;
    /// let view = array.view(schema.view())?;
    /// assert_eq!(view.dictionary().unwrap().values::<i64>()?, [100, 200]);
    /// assert_eq!(view.values::<i8>()?, [1, 0, 1]);
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn with_dictionary(mut self, dictionary: Array) -> Self {
        self.dictionary = Some(dictionary);
        self
    }
}

/// What an array built by this crate owns.
struct ArrayPrivate<O> {
    buffers: Box<[*const c_void]>,
    /// Released before the owner is dropped (fields drop in order).
    nodes: Nodes<ArrowArray>,
    /// Keeps the buffers alive; dropped by `release`.
    _owner: O,
}

impl Array {
    /// An array over memory that `owner` keeps alive until the array is released (the owner is
    /// dropped by `release`, on whatever thread calls it).
    ///
    /// # Safety
    /// The parts describe a valid array of the type of the schema it will be used with, in CPU
    /// memory: each buffer is as large as that type's layout needs for `offset + length`
    /// values, stays valid and unchanged until `owner` is dropped, and may be read from any
    /// thread.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use dlpack_abi::arrow::{Array, ArrayParts};
    ///
    /// // Memory someone else keeps: the array holds a clone of the Arc until it is released.
    /// let shared: Arc<[f32]> = Arc::from([1.0f32, 2.0]);
    /// let parts = ArrayParts::new(2, vec![core::ptr::null(), shared.as_ptr().cast()]);
    /// // SAFETY: 2 float32 values, never written, alive as long as the owner (the Arc clone).
    /// let array = unsafe { Array::from_parts(parts, Arc::clone(&shared)) };
    /// assert_eq!(Arc::strong_count(&shared), 2);
    /// drop(array); // release drops the owner
    /// assert_eq!(Arc::strong_count(&shared), 1);
    /// ```
    pub unsafe fn from_parts<O: Any + Send>(parts: ArrayParts, owner: O) -> Self {
        let private = Box::new(ArrayPrivate {
            buffers: parts.buffers.into_boxed_slice(),
            nodes: Nodes::new(
                parts.children.into_iter().map(Array::into_owned),
                parts.dictionary.map(Array::into_owned),
            ),
            _owner: owner,
        });
        Self::from_owned(
            Owned::new(ArrowArray {
                length: parts.length,
                null_count: parts.null_count,
                offset: parts.offset,
                n_buffers: private.buffers.len() as i64,
                n_children: private.nodes.children.len() as i64,
                buffers: private.buffers.as_ptr().cast_mut(),
                children: private.nodes.children.as_ptr().cast_mut(),
                dictionary: private.nodes.dictionary,
                release: Some(release_produced::<ArrowArray, ArrayPrivate<O>>),
                private_data: Box::into_raw(private).cast(),
            }),
            Binding::Vouched,
        )
    }

    /// A primitive array (no nulls) over a `Vec<T>`, `Box<[T]>` or `Arc<[T]>`, without copying;
    /// its schema is [`SchemaDef::of::<T>()`](SchemaDef::of). Types without an Arrow primitive
    /// (`i128`, `bf16`, complex) are [`BridgeError::UnsupportedDtype`].
    ///
    /// # Errors
    /// [`BridgeError::UnsupportedDtype`] for an element type without an Arrow primitive; the
    /// buffer has been dropped then.
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, SchemaDef};
    ///
    /// let values = vec![1.5f64, 2.5];
    /// let address = values.as_ptr();
    /// let array = Array::from_vec(values)?;
    /// let schema = SchemaDef::of::<f64>()?.export()?;
    /// assert_eq!(array.view(schema.view())?.values::<f64>()?.as_ptr(), address);
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn from_vec<B: HostBuffer>(buffer: B) -> Result<Self, BridgeError> {
        let layout = SchemaDef::of::<B::Element>()?;
        // `memory` is asked once the buffer is in its final place (`HostBuffer`'s contract): a
        // buffer may hold its elements inline.
        let mut buffer = Box::new(buffer);
        let memory = buffer.memory();
        let parts = ArrayParts::new(
            memory.len,
            alloc::vec![ptr::null(), memory.start.cast_const().cast()],
        );
        // SAFETY: `memory` is `len` initialised elements of the type's width, owned by `buffer`,
        // which the array keeps (boxed, unmoved) until release; host memory, and `HostBuffer`
        // is `Send`. It is bound to exactly that layout below.
        Ok(unsafe { Self::from_parts(parts, buffer) }.bound_to(layout))
    }

    /// The array, bound to `layout` instead of the schema it was validated against, so that it
    /// can be read (or streamed) with any schema of that layout: `schema` must be the array's
    /// own, and `layout` must have exactly its layout (formats, children and dictionaries, node
    /// for node; names, flags and metadata do not size buffers). For a stream of arrays that each
    /// came with a schema of their own, such as batches exported by another library.
    ///
    /// # Errors
    /// [`ValidationError::SchemaMismatch`] when `schema` is not the array's own, or `layout`
    /// differs from it. The array has been released then.
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, SchemaDef};
    ///
    /// let one = SchemaDef::new("l")?.with_name("first").export()?;
    /// let array = Array::from_vec(vec![1i64, 2])?;
    /// let layout = SchemaDef::new("l")?.with_name("any name");
    /// let array = array.with_layout(one.view(), layout.clone())?;
    /// let other = layout.export()?;
    /// assert_eq!(array.view(other.view())?.values::<i64>()?, [1, 2]);
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn with_layout(
        self,
        schema: SchemaRef<'_>,
        layout: SchemaDef,
    ) -> Result<Self, ValidationError> {
        self.binding().check(schema)?;
        if !layout.same_layout(schema) {
            return Err(ValidationError::SchemaMismatch);
        }
        Ok(self.bound_to(layout))
    }

    /// A fixed-size list array (no nulls) whose values are `values`, `list_size` per list.
    /// `values.len()` must be a multiple of `list_size` (`list_size` 0 gives an empty array).
    /// `values` must be an array this crate built ([`from_vec`](Self::from_vec),
    /// `fixed_size_list`, [`from_parts`](Self::from_parts)); an imported one is
    /// [`ValidationError::SchemaMismatch`], as its layout is its schema's.
    ///
    /// # Errors
    /// [`ValidationError::SchemaMismatch`] for an imported `values`;
    /// [`ValidationError::ChildTooShort`] when `values.len()` is not a multiple of `list_size`.
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, SchemaDef, ValidationError};
    ///
    /// // Six floats as two lists of three: `FixedSizeList<float>[3]`.
    /// let lists = Array::fixed_size_list(Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?, 3)?;
    /// assert_eq!(lists.len(), 2);
    /// let schema = SchemaDef::new("+w:3")?.with_child(SchemaDef::new("f")?).export()?;
    /// assert_eq!(lists.view(schema.view())?.child(0).unwrap().values::<f32>()?.len(), 6);
    ///
    /// let uneven = Array::fixed_size_list(Array::from_vec(vec![1.0f32; 4])?, 3);
    /// assert!(matches!(uneven, Err(ValidationError::ChildTooShort { .. })));
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn fixed_size_list(values: Array, list_size: usize) -> Result<Self, ValidationError> {
        let layout = match values.binding() {
            Binding::Layout(def) => {
                Some(SchemaDef::new(&alloc::format!("+w:{list_size}"))?.with_child((**def).clone()))
            }
            Binding::Vouched => None,
            Binding::Schema { .. } => return Err(ValidationError::SchemaMismatch),
        };
        let length = values.len().checked_div(list_size).unwrap_or(0);
        if length * list_size != values.len() {
            // The next multiple of `list_size`, capped at `i64::MAX` (it may not fit).
            let needed = (length + 1).checked_mul(list_size);
            return Err(ValidationError::ChildTooShort {
                index: 0,
                needed: needed.map_or(i64::MAX, |n| i64::try_from(n).unwrap_or(i64::MAX)),
                found: i64::try_from(values.len()).unwrap_or(i64::MAX),
            });
        }
        let parts = ArrayParts::new(length, alloc::vec![ptr::null()]).with_child(values);
        // SAFETY: a NULL validity bitmap and no nulls; the child holds `length * list_size`
        // values; bound to the child's layout (or vouched for, like the child).
        let list = unsafe { Self::from_parts(parts, ()) };
        Ok(match layout {
            Some(layout) => list.bound_to(layout),
            None => list,
        })
    }
}
