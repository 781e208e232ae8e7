//! Format strings of the C Data Interface, parsed into [`DataType`], and the buffer layout each
//! type has.

use super::{Excerpt, ValidationError};
use crate::raw::{kDLFloat, kDLInt, kDLUInt, DLDataType};

/// The unit of a time, timestamp or duration type.
///
/// ```
/// use dlpack_abi::arrow::{DataType, TimeUnit};
///
/// assert_eq!(DataType::parse(b"tDn")?, DataType::Duration(TimeUnit::Nanosecond));
/// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// Seconds (`s`).
    Second,
    /// Milliseconds (`m`).
    Millisecond,
    /// Microseconds (`u`).
    Microsecond,
    /// Nanoseconds (`n`).
    Nanosecond,
}

/// The unit of an interval type.
///
/// ```
/// use dlpack_abi::arrow::{DataType, IntervalUnit};
///
/// assert_eq!(DataType::parse(b"tin")?, DataType::Interval(IntervalUnit::MonthDayNano));
/// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntervalUnit {
    /// Months (`tiM`), one `int32`.
    YearMonth,
    /// Days and milliseconds (`tiD`), two `int32`.
    DayTime,
    /// Months, days and nanoseconds (`tin`), 16 bytes.
    MonthDayNano,
}

/// Whether a union has an offsets buffer.
///
/// ```
/// use dlpack_abi::arrow::{DataType, UnionMode};
///
/// assert_eq!(DataType::parse(b"+us:0,1")?, DataType::Union(UnionMode::Sparse, "0,1"));
/// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnionMode {
    /// `+ud:`: type ids and offsets.
    Dense,
    /// `+us:`: type ids only.
    Sparse,
}

/// The type a format string names (the storage type for an extension type).
///
/// Parsed strictly: anything the C Data Interface does not define is
/// [`ValidationError::InvalidFormat`].
///
/// ```
/// use dlpack_abi::arrow::{DataType, TimeUnit};
///
/// assert_eq!(DataType::parse(b"f"), Ok(DataType::Float32));
/// assert_eq!(DataType::parse(b"+w:6"), Ok(DataType::FixedSizeList(6)));
/// assert_eq!(DataType::parse(b"tsu:UTC"), Ok(DataType::Timestamp(TimeUnit::Microsecond, "UTC")));
/// assert!(DataType::parse(b"x").is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType<'a> {
    /// `n`: no buffers.
    Null,
    /// `b`: bit-packed booleans.
    Boolean,
    /// `c`
    Int8,
    /// `C`
    UInt8,
    /// `s`
    Int16,
    /// `S`
    UInt16,
    /// `i`
    Int32,
    /// `I`
    UInt32,
    /// `l`
    Int64,
    /// `L`
    UInt64,
    /// `e`
    Float16,
    /// `f`
    Float32,
    /// `g`
    Float64,
    /// `z`: binary with 32-bit offsets.
    Binary,
    /// `Z`: binary with 64-bit offsets.
    LargeBinary,
    /// `vz`: binary view.
    BinaryView,
    /// `u`: UTF-8 with 32-bit offsets.
    Utf8,
    /// `U`: UTF-8 with 64-bit offsets.
    LargeUtf8,
    /// `vu`: UTF-8 view.
    Utf8View,
    /// `d:precision,scale[,bit_width]` (bit width 128 when absent).
    Decimal {
        /// Decimal digits.
        precision: u32,
        /// Digits after the point (may be negative).
        scale: i32,
        /// 32, 64, 128 or 256.
        bit_width: u32,
    },
    /// `w:N`: N bytes per value.
    FixedSizeBinary(usize),
    /// `tdD`
    Date32,
    /// `tdm`
    Date64,
    /// `tts` or `ttm`.
    Time32(TimeUnit),
    /// `ttu` or `ttn`.
    Time64(TimeUnit),
    /// `ts?:timezone` (the timezone may be empty).
    Timestamp(TimeUnit, &'a str),
    /// `tD?`
    Duration(TimeUnit),
    /// `tiM`, `tiD`, `tin`.
    Interval(IntervalUnit),
    /// `+l`
    List,
    /// `+L`
    LargeList,
    /// `+vl`
    ListView,
    /// `+vL`
    LargeListView,
    /// `+w:N`: N child values per value.
    FixedSizeList(usize),
    /// `+s`
    Struct,
    /// `+m`
    Map,
    /// `+ud:ids` or `+us:ids`; `type_ids` is the comma-separated list, already checked.
    Union(UnionMode, &'a str),
    /// `+r`: run ends and values.
    RunEndEncoded,
}

/// Writes the type's format string, the inverse of [`DataType::parse`] for every type it
/// returns (`Time32` and `Time64` in units that have no format string are written as the other
/// one's, which parses back differently: producers check the round trip).
///
/// ```
/// use dlpack_abi::arrow::{DataType, TimeUnit, UnionMode};
///
/// assert_eq!(DataType::Timestamp(TimeUnit::Microsecond, "UTC").to_string(), "tsu:UTC");
/// let decimal = DataType::Decimal { precision: 9, scale: -2, bit_width: 64 };
/// assert_eq!(decimal.to_string(), "d:9,-2,64");
/// assert_eq!(DataType::Union(UnionMode::Dense, "0,5").to_string(), "+ud:0,5");
/// let text = DataType::FixedSizeList(3).to_string();
/// assert_eq!(DataType::parse(text.as_bytes()), Ok(DataType::FixedSizeList(3)));
/// ```
impl core::fmt::Display for DataType<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use DataType::*;
        if let Some(format) = self.static_format() {
            return f.write_str(format);
        }
        let unit = |unit: &TimeUnit| match unit {
            TimeUnit::Second => 's',
            TimeUnit::Millisecond => 'm',
            TimeUnit::Microsecond => 'u',
            TimeUnit::Nanosecond => 'n',
        };
        match self {
            Decimal {
                precision,
                scale,
                bit_width: 128,
            } => write!(f, "d:{precision},{scale}"),
            Decimal {
                precision,
                scale,
                bit_width,
            } => write!(f, "d:{precision},{scale},{bit_width}"),
            FixedSizeBinary(size) => write!(f, "w:{size}"),
            FixedSizeList(size) => write!(f, "+w:{size}"),
            Time32(u) | Time64(u) => write!(f, "tt{}", unit(u)),
            Timestamp(u, zone) => write!(f, "ts{}:{zone}", unit(u)),
            Duration(u) => write!(f, "tD{}", unit(u)),
            Union(UnionMode::Dense, ids) => write!(f, "+ud:{ids}"),
            Union(UnionMode::Sparse, ids) => write!(f, "+us:{ids}"),
            // Written by `static_format` above.
            _ => Ok(()),
        }
    }
}

