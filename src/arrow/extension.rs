//! Canonical extension types this crate understands: `arrow.fixed_shape_tensor` (its JSON
//! metadata is parsed here, with a small bounded parser) and `arrow.bool8` (empty metadata,
//! written as Arrow C++ and arrow-rs write it, not read).
//!
//! Tensor metadata is read as every producer writes it: pyarrow and Arrow C++
//! (`{"shape":[2,3],"permutation":[1,0],"dim_names":["H","W"]}`, absent keys left out) and
//! arrow-rs 60 (`{"shape":[2,3],"dim_names":null,"permutations":[1,0]}`: every key, `null`
//! when absent, and its own spelling `permutations`). It is written as `{"shape":[...]}` plus
//! `permutation` when there is one; the bridge only writes row-major cells, which all three
//! read.

use super::json::{elements, integer, Json, SyntaxError, MAX_NESTING};
use super::{Excerpt, ValidationError};
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

/// A key of `arrow.fixed_shape_tensor` metadata, as the producer spelled it (in
/// [`ValidationError::TensorParameter`]).
///
/// ```
/// use dlpack_abi::arrow::TensorKey;
///
/// assert_eq!(TensorKey::Permutations.to_string(), "permutations");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TensorKey {
    /// `shape`, the physical shape of a cell.
    Shape,
    /// `dim_names`, the names of the physical dimensions.
    DimNames,
    /// `permutation`, the key of the specification, Arrow C++ and pyarrow.
    Permutation,
    /// `permutations`, the key arrow-rs 60 writes and reads for `permutation`.
    Permutations,
}

impl TensorKey {
    /// The key as written in the JSON.
    ///
    /// ```
    /// use dlpack_abi::arrow::TensorKey;
    ///
    /// assert_eq!(TensorKey::DimNames.as_str(), "dim_names");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shape => "shape",
            Self::DimNames => "dim_names",
            Self::Permutation => "permutation",
            Self::Permutations => "permutations",
        }
    }
}

impl core::fmt::Display for TensorKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is wrong with one parameter of `arrow.fixed_shape_tensor` metadata, in
/// [`ValidationError::TensorParameter`]. Its text completes `"key" is value, ...`.
///
/// ```
/// use dlpack_abi::arrow::{ParameterProblem, TensorKey, TensorShape, ValidationError};
///
/// let error = TensorShape::parse(br#"{"shape":[2,3],"permutations":[0,0]}"#).unwrap_err();
/// assert!(matches!(
///     error,
///     ValidationError::TensorParameter {
///         key: TensorKey::Permutations,
///         problem: ParameterProblem::NotPermutation { ndim: 2 },
///         ..
///     }
/// ));
/// assert_eq!(ParameterProblem::NotPermutation { ndim: 2 }.to_string(), "not a permutation of 0..2");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParameterProblem {
    /// `shape` is not an array of non-negative integers that fit `i64`.
    NotExtents,
    /// `shape` has more than [`MAX_NDIM`] entries.
    TooManyDimensions,
    /// The product of `shape` (or its overflow) is not the list size of the `FixedSizeList`
    /// storage.
    NotListSize,
    /// Not a permutation of `0..ndim`: not integers, a wrong length, or an index repeated or
    /// out of range.
    NotPermutation {
        /// The number of dimensions (the length of `shape`, at most [`MAX_NDIM`]).
        ndim: u8,
    },
    /// Not an array of `ndim` strings.
    NotNames {
        /// The number of dimensions (the length of `shape`, at most [`MAX_NDIM`]).
        ndim: u8,
    },
    /// The same parameter was given before, under this spelling (`permutation` and arrow-rs's
    /// `permutations` are one parameter).
    Repeated {
        /// The key given first.
        first: TensorKey,
    },
}

