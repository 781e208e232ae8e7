//! Schemas produced from a description: a [`SchemaSource`] describes a tree of fields, and
//! [`Schema::produce`] writes it into one allocation (every node but the root, every string
//! and every metadata map), shared by the nodes: each keeps it alive until its own `release`,
//! so a consumer may move children out and release them in any order.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::fmt::{self, Write as _};
use core::ptr;

use super::metadata::{encode, encoded_size};
use super::owned::{Base, Owned};
use super::{DataType, Excerpt, Metadata, Schema, ValidationError, MAX_DEPTH, MAX_NODES};
use crate::raw::ArrowSchema;

/// One field of a schema to produce, and through [`child`](Self::child) and
/// [`dictionary`](Self::dictionary) the fields below it: what [`Schema::produce`] writes.
/// [`SchemaDef`](super::SchemaDef) is one; an integration describes another library's fields
/// with one, without building anything in between.
///
/// ```
/// use dlpack_abi::arrow::{DataType, Schema, SchemaSource, ValidationError};
///
/// /// A flat table of `(name, type)` columns.
/// enum Table<'a> {
///     Root(&'a [(&'a str, DataType<'static>)]),
///     Column(&'a str, DataType<'static>),
/// }
///
/// impl SchemaSource for Table<'_> {
///     fn data_type(&self) -> Result<DataType<'_>, ValidationError> {
///         Ok(match self {
///             Table::Root(_) => DataType::Struct,
///             Table::Column(_, data_type) => *data_type,
///         })
///     }
///     fn name(&self) -> Option<&str> {
///         match self {
///             Table::Root(_) => None,
///             Table::Column(name, _) => Some(name),
///         }
///     }
///     fn flags(&self) -> i64 {
///         0
///     }
///     fn metadata(&self) -> impl Iterator<Item = (&str, &[u8])> {
///         core::iter::empty()
///     }
///     fn n_children(&self) -> usize {
///         match self {
///             Table::Root(columns) => columns.len(),
///             Table::Column(..) => 0,
///         }
///     }
///     fn child(&self, index: usize) -> Option<Self> {
///         match self {
///             Table::Root(columns) => columns.get(index).map(|(n, t)| Table::Column(n, *t)),
///             Table::Column(..) => None,
///         }
///     }
///     fn dictionary(&self) -> Option<Self> {
///         None
///     }
/// }
///
/// let columns = [("id", DataType::Int64), ("label", DataType::Utf8)];
/// let schema = Schema::produce(&Table::Root(&columns))?;
/// assert_eq!(schema.view().format(), b"+s");
/// assert_eq!(schema.view().child(1).unwrap().name(), Some("label"));
/// # Ok::<(), ValidationError>(())
/// ```
pub trait SchemaSource: Sized {
    /// The field's type; for a dictionary-encoded field, the type of its indices.
    ///
    /// # Errors
    /// A type the C Data Interface cannot describe; [`Schema::produce`] returns it.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{DataType, SchemaDef, SchemaSource};
    ///
    /// // `&SchemaDef` is a source: what `Schema::produce` reads from it.
    /// let def = SchemaDef::new("c")?.with_dictionary(SchemaDef::new("u")?);
    /// assert_eq!((&def).data_type()?, DataType::Int8); // a dictionary field's type is its indices'
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    fn data_type(&self) -> Result<DataType<'_>, ValidationError>;

    /// The field's name (`None`: a NULL name); one with a NUL inside is refused.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{SchemaDef, SchemaSource};
    ///
    /// let def = SchemaDef::new("i")?.with_name("count");
    /// assert_eq!((&def).name(), Some("count"));
    /// assert_eq!((&SchemaDef::new("i")?).name(), None);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    fn name(&self) -> Option<&str>;

    /// `ARROW_FLAG_*` bits.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{SchemaDef, SchemaSource};
    /// use dlpack_abi::raw::ARROW_FLAG_NULLABLE;
    ///
    /// assert_eq!((&SchemaDef::new("i")?.nullable()).flags(), ARROW_FLAG_NULLABLE);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    fn flags(&self) -> i64;

