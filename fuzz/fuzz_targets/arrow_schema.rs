//! Parses Arrow schema metadata maps, `arrow.fixed_shape_tensor` JSON and format strings from raw
//! bytes, and imports arbitrary `ArrowSchema` trees (format, name, metadata, flags, children,
//! dictionary, and the defects import must refuse) built from the input.
//!
//! The first byte picks the mode: 0 a metadata map, 1 tensor JSON, 2 a format string (the rest of
//! the input is the bytes parsed); anything else a schema tree that the rest describes.
//!
//! Checks: no crash and no sanitizer report; what a parser accepts agrees with a naive reading of
//! the same bytes; the root's `release` runs exactly once whatever happens, and no child's or
//! dictionary's ever does; a tree is accepted exactly when a naive model of the import rules
//! accepts it, and an accepted tree reads back as it was built (also after `into_raw` and a
//! second import).
//!
//! A metadata pointer carries no length, so a tree only gets metadata whose counts and lengths
//! (walked as the importer walks them, up to the first negative one) stay inside its buffer;
//! other metadata buffers become NULL. Every buffer is allocated at its exact size, so that a
//! read past it is a sanitizer report.
#![no_main]

use std::sync::atomic::{AtomicUsize, Ordering};

use arbitrary::{Arbitrary, Unstructured};
use dlpack_abi::arrow::{
    DataType, Metadata, MetadataError, ParameterProblem, Schema, SchemaRef, TensorShape,
    ValidationError, EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, FIXED_SHAPE_TENSOR, MAX_DEPTH,
};
use dlpack_abi::dlpack::MAX_NDIM;
use dlpack_abi::raw::{ArrowSchema, ARROW_FLAG_NULLABLE};
use libfuzzer_sys::fuzz_target;

/// Levels of the random tree below the root (a chain of lists may add more above it).
const TREE_DEPTH: usize = 3;
/// Children per node of the random tree.
const MAX_CHILDREN: usize = 3;
/// Dimensions of a generated tensor shape.
const MAX_DIMS: usize = 6;
/// Pairs of a generated metadata map.
const MAX_PAIRS: usize = 4;

/// Formats a generated node picks from: every fixed one, and a few parameterised ones.
#[rustfmt::skip]
const FORMATS: &[&str] = &[
    "n", "b", "c", "C", "s", "S", "i", "I", "l", "L", "e", "f", "g", "z", "Z", "vz", "u", "U",
    "vu", "tdD", "tdm", "tts", "ttm", "ttu", "ttn", "tiM", "tiD", "tin", "tDs", "tDm", "tDu",
    "tDn", "tss:", "tsu:UTC", "tsn:Europe/Paris", "+l", "+L", "+vl", "+vL", "+s", "+m", "+r",
    "w:0", "w:16", "d:10,2", "d:5,-1,64", "d:76,3,256", "d:9,0,32", "+ud:", "+us:0,1", "+ud:5",
];

