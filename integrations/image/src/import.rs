//! Tensors into `ImageBuffer`s: copied through the strides ([`copy_image`]), or shared when
//! C-contiguous ([`import_image`], over [`TensorPixels`]).

use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;

use alloc::vec::Vec;
use dlpack_abi::dlpack::{Element, TensorView, VersionedTensor};
use image::{ImageBuffer, Pixel};

use crate::ImageError;

/// The width and height of the image `view` holds as `P` pixels, after every check both ways of
/// import make: typed access to the subpixel (device, flags, dtype and lanes, alignment), three
/// dimensions, the pixel's channel count last, and extents that fit `u32`.
fn image_dims<P>(view: &TensorView<'_>) -> Result<(u32, u32), ImageError>
where
    P: Pixel,
    P::Subpixel: Element,
{
    view.typed_ptr::<P::Subpixel>()
        .map_err(ImageError::from_access)?;
    let &[height, width, channels] = view.shape() else {
        return Err(ImageError::Ndim { found: view.ndim() });
    };
    if channels != i64::from(P::CHANNEL_COUNT) {
        return Err(ImageError::Channels {
            found: channels,
            expected: P::CHANNEL_COUNT,
        });
    }
    match (u32::try_from(width), u32::try_from(height)) {
        (Ok(width), Ok(height)) => Ok((width, height)),
        _ => Err(ImageError::TooLarge { height, width }),
    }
}

/// Copies a `[height, width, channels]` host tensor of `P`'s subpixel dtype into a new image,
/// reading through its strides (any layout: transposed, reversed, broadcast). One allocation of
/// `height * width * channels` subpixels and one pass over the elements; the tensor (imported,
/// borrowed from C, lent) is untouched and stays the caller's.
///
/// # Errors
/// [`ImageError`]: memory the host cannot read, another dtype or more than one lane, not three
/// dimensions, a channel count other than `P`'s, a height or width above `u32::MAX`, or what
/// typed access refuses (unknown flags, misaligned data).
///
/// ```
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_image::copy_image;
/// use image::Luma;
///
/// // A 2 x 3 gray image stored column-major (a transpose), read row by row.
/// let tensor = Export::new(vec![0u16, 3, 1, 4, 2, 5], &[2, 3, 1]).strides(&[1, 2, 1]).finish()?;
/// let image = copy_image::<Luma<u16>>(&tensor.view())?;
/// assert_eq!(image.dimensions(), (3, 2));
/// assert_eq!(image.as_raw(), &[0, 1, 2, 3, 4, 5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn copy_image<P>(view: &TensorView<'_>) -> Result<ImageBuffer<P, Vec<P::Subpixel>>, ImageError>
where
    P: Pixel,
    P::Subpixel: Element,
{
    let (width, height) = image_dims::<P>(view)?;
    let subpixels: Vec<P::Subpixel> = view
        .iter::<P::Subpixel>()
        .map_err(ImageError::from_access)?
        .collect();
    // Exactly `height * width * channels` subpixels: `from_raw` accepts them.
    ImageBuffer::from_raw(width, height, subpixels).ok_or(ImageError::TooLarge {
        height: i64::from(height),
        width: i64::from(width),
    })
}

/// Shares a C-contiguous `[height, width, channels]` host tensor as an image, without copying
/// or allocating: the image's container is a [`TensorPixels`] that owns the tensor (its deleter
/// runs when the image, or the container taken out of it, drops). The image is read-only (its
/// container derefs to `&[P::Subpixel]` only): the producer may share the memory; copy it to
/// write. On error the tensor is dropped (its deleter runs); to fall back to a copy, ask
/// [`TensorView::is_c_contiguous`] first, or copy with [`copy_image`].
///
/// # Errors
/// What [`copy_image`] refuses, and [`ImageError::NotContiguous`] for strides that are not
/// C-contiguous (which `copy_image` copies).
///
/// ```
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_image::{copy_image, import_image, ImageError};
/// use image::Rgb;
///
/// let tensor = Export::new(vec![1.0f32, 0.5, 0.0, 0.0, 0.5, 1.0], &[1, 2, 3]).finish()?;
/// let address = tensor.view().data_ptr();
/// let image = import_image::<Rgb<f32>>(tensor)?;
/// assert_eq!(image.get_pixel(1, 0), &Rgb([0.0, 0.5, 1.0]));
/// assert_eq!(image.as_ptr().cast(), address.cast_const());
///
/// // Flipped left to right: not one slice, so it is copied instead.
/// let flipped = Export::new(vec![1.0f32, 0.5, 0.0, 0.0, 0.5, 1.0], &[1, 2, 3])
///     .first_element(3).strides(&[6, -3, 1]).finish()?;
/// assert!(!flipped.view().is_c_contiguous());
/// let copied = copy_image::<Rgb<f32>>(&flipped.view())?;
/// assert_eq!(copied.get_pixel(0, 0), &Rgb([0.0, 0.5, 1.0]));
/// assert_eq!(import_image::<Rgb<f32>>(flipped).unwrap_err(), ImageError::NotContiguous);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_image<P>(
    tensor: VersionedTensor,
) -> Result<ImageBuffer<P, TensorPixels<P::Subpixel>>, ImageError>
where
    P: Pixel,
    P::Subpixel: Element,
{
    let view = tensor.view();
    let (width, height) = image_dims::<P>(&view)?;
    view.as_slice::<P::Subpixel>()
        .map_err(ImageError::from_access)?;
    let pixels = TensorPixels {
        tensor,
        subpixel: PhantomData,
    };
    // `pixels` derefs to exactly `height * width * channels` subpixels (checked above), which
    // `from_raw` accepts.
    ImageBuffer::from_raw(width, height, pixels).ok_or(ImageError::TooLarge {
        height: i64::from(height),
        width: i64::from(width),
    })
}