    /// The metadata pairs, in order (none: a NULL map).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{SchemaDef, SchemaSource};
    ///
    /// let def = SchemaDef::new("i")?.with_metadata("origin", "sensor 4");
    /// let source = &def;
    /// let pairs: Vec<(&str, &[u8])> = source.metadata().collect();
    /// assert_eq!(pairs, [("origin", &b"sensor 4"[..])]);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    fn metadata(&self) -> impl Iterator<Item = (&str, &[u8])>;

    /// The number of children.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{SchemaDef, SchemaSource};
    ///
    /// let def = SchemaDef::new("+l")?.with_child(SchemaDef::new("f")?);
    /// assert_eq!((&def).n_children(), 1);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    fn n_children(&self) -> usize;

    /// Child `index` (`None` past the last).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{SchemaDef, SchemaSource};
    ///
    /// let def = SchemaDef::new("+l")?.with_child(SchemaDef::new("f")?.with_name("item"));
    /// let child = (&def).child(0).unwrap();
    /// assert_eq!(child.name(), Some("item"));
    /// assert!((&def).child(1).is_none());
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    fn child(&self, index: usize) -> Option<Self>;

    /// The dictionary's value field, for a dictionary-encoded field.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{DataType, SchemaDef, SchemaSource};
    ///
    /// let def = SchemaDef::new("i")?.with_dictionary(SchemaDef::new("U")?);
    /// assert_eq!((&def).dictionary().unwrap().data_type()?, DataType::LargeUtf8);
    /// # }
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    fn dictionary(&self) -> Option<Self>;
}

impl Schema {
    /// Writes the schema `source` describes, and validates it as an import would be. The
    /// nodes and strings take one allocation, whatever their number.
    ///
    /// # Errors
    /// The source's [`data_type`](SchemaSource::data_type) errors;
    /// [`ValidationError::InvalidFormat`] for a type that does not write back as itself (a
    /// `Time32` in microseconds); [`ValidationError::TooDeep`] and
    /// [`ValidationError::TooManyNodes`] past [`MAX_DEPTH`] and [`MAX_NODES`];
    /// [`MetadataError::TooLarge`](super::MetadataError::TooLarge) for a map an `int32` cannot
    /// count;
    /// [`ValidationError::NullChild`] for a child the source does not give;
    /// [`ValidationError::InvalidSource`] for a NUL inside a name or format, a source that
    /// describes another tree on its second walk, or a tree too large for memory; and the
    /// validation's errors (a wrong number of children for the type, say).
    ///
    /// ```
    /// use dlpack_abi::arrow::{Schema, SchemaDef};
    ///
    /// let def = SchemaDef::new("+l")?.with_child(SchemaDef::new("f")?.with_name("item"));
    /// let schema = Schema::produce(&&def)?;
    /// assert_eq!(schema.view().child(0).unwrap().format(), b"f");
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn produce<S: SchemaSource>(source: &S) -> Result<Self, ValidationError> {
        let mut size = Size::default();
        measure(source, 0, &mut size)?;
        let arena = Arena::new(&size).ok_or(ValidationError::InvalidSource {
            reason: "the tree does not fit in memory",
        })?;
        let arena = Arc::new(arena);
        let mut cursor = Cursor::default();
        let mut root = empty_schema();
        write(source, &mut root, &arena, &mut cursor, 0)?;
        if cursor.nodes != size.nodes || cursor.links != size.links || cursor.text != size.text {
            // The source described another tree the second time.
            return Err(CHANGED);
        }
        // Only now does any node refer to the arena: an error above loses nothing.
        for index in 0..size.nodes {
            // SAFETY: `index < size.nodes`, the length of `arena.nodes`, which lives (the `Arc`
            // above) and is written through this pointer only, here.
            let node = unsafe { &mut *arena.nodes.cast::<ArrowSchema>().wrapping_add(index) };
            own(node, Arc::clone(&arena));
        }
        own(&mut root, arena);
        let schema = Owned::new(root);
        let mut budget = MAX_NODES;
        // SAFETY: written just now, following the C Data Interface: NUL-terminated strings,
        // `n_children` child pointers, each node owned by the arena it keeps alive.
        unsafe { super::schema::validate(schema.raw(), 0, &mut budget) }?;
        Ok(Schema::from_owned(schema))
    }
}

