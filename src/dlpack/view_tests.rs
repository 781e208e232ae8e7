//! Unit tests of typed access: the typed slices' common case against their general path.

use super::*;
use crate::raw::{kDLCPU, kDLCUDA, kDLFloat, kDLUInt, DLDataType};

fn dtype(code: crate::raw::DLDataTypeCode, bits: u8, lanes: u16) -> DLDataType {
    DLDataType { code, bits, lanes }
}

/// The byte offsets of the tensors' start: aligned for some element types and not others.
const OFFSETS: [u64; 5] = [0, 1, 2, 4, 8];

/// Typed slices: the common case's masked compare in `as_slice` (and `as_slice_memory_order`)
/// returns what the general path returns, the same slice or the same refusal, for four element
/// types asked of tensors that leave the common case one way each: another dtype, a device that
/// is not host memory, a flag, a layout, a misaligned start, no element.
#[test]
fn the_slice_fast_path_agrees_with_the_general_path() {
    let buffer = [0u128; 8];
    let base = buffer.as_ptr().cast::<u8>().cast_mut();
    let layouts: [(&[i64], Option<&[i64]>); 6] = [
        (&[3], None),
        (&[2, 3], Some(&[3, 1])),
        (&[2, 3], Some(&[1, 2])),
        (&[3], Some(&[2])),
        (&[0], None),
        (&[2, 0], Some(&[1, 1])),
    ];
    let dtypes = [
        f32::DTYPE,
        u8::DTYPE,
        i16::DTYPE,
        f64::DTYPE,
        dtype(kDLFloat, 32, 2),
        dtype(kDLUInt, 4, 1),
    ];
    let devices = [kDLCPU, kDLCUDA];
    let flags = [0, 1, 2, 3, 1 << 5].map(DLPackFlags::from_bits_retain);
    let (mut fast, mut cases) = (0, 0);
    for (shape, strides) in layouts {
        for dtype in dtypes {
            for device_type in devices {
                for flags in flags {
                    for byte_offset in OFFSETS {
                        let t = DLTensor {
                            data: base.cast(),
                            device: DLDevice {
                                device_type,
                                device_id: 0,
                            },
                            ndim: i32::try_from(shape.len()).unwrap(),
                            dtype,
                            shape: shape.as_ptr().cast_mut(),
                            strides: strides
                                .map_or(core::ptr::null_mut(), |s| s.as_ptr().cast_mut()),
                            byte_offset,
                        };
                        let version = Some(DLPackVersion { major: 1, minor: 1 });
                        // SAFETY: `shape` and `strides` hold `ndim` values.
                        let meta = unsafe { validate::validate(&t, version, flags) };
                        let meta = meta.expect("valid");
                        let view = TensorView::new(&t, meta, version, flags);
                        cases += 1;
                        fast += usize::from(view.slice_paths_agree::<f32>());
                        fast += usize::from(view.slice_paths_agree::<u8>());
                        fast += usize::from(view.slice_paths_agree::<i16>());
                        fast += usize::from(view.slice_paths_agree::<f64>());
                    }
                }
            }
        }
    }
    // Non-empty slices (the fast path's): the two non-empty C-contiguous layouts, on the CPU,
    // with known flags (4), of the dtype asked, at the offsets aligned for it (5 for `u8`, 4 for
    // `i16`, 3 for `f32`, 2 for `f64`, or 3 where it is 4-aligned, as on i686). Refusals or empty
    // slices for the rest.
    let aligned = |align: usize| OFFSETS.iter().filter(|&&o| o as usize % align == 0).count();
    let per_layout = aligned(1) + aligned(2) + aligned(4) + aligned(align_of::<f64>());
    assert_eq!(cases, 6 * 6 * 2 * 5 * 5);
    assert_eq!(fast, 2 * 4 * per_layout);
}