/// How many buffers an array of a type has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BufferCount {
    Exactly(i64),
    /// View types: validity, views, any number of data buffers, then the sizes buffer.
    AtLeast(i64),
}

/// How many children a schema of a type has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChildCount {
    Exactly(i64),
    Any,
}

fn number(text: &[u8]) -> Option<u32> {
    if text.is_empty() || text.len() > 10 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = text.iter().try_fold(0u64, |n, d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })?;
    u32::try_from(value).ok().filter(|&v| v <= i32::MAX as u32)
}

fn signed(text: &[u8]) -> Option<i32> {
    match text.split_first() {
        Some((b'-', rest)) => number(rest).map(|n| -(n as i32)),
        _ => number(text).map(|n| n as i32),
    }
}

fn time_unit(byte: u8) -> Option<TimeUnit> {
    Some(match byte {
        b's' => TimeUnit::Second,
        b'm' => TimeUnit::Millisecond,
        b'u' => TimeUnit::Microsecond,
        b'n' => TimeUnit::Nanosecond,
        _ => return None,
    })
}

/// Union type ids: comma-separated integers in `0..=127`, or nothing.
fn type_ids(text: &[u8]) -> Option<usize> {
    if text.is_empty() {
        return Some(0);
    }
    let mut count = 0;
    for id in text.split(|&b| b == b',') {
        number(id).filter(|&n| n <= 127)?;
        count += 1;
    }
    Some(count)
}

impl<'a> DataType<'a> {
    /// Parses a format string (without its NUL).
    ///
    /// # Errors
    /// [`ValidationError::InvalidFormat`] for anything the C Data Interface does not define.
    ///
    /// ```
    /// use dlpack_abi::arrow::{DataType, ValidationError};
    ///
    /// assert_eq!(DataType::parse(b"w:16")?, DataType::FixedSizeBinary(16));
    /// assert!(matches!(DataType::parse(b"w:"), Err(ValidationError::InvalidFormat { .. })));
    /// # Ok::<(), ValidationError>(())
    /// ```
    pub fn parse(format: &'a [u8]) -> Result<Self, ValidationError> {
        Self::parse_inner(format).ok_or(ValidationError::InvalidFormat {
            format: Excerpt::of(format),
        })
    }