#[derive(Arbitrary, Debug)]
enum Format {
    Known(u8),
    /// `+w:N`; `None`: N is the product of the shape in the node's metadata.
    FixedSizeList(Option<u8>),
    Union {
        dense: bool,
        ids: Vec<u8>,
    },
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum Key {
    ExtensionName,
    ExtensionMetadata,
    Text(String),
    Raw(Vec<u8>),
}

/// Tensor JSON: extents (mod 5), a permutation (shuffled by the bytes, or taken from them when
/// `corrupt`), and `dim_names` (one too many when the byte is a multiple of 4); written as
/// pyarrow writes it, or, when `arrow_rs`, as arrow-rs 60 does (`permutations`, and `null` for
/// an absent key).
#[derive(Arbitrary, Debug)]
struct ShapeSpec {
    shape: Vec<u8>,
    permutation: Option<(Vec<u8>, bool)>,
    dim_names: Option<u8>,
    arrow_rs: bool,
}

#[derive(Arbitrary, Debug)]
enum Value {
    FixedShapeTensor,
    Bool8,
    Shape(ShapeSpec),
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum MetadataSpec {
    Pairs(Vec<(Key, Value)>),
    Raw(Vec<u8>),
}

/// What to break in a node after building it.
#[derive(Arbitrary, Debug)]
enum Defect {
    None,
    NullFormat,
    /// `n_children` made negative.
    NegativeChildren(i64),
    /// `n_children` below the number of pointers (never above: they would be read).
    FewerChildren(u8),
    NullChildren,
    NullChild(u8),
    ReleasedChild(u8),
    ReleasedDictionary,
}

#[derive(Debug)]
struct Node {
    /// A NUL is added; one inside truncates the string.
    format: Vec<u8>,
    name: Option<Vec<u8>>,
    /// Handed over only when `walk_in_bounds`.
    metadata: Option<Vec<u8>>,
    flags: i64,
    defect: Defect,
    children: Vec<Node>,
    dictionary: Option<Box<Node>>,
}

/// A node and its descendants, depth-limited (`arbitrary`'s derive is not). Mostly well-formed,
/// so that deep trees are reached: a fifth are fixed-shape tensors (name, JSON and list size
/// agreeing), most have the child count their format needs, and a quarter have a defect.
fn node(u: &mut Unstructured<'_>, depth: usize) -> arbitrary::Result<Node> {
    let (format, metadata) = if u.ratio(1u8, 5u8)? {
        let shape: ShapeSpec = u.arbitrary()?;
        let others: Vec<(Key, Value)> = u.arbitrary()?;
        let (json, product) = shape_json(&shape);
        let mut pairs: Vec<(Vec<u8>, Vec<u8>)> =
            others.iter().take(2).map(pair).map(|p| p.0).collect();
        let at = usize::from(u.arbitrary::<u8>()?) % (pairs.len() + 1);
        pairs.insert(at, (EXTENSION_NAME_KEY.into(), FIXED_SHAPE_TENSOR.into()));
        let at = usize::from(u.arbitrary::<u8>()?) % (pairs.len() + 1);
        pairs.insert(at, (EXTENSION_METADATA_KEY.into(), json));
        (format!("+w:{product}").into_bytes(), Some(encode(&pairs)))
    } else {
        let (metadata, product) = match u.arbitrary()? {
            None => (None, None),
            Some(MetadataSpec::Raw(bytes)) => (Some(bytes), None),
            Some(MetadataSpec::Pairs(pairs)) => {
                let pairs: Vec<_> = pairs.iter().take(MAX_PAIRS).map(pair).collect();
                let product = pairs.iter().find_map(|p| p.1);
                (
                    Some(encode(&pairs.into_iter().map(|p| p.0).collect::<Vec<_>>())),
                    product,
                )
            }
        };
        (format_bytes(u.arbitrary()?, product), metadata)
    };
    let name = u.arbitrary()?;
    let flags = u.arbitrary()?;
    let defect = if u.ratio(1u8, 4u8)? {
        u.arbitrary()?
    } else {
        Defect::None
    };
    let (mut n_children, mut dictionary) = (0, false);
    if depth < TREE_DEPTH {
        let needed = DataType::parse(&until_nul(format.clone()))
            .ok()
            .map(|t| expected_children(&t));
        n_children = match needed {
            Some(Some(n)) if u.ratio(7u8, 8u8)? => n as usize,
            _ => u.int_in_range(0..=MAX_CHILDREN)?,
        };
        dictionary = u.ratio(1u8, 4u8)?;
    }
    let children = (0..n_children)
        .map(|_| node(u, depth + 1))
        .collect::<Result<_, _>>()?;
    let dictionary = if dictionary {
        Some(Box::new(node(u, depth + 1)?))
    } else {
        None
    };
    Ok(Node {
        format,
        name,
        metadata,
        flags,
        defect,
        children,
        dictionary,
    })
}

/// A plain node of format `format`.
fn plain(format: &str, children: Vec<Node>) -> Node {
    Node {
        format: format.as_bytes().to_vec(),
        name: None,
        metadata: None,
        flags: 0,
        defect: Defect::None,
        children,
        dictionary: None,
    }
}

/// A format string; `product` is the list size of `FixedSizeList(None)`.
fn format_bytes(format: Format, product: Option<usize>) -> Vec<u8> {
    match format {
        Format::Known(i) => FORMATS[usize::from(i) % FORMATS.len()].as_bytes().to_vec(),
        Format::FixedSizeList(size) => {
            format!("+w:{}", size.map_or(product.unwrap_or(0), usize::from)).into_bytes()
        }
        Format::Union { dense, ids } => {
            let ids: Vec<String> = ids
                .iter()
                .take(4)
                .map(|id| (id % 130).to_string())
                .collect();
            format!("+u{}:{}", if dense { 'd' } else { 's' }, ids.join(",")).into_bytes()
        }
        Format::Raw(bytes) => bytes,
    }
}

/// A pair's bytes, and the list size of a generated shape value.
fn pair((key, value): &(Key, Value)) -> ((Vec<u8>, Vec<u8>), Option<usize>) {
    let key = match key {
        Key::ExtensionName => EXTENSION_NAME_KEY.into(),
        Key::ExtensionMetadata => EXTENSION_METADATA_KEY.into(),
        Key::Text(text) => text.clone().into_bytes(),
        Key::Raw(bytes) => bytes.clone(),
    };
    let (value, product) = match value {
        Value::FixedShapeTensor => (FIXED_SHAPE_TENSOR.into(), None),
        Value::Bool8 => (b"arrow.bool8".to_vec(), None),
        Value::Shape(shape) => {
            let (json, product) = shape_json(shape);
            (json, Some(product))
        }
        Value::Raw(bytes) => (bytes.clone(), None),
    };
    ((key, value), product)
}

/// The metadata encoding of `pairs`, written naively.
fn encode(pairs: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let push_len =
        |out: &mut Vec<u8>, n: usize| out.extend(i32::try_from(n).unwrap().to_ne_bytes());
    push_len(&mut out, pairs.len());
    for (key, value) in pairs {
        push_len(&mut out, key.len());
        out.extend(key);
        push_len(&mut out, value.len());
        out.extend(value);
    }
    out
}

/// Tensor JSON, and the product of its extents.
fn shape_json(spec: &ShapeSpec) -> (Vec<u8>, usize) {
    let shape: Vec<u64> = spec
        .shape
        .iter()
        .take(MAX_DIMS)
        .map(|&e| u64::from(e % 5))
        .collect();
    let n = shape.len();
    let list = |values: &[u64]| {
        values
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut json = format!("{{\"shape\": [{}]", list(&shape));
    let key = if spec.arrow_rs {
        "permutations"
    } else {
        "permutation"
    };
    let mut valid = true;
    let mut expected_permutation = None;
    if let Some((bytes, corrupt)) = &spec.permutation {
        let mut p: Vec<u64> = (0..n as u64).collect();
        if *corrupt {
            for (i, slot) in p.iter_mut().enumerate() {
                *slot = u64::from(bytes.get(i).copied().unwrap_or(0)) % (n as u64 + 1);
            }
        } else {
            for i in (1..n).rev() {
                p.swap(i, usize::from(bytes.get(i).copied().unwrap_or(0)) % (i + 1));
            }
        }
        json += &format!(", \"{key}\": [{}]", list(&p));
        let mut sorted = p.clone();
        sorted.sort_unstable();
        valid &= sorted == (0..n as u64).collect::<Vec<_>>();
        expected_permutation = Some(p.iter().map(|&i| i as usize).collect::<Vec<_>>());
    } else if spec.arrow_rs {
        json += &format!(", \"{key}\": null");
    }
    if let Some(d) = spec.dim_names {
        let names = n + usize::from(d % 4 == 0);
        valid &= names == n;
        let names: Vec<String> = (0..names).map(|i| format!("\"d{i}\"")).collect();
        json += &format!(", \"dim_names\": [{}]", names.join(","));
    } else if spec.arrow_rs {
        json += ", \"dim_names\": null";
    }
    json.push('}');
    // The naive reading: valid exactly when the permutation is one and the names are `n`.
    match TensorShape::parse(json.as_bytes()) {
        Ok(parsed) => {
            assert!(valid, "accepted {json}");
            let extents: Vec<i64> = shape.iter().map(|&e| e as i64).collect();
            assert_eq!(parsed.shape(), extents);
            assert_eq!(parsed.permutation(), expected_permutation.as_deref());
        }
        Err(error) => assert!(!valid, "refused {json}: {error}"),
    }
    (json.into_bytes(), shape.iter().product::<u64>() as usize)
}

/// What was handed to the importer, for the model and the read-back checks.
#[derive(Debug)]
struct Shadow {
    /// Up to the NUL; `None` for NULL.
    format: Option<Vec<u8>>,
    name: Option<Vec<u8>>,
    /// The whole buffer; `None` for NULL.
    metadata: Option<Vec<u8>>,
    flags: i64,
    n_children: i64,
    children_null: bool,
    /// `None`: a NULL pointer.
    children: Vec<Option<Shadow>>,
    dictionary: Option<Box<Shadow>>,
    /// `release` is NULL.
    released: bool,
}

/// Everything a built tree allocated, freed by the root's `release` (or by `import` for the
/// root struct itself).
#[derive(Default)]
struct Allocations {
    buffers: Vec<*mut [u8]>,
    nodes: Vec<*mut ArrowSchema>,
    arrays: Vec<*mut [*mut ArrowSchema]>,
}

impl Allocations {
    /// An exact-size copy of `bytes`, for a C pointer.
    fn buffer(&mut self, bytes: Vec<u8>) -> *const u8 {
        let ptr = Box::into_raw(bytes.into_boxed_slice());
        self.buffers.push(ptr);
        ptr.cast::<u8>()
    }

    /// `bytes` and a NUL, for a C string.
    fn c_string(&mut self, mut bytes: Vec<u8>) -> *const std::ffi::c_char {
        bytes.push(0);
        self.buffer(bytes).cast()
    }
}

impl Drop for Allocations {
    fn drop(&mut self) {
        for &ptr in &self.buffers {
            // SAFETY: made by `Box::into_raw` in `buffer`, freed only here.
            drop(unsafe { Box::from_raw(ptr) });
        }
        for &ptr in &self.nodes {
            // SAFETY: made by `Box::into_raw` in `build`, freed only here.
            drop(unsafe { Box::from_raw(ptr) });
        }
        for &ptr in &self.arrays {
            // SAFETY: made by `Box::into_raw` in `build`, freed only here.
            drop(unsafe { Box::from_raw(ptr) });
        }
    }
}

static ROOT_RELEASED: AtomicUsize = AtomicUsize::new(0);
static CHILD_RELEASED: AtomicUsize = AtomicUsize::new(0);

/// The root's `release`: frees the whole tree (so that a second call is a double free the
/// sanitizer reports) and marks the struct released.
unsafe extern "C" fn release_root(schema: *mut ArrowSchema) {
    ROOT_RELEASED.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the importer passes the root struct it owns, which is live.
    let schema = unsafe { &mut *schema };
    // SAFETY: `private_data` is the `Box<Allocations>` made in `import`, freed only here.
    drop(unsafe { Box::from_raw(schema.private_data.cast::<Allocations>()) });
    schema.release = None;
}

/// A child's or dictionary's `release`: only the root's `release` frees them, so this must never
/// run; it only counts.
unsafe extern "C" fn release_child(_: *mut ArrowSchema) {
    CHILD_RELEASED.fetch_add(1, Ordering::SeqCst);
}

/// The bytes of a C string as the importer sees them: up to the first NUL.
fn until_nul(mut bytes: Vec<u8>) -> Vec<u8> {
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(nul);
    }
    bytes
}

/// Whether the importer's walk over a metadata pointer (the count, then each key and value
/// length, stopping at the first negative one) stays inside `bytes`: only then may the buffer be
/// handed over. (The walk reads every length before any key is checked for UTF-8, so a map with
/// a bad key must be whole as well.)
fn walk_in_bounds(bytes: &[u8]) -> bool {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|w| i32::from_ne_bytes(w.try_into().unwrap()))
    };
    let Some(count) = word(0) else { return false };
    let mut at = 4usize;
    for _ in 0..count.max(0) {
        for _key_then_value in 0..2 {
            let Some(length) = word(at) else { return false };
            let Ok(length) = usize::try_from(length) else {
                return true;
            };
            at += 4 + length;
            if at > bytes.len() {
                return false;
            }
        }
    }
    true
}

