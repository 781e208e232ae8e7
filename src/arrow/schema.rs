//! `ArrowSchema`: the owning [`Schema`] and the validated, borrowed [`SchemaRef`].
#![allow(unsafe_code)]

use core::ffi::CStr;

use super::array::nth;
use super::binding::next_schema_id;
use super::extension::{EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, FIXED_SHAPE_TENSOR};
use super::format::ChildCount;
use super::owned::Owned;
use super::{DataType, Metadata, TensorShape, ValidationError, MAX_DEPTH, MAX_NODES};
use crate::raw::{ArrowSchema, ARROW_FLAG_NULLABLE};

/// An `ArrowSchema` this crate owns: validated at import, released exactly once on drop.
///
/// Import moves the producer's struct (a bitwise copy, then the source's `release` set to NULL),
/// so the producer's memory can be reused at once; the children and dictionary stay where the
/// producer put them and are released only by the base struct's `release`.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Schema, SchemaDef};
///
/// // A producer fills a consumer's struct (here, this crate's own producer).
/// let mut c_schema = SchemaDef::new("i")?.with_name("id").export()?.into_raw();
/// let schema = unsafe { Schema::from_raw(&mut c_schema) }?;
/// assert!(c_schema.release.is_none()); // moved out
/// assert_eq!(schema.view().name(), Some("id"));
/// # }
/// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
/// ```
pub struct Schema {
    inner: Owned<ArrowSchema>,
    /// Process-unique: arrays validated against this schema remember it.
    id: usize,
}

// SAFETY: a schema is plain CPU data owned through `private_data`; the C Data Interface lets a
// consumer move it and release it from any thread, and reads of it do not race.
unsafe impl Send for Schema {}
// SAFETY: shared access only reads.
unsafe impl Sync for Schema {}

impl Schema {
    /// Takes ownership of a producer's schema and validates the whole tree (format strings,
    /// names, metadata, child counts, extension parameters).
    ///
    /// On every error except [`ValidationError::NullPointer`] and [`ValidationError::Released`] (nothing
    /// to release) the schema has been released, exactly once, when this returns.
    ///
    /// # Safety
    /// `ptr` is NULL or points to an `ArrowSchema` the caller owns, which follows the C Data
    /// Interface: its strings are NUL-terminated, its metadata is as long as its lengths say,
    /// `children` holds `n_children` pointers, and nothing it points to changes until release.
    ///
    /// # Errors
    /// [`ValidationError`] when the tree does not follow the C Data Interface (see the table in the
    /// [module docs](crate::arrow)).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{DataType, Schema, SchemaDef, ValidationError};
    ///
    /// // A producer fills an `ArrowSchema` (here this crate's own exporter does).
    /// let mut c_schema = SchemaDef::new("+l")?.with_child(SchemaDef::new("i")?).export()?.into_raw();
    /// // SAFETY: the caller owns `c_schema`; `from_raw` moves it out.
    /// let schema = unsafe { Schema::from_raw(&mut c_schema) }?;
    /// assert!(c_schema.release.is_none()); // moved: the source is marked released
    /// assert_eq!(schema.view().child(0).unwrap().data_type(), DataType::Int32);
    ///
    /// // A format string the C Data Interface does not define: refused, and released.
    /// let mut bad = SchemaDef::new("i")?.export()?.into_raw();
    /// bad.format = c"q".as_ptr();
    /// let error = unsafe { Schema::from_raw(&mut bad) }.unwrap_err();
    /// assert!(matches!(error, ValidationError::InvalidFormat { .. }));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub unsafe fn from_raw(ptr: *mut ArrowSchema) -> Result<Self, ValidationError> {
        // SAFETY: forwarded from the caller.
        let inner = unsafe { Owned::take(ptr) }?;
        let mut budget = MAX_NODES;
        // SAFETY: the tree follows the C Data Interface (caller).
        unsafe { validate(inner.raw(), 0, &mut budget) }?;
        Ok(Self {
            inner,
            id: next_schema_id(),
        })
    }

    /// Wraps a schema this crate built and validated.
    #[cfg(feature = "alloc")]
    pub(crate) fn from_owned(inner: Owned<ArrowSchema>) -> Self {
        Self {
            inner,
            id: next_schema_id(),
        }
    }

    /// The validated root.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::new("u")?.with_name("label").export()?;
    /// assert_eq!(schema.view().name(), Some("label"));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn view(&self) -> SchemaRef<'_> {
        SchemaRef {
            raw: self.inner.raw(),
            id: self.id,
            root: true,
        }
    }

    /// The struct, for reading raw fields.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::new("+s")?.with_child(SchemaDef::new("n")?).export()?;
    /// assert_eq!(schema.as_raw().n_children, 1);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn as_raw(&self) -> &ArrowSchema {
        self.inner.raw()
    }

    /// Gives the struct away unreleased, e.g. to return it to C by value.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let mut c_schema = SchemaDef::new("f")?.export()?.into_raw();
    /// // Whoever holds the struct now calls its `release`, exactly once.
    /// let release = c_schema.release.expect("a live schema has a release callback");
    /// unsafe { release(&mut c_schema) };
    /// assert!(c_schema.release.is_none());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn into_raw(self) -> ArrowSchema {
        self.inner.into_raw()
    }

    /// Moves the schema into a consumer's struct (`ptr::write`: the old content is neither
    /// read nor released). The consumer then owns it.
    ///
    /// # Safety
    /// `out` is valid for writes of an `ArrowSchema`.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use core::mem::MaybeUninit;
    /// use dlpack_abi::arrow::{Schema, SchemaDef};
    /// use dlpack_abi::raw::ArrowSchema;
    ///
    /// // A consumer's struct, as `__arrow_c_schema__` or a C caller hands it over.
    /// let mut out = MaybeUninit::<ArrowSchema>::uninit();
    /// // SAFETY: `out` is valid for writes of an `ArrowSchema`.
    /// unsafe { SchemaDef::new("tsu:UTC")?.export()?.export_to(out.as_mut_ptr()) };
    /// // SAFETY: `export_to` initialised it; the consumer owns it now.
    /// let mut c_schema = unsafe { out.assume_init() };
    /// let schema = unsafe { Schema::from_raw(&mut c_schema) }?;
    /// assert_eq!(schema.view().format(), b"tsu:UTC");
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub unsafe fn export_to(self, out: *mut ArrowSchema) {
        // SAFETY: forwarded from the caller.
        unsafe { self.inner.export_to(out) }
    }
}

