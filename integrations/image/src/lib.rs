//! [image](https://docs.rs/image) 0.25 and DLPack (feature `image`): images as
//! `[height, width, channels]` (HWC) tensors, row-major, one channel axis even for `Luma`.
//!
//! **Image → tensor.** [`VersionedTensor::from_image`] moves an owned
//! `ImageBuffer<P, Vec<P::Subpixel>>` (`Luma`, `LumaA`, `Rgb`, `Rgba` of `u8`, `u16`, `f32`, or any
//! pixel whose subpixel is an [`Element`]) into the export without copying:
//! the export owns the vector and frees it in its deleter, and the tensor is writable (the vector
//! is the export's alone). A borrowed image, with any container, is lent to C without allocation by
//! [`BorrowedTensor::from_image`] (read-only) and [`BorrowedTensorMut::from_image_mut`] (C may
//! write it). The image's color space (its CICP) is not carried: DLPack has no field for it.
//!
//! **Tensor → image.** Two ways, both checking the same things first: host-accessible memory, the
//! pixel's subpixel dtype with one lane, three dimensions, the pixel's channel count as the last
//! extent, and height and width that fit `u32` (each refusal is a [`TensorImageError`] variant
//! saying what was found and what was expected).
//! - [`TensorView::to_image`](dlpack_abi::dlpack::TensorView::to_image) copies any tensor (imported,
//!   borrowed from C, lent) into a new `ImageBuffer<P, Vec<P::Subpixel>>`, reading through its
//!   strides (negative, zero, transposed): one allocation and one pass over the elements. The
//!   tensor stays the caller's.
//! - [`VersionedTensor::into_image`] wraps an imported tensor without copying, as an
//!   `ImageBuffer<P, TensorPixels<P::Subpixel>>`: [`TensorPixels`] owns the tensor (its deleter
//!   runs when the image drops) and derefs to its elements; no allocation. Only C-contiguous
//!   tensors can be shared so ([`TensorImageError::NotContiguous`] otherwise: copy those). The
//!   image is read-only, since the producer may share the memory: copy it to write.
//!
//! ```
//! use dlpack_abi::dlpack::VersionedTensor;
//! use image::{Rgb, RgbImage};
//!
//! let image = RgbImage::from_fn(4, 2, |x, y| Rgb([x as u8, y as u8, 7]));
//! let address = image.as_ptr();
//! let tensor = VersionedTensor::from_image(image)?; // zero-copy: the pixels move in
//! assert_eq!(tensor.view().shape(), [2, 4, 3]);
//! assert_eq!(tensor.view().data_ptr().cast_const().cast(), address);
//!
//! let copied = tensor.view().to_image::<Rgb<u8>>()?; // a copy, through the strides
//! let shared = tensor.into_image::<Rgb<u8>>()?; // zero-copy: the tensor moves in
//! assert_eq!(copied.get_pixel(3, 1), &Rgb([3, 1, 7]));
//! assert_eq!(shared.get_pixel(3, 1), &Rgb([3, 1, 7]));
//! assert_eq!(shared.as_ptr(), address);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

extern crate alloc;

/// `From` impls for errors that wrap others: `wraps! { Outer::Variant(Inner), ... }`.
#[allow(unused_macros)]
macro_rules! wraps {
    ($($outer:ident :: $variant:ident ($inner:ty)),+ $(,)?) => {$(
        impl From<$inner> for $outer {
            fn from(error: $inner) -> Self {
                Self::$variant(error)
            }
        }
    )+};
}

mod import;

use core::fmt;
use core::ops::{Deref, DerefMut};

use ::image::{ImageBuffer, Pixel};
use alloc::vec::Vec;

use dlpack_abi::dlpack::{
    AccessError, BorrowedTensor, BorrowedTensorMut, Element, Export, ExportError, VersionedTensor,
};
use dlpack_abi::raw::{DLDataType, DLDevice};

pub use import::TensorPixels;

/// The `[height, width, channels]` shape of an image (`u32` and `u8` always fit `i64`).
fn hwc_shape<P: Pixel, C: Deref<Target = [P::Subpixel]>>(image: &ImageBuffer<P, C>) -> [i64; 3] {
    let (width, height) = image.dimensions();
    [
        i64::from(height),
        i64::from(width),
        i64::from(P::CHANNEL_COUNT),
    ]
}