/// Builds the C struct of `node` (children and dictionary boxed into `alloc`).
fn build(node: &Node, alloc: &mut Allocations) -> (ArrowSchema, Shadow) {
    let mut built = Vec::new();
    for child in &node.children {
        built.push(build(child, alloc));
    }
    let dictionary = node.dictionary.as_ref().map(|d| build(d, alloc));

    if let Some(bytes) = &node.metadata {
        check_metadata(bytes);
    }
    let metadata = node.metadata.clone().filter(|bytes| walk_in_bounds(bytes));
    let format = node.format.clone();
    check_format(&until_nul(format.clone()));

    let mut shadow = Shadow {
        format: Some(until_nul(format.clone())),
        name: node.name.clone().map(until_nul),
        metadata: metadata.clone(),
        flags: node.flags,
        n_children: built.len() as i64,
        children_null: built.is_empty(),
        children: Vec::new(),
        dictionary: None,
        released: false,
    };
    let mut raw = ArrowSchema {
        format: alloc.c_string(format),
        name: node
            .name
            .clone()
            .map_or(std::ptr::null(), |name| alloc.c_string(name)),
        metadata: metadata.map_or(std::ptr::null(), |m| alloc.buffer(m).cast()),
        flags: node.flags,
        n_children: built.len() as i64,
        children: std::ptr::null_mut(),
        dictionary: std::ptr::null_mut(),
        release: Some(release_child),
        private_data: std::ptr::null_mut(),
    };
    let mut pointers = Vec::new();
    for (child, child_shadow) in built {
        let ptr = Box::into_raw(Box::new(child));
        alloc.nodes.push(ptr);
        pointers.push(ptr);
        shadow.children.push(Some(child_shadow));
    }
    if !pointers.is_empty() {
        let array = Box::into_raw(pointers.into_boxed_slice());
        alloc.arrays.push(array);
        raw.children = array.cast();
    }
    if let Some((dictionary, dictionary_shadow)) = dictionary {
        let ptr = Box::into_raw(Box::new(dictionary));
        alloc.nodes.push(ptr);
        raw.dictionary = ptr;
        shadow.dictionary = Some(Box::new(dictionary_shadow));
    }

    let n = shadow.children.len();
    match node.defect {
        Defect::None => {}
        Defect::NullFormat => {
            raw.format = std::ptr::null();
            shadow.format = None;
        }
        Defect::NegativeChildren(x) => {
            raw.n_children = if x < 0 { x } else { !x };
            shadow.n_children = raw.n_children;
        }
        Defect::FewerChildren(k) if n > 0 => {
            raw.n_children = (n - 1 - usize::from(k) % n) as i64;
            shadow.n_children = raw.n_children;
        }
        Defect::NullChildren => {
            raw.children = std::ptr::null_mut();
            shadow.children_null = true;
        }
        Defect::NullChild(i) if n > 0 => {
            let i = usize::from(i) % n;
            // SAFETY: `children` holds `n` pointers (above).
            unsafe { *raw.children.add(i) = std::ptr::null_mut() };
            shadow.children[i] = None;
        }
        Defect::ReleasedChild(i) if n > 0 => {
            let i = usize::from(i) % n;
            // SAFETY: `children` holds `n` pointers to live structs (above).
            unsafe { (**raw.children.add(i)).release = None };
            shadow.children[i].as_mut().unwrap().released = true;
        }
        Defect::ReleasedDictionary => {
            if let Some(dictionary) = &mut shadow.dictionary {
                // SAFETY: a live struct made above.
                unsafe { (*raw.dictionary).release = None };
                dictionary.released = true;
            }
        }
        Defect::FewerChildren(_) | Defect::NullChild(_) | Defect::ReleasedChild(_) => {}
    }
    (raw, shadow)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 8 {
        0 => check_metadata(rest),
        1 => check_tensor_json(rest),
        2 => check_format(rest),
        _ => import(rest),
    }
});

