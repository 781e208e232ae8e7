//! Canonical extension types this crate understands: `arrow.fixed_shape_tensor` (its JSON
//! metadata is parsed here, with a small bounded parser) and `arrow.bool8`.

use super::ValidationError;
use crate::dlpack::MAX_NDIM;

/// `ARROW:extension:name`, the metadata key that names an extension type.
///
/// ```
/// use dlpack_abi::arrow::EXTENSION_NAME_KEY;
///
/// assert_eq!(EXTENSION_NAME_KEY, "ARROW:extension:name");
/// ```
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";

/// `ARROW:extension:metadata`, the metadata key of an extension type's parameters.
///
/// ```
/// use dlpack_abi::arrow::EXTENSION_METADATA_KEY;
///
/// assert_eq!(EXTENSION_METADATA_KEY, "ARROW:extension:metadata");
/// ```
pub const EXTENSION_METADATA_KEY: &str = "ARROW:extension:metadata";

/// The canonical fixed-shape tensor: storage `FixedSizeList<value>[product(shape)]`.
///
/// ```
/// use dlpack_abi::arrow::FIXED_SHAPE_TENSOR;
///
/// assert_eq!(FIXED_SHAPE_TENSOR, "arrow.fixed_shape_tensor");
/// ```
pub const FIXED_SHAPE_TENSOR: &str = "arrow.fixed_shape_tensor";

/// The canonical byte-per-value boolean: storage `Int8`, 0 false and anything else true.
///
/// ```
/// use dlpack_abi::arrow::BOOL8;
///
/// assert_eq!(BOOL8, "arrow.bool8");
/// ```
pub const BOOL8: &str = "arrow.bool8";

/// The parameters of an `arrow.fixed_shape_tensor`: the physical shape of each cell and the
/// optional permutation from logical to physical dimensions.
///
/// ```
/// use dlpack_abi::arrow::TensorShape;
///
/// let cell = TensorShape::parse(br#"{ "shape": [100, 200, 500], "permutation": [2, 0, 1]}"#)?;
/// assert_eq!(cell.shape(), &[100, 200, 500]);
/// assert_eq!(cell.permutation(), Some(&[2, 0, 1][..]));
/// assert_eq!(cell.logical_shape().collect::<Vec<_>>(), [500, 100, 200]);
/// assert_eq!(cell.list_size(), Some(10_000_000));
/// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
/// ```
#[derive(Clone, Copy)]
pub struct TensorShape {
    ndim: usize,
    shape: [i64; MAX_NDIM],
    permutation: Option<[usize; MAX_NDIM]>,
}

/// Equal when the shapes and permutations are (slots past `ndim` are not compared).
impl PartialEq for TensorShape {
    fn eq(&self, other: &Self) -> bool {
        self.shape() == other.shape() && self.permutation() == other.permutation()
    }
}

impl Eq for TensorShape {}

impl core::fmt::Debug for TensorShape {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TensorShape")
            .field("shape", &self.shape())
            .field("permutation", &self.permutation())
            .finish()
    }
}

fn bad(reason: &'static str) -> ValidationError {
    ValidationError::ExtensionMetadata { reason }
}

