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
    pub fn of<T: Element>() -> Result<Self, BridgeError> {
        let format = DataType::format_of_dtype(T::DTYPE)
            .ok_or(BridgeError::UnsupportedDtype { dtype: T::DTYPE })?;
        Ok(Self::new(format)?)
    }

    /// An `arrow.fixed_shape_tensor` of cells with physical `shape` (row-major), storing
    /// `value` (`FixedSizeList<value>[product(shape)]`, the child named `item` and nullable, as
    /// Arrow C++ writes it).
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
    pub fn fixed_shape_tensor(value: SchemaDef, shape: &[i64]) -> Result<Self, ValidationError> {
        let cell = TensorShape::row_major(shape).ok_or(ValidationError::ExtensionMetadata {
            reason: "more than 64 dimensions",
        })?;
        let list_size = cell.list_size().ok_or(ValidationError::ExtensionMetadata {
            reason: "negative extent or overflowing product in \"shape\"",
        })?;
        Ok(Self::new(&alloc::format!("+w:{list_size}"))?
            .with_child(value.with_name("item").nullable())
            .with_metadata(EXTENSION_NAME_KEY, FIXED_SHAPE_TENSOR)
            .with_metadata(EXTENSION_METADATA_KEY, cell.to_json()))
    }

    /// Sets the field name (an interior NUL ends it).
    pub fn with_name(mut self, name: &str) -> Self {
        let name = name.split('\0').next().unwrap_or_default();
        self.name = CString::new(name).ok();
        self
    }

    /// Sets `ARROW_FLAG_NULLABLE`.
    pub fn nullable(mut self) -> Self {
        self.flags |= ARROW_FLAG_NULLABLE;
        self
    }

    /// Sets the flags (`ARROW_FLAG_*` bits).
    pub fn with_flags(mut self, flags: i64) -> Self {
        self.flags = flags;
        self
    }

    /// Appends a metadata pair.
    pub fn with_metadata(mut self, key: &str, value: impl AsRef<[u8]>) -> Self {
        self.metadata.push((key.into(), value.as_ref().into()));
        self
    }

    /// Appends a child.
    pub fn with_child(mut self, child: SchemaDef) -> Self {
        self.children.push(child);
        self
    }

    /// Makes the field dictionary-encoded with values of type `values` (the field's own format
    /// is then the index type).
    pub fn with_dictionary(mut self, values: SchemaDef) -> Self {
        self.dictionary = Some(Box::new(values));
        self
    }

    /// A copy of a validated schema (any producer's), to export again.
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
    pub fn new(length: usize, buffers: Vec<*const c_void>) -> Self {
        Self {
            // Saturating: a length above `i64::MAX` is refused by validation.
            length: i64::try_from(length).unwrap_or(i64::MAX),
            buffers,
            ..Self::default()
        }
    }

    /// Sets the null count.
    pub fn with_null_count(mut self, null_count: i64) -> Self {
        self.null_count = null_count;
        self
    }

    /// Sets the offset.
    pub fn with_offset(mut self, offset: i64) -> Self {
        self.offset = offset;
        self
    }

    /// Appends a child.
    pub fn with_child(mut self, child: Array) -> Self {
        self.children.push(child);
        self
    }

    /// Sets the dictionary.
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