    fn parse_inner(format: &'a [u8]) -> Option<Self> {
        use DataType::*;
        Some(match format {
            b"n" => Null,
            b"b" => Boolean,
            b"c" => Int8,
            b"C" => UInt8,
            b"s" => Int16,
            b"S" => UInt16,
            b"i" => Int32,
            b"I" => UInt32,
            b"l" => Int64,
            b"L" => UInt64,
            b"e" => Float16,
            b"f" => Float32,
            b"g" => Float64,
            b"z" => Binary,
            b"Z" => LargeBinary,
            b"vz" => BinaryView,
            b"u" => Utf8,
            b"U" => LargeUtf8,
            b"vu" => Utf8View,
            b"tdD" => Date32,
            b"tdm" => Date64,
            b"tts" => Time32(TimeUnit::Second),
            b"ttm" => Time32(TimeUnit::Millisecond),
            b"ttu" => Time64(TimeUnit::Microsecond),
            b"ttn" => Time64(TimeUnit::Nanosecond),
            b"tiM" => Interval(IntervalUnit::YearMonth),
            b"tiD" => Interval(IntervalUnit::DayTime),
            b"tin" => Interval(IntervalUnit::MonthDayNano),
            [b't', b'D', unit] => Duration(time_unit(*unit)?),
            [b't', b's', unit, b':', zone @ ..] => {
                Timestamp(time_unit(*unit)?, core::str::from_utf8(zone).ok()?)
            }
            b"+l" => List,
            b"+L" => LargeList,
            b"+vl" => ListView,
            b"+vL" => LargeListView,
            b"+s" => Struct,
            b"+m" => Map,
            b"+r" => RunEndEncoded,
            [b'+', b'w', b':', size @ ..] => FixedSizeList(usize::try_from(number(size)?).ok()?),
            [b'+', b'u', mode @ (b'd' | b's'), b':', ids @ ..] => {
                type_ids(ids)?;
                let mode = if *mode == b'd' {
                    UnionMode::Dense
                } else {
                    UnionMode::Sparse
                };
                Union(mode, core::str::from_utf8(ids).ok()?)
            }
            [b'w', b':', size @ ..] => FixedSizeBinary(usize::try_from(number(size)?).ok()?),
            [b'd', b':', rest @ ..] => {
                let mut parts = rest.split(|&b| b == b',');
                let precision = number(parts.next()?).filter(|&p| p > 0)?;
                let scale = signed(parts.next()?)?;
                let bit_width = match parts.next() {
                    None => 128,
                    Some(bits) => number(bits).filter(|b| matches!(b, 32 | 64 | 128 | 256))?,
                };
                if parts.next().is_some() {
                    return None;
                }
                Decimal {
                    precision,
                    scale,
                    bit_width,
                }
            }
            _ => return None,
        })
    }