/// What a tree takes: nodes below the root, child pointers, bytes of strings and maps.
#[derive(Default)]
struct Size {
    nodes: usize,
    links: usize,
    text: usize,
}

/// Where the next node, child pointer and byte go while writing.
#[derive(Default)]
struct Cursor {
    nodes: usize,
    links: usize,
    text: usize,
}

/// Writes into an arena's text at a cursor.
struct Text<'a> {
    arena: &'a Arena,
    cursor: &'a mut Cursor,
}

impl fmt::Write for Text<'_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.arena
            .put(self.cursor, text.as_bytes(), false)
            .map(drop)
            .map_err(|_| fmt::Error)
    }
}

/// The error of a source that describes another tree on its second walk.
const CHANGED: ValidationError = ValidationError::InvalidSource {
    reason: "the source described another tree on its second walk",
};

/// Counts bytes written to it.
struct Count(usize);

impl fmt::Write for Count {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.0 += text.len();
        Ok(())
    }
}

/// Refuses a written format string that does not parse back as the type it was written for,
/// or holds a NUL (a timestamp's zone, say), which would end it early.
fn check_format(data_type: DataType<'_>, written: &[u8]) -> Result<(), ValidationError> {
    if written.contains(&0) {
        return Err(ValidationError::InvalidSource {
            reason: "a NUL inside a format string",
        });
    }
    match DataType::parse(written) {
        Ok(parsed) if parsed == data_type => Ok(()),
        _ => Err(ValidationError::InvalidFormat {
            format: Excerpt::of(written),
        }),
    }
}

/// A name's bytes, refused if they hold a NUL (which would end the C string early).
fn name_bytes(name: &str) -> Result<&[u8], ValidationError> {
    match name.as_bytes().contains(&0) {
        true => Err(ValidationError::InvalidSource {
            reason: "a NUL inside a name",
        }),
        false => Ok(name.as_bytes()),
    }
}

/// First pass: what `source` and the fields below it take.
fn measure<S: SchemaSource>(
    source: &S,
    depth: usize,
    size: &mut Size,
) -> Result<(), ValidationError> {
    if depth > MAX_DEPTH {
        return Err(ValidationError::TooDeep);
    }
    let data_type = source.data_type()?;
    // Names and maps are each at most `isize::MAX` bytes; their sum is checked.
    let format_len = 1 + match data_type.static_format() {
        Some(format) => format.len(),
        None => {
            let mut count = Count(0);
            // `Count` never fails, and `Display` for `DataType` only forwards its errors.
            let _ = write!(count, "{data_type}");
            count.0
        }
    };
    let name_len = match source.name() {
        Some(name) => name_bytes(name)?.len() + 1,
        None => 0,
    };
    let metadata_len = encoded_size(source.metadata())?.map_or(0, |(_, size)| size);
    size.text = [format_len, name_len, metadata_len]
        .into_iter()
        .try_fold(size.text, usize::checked_add)
        .filter(|&text| text <= isize::MAX as usize)
        .ok_or(ValidationError::SizeOverflow)?;
    let n_children = source.n_children();
    let dictionary = source.dictionary();
    // At most `MAX_NODES` nodes: no sum below overflows.
    let below = n_children.saturating_add(usize::from(dictionary.is_some()));
    if below >= MAX_NODES - size.nodes {
        return Err(ValidationError::TooManyNodes);
    }
    size.nodes += below;
    size.links += n_children;
    for index in 0..n_children {
        let child = source
            .child(index)
            .ok_or(ValidationError::NullChild { index })?;
        measure(&child, depth + 1, size)?;
    }
    if let Some(dictionary) = dictionary {
        measure(&dictionary, depth + 1, size)?;
    }
    Ok(())
}

/// A released, empty schema struct: what arena nodes hold until written.
fn empty_schema() -> ArrowSchema {
    ArrowSchema {
        format: ptr::null(),
        name: ptr::null(),
        metadata: ptr::null(),
        flags: 0,
        n_children: 0,
        children: ptr::null_mut(),
        dictionary: ptr::null_mut(),
        release: None,
        private_data: ptr::null_mut(),
    }
}