/// Builds a tree from `bytes`, imports it, and checks the outcome against the model.
fn import(bytes: &[u8]) {
    let mut u = Unstructured::new(bytes);
    let Ok(mut root) = node(&mut u, 0) else {
        return;
    };
    // Sometimes a chain of lists above the tree, around the depth limit.
    if let Ok(Some(levels)) = u.arbitrary::<Option<u8>>() {
        for _ in 0..MAX_DEPTH - 4 + usize::from(levels % 8) {
            root = plain("+l", vec![root]);
        }
    }

    let mut alloc = Box::new(Allocations::default());
    let (mut raw, shadow) = build(&root, &mut alloc);
    raw.release = Some(release_root);
    raw.private_data = Box::into_raw(alloc).cast();
    let expected = accepts(&shadow, 0);

    let source = Box::into_raw(Box::new(raw));
    let (roots, children) = (
        ROOT_RELEASED.load(Ordering::SeqCst),
        CHILD_RELEASED.load(Ordering::SeqCst),
    );
    // SAFETY: a live, unreleased struct we own, whose strings are NUL-terminated, whose metadata
    // stays inside its buffer (`walk_in_bounds`), whose `children` hold `n_children` pointers or
    // more, and which nothing changes until release.
    match unsafe { Schema::from_raw(source) } {
        Ok(schema) => {
            assert!(expected, "accepted, but the model refuses: {shadow:#?}");
            assert_eq!(ROOT_RELEASED.load(Ordering::SeqCst), roots);
            check_view(&schema.view(), &shadow);
            let _ = format!("{schema:?}");
            // Give it away and import it again: the same tree, still unreleased.
            let mut again = schema.into_raw();
            assert_eq!(ROOT_RELEASED.load(Ordering::SeqCst), roots);
            // SAFETY: the struct `into_raw` gave back, owned here and unreleased.
            let schema = unsafe { Schema::from_raw(&mut again) }.expect("re-import");
            assert!(again.release.is_none());
            check_view(&schema.view(), &shadow);
        }
        Err(error) => {
            assert!(
                !expected,
                "refused ({error}), but the model accepts: {shadow:#?}"
            );
            assert!(!matches!(
                error,
                ValidationError::NullPointer | ValidationError::Released
            ));
            let _ = (error.to_string(), format!("{error:?}"));
        }
    }
    assert_eq!(
        ROOT_RELEASED.load(Ordering::SeqCst),
        roots + 1,
        "root release must run exactly once"
    );
    assert_eq!(
        CHILD_RELEASED.load(Ordering::SeqCst),
        children,
        "a child's release ran"
    );
    // SAFETY: made by `Box::into_raw` above; the importer moved out of it (`release` is NULL).
    let source = unsafe { Box::from_raw(source) };
    assert!(
        source.release.is_none(),
        "import must mark the source released"
    );
}