impl core::fmt::Display for ParameterProblem {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotExtents => f.write_str("not an array of non-negative integers"),
            Self::TooManyDimensions => write!(f, "more than {MAX_NDIM} dimensions"),
            Self::NotListSize => f.write_str("whose product is not the storage's list size"),
            Self::NotPermutation { ndim } => write!(f, "not a permutation of 0..{ndim}"),
            Self::NotNames { ndim: 1 } => f.write_str("not an array of 1 string"),
            Self::NotNames { ndim } => write!(f, "not an array of {ndim} strings"),
            Self::Repeated { first } => write!(f, "after \"{first}\" was already given"),
        }
    }
}

/// The refusal of `key`'s `value` in `arrow.fixed_shape_tensor` metadata.
fn refused(key: TensorKey, value: &[u8], problem: ParameterProblem) -> ValidationError {
    ValidationError::TensorParameter {
        key,
        value: Excerpt::of(value),
        problem,
    }
}

/// The parameters' spellings, and which of them the parser keeps (`permutations` is how
/// arrow-rs 60 writes `permutation`).
const KEYS: [(TensorKey, usize); 4] = [
    (TensorKey::Shape, 0),
    (TensorKey::DimNames, 1),
    (TensorKey::Permutation, 2),
    (TensorKey::Permutations, 2),
];

/// A parameter as found: its key's spelling and its value's raw JSON text.
type Found<'a> = Option<(TensorKey, &'a [u8])>;

