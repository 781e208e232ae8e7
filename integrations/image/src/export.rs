//! Images out: [`export_image`] (an owned image, zero-copy), [`lend_image`] and
//! [`lend_image_mut`] (a borrowed one, without allocation).

use core::ops::{Deref, DerefMut};

use alloc::vec::Vec;
use dlpack_abi::dlpack::{
    BorrowedTensor, BorrowedTensorMut, Element, Export, ExportError, VersionedTensor,
};
use image::{ImageBuffer, Pixel};

/// The `[height, width, channels]` shape of an image (`u32` and `u8` always fit `i64`).
fn hwc_shape<P: Pixel, C: Deref<Target = [P::Subpixel]>>(image: &ImageBuffer<P, C>) -> [i64; 3] {
    let (width, height) = image.dimensions();
    [
        i64::from(height),
        i64::from(width),
        i64::from(P::CHANNEL_COUNT),
    ]
}

/// Exports an owned image as a `[height, width, channels]` CPU tensor of its subpixel's dtype,
/// row-major, without copying: the pixel vector moves into the export, whose deleter frees
/// it. The tensor is writable and exclusive (the vector is the export's alone). The image's
/// color space (its CICP) is not carried: DLPack has no field for it.
///
/// # Errors
/// [`ExportError`] only for an image whose vector is shorter than its dimensions need, which
/// `ImageBuffer` never builds.
///
/// ```
/// use dlpack_abi_image::export_image;
/// use image::{ImageBuffer, Luma};
///
/// let depth: ImageBuffer<Luma<f32>, Vec<f32>> = ImageBuffer::from_fn(3, 2, |x, y| Luma([(x + y) as f32]));
/// let mut tensor = export_image(depth)?;
/// assert_eq!(tensor.view().shape(), [2, 3, 1]);
/// assert_eq!(tensor.view().strides(), [3, 1, 1]);
/// tensor.as_mut_slice::<f32>()?[0] = 9.0; // the export's alone: writable
/// assert_eq!(tensor.view().get::<f32>(&[1, 2, 0])?, 3.0);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub fn export_image<P>(
    image: ImageBuffer<P, Vec<P::Subpixel>>,
) -> Result<VersionedTensor, ExportError>
where
    P: Pixel,
    P::Subpixel: Element + Send,
{
    let shape = hwc_shape(&image);
    Export::new(image.into_raw(), &shape).finish()
}

/// Lends an image (any container: a `Vec`, a slice, [`TensorPixels`](crate::TensorPixels),
/// ...) to C as a read-only `[height, width, channels]` `DLTensor`, without allocation, for as
/// long as it is borrowed.
///
/// # Errors
/// [`ExportError`] only for an image whose container is shorter than its dimensions need,
/// which `ImageBuffer` never builds.
///
/// ```
/// use dlpack_abi_image::lend_image;
/// use image::{ImageBuffer, LumaA};
///
/// let pixels = [1u16, 2, 3, 4, 5, 6];
/// let image = ImageBuffer::<LumaA<u16>, &[u16]>::from_raw(3, 1, &pixels[..]).expect("3 x 1 pixels");
/// let lent = lend_image(&image)?;
/// let raw = lent.dl_tensor();
/// let view = raw.view();
/// assert_eq!(view.shape(), [1, 3, 2]);
/// assert_eq!(view.get::<u16>(&[0, 2, 1])?, 6);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub fn lend_image<P, C>(image: &ImageBuffer<P, C>) -> Result<BorrowedTensor<'_, 3>, ExportError>
where
    P: Pixel,
    P::Subpixel: Element,
    C: Deref<Target = [P::Subpixel]>,
{
    BorrowedTensor::new(image, hwc_shape(image))
}

/// Lends an image mutably to C (a kernel's output) as a `[height, width, channels]`
/// `DLTensor`, without allocation, for as long as it is borrowed.
///
/// # Errors
/// As [`lend_image`].
///
/// ```
/// use dlpack_abi_image::lend_image_mut;
/// use image::{Rgba, RgbaImage};
///
/// let mut image = RgbaImage::new(2, 2);
/// let mut lent = lend_image_mut(&mut image)?;
/// // What a kernel does with its output: here, make pixel (x 1, y 0) opaque red.
/// let mut out = lent.dl_tensor_mut();
/// out.view_mut().set(&[0, 1, 0], 255u8)?;
/// out.view_mut().set(&[0, 1, 3], 255u8)?;
/// assert_eq!(image.get_pixel(1, 0), &Rgba([255, 0, 0, 255]));
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub fn lend_image_mut<P, C>(
    image: &mut ImageBuffer<P, C>,
) -> Result<BorrowedTensorMut<'_, 3>, ExportError>
where
    P: Pixel,
    P::Subpixel: Element,
    C: DerefMut<Target = [P::Subpixel]>,
{
    let shape = hwc_shape(image);
    BorrowedTensorMut::new(image, shape)
}