/// The import rules, naively (the parsers are checked on their own in the other modes).
fn accepts(s: &Shadow, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Some(format) = &s.format else {
        return false;
    };
    let Ok(data_type) = DataType::parse(format) else {
        return false;
    };
    if s.name
        .as_ref()
        .is_some_and(|name| std::str::from_utf8(name).is_err())
    {
        return false;
    }
    let pairs = match &s.metadata {
        None => None,
        Some(bytes) => match naive_pairs(bytes) {
            Some((pairs, _)) => Some(pairs),
            None => return false,
        },
    };
    if s.n_children < 0 {
        return false;
    }
    if expected_children(&data_type).is_some_and(|n| n != s.n_children) {
        return false;
    }
    if s.n_children > 0 && s.children_null {
        return false;
    }
    for child in &s.children[..s.n_children as usize] {
        match child {
            Some(child) if !child.released && accepts(child, depth + 1) => {}
            _ => return false,
        }
    }
    if let Some(dictionary) = &s.dictionary {
        let integer_indices = matches!(
            data_type,
            DataType::Int8
                | DataType::UInt8
                | DataType::Int16
                | DataType::UInt16
                | DataType::Int32
                | DataType::UInt32
                | DataType::Int64
                | DataType::UInt64
        );
        if dictionary.released || !integer_indices || !accepts(dictionary, depth + 1) {
            return false;
        }
    }
    if let Some(pairs) = pairs {
        let first = |key: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == key.as_bytes())
                .map(|(_, v)| *v)
        };
        if first(EXTENSION_NAME_KEY) == Some(FIXED_SHAPE_TENSOR.as_bytes()) {
            let DataType::FixedSizeList(size) = data_type else {
                return false;
            };
            let Some(json) = first(EXTENSION_METADATA_KEY) else {
                return false;
            };
            let Ok(shape) = TensorShape::parse(json) else {
                return false;
            };
            if naive_product(shape.shape()) != Some(size) {
                return false;
            }
        }
    }
    true
}