/// Reads the object's syntax and collects the tensor parameters' raw values (`shape`,
/// `dim_names`, `permutation`), refusing one given twice.
fn collect(text: &[u8]) -> Result<[Found<'_>; 3], ValidationError> {
    let syntax = |error: SyntaxError| ValidationError::TensorJson {
        at: error.at,
        expected: error.expected,
    };
    if let Err(error) = core::str::from_utf8(text) {
        return Err(syntax(SyntaxError {
            at: error.valid_up_to(),
            expected: "UTF-8 text",
        }));
    }
    let mut found: [Found<'_>; 3] = [None; 3];
    let mut repeated = None;
    let mut json = Json::new(text);
    json.object(|json, key| {
        let value = json.value(MAX_NESTING)?;
        if let Some(&(name, slot)) = KEYS
            .iter()
            .find(|(name, _)| name.as_str().as_bytes() == key)
        {
            match found[slot] {
                Some((first, _)) => {
                    repeated = repeated.or(Some((name, value, first)));
                }
                None => found[slot] = Some((name, value)),
            }
        }
        Ok(())
    })
    .map_err(syntax)?;
    json.end().map_err(syntax)?;
    if let Some((key, value, first)) = repeated {
        return Err(refused(key, value, ParameterProblem::Repeated { first }));
    }
    Ok(found)
}

/// `None` for an absent or `null` optional parameter.
fn present(found: Found<'_>) -> Found<'_> {
    found.filter(|(_, value)| *value != b"null")
}
impl TensorShape {
    /// Parses `arrow.fixed_shape_tensor` metadata: a JSON object with `shape` (required,
    /// non-negative integers), and optionally `permutation` (a permutation of `0..ndim`; also
    /// read under arrow-rs's spelling `permutations`) and `dim_names` (`ndim` strings, checked and
    /// not kept). An optional parameter given as `null` is taken as absent (arrow-rs writes
    /// `null`s); other keys are ignored; keys may come in any order, with any white space.
    ///
    /// # Errors
    /// [`ValidationError::TensorJson`] when the text is not JSON (or nests more than 16
    /// deep), [`ValidationError::TensorParameterMissing`] without `shape`, and
    /// [`ValidationError::TensorParameter`], naming the key and its value, for a parameter
    /// this crate refuses (the [`ParameterProblem`] says why), or one given twice.
    ///
    /// ```
    /// use dlpack_abi::arrow::{TensorShape, ValidationError};
    ///
    /// // As arrow-rs writes it.
    /// let cell = TensorShape::parse(br#"{"shape":[2,3],"dim_names":null,"permutations":[1,0]}"#)?;
    /// assert_eq!((cell.shape(), cell.permutation()), (&[2, 3][..], Some(&[1, 0][..])));
    /// let error = TensorShape::parse(br#"{"shape": [2, 3], "permutation": [0, 0]}"#).unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     r#"extension metadata of arrow.fixed_shape_tensor: "permutation" is [0, 0], not a permutation of 0..2"#
    /// );
    /// let error = TensorShape::parse(br#"{"shape" [2]}"#).unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "extension metadata of arrow.fixed_shape_tensor: JSON syntax error at byte 9: expected ':'"
    /// );
    /// # Ok::<(), ValidationError>(())
    /// ```
    pub fn parse(json: &[u8]) -> Result<Self, ValidationError> {
        Self::parse_found(json).map(|(cell, _)| cell)
    }

    /// Parses the metadata of a `FixedSizeList<_>[list_size]`, whose cells must hold
    /// `list_size` values.
    pub(crate) fn parse_storage(json: &[u8], list_size: usize) -> Result<Self, ValidationError> {
        let (cell, shape) = Self::parse_found(json)?;
        if cell.list_size() != Some(list_size) {
            return Err(refused(
                TensorKey::Shape,
                shape,
                ParameterProblem::NotListSize,
            ));
        }
        Ok(cell)
    }

    /// The parsed parameters, and the raw text of `shape`.
    fn parse_found(json: &[u8]) -> Result<(Self, &[u8]), ValidationError> {
        let [shape_found, names, permutation] = collect(json)?;
        let (_, text) = shape_found.ok_or(ValidationError::TensorParameterMissing {
            key: TensorKey::Shape,
        })?;
        let mut shape = [0i64; MAX_NDIM];
        let (mut ndim, mut too_many) = (0, false);
        let extents = elements(text, |element| {
            let Some(extent) = integer(element).filter(|&extent| extent >= 0) else {
                return false;
            };
            let Some(slot) = shape.get_mut(ndim) else {
                too_many = true;
                return false;
            };
            *slot = extent;
            ndim += 1;
            true
        });
        if too_many {
            return Err(refused(
                TensorKey::Shape,
                text,
                ParameterProblem::TooManyDimensions,
            ));
        }
        if extents != Some(true) {
            return Err(refused(
                TensorKey::Shape,
                text,
                ParameterProblem::NotExtents,
            ));
        }
        // At most `MAX_NDIM` (64).
        let ndim_u8 = u8::try_from(ndim).unwrap_or(u8::MAX);
        if let Some((key, value)) = present(names) {
            let mut n = 0usize;
            let strings = elements(value, |element| {
                n += 1;
                element.first() == Some(&b'"')
            });
            if strings != Some(true) || n != ndim {
                return Err(refused(
                    key,
                    value,
                    ParameterProblem::NotNames { ndim: ndim_u8 },
                ));
            }
        }
        let permutation = match present(permutation) {
            None => None,
            Some((key, value)) => {
                let (mut seen, mut out, mut n) = ([false; MAX_NDIM], [0usize; MAX_NDIM], 0);
                let indices = elements(value, |element| {
                    let index = integer(element).and_then(|i| usize::try_from(i).ok());
                    let Some(index) = index.filter(|&i| i < ndim && !seen[i]) else {
                        return false;
                    };
                    seen[index] = true;
                    out[n] = index;
                    n += 1;
                    true
                });
                if indices != Some(true) || n != ndim {
                    return Err(refused(
                        key,
                        value,
                        ParameterProblem::NotPermutation { ndim: ndim_u8 },
                    ));
                }
                Some(out)
            }
        };
        let cell = Self {
            ndim,
            shape,
            permutation,
        };
        Ok((cell, text))
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
    /// when there is one). arrow-rs 60 reads only the first form: it knows the key as
    /// `permutations` and refuses `permutation`.
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
