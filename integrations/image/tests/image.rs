//! The image bridge against the real `image` crate: HWC shapes and strides, values for every
//! pixel and subpixel type, zero-copy both ways (pointers compared), strided tensors copied,
//! every buffer freed exactly once, and each refusal's exact error. Small enough for Miri.
// image 0.25.10 needs Rust 1.88, so this test may use what 1.88 has (`pointer::addr`).
#![allow(clippy::incompatible_msrv)]

use std::fmt::Debug;
use std::sync::Arc;

use dlpack_abi::dlpack::{AccessError, Element, Export, VersionedTensor};
use dlpack_abi::raw::{kDLCPU, kDLCUDA, kDLUInt, DLDataType, DLDevice, DLPackFlags};
use dlpack_abi_image::{
    copy_image, export_image, import_image, lend_image, lend_image_mut, ImageError,
};
use image::{GrayImage, ImageBuffer, Luma, LumaA, Pixel, Rgb, RgbImage, Rgba};

#[path = "../../../tests/fixture/watched_frees.rs"]
mod watched_frees;
use watched_frees::{frees, watch};

/// A 3 x 2 image of `values` (`6 * channels` subpixels) out as a tensor and back both ways.
fn round_trip<P>(values: Vec<P::Subpixel>)
where
    P: Pixel + PartialEq + Debug,
    P::Subpixel: Element + Send + PartialEq + Debug,
{
    let channels = i64::from(P::CHANNEL_COUNT);
    let image = ImageBuffer::<P, Vec<_>>::from_raw(3, 2, values.clone()).expect("3 x 2 pixels");
    let address = image.as_ptr();
    let expected_pixel = *image.get_pixel(2, 1);

    // Out: zero-copy, HWC, row-major, writable.
    let tensor = export_image(image).expect("exported");
    let view = tensor.view();
    assert_eq!(view.shape(), [2, 3, channels]);
    assert_eq!(view.strides(), [3 * channels, channels, 1]);
    assert_eq!(view.dtype(), P::Subpixel::DTYPE);
    assert_eq!(
        view.device(),
        DLDevice {
            device_type: kDLCPU,
            device_id: 0
        }
    );
    assert_eq!(view.flags(), DLPackFlags::empty());
    assert_eq!(view.data_ptr().cast_const().cast(), address);
    assert_eq!(view.as_slice::<P::Subpixel>().expect("typed"), values);
    // Row 1, column 2, last channel: the last subpixel.
    let last = usize::from(P::CHANNEL_COUNT) - 1;
    assert_eq!(
        view.get::<P::Subpixel>(&[1, 2, last]).ok(),
        values.last().copied()
    );

    // In, copied: the same values in a new buffer.
    let copied = copy_image::<P>(&view).expect("copied");
    assert_eq!(copied.dimensions(), (3, 2));
    assert_eq!(copied.as_raw(), &values);
    assert_ne!(copied.as_ptr(), address);
    assert_eq!(copied.get_pixel(2, 1), &expected_pixel);

    // In, shared: the exported buffer itself, freed once when the image drops.
    let shared = import_image::<P>(tensor).expect("shared");
    assert_eq!(shared.dimensions(), (3, 2));
    assert_eq!(shared.as_ptr(), address);
    assert_eq!(&**shared.as_raw(), &values[..]);
    assert_eq!(shared.get_pixel(2, 1), &expected_pixel);
    watch(address);
    drop(shared);
    assert_eq!(frees(), 1);
}

/// `count` subpixels `0, 7, 14, ...` (wrapping at 256) as `$ty`.
macro_rules! ramp {
    ($ty:ty, $count:expr) => {
        (0..$count)
            .map(|i: u8| <$ty>::from(i.wrapping_mul(7)))
            .collect::<Vec<$ty>>()
    };
}

#[test]
fn every_pixel_and_subpixel_type_round_trips() {
    round_trip::<Luma<u8>>(ramp!(u8, 6));
    round_trip::<LumaA<u8>>(ramp!(u8, 12));
    round_trip::<Rgb<u8>>(ramp!(u8, 18));
    round_trip::<Rgba<u8>>(ramp!(u8, 24));
    round_trip::<Luma<u16>>(ramp!(u16, 6).into_iter().map(|v| v * 300).collect());
    round_trip::<LumaA<u16>>(ramp!(u16, 12));
    round_trip::<Rgb<u16>>(ramp!(u16, 18));
    round_trip::<Rgba<u16>>(ramp!(u16, 24));
    round_trip::<Luma<f32>>(ramp!(f32, 6).into_iter().map(|v| v / 8.0).collect());
    round_trip::<LumaA<f32>>(ramp!(f32, 12));
    round_trip::<Rgb<f32>>(ramp!(f32, 18));
    round_trip::<Rgba<f32>>(ramp!(f32, 24));
}

