//! Strides as the producer sent them, or synthesised (compact row-major) when it sent NULL.

use core::fmt;

use super::validate::row_major_stride;

/// The strides of a tensor, in elements: the producer's array, or, when a legacy or pre-1.2
/// producer sent NULL, the compact row-major strides computed from the shape.
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::{Export, LegacyTensor};
///
/// // A legacy producer that sends `strides == NULL` for a 2 x 3 tensor.
/// let raw = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).finish_legacy()?.into_raw();
/// unsafe { (*raw).dl_tensor.strides = core::ptr::null_mut() };
/// let tensor = unsafe { LegacyTensor::from_raw(raw) }?;
/// let strides = tensor.view().strides();
/// assert!(strides.is_synthesised());
/// assert_eq!(strides, [3, 1]);
/// assert_eq!(strides.get(0), Some(3));
/// # }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct Strides<'a> {
    shape: &'a [i64],
    given: Option<&'a [i64]>,
}

impl<'a> Strides<'a> {
    pub(crate) fn new(shape: &'a [i64], given: Option<&'a [i64]>) -> Self {
        Self { shape, given }
    }

    /// The number of strides (`ndim`).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).finish()?;
    /// assert_eq!(tensor.view().strides().len(), 2);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> usize {
        self.shape.len()
    }

    /// `true` for a 0-d tensor.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let scalar = Export::new(vec![0.0f32], &[]).finish()?;
    /// assert!(scalar.view().strides().is_empty());
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.shape.is_empty()
    }

    /// The stride of dimension `dim`, or `None` past `ndim`.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).strides(&[1, 2]).finish()?;
    /// assert_eq!(tensor.view().strides().get(1), Some(2));
    /// assert_eq!(tensor.view().strides().get(2), None);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn get(&self, dim: usize) -> Option<i64> {
        match self.given {
            Some(given) => given.get(dim).copied(),
            None => (dim < self.shape.len()).then(|| row_major_stride(self.shape, dim)),
        }
    }

    /// The producer's array, or `None` when the strides are synthesised.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).strides(&[1, 2]).finish()?;
    /// assert_eq!(tensor.view().strides().as_slice(), Some(&[1, 2][..]));
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn as_slice(&self) -> Option<&'a [i64]> {
        self.given
    }

    /// `true` when the producer sent NULL and these strides were computed from the shape.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).strides(&[3, 1]).finish()?;
    /// assert!(!tensor.view().strides().is_synthesised());
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn is_synthesised(&self) -> bool {
        self.given.is_none()
    }

    /// The strides, in dimension order.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    /// let tensor = Export::new(vec![0u8; 24], &[4, 2, 3]).finish_legacy()?;
    /// assert!(tensor.view().strides().iter().eq([6, 3, 1]));
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = i64> + 'a {
        let this = *self;
        (0..self.len()).map(move |dim| this.get(dim).unwrap_or(0))
    }
}

impl fmt::Debug for Strides<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Strides<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl PartialEq<[i64]> for Strides<'_> {
    fn eq(&self, other: &[i64]) -> bool {
        self.iter().eq(other.iter().copied())
    }
}

impl<const N: usize> PartialEq<[i64; N]> for Strides<'_> {
    fn eq(&self, other: &[i64; N]) -> bool {
        self == &other[..]
    }
}
