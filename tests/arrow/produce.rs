//! Schemas this crate produces (`Schema::produce`, `SchemaDef::export`): one shared allocation
//! per tree, which every node keeps alive until its own release, whatever order a consumer
//! releases them in; and format strings written back exactly as they parse. Miri runs these
//! (a node freed too early, or never, fails there).

use std::cell::Cell;
use std::ptr;

use dlpack_abi::arrow::*;
use dlpack_abi::raw::*;

/// A struct of a list of float32, a dictionary-encoded utf8 and a timestamp, with metadata.
fn nested() -> Schema {
    SchemaDef::new("+s")
        .unwrap()
        .with_metadata("origin", "test")
        .with_child(
            SchemaDef::new("+l")
                .unwrap()
                .with_name("values")
                .with_child(SchemaDef::new("f").unwrap().with_name("item").nullable()),
        )
        .with_child(
            SchemaDef::new("c")
                .unwrap()
                .with_name("label")
                .with_dictionary(SchemaDef::new("u").unwrap()),
        )
        .with_child(SchemaDef::new("tsu:UTC").unwrap().with_name("at"))
        .export()
        .unwrap()
}

/// Moves node `index` out of `parent`'s children, as a consumer may: a bitwise copy, and the
/// original marked released.
fn move_child(parent: &mut ArrowSchema, index: usize) -> ArrowSchema {
    // SAFETY: `parent` is a live produced schema with more than `index` children.
    let slot = unsafe { *parent.children.add(index) };
    // SAFETY: as above; the copy becomes the owner.
    let moved = unsafe { ptr::read(slot) };
    // SAFETY: as above.
    unsafe { (*slot).release = None };
    moved
}

fn release(schema: &mut ArrowSchema) {
    let release = schema.release.expect("a live schema");
    // SAFETY: releasing a schema the test owns, once.
    unsafe { release(schema) };
    assert!(schema.release.is_none(), "release marks it released");
}

#[test]
fn children_moved_out_outlive_their_released_parent() {
    let mut root = nested().into_raw();
    let mut list = move_child(&mut root, 0);
    let mut label = move_child(&mut root, 1);
    release(&mut root);
    // The moved nodes (and what they point at: names, children, dictionaries) are intact.
    // SAFETY: produced, moved out, still owned by the test.
    let list_view = unsafe { Schema::from_raw(&mut list) }.unwrap();
    assert_eq!(list_view.view().name(), Some("values"));
    assert_eq!(list_view.view().child(0).unwrap().format(), b"f");
    // A grandchild moved out of a moved child, released after it.
    // SAFETY: as above.
    let label_schema = unsafe { Schema::from_raw(&mut label) }.unwrap();
    let mut label = label_schema.into_raw();
    // SAFETY: the dictionary of a live produced node.
    let mut values = unsafe { ptr::read(label.dictionary) };
    // SAFETY: as above.
    unsafe { (*label.dictionary).release = None };
    release(&mut label);
    // SAFETY: as above.
    let values = unsafe { Schema::from_raw(&mut values) }.unwrap();
    assert_eq!(values.view().format(), b"u");
    drop((list_view, values));
}

#[test]
fn a_produced_tree_reads_back_as_described() {
    let schema = nested();
    let root = schema.view();
    assert_eq!(root.metadata().unwrap().get("origin"), Some(&b"test"[..]));
    assert_eq!(root.n_children(), 3);
    let label = root.child(1).unwrap();
    assert_eq!((label.format(), label.name()), (&b"c"[..], Some("label")));
    assert_eq!(label.dictionary().unwrap().data_type(), DataType::Utf8);
    let item = root.child(0).unwrap().child(0).unwrap();
    assert_eq!(item.flags(), ARROW_FLAG_NULLABLE);
    assert_eq!(
        root.child(2).unwrap().data_type(),
        DataType::Timestamp(TimeUnit::Microsecond, "UTC")
    );
    // A second export is a fresh tree.
    let mut first = nested().into_raw();
    let mut second = nested().into_raw();
    assert_ne!(first.children, second.children);
    release(&mut first);
    release(&mut second);
}

/// How a [`Fake`] source breaks its description.
#[derive(Clone, Copy, PartialEq)]
enum Lie {
    /// It does not.
    No,
    /// One more child each walk.
    Grows,
    /// Two empty metadata pairs on the first walks, then one pair of the same encoded size.
    Metadata,
}

/// A source of one node, its children leaves, that can break its description.
struct Fake {
    data_type: DataType<'static>,
    name: &'static str,
    /// Children the first walk sees.
    children: Cell<usize>,
    lie: Lie,
    walks: Cell<usize>,
}

impl Fake {
    fn new(data_type: DataType<'static>, children: usize, lie: Lie) -> Self {
        Fake {
            data_type,
            name: "fake",
            children: Cell::new(children),
            lie,
            walks: Cell::new(0),
        }
    }
}