impl core::fmt::Debug for Schema {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.view().fmt(f)
    }
}

/// Reads a NUL-terminated string.
///
/// # Safety
/// `ptr` is non-NULL and NUL-terminated, unchanged for `'a`.
unsafe fn c_str<'a>(ptr: *const core::ffi::c_char) -> &'a [u8] {
    // SAFETY: forwarded from the caller.
    unsafe { CStr::from_ptr(ptr) }.to_bytes()
}

/// Validates a schema node and, recursively, its children and dictionary.
///
/// # Safety
/// `schema` follows the C Data Interface (see [`Schema::from_raw`]).
pub(crate) unsafe fn validate(
    schema: &ArrowSchema,
    depth: usize,
    budget: &mut usize,
) -> Result<(), ValidationError> {
    if depth > MAX_DEPTH {
        return Err(ValidationError::TooDeep);
    }
    *budget = budget.checked_sub(1).ok_or(ValidationError::TooManyNodes)?;
    if schema.format.is_null() {
        return Err(ValidationError::NullFormat);
    }
    // SAFETY: non-NULL and NUL-terminated (C Data Interface).
    let data_type = DataType::parse(unsafe { c_str(schema.format) })?;
    if !schema.name.is_null() {
        // SAFETY: as for `format`.
        core::str::from_utf8(unsafe { c_str(schema.name) })
            .map_err(|_| ValidationError::NameNotUtf8)?;
    }
    let metadata = if schema.metadata.is_null() {
        None
    } else {
        // SAFETY: a map as long as its lengths say (C Data Interface).
        Some(unsafe { Metadata::from_ptr(schema.metadata.cast()) }?)
    };
    let n_children = schema.n_children;
    if n_children < 0 {
        return Err(ValidationError::NegativeChildren { n_children });
    }
    if let ChildCount::Exactly(expected) = data_type.child_count() {
        if n_children != expected {
            return Err(ValidationError::ChildCount {
                expected,
                found: n_children,
            });
        }
    }
    // Each child is a node: more than the budget left is refused before `children` is read
    // (and a count that does not fit `usize`, as 2^32 + 1 on 32-bit targets, with it).
    let count = usize::try_from(n_children)
        .ok()
        .filter(|&count| count <= *budget)
        .ok_or(ValidationError::TooManyNodes)?;
    if count > 0 && schema.children.is_null() {
        return Err(ValidationError::NullChildren);
    }
    for index in 0..count {
        // SAFETY: `children` holds `n_children` pointers (C Data Interface).
        let child = unsafe { nth(schema.children, index) };
        // SAFETY: a non-NULL child points to a schema (C Data Interface).
        let child = unsafe { child.as_ref() }.ok_or(ValidationError::NullChild { index })?;
        if child.release.is_none() {
            return Err(ValidationError::ReleasedChild { index });
        }
        // SAFETY: a child follows the same rules.
        unsafe { validate(child, depth + 1, budget) }?;
    }
    // SAFETY: a non-NULL dictionary points to a schema (C Data Interface).
    if let Some(dictionary) = unsafe { schema.dictionary.as_ref() } {
        if dictionary.release.is_none() {
            return Err(ValidationError::ReleasedDictionary);
        }
        if data_type
            .dlpack_dtype()
            .map_or(true, |t| t.code == crate::raw::kDLFloat)
        {
            // Dictionary indices are integers.
            // SAFETY: validated above.
            let format = unsafe { c_str(schema.format) };
            return Err(ValidationError::DictionaryIndex {
                format: super::Excerpt::of(format),
            });
        }
        // SAFETY: the dictionary follows the same rules.
        unsafe { validate(dictionary, depth + 1, budget) }?;
    }
    if let Some(metadata) = metadata {
        if metadata.get(EXTENSION_NAME_KEY) == Some(FIXED_SHAPE_TENSOR.as_bytes()) {
            fixed_shape_tensor(data_type, metadata)?;
        }
    }
    Ok(())
}

