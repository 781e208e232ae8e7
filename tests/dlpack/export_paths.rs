//! The row-major export's one pass (the shape checked while the dims are written, then the
//! buffer) against the same export given its row-major strides, which takes the general path
//! (the struct validated as an import, then its reach checked against the buffer).

use dlpack_abi::dlpack::{Export, ExportError, ImportError, VersionedTensor};

/// The row-major strides of `shape`, zero extents counted as one (what an export writes),
/// wrapping where they overflow (both exports then refuse the shape).
fn row_major(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for dim in (0..shape.len().saturating_sub(1)).rev() {
        strides[dim] = strides[dim + 1].wrapping_mul(shape[dim + 1].max(1));
    }
    strides
}

/// What a consumer sees of an export of the vector at `base`: the struct's fields (`data` from
/// `base`), the dims and the flags.
fn seen(tensor: &VersionedTensor, base: *const f32) -> String {
    let view = tensor.view();
    let raw = view.raw();
    let data = if raw.data.is_null() {
        "NULL".to_string()
    } else {
        format!("base + {}", raw.data as usize - base as usize)
    };
    format!(
        "data {data} + {} on {:?}, {:?}, shape {:?}, strides {:?}, flags {:?}, {} elements",
        raw.byte_offset,
        view.device(),
        view.dtype(),
        view.shape(),
        view.strides(),
        view.flags(),
        view.element_count(),
    )
}

#[test]
fn a_row_major_export_agrees_with_the_same_export_given_its_strides() {
    let shapes: &[&[i64]] = &[
        &[],
        &[1],
        &[6],
        &[7],
        &[0],
        &[2, 3],
        &[3, 2],
        &[1, 6, 1],
        &[2, 0, 3],
        &[-1],
        &[2, -3],
        &[i64::MAX],
        &[i64::MAX, 2],
        &[1 << 40, 1 << 40],
        &[1 << 61],
        // The most f32 elements whose bytes fit `isize`, and one more.
        &[isize::MAX as i64 / 4],
        &[isize::MAX as i64 / 4 + 1],
    ];
    let mut fast_accepted = 0;
    for len in [0usize, 1, 5, 6, 7] {
        for first in [0usize, 1, 5, 6, 7, usize::MAX / 4, usize::MAX] {
            for shape in shapes {
                let strides = row_major(shape);
                let (values, copy) = (vec![1.0f32; len], vec![1.0f32; len]);
                let (base, copy_base) = (values.as_ptr(), copy.as_ptr());
                // Every other case read-only: the exclusive bit must agree too.
                let read_only = (len ^ first) % 2 == 1;
                let mut fast = Export::new(values, shape).first_element(first);
                let mut general = Export::new(copy, shape)
                    .strides(&strides)
                    .first_element(first);
                if read_only {
                    (fast, general) = (fast.read_only(), general.read_only());
                }
                let (fast, general) = (fast.finish(), general.finish());
                let case = format!("shape {shape:?} from {first} in {len}");
                match (&fast, &general) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!(seen(a, base), seen(b, copy_base), "{case}");
                        // Writable alike: both own the vector alone, unless read-only.
                        let (mut a, mut b) = (fast.unwrap(), general.unwrap());
                        assert_eq!(
                            a.as_mut_slice::<f32>().map(|s| s.len()),
                            b.as_mut_slice::<f32>().map(|s| s.len()),
                            "{case}"
                        );
                        fast_accepted += 1;
                    }
                    // Where the tensor would reach past the end of the address space, the row-major
                    // export names the buffer and the general one (which validates first) the
                    // overflow: both refuse.
                    (
                        Err(ExportError::OutsideBuffer { .. }),
                        Err(ExportError::Invalid(
                            ImportError::ByteOffsetOverflow { .. }
                            | ImportError::StridesOverflow { .. }
                            | ImportError::AddressOverflow { .. },
                        )),
                    ) => {}
                    (Err(a), Err(b)) => assert_eq!(a, b, "{case}"),
                    _ => panic!("{case}: {fast:?} against {general:?}"),
                }
            }
        }
    }
    assert!(fast_accepted > 20, "only {fast_accepted} exports accepted");
}