/// The child count a type requires; `None`: any (struct).
fn expected_children(data_type: &DataType<'_>) -> Option<i64> {
    Some(match data_type {
        DataType::List
        | DataType::LargeList
        | DataType::ListView
        | DataType::LargeListView
        | DataType::FixedSizeList(_)
        | DataType::Map => 1,
        DataType::RunEndEncoded => 2,
        DataType::Struct => return None,
        DataType::Union(_, "") => 0,
        DataType::Union(_, ids) => ids.split(',').count() as i64,
        _ => 0,
    })
}

fn naive_product(shape: &[i64]) -> Option<usize> {
    let mut product = 1usize;
    for &extent in shape {
        product = product.checked_mul(usize::try_from(extent).ok()?)?;
    }
    Some(product)
}

/// An accepted node (and its descendants) reads back as built.
fn check_view(view: &SchemaRef<'_>, s: &Shadow) {
    let format = s.format.as_deref().unwrap();
    assert_eq!(view.format(), format);
    assert_eq!(Ok(view.data_type()), DataType::parse(format));
    assert_eq!(view.name().map(str::as_bytes), s.name.as_deref());
    assert_eq!(view.flags(), s.flags);
    assert_eq!(view.is_nullable(), s.flags & ARROW_FLAG_NULLABLE != 0);
    assert_eq!(view.raw().flags, s.flags);

    let metadata = view.metadata();
    assert_eq!(metadata.is_some(), s.metadata.is_some());
    let mut is_tensor = false;
    if let (Some(metadata), Some(bytes)) = (metadata, &s.metadata) {
        let (pairs, size) = naive_pairs(bytes).unwrap();
        assert_eq!(metadata.as_bytes(), &bytes[..size]);
        assert_eq!(metadata.len(), pairs.len());
        let got: Vec<(&[u8], &[u8])> = metadata.iter().map(|(k, v)| (k.as_bytes(), v)).collect();
        assert_eq!(got, pairs);
        let first = |key: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == key.as_bytes())
                .map(|(_, v)| *v)
        };
        let name = first(EXTENSION_NAME_KEY);
        assert_eq!(
            view.extension_name(),
            name.and_then(|n| std::str::from_utf8(n).ok())
        );
        assert_eq!(view.extension_metadata(), first(EXTENSION_METADATA_KEY));
        is_tensor = name == Some(FIXED_SHAPE_TENSOR.as_bytes());
    } else {
        assert_eq!(view.extension_name(), None);
        assert_eq!(view.extension_metadata(), None);
    }
    match view.fixed_shape_tensor() {
        Some(shape) => {
            assert!(is_tensor);
            check_shape(&shape);
            let DataType::FixedSizeList(size) = view.data_type() else {
                panic!("not a list")
            };
            assert_eq!(shape.list_size(), Some(size));
        }
        None => assert!(!is_tensor, "a fixed_shape_tensor without its shape"),
    }

    let n = usize::try_from(s.n_children).unwrap();
    assert_eq!(view.n_children(), n);
    assert_eq!(view.children().len(), n);
    assert!(view.child(n).is_none());
    for (i, (child, shadow)) in view.children().zip(&s.children).enumerate() {
        let shadow = shadow.as_ref().unwrap();
        assert_eq!(
            view.child(i).unwrap().raw() as *const _,
            child.raw() as *const _
        );
        check_view(&child, shadow);
    }
    match (view.dictionary(), &s.dictionary) {
        (Some(dictionary), Some(shadow)) => check_view(&dictionary, shadow),
        (None, None) => {}
        _ => panic!("dictionary presence differs"),
    }
}

/// Key and value bytes, in order.
type Pairs<'a> = Vec<(&'a [u8], &'a [u8])>;

/// The pairs of a metadata map and its size, read naively; `None` where `Metadata::parse` must
/// fail.
fn naive_pairs(bytes: &[u8]) -> Option<(Pairs<'_>, usize)> {
    fn length(bytes: &[u8], at: &mut usize) -> Option<usize> {
        let word = bytes.get(*at..*at + 4)?;
        *at += 4;
        usize::try_from(i32::from_ne_bytes(word.try_into().unwrap())).ok()
    }
    fn part<'a>(bytes: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
        let n = length(bytes, at)?;
        let part = bytes.get(*at..*at + n)?;
        *at += n;
        Some(part)
    }
    let mut at = 0;
    let count = length(bytes, &mut at)?;
    let mut pairs = Vec::new();
    for _ in 0..count {
        let key = part(bytes, &mut at)?;
        std::str::from_utf8(key).ok()?;
        pairs.push((key, part(bytes, &mut at)?));
    }
    Some((pairs, at))
}

