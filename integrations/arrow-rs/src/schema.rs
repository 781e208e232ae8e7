//! arrow-rs fields described for [`Schema::produce`]: the schema arrow-rs's own C Data export
//! writes (`FFI_ArrowSchema::try_from`), node for node (formats, names, flags, metadata), in
//! one allocation instead of several per node. `tests/arrow_rs/agreement.rs` checks that both
//! agree.

use alloc::string::String;
use core::fmt::Write as _;

use arrow_schema::{DataType as ArrowType, Field, IntervalUnit as ArrowInterval};
use arrow_schema::{TimeUnit as ArrowTime, UnionMode as ArrowUnionMode};

use dlpack_abi::arrow::{
    DataType, Excerpt, IntervalUnit, Schema, SchemaSource, TimeUnit, UnionMode, ValidationError,
};
use dlpack_abi::raw::{
    ARROW_FLAG_DICTIONARY_ORDERED, ARROW_FLAG_MAP_KEYS_SORTED, ARROW_FLAG_NULLABLE,
};

/// The metadata of a bare type: none.
static NO_METADATA: arrow_schema::Metadata = arrow_schema::Metadata::new();

/// Produces the schema of a record batch: a struct of its fields, with its metadata.
pub(super) fn of_schema(schema: &arrow_schema::Schema) -> Result<Schema, ValidationError> {
    Schema::produce(&Node::new(Kind::Schema(schema)))
}

/// Produces the schema of a field.
pub(super) fn of_field(field: &Field) -> Result<Schema, ValidationError> {
    Schema::produce(&Node::new(Kind::Field(field)))
}

/// Produces the schema of a type (no name, flags or metadata, as arrow-rs writes it).
pub(super) fn of_type(data_type: &ArrowType) -> Result<Schema, ValidationError> {
    Schema::produce(&Node::new(Kind::Type(data_type)))
}