/// Checks a `fixed_shape_tensor`'s storage and parameters.
fn fixed_shape_tensor(
    data_type: DataType<'_>,
    metadata: Metadata<'_>,
) -> Result<TensorShape, ValidationError> {
    let DataType::FixedSizeList(list_size) = data_type else {
        return Err(ValidationError::ExtensionMetadata {
            reason: "fixed_shape_tensor storage is not a fixed-size list",
        });
    };
    let json = metadata
        .get(EXTENSION_METADATA_KEY)
        .ok_or(ValidationError::ExtensionMetadata {
            reason: "fixed_shape_tensor has no ARROW:extension:metadata",
        })?;
    TensorShape::parse_storage(json, list_size)
}

/// A validated schema node, borrowed from a [`Schema`].
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{DataType, SchemaDef};
///
/// let schema = SchemaDef::new("+s")?
///     .with_child(SchemaDef::new("l")?.with_name("id"))
///     .with_child(SchemaDef::new("g")?.with_name("score").nullable())
///     .export()?;
/// let root = schema.view();
/// let score = root.child(1).unwrap();
/// assert_eq!((score.name(), score.data_type(), score.is_nullable()), (Some("score"), DataType::Float64, true));
/// # }
/// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
/// ```
#[derive(Clone, Copy)]
pub struct SchemaRef<'a> {
    raw: &'a ArrowSchema,
    /// The id of the `Schema` this node belongs to.
    id: usize,
    /// Whether this is the root (which moves with its `Schema`; other nodes do not move).
    root: bool,
}

impl<'a> SchemaRef<'a> {
    /// Which node of which schema this is: the schema's id, and the node's address (NULL for
    /// the root).
    pub(crate) fn identity(&self) -> (usize, *const ArrowSchema) {
        let node: *const ArrowSchema = if self.root {
            core::ptr::null()
        } else {
            self.raw
        };
        (self.id, node)
    }