impl VersionedTensor {
    /// Exports an owned image as a `[height, width, channels]` CPU tensor of its subpixel's dtype,
    /// row-major, without copying: the pixel vector moves into the export, whose deleter frees
    /// it. The tensor is writable and exclusive (the vector is the export's alone).
    ///
    /// # Errors
    /// [`ExportError`] only for an image whose vector is shorter than its dimensions need, which
    /// `ImageBuffer` never builds.
    ///
    /// ```
    /// use dlpack_abi::dlpack::VersionedTensor;
    /// use image::{ImageBuffer, Luma};
    ///
    /// let depth: ImageBuffer<Luma<f32>, Vec<f32>> = ImageBuffer::from_fn(3, 2, |x, y| Luma([(x + y) as f32]));
    /// let mut tensor = VersionedTensor::from_image(depth)?;
    /// assert_eq!(tensor.view().shape(), [2, 3, 1]);
    /// assert_eq!(tensor.view().strides(), [3, 1, 1]);
    /// tensor.as_mut_slice::<f32>()?[0] = 9.0; // the export's alone: writable
    /// assert_eq!(tensor.view().get::<f32>(&[1, 2, 0])?, 3.0);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn from_image<P>(image: ImageBuffer<P, Vec<P::Subpixel>>) -> Result<Self, ExportError>
    where
        P: Pixel,
        P::Subpixel: Element + Send,
    {
        let shape = hwc_shape(&image);
        Export::new(image.into_raw(), &shape).finish()
    }
}

impl<'a> BorrowedTensor<'a, 3> {
    /// Lends an image (any container: a `Vec`, a slice, [`TensorPixels`], ...) to C as a
    /// `[height, width, channels]` `DLTensor`, without allocation, for as long as it is borrowed.
    ///
    /// # Errors
    /// [`ExportError`] only for an image whose container is shorter than its dimensions need,
    /// which `ImageBuffer` never builds.
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensor;
    /// use image::{ImageBuffer, LumaA};
    ///
    /// let pixels = [1u16, 2, 3, 4, 5, 6];
    /// let image = ImageBuffer::<LumaA<u16>, &[u16]>::from_raw(3, 1, &pixels[..]).expect("3 x 1 pixels");
    /// let lent = BorrowedTensor::from_image(&image)?;
    /// let raw = lent.dl_tensor();
    /// let view = raw.view();
    /// assert_eq!(view.shape(), [1, 3, 2]);
    /// assert_eq!(view.get::<u16>(&[0, 2, 1])?, 6);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn from_image<P, C>(image: &'a ImageBuffer<P, C>) -> Result<Self, ExportError>
    where
        P: Pixel,
        P::Subpixel: Element,
        C: Deref<Target = [P::Subpixel]>,
    {
        Self::new(image, hwc_shape(image))
    }
}