/// `len` values made by `value`, or `None` when the memory cannot be had (a source can ask for
/// up to `isize::MAX` bytes of names).
fn filled<T>(len: usize, value: impl FnMut() -> T) -> Option<Box<[T]>> {
    let mut values = Vec::new();
    values.try_reserve_exact(len).ok()?;
    values.extend(core::iter::repeat_with(value).take(len));
    Some(values.into_boxed_slice())
}

/// Everything a produced tree points at but its root: freed when the last node is released.
struct Arena {
    /// The nodes below the root (from `Box::into_raw`).
    nodes: *mut [ArrowSchema],
    /// The nodes' `children` arrays, one after another.
    links: *mut [*mut ArrowSchema],
    /// Format strings, names (NUL-terminated) and metadata maps.
    text: *mut [u8],
}

impl Arena {
    /// An arena of `size`, or `None` when the memory cannot be had.
    fn new(size: &Size) -> Option<Self> {
        let nodes = filled(size.nodes, empty_schema)?;
        let links = filled(size.links, ptr::null_mut)?;
        let text = filled(size.text, || 0u8)?;
        Some(Self {
            nodes: Box::into_raw(nodes),
            links: Box::into_raw(links),
            text: Box::into_raw(text),
        })
    }

    /// Copies `bytes` (and a NUL when `nul`) into the text at the cursor, and gives where.
    fn put(
        &self,
        cursor: &mut Cursor,
        bytes: &[u8],
        nul: bool,
    ) -> Result<*const u8, ValidationError> {
        let end = cursor.text.saturating_add(bytes.len() + usize::from(nul));
        if end > self.text.len() {
            return Err(CHANGED);
        }
        let start = self.text.cast::<u8>().wrapping_add(cursor.text);
        // SAFETY: `start..start + bytes.len()` lies in `text` (checked above), which nothing
        // else refers to while the tree is written; `bytes` is another allocation.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), start, bytes.len()) };
        // The NUL: `text` is zeroed, and each byte is written once.
        cursor.text = end;
        Ok(start)
    }
}

// SAFETY: the arena is written once, before any node refers to it, and only read afterwards;
// nodes may be released on any thread (the C Data Interface's rule), and the last frees it.
unsafe impl Send for Arena {}
// SAFETY: as above: shared access only reads.
unsafe impl Sync for Arena {}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: the boxes `new` made, freed only here, when the last node has been released
        // (or none was ever handed out).
        drop(unsafe { Box::from_raw(self.nodes) });
        // SAFETY: as above.
        drop(unsafe { Box::from_raw(self.links) });
        // SAFETY: as above.
        drop(unsafe { Box::from_raw(self.text) });
    }
}