/// A cursor over JSON text; only what tensor metadata needs, with nesting bounded.
struct Json<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Json<'a> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), ValidationError> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(bad("malformed JSON"))
        }
    }

    /// A string's raw bytes (escapes kept as written; keys we compare never contain any).
    fn string(&mut self) -> Result<&'a [u8], ValidationError> {
        self.expect(b'"')?;
        let start = self.at;
        loop {
            match self.text.get(self.at) {
                None => return Err(bad("unterminated JSON string")),
                Some(b'"') => break,
                Some(b'\\') => self.at += 2,
                Some(_) => self.at += 1,
            }
        }
        let end = self.at;
        self.at += 1;
        self.text
            .get(start..end)
            .ok_or(bad("unterminated JSON string"))
    }

    fn integer(&mut self) -> Result<i64, ValidationError> {
        self.skip_space();
        let negative = self.text.get(self.at) == Some(&b'-');
        if negative {
            self.at += 1;
        }
        let start = self.at;
        let mut value: i64 = 0;
        while let Some(&digit @ b'0'..=b'9') = self.text.get(self.at) {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(i64::from(digit - b'0')))
                .ok_or(bad("integer out of range"))?;
            self.at += 1;
        }
        if self.at == start || matches!(self.text.get(self.at), Some(b'.' | b'e' | b'E')) {
            return Err(bad("expected an integer"));
        }
        Ok(if negative { -value } else { value })
    }

    /// Calls `each` on every element of an array.
    fn array(
        &mut self,
        each: impl FnMut(&mut Self) -> Result<(), ValidationError>,
    ) -> Result<(), ValidationError> {
        self.sequence(b'[', b']', "malformed JSON array", each)
    }

    /// Calls `each` on every key (and its value) of an object.
    fn object(
        &mut self,
        mut each: impl FnMut(&mut Self, &'a [u8]) -> Result<(), ValidationError>,
    ) -> Result<(), ValidationError> {
        self.sequence(b'{', b'}', "malformed JSON object", |json| {
            let key = json.string()?;
            json.expect(b':')?;
            each(json, key)
        })
    }

    /// `open`, then items separated by commas (each read by `item`), then `close`.
    fn sequence(
        &mut self,
        open: u8,
        close: u8,
        malformed: &'static str,
        mut item: impl FnMut(&mut Self) -> Result<(), ValidationError>,
    ) -> Result<(), ValidationError> {
        self.expect(open)?;
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(byte) if byte == close => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(bad(malformed)),
            }
        }
    }

    /// Skips any value (for keys this crate does not know).
    fn skip_value(&mut self, depth: usize) -> Result<(), ValidationError> {
        if depth > 16 {
            return Err(bad("JSON nested too deeply"));
        }
        match self.peek() {
            Some(b'"') => self.string().map(drop),
            Some(b'[') => self.array(|json| json.skip_value(depth + 1)),
            Some(b'{') => self.object(|json, _| json.skip_value(depth + 1)),
            Some(_) => {
                let start = self.at;
                while let Some(b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'E') =
                    self.text.get(self.at)
                {
                    self.at += 1;
                }
                if self.at == start {
                    return Err(bad("malformed JSON value"));
                }
                Ok(())
            }
            None => Err(bad("malformed JSON value")),
        }
    }
}

/// Reads an array of integers into `out`, returning how many there were.
fn integers(json: &mut Json<'_>, out: &mut [i64; MAX_NDIM]) -> Result<usize, ValidationError> {
    let mut n = 0;
    json.array(|json| {
        let value = json.integer()?;
        *out.get_mut(n).ok_or(bad("more than 64 dimensions"))? = value;
        n += 1;
        Ok(())
    })?;
    Ok(n)
}

impl TensorShape {
    /// Parses `arrow.fixed_shape_tensor` metadata: a JSON object with `shape` (required,
    /// non-negative integers), and optionally `permutation` (a permutation of `0..ndim`) and
    /// `dim_names` (`ndim` strings). Other keys are ignored; `null` values are refused, as Arrow
    /// C++ does.
    ///
    /// # Errors
    /// [`ValidationError::ExtensionMetadata`] for malformed JSON, a missing or negative `shape`,
    /// a `permutation` that is not one, or `dim_names` of the wrong length.
    ///
    /// ```
    /// use dlpack_abi::arrow::{TensorShape, ValidationError};
    ///
    /// let cell = TensorShape::parse(br#"{"shape":[2,3],"permutation":[1,0]}"#)?;
    /// assert_eq!(cell.shape(), [2, 3]);
    /// assert!(matches!(TensorShape::parse(br#"{"shape":[-1]}"#), Err(ValidationError::ExtensionMetadata { .. })));
    /// # Ok::<(), ValidationError>(())
    /// ```
    pub fn parse(json: &[u8]) -> Result<Self, ValidationError> {
        let mut parser = Json { text: json, at: 0 };
        let mut shape = [0i64; MAX_NDIM];
        let mut permutation = [0i64; MAX_NDIM];
        let (mut ndim, mut perm_len, mut names) = (None, None, None);
        parser.object(|json, key| {
            match key {
                b"shape" => ndim = Some(integers(json, &mut shape)?),
                b"permutation" => perm_len = Some(integers(json, &mut permutation)?),
                b"dim_names" => {
                    let mut n = 0usize;
                    json.array(|json| {
                        json.string()?;
                        n += 1;
                        Ok(())
                    })?;
                    names = Some(n);
                }
                _ => json.skip_value(0)?,
            }
            Ok(())
        })?;
        if parser.peek().is_some() {
            return Err(bad("trailing bytes after the JSON object"));
        }
        let ndim = ndim.ok_or(bad("no \"shape\""))?;
        if shape[..ndim].iter().any(|&extent| extent < 0) {
            return Err(bad("negative extent in \"shape\""));
        }
        if names.is_some_and(|n| n != ndim) {
            return Err(bad("\"dim_names\" length differs from \"shape\""));
        }
        let permutation = match perm_len {
            None => None,
            Some(len) if len != ndim => {
                return Err(bad("\"permutation\" length differs from \"shape\""))
            }
            Some(_) => {
                let mut seen = [false; MAX_NDIM];
                let mut out = [0usize; MAX_NDIM];
                for (slot, &p) in out.iter_mut().zip(&permutation[..ndim]) {
                    let p = usize::try_from(p)
                        .ok()
                        .filter(|&p| p < ndim && !seen[p])
                        .ok_or(bad("\"permutation\" is not a permutation of 0..ndim"))?;
                    seen[p] = true;
                    *slot = p;
                }
                Some(out)
            }
        };
        Ok(Self {
            ndim,
            shape,
            permutation,
        })
    }