#[test]
fn an_exported_image_is_freed_once_with_its_tensor() {
    let image = GrayImage::from_fn(4, 4, |x, y| Luma([(x * 4 + y) as u8]));
    let address = image.as_ptr();
    let tensor = export_image(image).expect("exported");
    // Through C and back: the same buffer, freed by the deleter, once.
    let raw = tensor.into_raw();
    // SAFETY: `raw` is live and its deleter has not run.
    let tensor = unsafe { VersionedTensor::from_raw(raw) }.expect("imported");
    assert_eq!(tensor.view().data_ptr().cast_const().cast(), address);
    watch(address);
    drop(tensor);
    assert_eq!(frees(), 1);
}

#[test]
fn empty_images_round_trip() {
    let image = RgbImage::new(0, 5);
    let tensor = export_image(image).expect("exported");
    assert_eq!(tensor.view().shape(), [5, 0, 3]);
    assert_eq!(
        copy_image::<Rgb<u8>>(&tensor.view())
            .expect("copied")
            .dimensions(),
        (0, 5)
    );
    assert_eq!(
        import_image::<Rgb<u8>>(tensor)
            .expect("shared")
            .dimensions(),
        (0, 5)
    );
}

#[test]
fn strided_tensors_are_copied_through_their_strides() {
    // A 2 x 3 RGB image stored x-major (each column's two pixels together): the transpose of a
    // 3 x 2 HWC buffer. Pixel (x, y) is at (x * 2 + y) * 3.
    let storage: Vec<u8> = (0..18).collect();
    let pixel = |x: u8, y: u8| {
        let base = (x * 2 + y) * 3;
        Rgb([base, base + 1, base + 2])
    };
    let transposed = Export::new(storage.clone(), &[2, 3, 3])
        .strides(&[3, 6, 1])
        .finish()
        .unwrap();
    assert!(!transposed.view().is_c_contiguous());
    let image = copy_image::<Rgb<u8>>(&transposed.view()).expect("copied");
    assert_eq!(image.dimensions(), (3, 2));
    for (x, y, value) in image.enumerate_pixels() {
        assert_eq!(*value, pixel(x as u8, y as u8), "pixel ({x}, {y})");
    }
    assert_eq!(
        import_image::<Rgb<u8>>(transposed).unwrap_err(),
        ImageError::NotContiguous
    );

    // Rows bottom-up and channels reversed (BGR read as RGB): negative strides.
    let flipped = Export::new(storage, &[3, 2, 3])
        .first_element(14)
        .strides(&[-6, 3, -1])
        .finish()
        .unwrap();
    let image = copy_image::<Rgb<u8>>(&flipped.view()).expect("copied");
    assert_eq!(image.dimensions(), (2, 3));
    assert_eq!(image.get_pixel(0, 0), &Rgb([14, 13, 12]));
    assert_eq!(image.get_pixel(1, 0), &Rgb([17, 16, 15]));
    assert_eq!(image.get_pixel(1, 2), &Rgb([5, 4, 3]));

    // One gray value broadcast over a 2 x 2 image (zero strides).
    let broadcast = Export::new(vec![9u16], &[2, 2, 1])
        .strides(&[0, 0, 0])
        .finish()
        .unwrap();
    let image = copy_image::<Luma<u16>>(&broadcast.view()).expect("copied");
    assert_eq!(image.as_raw(), &[9, 9, 9, 9]);
}

#[test]
fn a_shared_buffer_is_imported_read_only_and_released_once() {
    let pixels: Arc<[f32]> = Arc::from(vec![0.25f32, 0.5, 0.75, 1.0]);
    let tensor = Export::new(Arc::clone(&pixels), &[2, 1, 2])
        .finish()
        .unwrap();
    assert!(tensor.view().flags().contains(DLPackFlags::READ_ONLY));
    let image = import_image::<LumaA<f32>>(tensor).expect("shared");
    assert_eq!(image.as_ptr(), pixels.as_ptr());
    assert_eq!(image.get_pixel(0, 1), &LumaA([0.75, 1.0]));
    assert_eq!(Arc::strong_count(&pixels), 2);
    drop(image);
    assert_eq!(Arc::strong_count(&pixels), 1);

    // A refusal drops the tensor, once.
    let tensor = Export::new(Arc::clone(&pixels), &[2, 1, 2])
        .finish()
        .unwrap();
    let error = import_image::<Rgb<f32>>(tensor).unwrap_err();
    assert_eq!(
        error,
        ImageError::Channels {
            found: 2,
            expected: 3
        }
    );
    assert_eq!(Arc::strong_count(&pixels), 1);
}