/// An imported tensor as an image's container: owns the tensor (its deleter runs when this
/// drops) and derefs to its elements, the image's subpixels in row-major HWC order, without
/// copying. Made by [`import_image`], which checked that the elements are one
/// slice of `S`; each deref repeats typed access's checks (a few comparisons, no allocation).
///
/// ```
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_image::import_image;
/// use image::Luma;
///
/// let tensor = Export::new(vec![10u8, 20, 30, 40], &[2, 2, 1]).finish()?;
/// let image = import_image::<Luma<u8>>(tensor)?;
/// let pixels = image.into_raw(); // the container: a TensorPixels
/// assert_eq!(&*pixels, [10, 20, 30, 40]);
/// assert_eq!(pixels.into_tensor().view().shape(), [2, 2, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TensorPixels<S> {
    /// The imported tensor: C-contiguous, host-accessible, of `S`'s dtype, aligned.
    tensor: VersionedTensor,
    subpixel: PhantomData<fn() -> S>,
}

impl<S> TensorPixels<S> {
    /// The tensor the pixels live in.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi_image::import_image;
    /// use image::Rgba;
    ///
    /// let image = import_image::<Rgba<u16>>(Export::new(vec![0u16; 8], &[1, 2, 4]).finish()?)?;
    /// assert_eq!(image.as_raw().tensor().view().element_count(), 8);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn tensor(&self) -> &VersionedTensor {
        &self.tensor
    }

    /// Gives the tensor back (to re-export it, say); the image it came from is gone.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Export, VersionedTensor};
    /// use dlpack_abi_image::import_image;
    /// use image::LumaA;
    ///
    /// let image = import_image::<LumaA<f32>>(Export::new(vec![1.0f32, 0.5], &[1, 1, 2]).finish()?)?;
    /// let raw = image.into_raw().into_tensor().into_raw(); // for C, say
    /// // What the C consumer does: import it, read it, and let its deleter run once.
    /// // SAFETY: `raw` is live and its deleter has not run.
    /// let tensor = unsafe { VersionedTensor::from_raw(raw) }?;
    /// assert_eq!(tensor.view().as_slice::<f32>()?, [1.0, 0.5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_tensor(self) -> VersionedTensor {
        self.tensor
    }
}

impl<S: Element> Deref for TensorPixels<S> {
    type Target = [S];

    /// The tensor's elements, in row-major order.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi_image::import_image;
    /// use image::Luma;
    ///
    /// let image = import_image::<Luma<u8>>(Export::new(vec![1u8, 2], &[1, 2, 1]).finish()?)?;
    /// assert_eq!(image.as_raw().len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn deref(&self) -> &[S] {
        // Checked by `import_image`, on the same validated tensor, which cannot change. (A panic,
        // never a short slice: `ImageBuffer` reads pixels unchecked within the length it saw.)
        (self.tensor.view().as_slice::<S>()).expect("checked by `import_image`")
    }
}

impl<S> fmt::Debug for TensorPixels<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TensorPixels").field(&self.tensor).finish()
    }
}