    /// A shape without permutation, for writing.
    #[cfg(feature = "alloc")]
    pub(crate) fn row_major(shape: &[i64]) -> Option<Self> {
        let mut dims = [0; MAX_NDIM];
        dims.get_mut(..shape.len())?.copy_from_slice(shape);
        Some(Self {
            ndim: shape.len(),
            shape: dims,
            permutation: None,
        })
    }

    /// The physical shape of one cell (row-major in memory).
    ///
    /// ```
    /// use dlpack_abi::arrow::TensorShape;
    ///
    /// assert_eq!(TensorShape::parse(br#"{"shape":[4,5]}"#)?.shape(), [4, 5]);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn shape(&self) -> &[i64] {
        &self.shape[..self.ndim]
    }

    /// `permutation[i]` is the physical dimension that logical dimension `i` maps to.
    ///
    /// ```
    /// use dlpack_abi::arrow::TensorShape;
    ///
    /// assert_eq!(TensorShape::parse(br#"{"shape":[4,5],"permutation":[1,0]}"#)?.permutation(), Some(&[1, 0][..]));
    /// assert_eq!(TensorShape::parse(br#"{"shape":[4,5]}"#)?.permutation(), None);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn permutation(&self) -> Option<&[usize]> {
        self.permutation.as_ref().map(|p| &p[..self.ndim])
    }

    /// The number of dimensions of a cell.
    ///
    /// ```
    /// use dlpack_abi::arrow::TensorShape;
    ///
    /// assert_eq!(TensorShape::parse(br#"{"shape":[2,2,3]}"#)?.ndim(), 3);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.ndim
    }

    /// The logical shape: the physical shape permuted.
    ///
    /// ```
    /// use dlpack_abi::arrow::TensorShape;
    ///
    /// let cell = TensorShape::parse(br#"{"shape":[2,3,4],"permutation":[2,0,1]}"#)?;
    /// assert_eq!(cell.logical_shape().collect::<Vec<_>>(), [4, 2, 3]);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn logical_shape(&self) -> impl Iterator<Item = i64> + '_ {
        (0..self.ndim).map(|i| self.shape[self.physical(i)])
    }

    /// The physical dimension of logical dimension `i`.
    pub(crate) fn physical(&self, i: usize) -> usize {
        self.permutation.map_or(i, |p| p[i])
    }

    /// The number of values per cell, `None` on overflow.
    ///
    /// ```
    /// use dlpack_abi::arrow::TensorShape;
    ///
    /// assert_eq!(TensorShape::parse(br#"{"shape":[2,3,4]}"#)?.list_size(), Some(24));
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    pub fn list_size(&self) -> Option<usize> {
        self.shape()
            .iter()
            .try_fold(1usize, |n, &e| n.checked_mul(usize::try_from(e).ok()?))
    }

    /// The metadata JSON, compact, with the keys Arrow C++ writes (`shape`, then `permutation`
    /// when there is one).
    ///
    /// ```
    /// use dlpack_abi::arrow::TensorShape;
    ///
    /// let cell = TensorShape::parse(br#"{ "shape": [2, 3], "dim_names": ["h", "w"] }"#)?;
    /// assert_eq!(cell.to_json(), r#"{"shape":[2,3]}"#);
    /// # Ok::<(), dlpack_abi::arrow::ValidationError>(())
    /// ```
    #[cfg(feature = "alloc")]
    pub fn to_json(&self) -> alloc::string::String {
        use core::fmt::Write;
        let mut json = alloc::string::String::from("{\"shape\":");
        let list = |json: &mut alloc::string::String, values: &mut dyn Iterator<Item = i64>| {
            json.push('[');
            for (i, v) in values.enumerate() {
                if i > 0 {
                    json.push(',');
                }
                let _ = write!(json, "{v}");
            }
            json.push(']');
        };
        list(&mut json, &mut self.shape().iter().copied());
        if let Some(permutation) = self.permutation() {
            json.push_str(",\"permutation\":");
            list(&mut json, &mut permutation.iter().map(|&p| p as i64));
        }
        json.push('}');
        json
    }
}

#[cfg(test)]
#[path = "extension_tests.rs"]
mod tests;