/// Writes `source` into `out`, and the fields below it into the arena; nodes are written
/// released (they own nothing until `own`).
fn write<S: SchemaSource>(
    source: &S,
    out: &mut ArrowSchema,
    arena: &Arena,
    cursor: &mut Cursor,
    depth: usize,
) -> Result<(), ValidationError> {
    if depth > MAX_DEPTH {
        // Deeper than the first walk (which checked the depth) described.
        return Err(ValidationError::TooDeep);
    }
    let data_type = source.data_type()?;
    out.format = match data_type.static_format() {
        Some(format) => arena.put(cursor, format.as_bytes(), true)?,
        None => {
            let start = cursor.text;
            let mut text = Text {
                arena,
                cursor: &mut *cursor,
            };
            write!(text, "{data_type}").map_err(|_| CHANGED)?;
            let len = cursor.text - start;
            arena.put(cursor, &[], true)?;
            let format = arena.text.cast::<u8>().wrapping_add(start).cast_const();
            // SAFETY: the `len` bytes just written, in the arena's text, which nothing else
            // refers to while the tree is written.
            let written = unsafe { core::slice::from_raw_parts(format, len) };
            check_format(data_type, written)?;
            format
        }
    }
    .cast();
    if let Some(name) = source.name() {
        out.name = arena.put(cursor, name_bytes(name)?, true)?.cast();
    }
    if let Some((count, size)) = encoded_size(source.metadata())? {
        let start = cursor.text;
        encode(count, source.metadata(), |part| {
            arena.put(cursor, part, false).map(drop)
        })?;
        let map = arena.text.cast::<u8>().wrapping_add(start).cast_const();
        // SAFETY: the bytes just written, in the arena's text (`put` kept them in bounds),
        // which nothing else refers to while the tree is written.
        let written = unsafe { core::slice::from_raw_parts(map, cursor.text - start) };
        // The map's own parser checks that the count matches the pairs written (a source
        // giving other pairs the second time could make them disagree).
        match Metadata::parse(written) {
            Ok(parsed) if parsed.len() == count && parsed.size() == size => {}
            _ => return Err(CHANGED),
        }
        out.metadata = map.cast();
    }
    out.flags = source.flags();
    let n_children = source.n_children();
    let dictionary = source.dictionary();
    // This node's children take the next `n_children` nodes and links; its dictionary the
    // node after them.
    let (first_node, first_link) = (cursor.nodes, cursor.links);
    let below = n_children.saturating_add(usize::from(dictionary.is_some()));
    if below > arena.nodes.len() - first_node || n_children > arena.links.len() - first_link {
        // More than the first walk described.
        return Err(CHANGED);
    }
    cursor.nodes += below;
    cursor.links += n_children;
    let node = |index: usize| arena.nodes.cast::<ArrowSchema>().wrapping_add(index);
    out.n_children = i64::try_from(n_children).map_err(|_| ValidationError::TooManyNodes)?;
    if n_children > 0 {
        out.children = arena
            .links
            .cast::<*mut ArrowSchema>()
            .wrapping_add(first_link);
    }
    for index in 0..n_children {
        let child = source
            .child(index)
            .ok_or(ValidationError::NullChild { index })?;
        let slot = node(first_node + index);
        // SAFETY: link `first_link + index` and node `first_node + index` are in bounds
        // (checked above), reserved for this child alone, and written only here.
        unsafe { *out.children.wrapping_add(index) = slot };
        // SAFETY: as above.
        let slot = unsafe { &mut *slot };
        write(&child, slot, arena, cursor, depth + 1)?;
    }
    if let Some(dictionary) = dictionary {
        out.dictionary = node(first_node + n_children);
        // SAFETY: the node after the children, reserved for the dictionary (checked above).
        let slot = unsafe { &mut *out.dictionary };
        write(&dictionary, slot, arena, cursor, depth + 1)?;
    }
    Ok(())
}

/// Makes a written node own a reference to the arena, released by its `release`.
fn own(node: &mut ArrowSchema, arena: Arc<Arena>) {
    node.private_data = Arc::into_raw(arena).cast_mut().cast::<c_void>();
    node.release = Some(release_node);
}

/// The `release` of a produced node: releases its children and dictionary that were not moved
/// out, then drops its reference to the arena (freeing it with the last).
///
/// # Safety
/// `raw` is NULL or a node `Schema::produce` wrote (wherever a consumer moved it), called by
/// its owner as C Data Interface consumers call `release`.
unsafe extern "C" fn release_node(raw: *mut ArrowSchema) {
    // SAFETY: a produced node or NULL (contract).
    let Some(node) = (unsafe { raw.as_mut() }) else {
        return;
    };
    if node.is_released() || node.private_data.is_null() {
        return;
    }
    for index in 0..usize::try_from(node.n_children).unwrap_or(0) {
        // SAFETY: `children` holds `n_children` pointers into the arena, alive while this node
        // holds its reference.
        let child = unsafe { *node.children.wrapping_add(index) };
        // SAFETY: as above: a node of the arena, moved out (released) or owned by this parent.
        if let Some(child) = unsafe { child.as_mut() } {
            // SAFETY: the parent releases the children it still owns, once.
            unsafe { child.release() };
        }
    }
    // SAFETY: as for the children.
    if let Some(dictionary) = unsafe { node.dictionary.as_mut() } {
        // SAFETY: as for the children.
        unsafe { dictionary.release() };
    }
    // SAFETY: the reference `own` gave this node, given back once (the node is marked
    // released below, and released nodes return above).
    drop(unsafe { Arc::from_raw(node.private_data.cast_const().cast::<Arena>()) });
    node.private_data = ptr::null_mut();
    node.mark_released();
}