/// `Metadata::parse` agrees with the naive reading; an accepted map's accessors agree with it.
fn check_metadata(bytes: &[u8]) {
    let naive = naive_pairs(bytes);
    let metadata = match Metadata::parse(bytes) {
        Ok(metadata) => metadata,
        Err(error) => {
            assert!(
                naive.is_none(),
                "refused ({error}) a map read naively as {naive:?}"
            );
            let _ = error.to_string();
            if let MetadataError::Truncated { at, needed, len } = error {
                assert_eq!(len, bytes.len());
                assert!(at + needed > len);
            }
            return;
        }
    };
    let (pairs, size) = naive.expect("accepted a map the naive reading refuses");
    assert_eq!(metadata.size(), size);
    assert!(metadata.size() <= bytes.len());
    assert_eq!(metadata.as_bytes(), &bytes[..size]);
    assert_eq!(metadata.len(), pairs.len());
    assert_eq!(metadata.is_empty(), pairs.is_empty());
    assert_eq!(
        metadata.iter().size_hint(),
        (pairs.len(), Some(pairs.len()))
    );
    let got: Vec<(&[u8], &[u8])> = metadata.iter().map(|(k, v)| (k.as_bytes(), v)).collect();
    assert_eq!(got, pairs);
    for (key, _) in &pairs {
        let first = pairs.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
        assert_eq!(metadata.get(std::str::from_utf8(key).unwrap()), first);
    }
    assert_eq!(Metadata::parse(metadata.as_bytes()), Ok(metadata));
    let _ = format!("{metadata:?}");
}

/// Invariants of a parsed tensor shape.
fn check_shape(shape: &TensorShape) {
    let n = shape.ndim();
    assert!(n <= MAX_NDIM);
    assert_eq!(shape.shape().len(), n);
    assert!(shape.shape().iter().all(|&e| e >= 0));
    let permutation = shape.permutation();
    if let Some(p) = permutation {
        assert_eq!(p.len(), n);
        let mut seen = vec![false; n];
        for &i in p {
            assert!(i < n && !seen[i], "not a permutation: {p:?}");
            seen[i] = true;
        }
    }
    let logical: Vec<i64> = shape.logical_shape().collect();
    assert_eq!(logical.len(), n);
    for (i, &extent) in logical.iter().enumerate() {
        assert_eq!(extent, shape.shape()[permutation.map_or(i, |p| p[i])]);
    }
    assert_eq!(shape.list_size(), naive_product(shape.shape()));
    let _ = format!("{shape:?}");
}

/// The naive reading of tensor JSON, through `serde_json`: `shape` (non-negative `i64`s, at most
/// `MAX_NDIM`), `permutation` or `permutations` (a permutation of `0..ndim`) and `dim_names`
/// (`ndim` strings), the optional ones `null` or absent. `None`: refused.
fn naive_tensor(value: &serde_json::Value) -> Option<(Vec<i64>, Option<Vec<usize>>)> {
    let object = value.as_object()?;
    let shape: Vec<i64> = object
        .get("shape")?
        .as_array()?
        .iter()
        .map(|e| e.as_i64().filter(|&e| e >= 0))
        .collect::<Option<_>>()?;
    let n = shape.len();
    if n > MAX_NDIM {
        return None;
    }
    let present = |key| object.get(key).filter(|v| !v.is_null());
    if let Some(names) = present("dim_names") {
        let names = names.as_array()?;
        if names.len() != n || !names.iter().all(serde_json::Value::is_string) {
            return None;
        }
    }
    let permutation = match (present("permutation"), present("permutations")) {
        (Some(_), Some(_)) => return None,
        (None, None) => None,
        (Some(p), None) | (None, Some(p)) => {
            let p: Vec<usize> = p
                .as_array()?
                .iter()
                .map(|i| i.as_u64().and_then(|i| usize::try_from(i).ok()))
                .collect::<Option<_>>()?;
            let mut sorted = p.clone();
            sorted.sort_unstable();
            if sorted != (0..n).collect::<Vec<_>>() {
                return None;
            }
            Some(p)
        }
    };
    Some((shape, permutation))
}

/// serde_json refuses JSON this crate's syntax check accepts: lone surrogates (`\ud800`,
/// which this crate does not decode) and numbers beyond `f64` (`1e400`, never an integer here).
fn serde_json_limit(error: &serde_json::Error) -> bool {
    let text = error.to_string();
    text.contains("surrogate") || text.contains("number out of range")
}

/// `json` with every number `-0` (no fraction, no exponent; not in a string) written ` 0`: Arrow
/// C++ (RapidJSON) reads it as the integer 0, as the parser does, where serde_json reads the
/// float `-0.0`. The length and the syntax are unchanged.
fn minus_zero_as_arrow_cpp(json: &[u8]) -> Vec<u8> {
    let mut read = json.to_vec();
    let (mut in_string, mut escaped) = (false, false);
    for (at, &byte) in json.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if byte == b'"' {
            in_string = true;
        } else if byte == b'-'
            && json.get(at + 1) == Some(&b'0')
            && !matches!(json.get(at + 2), Some(b'0'..=b'9' | b'.' | b'e' | b'E'))
        {
            read[at] = b' ';
        }
    }
    read
}