#[test]
fn borrowed_images_are_lent_without_copying() {
    let image = GrayImage::from_fn(3, 2, |x, y| Luma([(10 * y + x) as u8]));
    let lent = lend_image(&image).expect("lent");
    let raw = lent.dl_tensor();
    let view = raw.view();
    assert_eq!(view.shape(), [2, 3, 1]);
    assert_eq!(view.strides(), [3, 1, 1]);
    assert_eq!(view.data_ptr().cast_const().cast(), image.as_ptr());
    assert_eq!(view.get::<u8>(&[1, 2, 0]), Ok(12));

    // A shared image (a `TensorPixels` container) lent again: still the tensor's memory.
    let tensor = Export::new(vec![1u16, 2, 3, 4, 5, 6], &[1, 2, 3])
        .finish()
        .unwrap();
    let address = tensor.view().data_ptr();
    let shared = import_image::<Rgb<u16>>(tensor).expect("shared");
    let lent = lend_image(&shared).expect("lent");
    assert_eq!(lent.dl_tensor().view().data_ptr(), address);

    let mut output = ImageBuffer::<Rgba<f32>, Vec<f32>>::new(2, 1);
    let mut lent = lend_image_mut(&mut output).expect("lent");
    let mut raw = lent.dl_tensor_mut();
    let mut out = raw.view_mut();
    out.as_mut_slice::<f32>()
        .expect("writable")
        .copy_from_slice(&[1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.5]);
    assert_eq!(output.get_pixel(1, 0), &Rgba([0.0, 1.0, 0.0, 0.5]));
}

/// `tensor` with its raw struct changed as a foreign producer might have written it.
fn rewritten(
    tensor: VersionedTensor,
    change: impl FnOnce(&mut dlpack_abi::raw::DLTensor),
) -> VersionedTensor {
    let raw = tensor.into_raw();
    // SAFETY: `raw` is live and ours; only plain fields are changed.
    change(unsafe { &mut (*raw).dl_tensor });
    // SAFETY: `raw` is live and its deleter has not run.
    unsafe { VersionedTensor::from_raw(raw) }.expect("still valid")
}

#[test]
fn refusals_say_what_was_found_and_expected() {
    let rgb = || Export::new(vec![0u8; 12], &[2, 2, 3]).finish().unwrap();

    let error = copy_image::<Rgba<u8>>(&rgb().view()).unwrap_err();
    assert_eq!(
        error,
        ImageError::Channels {
            found: 3,
            expected: 4
        }
    );
    let error = copy_image::<Rgb<u16>>(&rgb().view()).unwrap_err();
    assert_eq!(
        error,
        ImageError::DtypeMismatch {
            found: u8::DTYPE,
            expected: u16::DTYPE
        }
    );
    assert_eq!(
        error.to_string(),
        "DLTensor.dtype is uint8, but the pixel's subpixel type is uint16"
    );

    let flat = Export::new(vec![0u8; 12], &[4, 3]).finish().unwrap();
    assert_eq!(
        copy_image::<Rgb<u8>>(&flat.view()).unwrap_err(),
        ImageError::Ndim { found: 2 }
    );
    assert_eq!(
        import_image::<Rgb<u8>>(flat).unwrap_err(),
        ImageError::Ndim { found: 2 }
    );

    let on_gpu = rewritten(rgb(), |raw| {
        raw.device = DLDevice {
            device_type: kDLCUDA,
            device_id: 1,
        }
    });
    let error = copy_image::<Rgb<u8>>(&on_gpu.view()).unwrap_err();
    assert_eq!(
        error,
        ImageError::NotHostAccessible {
            device: on_gpu.view().device()
        }
    );

    // Four lanes of u8 per element: 2 x 2 x 3 elements of 4 bytes.
    let vector = rewritten(
        Export::new(vec![0u8; 48], &[2, 2, 3]).finish().unwrap(),
        |raw| {
            raw.dtype = DLDataType {
                code: kDLUInt,
                bits: 8,
                lanes: 4,
            }
        },
    );
    let dtype = vector.view().dtype();
    assert_eq!(
        copy_image::<Rgb<u8>>(&vector.view()).unwrap_err(),
        ImageError::Lanes { dtype }
    );

    // A u16 tensor one byte into its buffer.
    let misaligned = rewritten(
        Export::new(vec![0u16; 4], &[1, 1, 3]).finish().unwrap(),
        |raw| raw.byte_offset = 1,
    );
    let address = misaligned.view().data_ptr().addr();
    let error = copy_image::<Rgb<u16>>(&misaligned.view()).unwrap_err();
    assert_eq!(
        error,
        ImageError::Access(AccessError::Misaligned { address, align: 2 })
    );

    // 2^32 rows of one broadcast pixel: refused before anything is allocated. (On 32-bit
    // targets such a tensor cannot exist: its element count does not fit `isize`.)
    if cfg!(target_pointer_width = "32") {
        return;
    }
    let tall = Export::new(vec![0u8], &[1 << 32, 1, 1])
        .strides(&[0, 0, 0])
        .finish()
        .unwrap();
    let error = copy_image::<Luma<u8>>(&tall.view()).unwrap_err();
    assert_eq!(
        error,
        ImageError::TooLarge {
            height: 1 << 32,
            width: 1
        }
    );
}