    /// The format string of a type without parameters (`"l"`, `"+s"`); `None` for those with
    /// parameters (decimals, fixed sizes, timestamps, durations, unions) and for `Time32` and
    /// `Time64` in units their format strings do not exist for.
    pub(crate) fn static_format(&self) -> Option<&'static str> {
        use DataType::*;
        Some(match self {
            Null => "n",
            Boolean => "b",
            Int8 => "c",
            UInt8 => "C",
            Int16 => "s",
            UInt16 => "S",
            Int32 => "i",
            UInt32 => "I",
            Int64 => "l",
            UInt64 => "L",
            Float16 => "e",
            Float32 => "f",
            Float64 => "g",
            Binary => "z",
            LargeBinary => "Z",
            BinaryView => "vz",
            Utf8 => "u",
            LargeUtf8 => "U",
            Utf8View => "vu",
            Date32 => "tdD",
            Date64 => "tdm",
            Time32(TimeUnit::Second) => "tts",
            Time32(TimeUnit::Millisecond) => "ttm",
            Time64(TimeUnit::Microsecond) => "ttu",
            Time64(TimeUnit::Nanosecond) => "ttn",
            Interval(IntervalUnit::YearMonth) => "tiM",
            Interval(IntervalUnit::DayTime) => "tiD",
            Interval(IntervalUnit::MonthDayNano) => "tin",
            List => "+l",
            LargeList => "+L",
            ListView => "+vl",
            LargeListView => "+vL",
            Struct => "+s",
            Map => "+m",
            RunEndEncoded => "+r",
            _ => return None,
        })
    }

    /// Bits per value of a fixed-width type (1 for `Boolean`), `None` for the others. A `u64`:
    /// `w:N` widths up to `i32::MAX` bytes give bit counts that overflow a 32-bit `usize`.
    ///
    /// ```
    /// use dlpack_abi::arrow::DataType;
    ///
    /// assert_eq!(DataType::Int16.bit_width(), Some(16));
    /// assert_eq!(DataType::FixedSizeBinary(3).bit_width(), Some(24));
    /// assert_eq!(DataType::FixedSizeBinary(1_000_000_000).bit_width(), Some(8_000_000_000));
    /// assert_eq!(DataType::Utf8.bit_width(), None);
    /// ```
    pub fn bit_width(&self) -> Option<u64> {
        use DataType::*;
        Some(match *self {
            Boolean => 1,
            Int8 | UInt8 => 8,
            Int16 | UInt16 | Float16 => 16,
            Int32 | UInt32 | Float32 | Date32 | Time32(_) => 32,
            Int64 | UInt64 | Float64 | Date64 | Time64(_) | Timestamp(..) | Duration(_) => 64,
            Interval(IntervalUnit::YearMonth) => 32,
            Interval(IntervalUnit::DayTime) => 64,
            Interval(IntervalUnit::MonthDayNano) => 128,
            Decimal { bit_width, .. } => u64::from(bit_width),
            // Parsed widths are at most `i32::MAX` bytes: times 8 fits a `u64`.
            FixedSizeBinary(bytes) => u64::try_from(bytes).ok()? * 8,
            _ => return None,
        })
    }

    /// The DLPack element type of a primitive integer or float type (`None` for the others).
    ///
    /// ```
    /// use dlpack_abi::arrow::DataType;
    /// use dlpack_abi::raw::{kDLFloat, DLDataType};
    ///
    /// assert_eq!(DataType::Float64.dlpack_dtype(), Some(DLDataType { code: kDLFloat, bits: 64, lanes: 1 }));
    /// assert_eq!(DataType::Boolean.dlpack_dtype(), None); // bit-packed
    /// ```
    pub fn dlpack_dtype(&self) -> Option<DLDataType> {
        use DataType::*;
        let (code, bits) = match self {
            Int8 => (kDLInt, 8),
            Int16 => (kDLInt, 16),
            Int32 => (kDLInt, 32),
            Int64 => (kDLInt, 64),
            UInt8 => (kDLUInt, 8),
            UInt16 => (kDLUInt, 16),
            UInt32 => (kDLUInt, 32),
            UInt64 => (kDLUInt, 64),
            Float16 => (kDLFloat, 16),
            Float32 => (kDLFloat, 32),
            Float64 => (kDLFloat, 64),
            _ => return None,
        };
        Some(DLDataType {
            code,
            bits,
            lanes: 1,
        })
    }

    /// The format string of the primitive type with DLPack element type `dtype`.
    #[cfg(feature = "alloc")]
    pub(crate) fn format_of_dtype(dtype: DLDataType) -> Option<&'static str> {
        if dtype.lanes != 1 {
            return None;
        }
        Some(match (dtype.code, dtype.bits) {
            (kDLInt, 8) => "c",
            (kDLInt, 16) => "s",
            (kDLInt, 32) => "i",
            (kDLInt, 64) => "l",
            (kDLUInt, 8) => "C",
            (kDLUInt, 16) => "S",
            (kDLUInt, 32) => "I",
            (kDLUInt, 64) => "L",
            (kDLFloat, 16) => "e",
            (kDLFloat, 32) => "f",
            (kDLFloat, 64) => "g",
            _ => return None,
        })
    }

    /// Whether arrays of this type end with a variable number of data buffers and then a
    /// buffer of their sizes (`int64` each): the view types.
    ///
    /// ```
    /// use dlpack_abi::arrow::DataType;
    ///
    /// assert!(DataType::Utf8View.has_variadic_buffers());
    /// assert!(!DataType::Utf8.has_variadic_buffers());
    /// ```
    pub fn has_variadic_buffers(&self) -> bool {
        matches!(self.buffer_count(), BufferCount::AtLeast(_))
    }

    pub(crate) fn buffer_count(&self) -> BufferCount {
        use DataType::*;
        BufferCount::Exactly(match self {
            Null | RunEndEncoded => 0,
            FixedSizeList(_) | Struct | Union(UnionMode::Sparse, _) => 1,
            Binary | LargeBinary | Utf8 | LargeUtf8 | ListView | LargeListView => 3,
            BinaryView | Utf8View => return BufferCount::AtLeast(3),
            _ => 2, // validity and values, or validity and offsets (lists, maps), or ids and offsets
        })
    }

    pub(crate) fn child_count(&self) -> ChildCount {
        use DataType::*;
        ChildCount::Exactly(match self {
            List | LargeList | ListView | LargeListView | FixedSizeList(_) | Map => 1,
            RunEndEncoded => 2,
            Struct => return ChildCount::Any,
            Union(_, ids) => {
                i64::try_from(type_ids(ids.as_bytes()).unwrap_or(0)).unwrap_or(i64::MAX)
            }
            _ => 0,
        })
    }

    /// Whether buffer 0 of an array of this type is a validity bitmap: every type but null,
    /// unions and run-end encoded.
    ///
    /// ```
    /// use dlpack_abi::arrow::DataType;
    ///
    /// assert!(DataType::parse(b"+s")?.has_validity());
    /// assert!(!DataType::parse(b"+us:0,1")?.has_validity());
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn has_validity(&self) -> bool {
        !matches!(
            self,
            DataType::Null | DataType::Union(..) | DataType::RunEndEncoded
        )
    }
}