    /// The struct, for reading raw fields.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::new("i")?.export()?;
    /// assert!(schema.view().raw().dictionary.is_null());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn raw(&self) -> &'a ArrowSchema {
        self.raw
    }

    /// The format string's bytes.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::new("d:9,2")?.export()?;
    /// assert_eq!(schema.view().format(), b"d:9,2");
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn format(&self) -> &'a [u8] {
        // SAFETY: validated at import: non-NULL, NUL-terminated, alive while the schema is.
        unsafe { c_str(self.raw.format) }
    }

    /// The type the format string names (the storage type, for an extension type).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{DataType, SchemaDef};
    ///
    /// let schema = SchemaDef::new("w:16")?.export()?;
    /// assert_eq!(schema.view().data_type(), DataType::FixedSizeBinary(16));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn data_type(&self) -> DataType<'a> {
        // Parsed successfully at import; `Null` (no buffers, no children) is never reached.
        DataType::parse(self.format()).unwrap_or(DataType::Null)
    }

    /// The field name; `None` when `name` is NULL.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// assert_eq!(SchemaDef::new("i")?.with_name("count").export()?.view().name(), Some("count"));
    /// assert_eq!(SchemaDef::new("i")?.export()?.view().name(), None);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn name(&self) -> Option<&'a str> {
        if self.raw.name.is_null() {
            return None;
        }
        // SAFETY: validated at import: NUL-terminated UTF-8, alive while the schema is.
        core::str::from_utf8(unsafe { c_str(self.raw.name) }).ok()
    }

    /// The `ARROW_FLAG_*` bits, unknown ones kept.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    /// use dlpack_abi::raw::{ARROW_FLAG_MAP_KEYS_SORTED, ARROW_FLAG_NULLABLE};
    ///
    /// let flags = ARROW_FLAG_NULLABLE | ARROW_FLAG_MAP_KEYS_SORTED;
    /// let map = SchemaDef::new("+m")?.with_flags(flags).with_child(
    ///     SchemaDef::new("+s")?.with_child(SchemaDef::new("u")?).with_child(SchemaDef::new("i")?.nullable()),
    /// );
    /// assert_eq!(map.export()?.view().flags(), flags);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn flags(&self) -> i64 {
        self.raw.flags
    }

    /// Whether `ARROW_FLAG_NULLABLE` is set.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// assert!(SchemaDef::new("i")?.nullable().export()?.view().is_nullable());
    /// assert!(!SchemaDef::new("i")?.export()?.view().is_nullable());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn is_nullable(&self) -> bool {
        self.raw.flags & ARROW_FLAG_NULLABLE != 0
    }

    /// The metadata map; `None` when `metadata` is NULL.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::new("l")?.with_metadata("unit", "ms").export()?;
    /// let metadata = schema.view().metadata().expect("the field has metadata");
    /// assert_eq!(metadata.get("unit"), Some(&b"ms"[..]));
    /// assert!(SchemaDef::new("l")?.export()?.view().metadata().is_none());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn metadata(&self) -> Option<Metadata<'a>> {
        if self.raw.metadata.is_null() {
            return None;
        }
        // SAFETY: validated at import with the same reads.
        unsafe { Metadata::from_ptr(self.raw.metadata.cast()) }.ok()
    }

    /// The extension type's name (`ARROW:extension:name`), if it is UTF-8.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{SchemaDef, BOOL8, EXTENSION_NAME_KEY};
    ///
    /// let schema = SchemaDef::new("c")?.with_metadata(EXTENSION_NAME_KEY, BOOL8).export()?;
    /// assert_eq!(schema.view().extension_name(), Some("arrow.bool8"));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn extension_name(&self) -> Option<&'a str> {
        core::str::from_utf8(self.metadata()?.get(EXTENSION_NAME_KEY)?).ok()
    }

    /// The extension type's parameters (`ARROW:extension:metadata`).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::fixed_shape_tensor(SchemaDef::new("f")?, &[3])?.export()?;
    /// assert_eq!(schema.view().extension_metadata(), Some(&br#"{"shape":[3]}"#[..]));
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn extension_metadata(&self) -> Option<&'a [u8]> {
        self.metadata()?.get(EXTENSION_METADATA_KEY)
    }

    /// The cell shape, when this is an `arrow.fixed_shape_tensor` (checked at import).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::fixed_shape_tensor(SchemaDef::new("f")?, &[2, 2])?.export()?;
    /// let cell = schema.view().fixed_shape_tensor().expect("a fixed_shape_tensor field");
    /// assert_eq!((cell.shape(), cell.list_size()), (&[2, 2][..], Some(4)));
    /// assert!(SchemaDef::new("f")?.export()?.view().fixed_shape_tensor().is_none());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn fixed_shape_tensor(&self) -> Option<TensorShape> {
        let metadata = self.metadata()?;
        if metadata.get(EXTENSION_NAME_KEY) != Some(FIXED_SHAPE_TENSOR.as_bytes()) {
            return None;
        }
        fixed_shape_tensor(self.data_type(), metadata).ok()
    }

    /// The number of children.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::new("+s")?.with_child(SchemaDef::new("i")?).with_child(SchemaDef::new("u")?);
    /// assert_eq!(schema.export()?.view().n_children(), 2);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn n_children(&self) -> usize {
        // Validated: `0..=MAX_NODES`.
        usize::try_from(self.raw.n_children).unwrap_or(0)
    }

    /// Child `index`.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{DataType, SchemaDef};
    ///
    /// let schema = SchemaDef::new("+l")?.with_child(SchemaDef::new("u")?.with_name("item")).export()?;
    /// let item = schema.view().child(0).unwrap();
    /// assert_eq!((item.name(), item.data_type()), (Some("item"), DataType::Utf8));
    /// assert!(schema.view().child(1).is_none());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn child(&self, index: usize) -> Option<SchemaRef<'a>> {
        (index < self.n_children()).then(|| self.child_in_range(index))
    }

    /// The children, in order.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::SchemaDef;
    ///
    /// let schema = SchemaDef::new("+s")?
    ///     .with_child(SchemaDef::new("l")?.with_name("x"))
    ///     .with_child(SchemaDef::new("l")?.with_name("y"))
    ///     .export()?;
    /// let names: Vec<_> = schema.view().children().filter_map(|child| child.name()).collect();
    /// assert_eq!(names, ["x", "y"]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn children(&self) -> impl ExactSizeIterator<Item = SchemaRef<'a>> + 'a {
        let this = *self;
        (0..this.n_children()).map(move |i| this.child_in_range(i))
    }

    pub(crate) fn child_in_range(&self, index: usize) -> SchemaRef<'a> {
        // SAFETY: validated at import: `n_children` (> index) pointers.
        let raw = unsafe { nth(self.raw.children, index) };
        // SAFETY: validated at import: non-NULL and live while the schema is.
        let raw = unsafe { &*raw };
        SchemaRef {
            raw,
            root: false,
            ..*self
        }
    }

    /// The dictionary's value type, when the field is dictionary-encoded.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{DataType, SchemaDef};
    ///
    /// // Dictionary-encoded strings: int32 indices into utf8 values.
    /// let schema = SchemaDef::new("i")?.with_dictionary(SchemaDef::new("u")?).export()?;
    /// assert_eq!(schema.view().data_type(), DataType::Int32);
    /// assert_eq!(schema.view().dictionary().unwrap().data_type(), DataType::Utf8);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn dictionary(&self) -> Option<SchemaRef<'a>> {
        // SAFETY: validated at import: NULL or a live schema.
        unsafe { self.raw.dictionary.as_ref() }.map(|raw| SchemaRef {
            raw,
            root: false,
            ..*self
        })
    }
}

impl core::fmt::Debug for SchemaRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut s = f.debug_struct("Schema");
        s.field("format", &super::Excerpt::of(self.format()));
        if let Some(name) = self.name() {
            s.field("name", &name);
        }
        s.field("flags", &self.flags());
        if let Some(metadata) = self.metadata() {
            s.field("metadata", &metadata);
        }
        if self.n_children() > 0 {
            s.field("children", &DebugList(*self));
        }
        if let Some(dictionary) = self.dictionary() {
            s.field("dictionary", &dictionary);
        }
        s.finish()
    }
}

struct DebugList<'a>(SchemaRef<'a>);
impl core::fmt::Debug for DebugList<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.0.children()).finish()
    }
}