impl<'a> BorrowedTensorMut<'a, 3> {
    /// Lends an image mutably to C (a kernel's output) as a `[height, width, channels]`
    /// `DLTensor`, without allocation, for as long as it is borrowed.
    ///
    /// # Errors
    /// As [`BorrowedTensor::from_image`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensorMut;
    /// use image::{Rgba, RgbaImage};
    ///
    /// let mut image = RgbaImage::new(2, 2);
    /// let mut lent = BorrowedTensorMut::from_image_mut(&mut image)?;
    /// // What a kernel does with its output: here, make pixel (x 1, y 0) opaque red.
    /// let mut out = lent.dl_tensor_mut();
    /// out.view_mut().set(&[0, 1, 0], 255u8)?;
    /// out.view_mut().set(&[0, 1, 3], 255u8)?;
    /// assert_eq!(image.get_pixel(1, 0), &Rgba([255, 0, 0, 255]));
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn from_image_mut<P, C>(image: &'a mut ImageBuffer<P, C>) -> Result<Self, ExportError>
    where
        P: Pixel,
        P::Subpixel: Element,
        C: DerefMut<Target = [P::Subpixel]>,
    {
        let shape = hwc_shape(image);
        Self::new(image, shape)
    }
}

/// Why a tensor cannot become an `ImageBuffer` of the requested pixel type.
///
/// ```
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_image::TensorImageError;
/// use image::Rgb;
///
/// let gray = Export::new(vec![0u8; 6], &[2, 3, 1]).finish()?;
/// let error = gray.view().to_image::<Rgb<u8>>().unwrap_err();
/// assert_eq!(error, TensorImageError::Channels { found: 1, expected: 3 });
/// assert_eq!(
///     error.to_string(),
///     "the tensor's last extent (channels) is 1, but the pixel type has 3 channels"
/// );
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TensorImageError {
    /// The memory is not host-accessible (an image needs `kDLCPU`, `kDLCUDAHost`,
    /// `kDLROCMHost` or `kDLCUDAManaged`).
    NotHostAccessible {
        /// The tensor's device.
        device: DLDevice,
    },
    /// The dtype has more than one lane (a vector type); an image needs scalar subpixels.
    Lanes {
        /// The tensor's dtype.
        dtype: DLDataType,
    },
    /// The dtype is not the pixel's subpixel type.
    DtypeMismatch {
        /// The tensor's dtype.
        found: DLDataType,
        /// The subpixel's dtype.
        expected: DLDataType,
    },
    /// The tensor does not have three dimensions (`[height, width, channels]`).
    Ndim {
        /// The tensor's `ndim`.
        found: usize,
    },
    /// The last extent is not the pixel type's channel count.
    Channels {
        /// The tensor's last extent.
        found: i64,
        /// The pixel type's `CHANNEL_COUNT`.
        expected: u8,
    },
    /// The height or width does not fit the `u32` that `ImageBuffer` keeps.
    TooLarge {
        /// The tensor's first extent.
        height: i64,
        /// The tensor's second extent.
        width: i64,
    },
    /// Zero-copy only ([`VersionedTensor::into_image`]): the strides are not C-contiguous
    /// (row-major `[width * channels, channels, 1]`), so the elements are not one slice.
    /// [`TensorView::to_image`](dlpack_abi::dlpack::TensorView::to_image) copies any layout.
    NotContiguous,
    /// Another refusal of typed access: unknown flag bits, or data not aligned for the subpixel
    /// (which copying refuses too).
    Access(AccessError),
}

impl TensorImageError {
    /// The image error for a refusal of typed access: device and dtype get their own variants.
    fn from_access(error: AccessError) -> Self {
        match error {
            AccessError::NotHostAccessible { device } => Self::NotHostAccessible { device },
            AccessError::DtypeMismatch { found, .. } if found.lanes != 1 => {
                Self::Lanes { dtype: found }
            }
            AccessError::DtypeMismatch { requested, found } => Self::DtypeMismatch {
                found,
                expected: requested,
            },
            AccessError::NotContiguous => Self::NotContiguous,
            other => Self::Access(other),
        }
    }
}

impl fmt::Display for TensorImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use TensorImageError::*;
        match *self {
            NotHostAccessible { device } => write!(
                f,
                "DLTensor.device is {device}, whose memory the host cannot read into an image"
            ),
            Lanes { dtype } => write!(
                f,
                "DLTensor.dtype is {dtype}, with {} lanes; an image needs 1",
                dtype.lanes
            ),
            DtypeMismatch { found, expected } => write!(
                f,
                "DLTensor.dtype is {found}, but the pixel's subpixel type is {expected}"
            ),
            Ndim { found } => write!(
                f,
                "DLTensor.ndim is {found}; an image needs 3 ([height, width, channels])"
            ),
            Channels { found, expected } => write!(
                f,
                "the tensor's last extent (channels) is {found}, but the pixel type has {expected} \
                 channels"
            ),
            TooLarge { height, width } => write!(
                f,
                "the tensor is {height} high and {width} wide; an image's height and width must \
                 each fit u32"
            ),
            NotContiguous => f.write_str(
                "DLTensor.strides are not C-contiguous, so the tensor cannot be shared as an \
                 image; TensorView::to_image copies any layout",
            ),
            Access(error) => fmt::Display::fmt(&error, f),
        }
    }
}

impl core::error::Error for TensorImageError {}