/// What a node describes.
#[derive(Clone, Copy)]
enum Kind<'a> {
    /// A record batch's schema: a struct of its fields.
    Schema(&'a arrow_schema::Schema),
    /// A field: its type, name, nullability and metadata.
    Field(&'a Field),
    /// A bare type: a dictionary's values.
    Type(&'a ArrowType),
}

/// One node of an arrow-rs schema.
struct Node<'a> {
    kind: Kind<'a>,
    /// A union's type ids as its format string lists them (`"0,1,5"`).
    type_ids: String,
}

impl<'a> Node<'a> {
    fn new(kind: Kind<'a>) -> Self {
        let mut type_ids = String::new();
        if let Some(ArrowType::Union(fields, _)) = Self::arrow_type(kind) {
            for (index, (id, _)) in fields.iter().enumerate() {
                let comma = if index == 0 { "" } else { "," };
                // Writing to a `String` does not fail.
                let _ = write!(type_ids, "{comma}{id}");
            }
        }
        Self { kind, type_ids }
    }

    /// The arrow-rs type (`None` for a record batch's struct).
    fn arrow_type(kind: Kind<'a>) -> Option<&'a ArrowType> {
        match kind {
            Kind::Schema(_) => None,
            Kind::Field(field) => Some(field.data_type()),
            Kind::Type(data_type) => Some(data_type),
        }
    }

    fn child_field(&self, index: usize) -> Option<&'a Field> {
        let Some(data_type) = Self::arrow_type(self.kind) else {
            let Kind::Schema(schema) = self.kind else {
                return None;
            };
            return schema.fields().get(index).map(|field| field.as_ref());
        };
        match data_type {
            ArrowType::List(child)
            | ArrowType::LargeList(child)
            | ArrowType::ListView(child)
            | ArrowType::LargeListView(child)
            | ArrowType::FixedSizeList(child, _)
            | ArrowType::Map(child, _) => (index == 0).then_some(child.as_ref()),
            ArrowType::Struct(fields) => fields.get(index).map(|field| field.as_ref()),
            ArrowType::Union(fields, _) => fields.iter().nth(index).map(|(_, field)| &**field),
            ArrowType::RunEndEncoded(run_ends, values) => match index {
                0 => Some(run_ends.as_ref()),
                1 => Some(values.as_ref()),
                _ => None,
            },
            _ => None,
        }
    }
}

/// dlpack-abi's name for an arrow-rs type, as its format string describes it.
fn data_type<'a>(arrow: &'a ArrowType, type_ids: &'a str) -> Result<DataType<'a>, ValidationError> {
    let unit = |unit: &ArrowTime| match unit {
        ArrowTime::Second => TimeUnit::Second,
        ArrowTime::Millisecond => TimeUnit::Millisecond,
        ArrowTime::Microsecond => TimeUnit::Microsecond,
        ArrowTime::Nanosecond => TimeUnit::Nanosecond,
    };
    let size = |size: i32| {
        usize::try_from(size).map_err(|_| ValidationError::InvalidFormat {
            format: Excerpt::of(b"negative size"),
        })
    };
    let decimal = |precision: u8, scale: i8, bit_width| DataType::Decimal {
        precision: u32::from(precision),
        scale: i32::from(scale),
        bit_width,
    };
    Ok(match arrow {
        ArrowType::Null => DataType::Null,
        ArrowType::Boolean => DataType::Boolean,
        ArrowType::Int8 => DataType::Int8,
        ArrowType::Int16 => DataType::Int16,
        ArrowType::Int32 => DataType::Int32,
        ArrowType::Int64 => DataType::Int64,
        ArrowType::UInt8 => DataType::UInt8,
        ArrowType::UInt16 => DataType::UInt16,
        ArrowType::UInt32 => DataType::UInt32,
        ArrowType::UInt64 => DataType::UInt64,
        ArrowType::Float16 => DataType::Float16,
        ArrowType::Float32 => DataType::Float32,
        ArrowType::Float64 => DataType::Float64,
        ArrowType::Timestamp(u, zone) => {
            DataType::Timestamp(unit(u), zone.as_deref().unwrap_or(""))
        }
        ArrowType::Date32 => DataType::Date32,
        ArrowType::Date64 => DataType::Date64,
        ArrowType::Time32(u) => DataType::Time32(unit(u)),
        ArrowType::Time64(u) => DataType::Time64(unit(u)),
        ArrowType::Duration(u) => DataType::Duration(unit(u)),
        ArrowType::Interval(ArrowInterval::YearMonth) => {
            DataType::Interval(IntervalUnit::YearMonth)
        }
        ArrowType::Interval(ArrowInterval::DayTime) => DataType::Interval(IntervalUnit::DayTime),
        ArrowType::Interval(ArrowInterval::MonthDayNano) => {
            DataType::Interval(IntervalUnit::MonthDayNano)
        }
        ArrowType::Binary => DataType::Binary,
        ArrowType::FixedSizeBinary(bytes) => DataType::FixedSizeBinary(size(*bytes)?),
        ArrowType::LargeBinary => DataType::LargeBinary,
        ArrowType::BinaryView => DataType::BinaryView,
        ArrowType::Utf8 => DataType::Utf8,
        ArrowType::LargeUtf8 => DataType::LargeUtf8,
        ArrowType::Utf8View => DataType::Utf8View,
        ArrowType::List(_) => DataType::List,
        ArrowType::ListView(_) => DataType::ListView,
        ArrowType::FixedSizeList(_, values) => DataType::FixedSizeList(size(*values)?),
        ArrowType::LargeList(_) => DataType::LargeList,
        ArrowType::LargeListView(_) => DataType::LargeListView,
        ArrowType::Struct(_) => DataType::Struct,
        ArrowType::Union(_, ArrowUnionMode::Dense) => DataType::Union(UnionMode::Dense, type_ids),
        ArrowType::Union(_, ArrowUnionMode::Sparse) => DataType::Union(UnionMode::Sparse, type_ids),
        // The field's format is its index type; the values are its dictionary.
        ArrowType::Dictionary(index, _) => data_type(index, type_ids)?,
        ArrowType::Decimal32(precision, scale) => decimal(*precision, *scale, 32),
        ArrowType::Decimal64(precision, scale) => decimal(*precision, *scale, 64),
        ArrowType::Decimal128(precision, scale) => decimal(*precision, *scale, 128),
        ArrowType::Decimal256(precision, scale) => decimal(*precision, *scale, 256),
        ArrowType::Map(..) => DataType::Map,
        ArrowType::RunEndEncoded(..) => DataType::RunEndEncoded,
    })
}

impl SchemaSource for Node<'_> {
    fn data_type(&self) -> Result<DataType<'_>, ValidationError> {
        match Self::arrow_type(self.kind) {
            None => Ok(DataType::Struct),
            Some(arrow) => data_type(arrow, &self.type_ids),
        }
    }

    fn name(&self) -> Option<&str> {
        match self.kind {
            Kind::Field(field) => Some(field.name()),
            Kind::Schema(_) | Kind::Type(_) => None,
        }
    }

    fn flags(&self) -> i64 {
        let map_keys_sorted = match Self::arrow_type(self.kind) {
            Some(ArrowType::Map(_, true)) => ARROW_FLAG_MAP_KEYS_SORTED,
            _ => 0,
        };
        let Kind::Field(field) = self.kind else {
            return map_keys_sorted;
        };
        let mut flags = map_keys_sorted;
        if field.is_nullable() {
            flags |= ARROW_FLAG_NULLABLE;
        }
        if field.dict_is_ordered() == Some(true) {
            flags |= ARROW_FLAG_DICTIONARY_ORDERED;
        }
        flags
    }

    fn metadata(&self) -> impl Iterator<Item = (&str, &[u8])> {
        let metadata = match self.kind {
            Kind::Schema(schema) => &schema.metadata,
            Kind::Field(field) => field.metadata(),
            Kind::Type(_) => &NO_METADATA,
        };
        metadata
            .iter()
            .map(|(key, value)| (key.as_str(), value.as_bytes()))
    }

    fn n_children(&self) -> usize {
        let Some(data_type) = Self::arrow_type(self.kind) else {
            return match self.kind {
                Kind::Schema(schema) => schema.fields().len(),
                _ => 0,
            };
        };
        match data_type {
            ArrowType::List(_)
            | ArrowType::LargeList(_)
            | ArrowType::ListView(_)
            | ArrowType::LargeListView(_)
            | ArrowType::FixedSizeList(..)
            | ArrowType::Map(..) => 1,
            ArrowType::Struct(fields) => fields.len(),
            ArrowType::Union(fields, _) => fields.len(),
            ArrowType::RunEndEncoded(..) => 2,
            _ => 0,
        }
    }

    fn child(&self, index: usize) -> Option<Self> {
        self.child_field(index)
            .map(|field| Node::new(Kind::Field(field)))
    }

    fn dictionary(&self) -> Option<Self> {
        match Self::arrow_type(self.kind) {
            Some(ArrowType::Dictionary(_, values)) => Some(Node::new(Kind::Type(values))),
            _ => None,
        }
    }
}