impl SchemaSource for Fake {
    fn data_type(&self) -> Result<DataType<'_>, ValidationError> {
        Ok(self.data_type)
    }
    fn name(&self) -> Option<&str> {
        Some(self.name)
    }
    fn flags(&self) -> i64 {
        0
    }
    fn metadata(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.walks.set(self.walks.get() + 1);
        let pairs: Vec<(&str, &[u8])> = match (self.lie, self.walks.get()) {
            (Lie::Metadata, 1 | 2) => vec![("", b""), ("", b"")],
            (Lie::Metadata, _) => vec![("abcd", b"efgh")],
            _ => vec![("k", b"v")],
        };
        pairs.into_iter()
    }
    fn n_children(&self) -> usize {
        let children = self.children.get();
        if self.lie == Lie::Grows {
            self.children.set(children + 1);
        }
        children
    }
    fn child(&self, _: usize) -> Option<Self> {
        Some(Fake::new(DataType::Int8, 0, Lie::No))
    }
    fn dictionary(&self) -> Option<Self> {
        None
    }
}

fn invalid_source(result: Result<Schema, ValidationError>) -> &'static str {
    match result {
        Err(ValidationError::InvalidSource { reason }) => reason,
        other => panic!("expected an invalid source, got {other:?}"),
    }
}

#[test]
fn sources_that_break_their_description_are_refused_and_lose_nothing() {
    // One more child the second time: refused, nothing handed out, nothing leaked (Miri).
    let grows = Schema::produce(&Fake::new(DataType::Struct, 1, Lie::Grows));
    assert!(invalid_source(grows).contains("second walk"));
    assert!(Schema::produce(&Fake::new(DataType::Struct, 2, Lie::No)).is_ok());
    // Other pairs of the same size the second time: the count would not match the pairs, and
    // reading the map would run past its end. Refused before anything reads it.
    let metadata = Schema::produce(&Fake::new(DataType::Int32, 0, Lie::Metadata));
    assert!(invalid_source(metadata).contains("second walk"));
    // More children than any tree may have.
    assert_eq!(
        Schema::produce(&Fake::new(DataType::Struct, usize::MAX, Lie::No)).err(),
        Some(ValidationError::TooManyNodes)
    );
    // A type that does not write back as itself: time32 has no microsecond format string.
    let time32 = DataType::Time32(TimeUnit::Microsecond);
    assert!(matches!(
        Schema::produce(&Fake::new(time32, 0, Lie::No)),
        Err(ValidationError::InvalidFormat { .. })
    ));
    let time64 = DataType::Time64(TimeUnit::Microsecond);
    let time64 = Schema::produce(&Fake::new(time64, 0, Lie::No)).unwrap();
    assert_eq!(time64.view().format(), b"ttu");
    // A NUL would end a C string early: refused in names and in formats (a timestamp's zone).
    let mut named = Fake::new(DataType::Int32, 0, Lie::No);
    named.name = "a\0b";
    assert!(invalid_source(Schema::produce(&named)).contains("name"));
    let zone = DataType::Timestamp(TimeUnit::Second, "UTC\0junk");
    let zoned = Schema::produce(&Fake::new(zone, 0, Lie::No));
    assert!(invalid_source(zoned).contains("format"));
}

/// Formats are written as their types (`+w:02` as `+w:2`), and layouts compare types, not
/// spellings: an array bound to a definition reads with that definition's export.
#[test]
fn layouts_compare_types_not_spellings() {
    let spelled = SchemaDef::new("+w:02")
        .unwrap()
        .with_child(SchemaDef::new("l").unwrap());
    let exported = spelled.export().unwrap();
    assert_eq!(exported.view().format(), b"+w:2");
    let values = Array::from_vec(vec![1i64, 2, 3, 4]).unwrap();
    let list = Array::fixed_size_list(values, 2).unwrap();
    let own = SchemaDef::new("+w:2")
        .unwrap()
        .with_child(SchemaDef::new("l").unwrap())
        .export()
        .unwrap();
    let list = list.with_layout(own.view(), spelled).unwrap();
    let view = list.view(exported.view()).unwrap();
    assert_eq!(
        view.child(0).unwrap().values::<i64>().unwrap(),
        [1, 2, 3, 4]
    );
}

/// Every type, and the formats it parses from: written back, each parses as itself.
#[test]
fn format_strings_write_back_as_they_parse() {
    let formats = [
        "n",
        "b",
        "c",
        "C",
        "s",
        "S",
        "i",
        "I",
        "l",
        "L",
        "e",
        "f",
        "g",
        "z",
        "Z",
        "vz",
        "u",
        "U",
        "vu",
        "tdD",
        "tdm",
        "tts",
        "ttm",
        "ttu",
        "ttn",
        "tiM",
        "tiD",
        "tin",
        "tDs",
        "tDm",
        "tDu",
        "tDn",
        "tss:",
        "tsm:Europe/Paris",
        "tsu:UTC",
        "tsn:+01:00",
        "+l",
        "+L",
        "+vl",
        "+vL",
        "+s",
        "+m",
        "+r",
        "+w:0",
        "+w:7",
        "w:1",
        "w:2147483647",
        "+ud:",
        "+us:0,1,127",
        "+ud:5",
        "d:1,0",
        "d:38,-5",
        "d:9,2,32",
        "d:18,3,64",
        "d:76,10,256",
    ];
    for format in formats {
        let parsed = DataType::parse(format.as_bytes()).unwrap();
        let written = parsed.to_string();
        assert_eq!(
            DataType::parse(written.as_bytes()),
            Ok(parsed),
            "{format} wrote {written}"
        );
        assert_eq!(written, format, "canonical formats write back unchanged");
    }
    // The bit width 128 is the default and is left out.
    assert_eq!(DataType::parse(b"d:5,1,128").unwrap().to_string(), "d:5,1");
}