/// What the parser decides agrees with the naive reading; an accepted shape satisfies its
/// invariants and survives `to_json` (shape and permutation; `dim_names` is not kept).
fn check_tensor_json(json: &[u8]) {
    let naive = serde_json::from_slice::<serde_json::Value>(&minus_zero_as_arrow_cpp(json));
    let shape = match TensorShape::parse(json) {
        Ok(shape) => shape,
        Err(error) => {
            let _ = error.to_string();
            match (error, &naive) {
                // JSON, but not an object, or deeper than this crate reads.
                (ValidationError::TensorJson { expected, .. }, Ok(value)) => assert!(
                    (!value.is_object() && expected.starts_with("'{'"))
                        || expected == "at most 16 levels of nesting",
                    "{error}"
                ),
                (ValidationError::TensorJson { .. }, Err(_)) => {}
                // A key given twice (serde_json keeps the last).
                (
                    ValidationError::TensorParameter {
                        problem: ParameterProblem::Repeated { .. },
                        ..
                    },
                    _,
                ) => {}
                (_, Ok(value)) => {
                    assert_eq!(
                        naive_tensor(value),
                        None,
                        "refused ({error}) what serde_json reads"
                    )
                }
                (_, Err(serde)) => assert!(
                    serde_json_limit(serde),
                    "read past what serde_json calls a syntax error: {serde}"
                ),
            }
            return;
        }
    };
    match &naive {
        Ok(value) => {
            let (extents, permutation) =
                naive_tensor(value).expect("accepted what the naive reading refuses");
            assert_eq!(shape.shape(), extents);
            assert_eq!(shape.permutation(), permutation.as_deref());
        }
        Err(error) => assert!(serde_json_limit(error), "{error}"),
    }
    check_shape(&shape);
    let text = shape.to_json();
    let again = TensorShape::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(again.shape(), shape.shape());
    assert_eq!(again.permutation(), shape.permutation());
}

/// Fixed format strings of the C Data Interface, and the prefixes of parameterised ones.
#[rustfmt::skip]
const FIXED_FORMATS: &[&[u8]] = &[
    b"n", b"b", b"c", b"C", b"s", b"S", b"i", b"I", b"l", b"L", b"e", b"f", b"g", b"z", b"Z",
    b"vz", b"u", b"U", b"vu", b"tdD", b"tdm", b"tts", b"ttm", b"ttu", b"ttn", b"tiM", b"tiD",
    b"tin", b"tDs", b"tDm", b"tDu", b"tDn", b"+l", b"+L", b"+vl", b"+vL", b"+s", b"+m", b"+r",
];
#[rustfmt::skip]
const PREFIXES: &[&[u8]] = &[b"tss:", b"tsm:", b"tsu:", b"tsn:", b"+w:", b"+ud:", b"+us:", b"w:", b"d:"];

/// An accepted format string is one the C Data Interface defines, and its parameters read back.
fn check_format(format: &[u8]) {
    let data_type = match DataType::parse(format) {
        Ok(data_type) => data_type,
        Err(error) => {
            assert!(matches!(error, ValidationError::InvalidFormat { .. }));
            let _ = error.to_string();
            return;
        }
    };
    let _ = format!("{data_type:?}");
    assert!(
        FIXED_FORMATS.contains(&format) || PREFIXES.iter().any(|p| format.starts_with(p)),
        "accepted {format:?}"
    );
    let text = std::str::from_utf8(format).expect("an accepted format is UTF-8");
    if let Some(dtype) = data_type.dlpack_dtype() {
        assert_eq!(dtype.lanes, 1);
        assert_eq!(data_type.bit_width(), Some(u64::from(dtype.bits)));
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match data_type {
        DataType::Timestamp(_, zone) => assert_eq!(zone, &text[4..]),
        DataType::Union(_, ids) => {
            assert_eq!(ids, &text[4..]);
            assert!(
                ids.is_empty()
                    || ids
                        .split(',')
                        .all(|id| digits(id) && id.parse::<u32>().unwrap() <= 127)
            );
        }
        DataType::FixedSizeList(size) => {
            assert!(digits(&text[3..]));
            assert_eq!(
                DataType::parse(format!("+w:{size}").as_bytes()),
                Ok(data_type)
            );
        }
        DataType::FixedSizeBinary(size) => {
            assert!(digits(&text[2..]));
            assert_eq!(data_type.bit_width(), Some(size as u64 * 8));
            assert_eq!(
                DataType::parse(format!("w:{size}").as_bytes()),
                Ok(data_type)
            );
        }
        DataType::Decimal {
            precision,
            scale,
            bit_width,
        } => {
            assert!(precision > 0);
            assert!(matches!(bit_width, 32 | 64 | 128 | 256));
            let again = format!("d:{precision},{scale},{bit_width}");
            assert_eq!(DataType::parse(again.as_bytes()), Ok(data_type));
        }
        _ => {}
    }
}
