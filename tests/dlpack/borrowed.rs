//! Borrowed tensors, both ways: a bare `DLTensor` validated by the managed import's rules (each
//! malformed field gets its own error, nothing is freed because nothing is owned), and Rust
//! slices lent as `DLTensor`s (refused when the description leaves the slice). None of it
//! allocates.

use std::cell::Cell;
use std::ptr;

use dlpack_abi::dlpack::{
    AccessError, BorrowedTensor, BorrowedTensorMut, Dims, Element, ExportError, ImportError,
    TensorDescription, TensorView, TensorViewMut,
};
use dlpack_abi::raw::{kDLCPU, kDLCUDA, kDLFloat, DLDataType, DLDevice, DLPackFlags, DLTensor};

use proptest::prelude::*;

use super::soundness::ALLOCATIONS;

const CPU: DLDevice = DLDevice {
    device_type: kDLCPU,
    device_id: 0,
};

/// A bare tensor over `values` as C would build it on its stack.
fn bare<T: Element>(values: &mut [T], shape: &mut [i64], strides: Option<&mut [i64]>) -> DLTensor {
    DLTensor {
        data: values.as_mut_ptr().cast(),
        device: CPU,
        ndim: shape.len() as i32,
        dtype: T::DTYPE,
        shape: shape.as_mut_ptr(),
        strides: strides.map_or(ptr::null_mut(), <[i64]>::as_mut_ptr),
        byte_offset: 0,
    }
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn a_bare_tensor_is_validated_by_the_managed_rules_and_nothing_is_freed() {
    let mut values = [0f32, 1.0, 2.0, 3.0, 4.0, 5.0];
    let mut shape = [2i64, 3];
    let mut strides = [3i64, 1];
    let good = bare(&mut values, &mut shape, Some(&mut strides));
    let before = allocations();
    // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
    let view = unsafe { TensorView::from_raw(&good) }.unwrap();
    assert_eq!(
        view.as_slice::<f32>().unwrap(),
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert_eq!(view.version(), None);
    assert_eq!(view.flags(), DLPackFlags::empty());

    type Break = fn(&mut DLTensor);
    let cases: [(Break, ImportError); 8] = [
        (|t| t.ndim = -1, ImportError::NegativeNdim { ndim: -1 }),
        (|t| t.ndim = 65, ImportError::TooManyDims { ndim: 65 }),
        (
            |t| t.shape = ptr::null_mut(),
            ImportError::NullShape { ndim: 2 },
        ),
        (
            |t| t.data = ptr::null_mut(),
            ImportError::NullData { elements: 6 },
        ),
        (
            |t| t.dtype.lanes = 0,
            ImportError::ZeroLanes {
                dtype: DLDataType {
                    code: kDLFloat,
                    bits: 32,
                    lanes: 0,
                },
            },
        ),
        (
            |t| t.byte_offset = u64::MAX,
            ImportError::ByteOffsetOverflow {
                byte_offset: u64::MAX,
            },
        ),
        (
            // SAFETY: the shape is a live local array of two extents.
            |t| unsafe { *t.shape.add(1) = -3 },
            ImportError::NegativeExtent { dim: 1, extent: -3 },
        ),
        (
            // SAFETY: the strides are a live local array of two strides.
            |t| unsafe { *t.strides = i64::MAX },
            ImportError::StridesOverflow {
                dim: 0,
                stride: i64::MAX,
            },
        ),
    ];
    for (break_it, expected) in cases {
        let (mut shape, mut strides) = ([2i64, 3], [3i64, 1]);
        let mut bad = bare(&mut values, &mut shape, Some(&mut strides));
        break_it(&mut bad);
        // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
        assert_eq!(unsafe { TensorView::from_raw(&bad) }.unwrap_err(), expected);
        assert_eq!(
            // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
            unsafe { TensorViewMut::from_raw(&mut bad) }.unwrap_err(),
            expected
        );
    }
    assert_eq!(
        // SAFETY: NULL is refused before anything is read.
        unsafe { TensorView::from_raw(ptr::null()) }.unwrap_err(),
        ImportError::NullTensor
    );
    assert_eq!(allocations(), before, "borrowed import never allocates");
}

#[test]
fn byte_offset_is_counted_once() {
    // The classic bug: adding byte_offset to data and then indexing from data + byte_offset again.
    let mut values = [0i32, 1, 2, 3, 4, 5];
    let mut shape = [2i64];
    let mut t = bare(&mut values, &mut shape, None);
    t.byte_offset = 8;
    // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
    let view = unsafe { TensorView::from_raw(&t) }.unwrap();
    assert_eq!(view.as_slice::<i32>().unwrap(), [2, 3]);
    assert_eq!(view.typed_ptr::<i32>().unwrap(), values[2..].as_ptr());
}

#[test]
fn a_borrowed_output_is_written_through_its_strides() {
    let mut values = [0u16; 6];
    // Column-major 2 x 3, starting at element 0.
    let (mut shape, mut strides) = ([2i64, 3], [1i64, 2]);
    let mut t = bare(&mut values, &mut shape, Some(&mut strides));
    // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
    let mut out = unsafe { TensorViewMut::from_raw(&mut t) }.unwrap();
    assert_eq!(out.as_mut_slice::<u16>(), Err(AccessError::NotContiguous));
    assert!(matches!(
        out.get_mut::<u32>(&[0, 0]),
        Err(AccessError::DtypeMismatch { .. })
    ));
    for i in 0..2 {
        for j in 0..3 {
            out.set(&[i, j], (10 * i + j) as u16).unwrap();
        }
    }
    assert!(out.view().iter::<u16>().unwrap().eq([0, 1, 2, 10, 11, 12]));
    assert_eq!(values, [0, 10, 1, 11, 2, 12]);

    // A zero stride: every index is the same element, written one at a time.
    let mut one = [0u8; 1];
    let (mut shape, mut strides) = ([4i64], [0i64]);
    let mut t = bare(&mut one, &mut shape, Some(&mut strides));
    // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
    let mut out = unsafe { TensorViewMut::from_raw(&mut t) }.unwrap();
    assert_eq!(out.as_mut_slice::<u8>(), Err(AccessError::NotContiguous));
    for i in 0..4 {
        *out.get_mut::<u8>(&[i]).unwrap() += 1;
    }
    assert_eq!(one, [4]);
}

#[test]
fn device_memory_is_validated_but_never_read() {
    let mut shape = [4i64];
    let t = DLTensor {
        data: std::ptr::without_provenance_mut(0x1000),
        device: DLDevice {
            device_type: kDLCUDA,
            device_id: 0,
        },
        ndim: 1,
        dtype: f32::DTYPE,
        shape: shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
    let view = unsafe { TensorView::from_raw(&t) }.unwrap();
    assert!(matches!(
        view.typed_ptr::<f32>(),
        Err(AccessError::NotHostAccessible { .. })
    ));
}

#[test]
fn lent_slices_round_trip_through_a_bare_tensor() {
    let before = allocations();
    let values: [i64; 12] = core::array::from_fn(|i| i as i64);
    // The columns of a 3 x 4 row-major matrix, backwards: starts at element 3.
    let lent = BorrowedTensor::strided(&values, [4, 3], [-1, 4], 3).unwrap();
    let raw = lent.dl_tensor();
    assert_eq!((raw.ndim, raw.byte_offset), (2, 24));
    assert_eq!(raw.data.cast_const(), values.as_ptr().cast());
    // SAFETY: a lent tensor, validated, whose memory is borrowed for as long as the view lives.
    let seen = unsafe { TensorView::from_raw(raw.as_ptr()) }.unwrap();
    assert_eq!(seen.strides(), [-1, 4]);
    assert!(seen
        .iter::<i64>()
        .unwrap()
        .eq([3, 7, 11, 2, 6, 10, 1, 5, 9, 0, 4, 8]));

    let mut out = [0f32; 6];
    let mut lent = BorrowedTensorMut::new(&mut out, [2, 3]).unwrap();
    let mut raw = lent.dl_tensor_mut();
    // SAFETY: a lent tensor, validated, whose memory is borrowed for as long as the view lives.
    let mut written = unsafe { TensorViewMut::from_raw(raw.as_mut_ptr()) }.unwrap();
    written
        .as_mut_slice::<f32>()
        .unwrap()
        .copy_from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(out, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(allocations(), before, "lending never allocates");
}

#[test]
fn lent_descriptions_that_leave_the_slice_are_refused() {
    let values = [0u8; 6];
    let outside = |first, end| ExportError::OutsideBuffer { first, end, len: 6 };
    assert_eq!(
        BorrowedTensor::new(&values, [7]).unwrap_err(),
        outside(0, 7)
    );
    assert_eq!(
        BorrowedTensor::strided(&values, [2], [1], 5).unwrap_err(),
        outside(5, 7)
    );
    assert_eq!(
        BorrowedTensor::strided(&values, [3], [-1], 1).unwrap_err(),
        outside(-1, 2)
    );
    assert_eq!(
        BorrowedTensor::strided(&values, [2], [6], 0).unwrap_err(),
        outside(0, 7)
    );
    assert_eq!(
        BorrowedTensor::new(&values, [-1]).unwrap_err(),
        ExportError::Invalid(ImportError::NegativeExtent { dim: 0, extent: -1 })
    );
    // Runtime dimensions beyond the inline room, and strides of the wrong length.
    let mut bytes = [0u8; 8];
    let description = TensorDescription::cpu(&mut bytes, &[2, 2, 2]);
    assert_eq!(
        // SAFETY: refused before anything is read; the description covers live locals.
        unsafe { BorrowedTensor::<2>::from_description(&description) }.unwrap_err(),
        ExportError::Capacity {
            ndim: 3,
            capacity: 2
        }
    );
    let (shape, strides): ([usize; 2], [isize; 1]) = ([2, 4], [4]);
    let description = TensorDescription::cpu(&mut bytes, &[]).with_native_dims(&shape, &strides);
    assert_eq!(description.shape, Dims::Usize(&[2, 4]));
    assert_eq!(
        // SAFETY: refused before anything is read; the description covers live locals.
        unsafe { BorrowedTensor::<4>::from_description(&description) }.unwrap_err(),
        ExportError::StridesLength {
            ndim: 2,
            strides: 1
        }
    );
    let padded =
        TensorDescription::cpu(&mut bytes, &[8]).with_flags(DLPackFlags::IS_SUBBYTE_TYPE_PADDED);
    assert_eq!(
        // SAFETY: refused before anything is read; the description covers live locals.
        unsafe { BorrowedTensor::<1>::from_description(&padded) }.unwrap_err(),
        ExportError::FlagsNotRepresentable {
            flags: DLPackFlags::IS_SUBBYTE_TYPE_PADDED
        }
    );
}

#[test]
fn empty_and_scalar_slices_are_lent() {
    let none: [f64; 0] = [];
    let empty = BorrowedTensor::new(&none, [3, 0]).unwrap();
    let view_source = empty.dl_tensor();
    assert!(
        !view_source.data.is_null(),
        "an empty slice keeps its dangling, non-NULL pointer"
    );
    assert_eq!(view_source.view().as_slice::<f64>().unwrap(), [0.0; 0]);
    let one = [2.5f64];
    let scalar = BorrowedTensor::new(&one, []).unwrap();
    assert_eq!(scalar.dl_tensor().view().get::<f64>(&[]).unwrap(), 2.5);
}

#[test]
fn an_empty_lent_tensor_points_nowhere_past_its_slice() {
    // Nothing is reached, so the first element may be anywhere; the offset written is 0, as a
    // managed export writes it, never one past the slice.
    let values = [0u32; 4];
    let lent = BorrowedTensor::strided(&values, [0], [1], 1000).unwrap();
    assert_eq!(lent.dl_tensor().byte_offset, 0);
    assert_eq!(lent.dl_tensor().data.cast_const(), values.as_ptr().cast());
}

#[test]
fn lent_flags_a_bare_tensor_cannot_carry_are_all_named() {
    let mut bytes = [0u8; 2];
    let flags = DLPackFlags::READ_ONLY | DLPackFlags::IS_SUBBYTE_TYPE_PADDED;
    let description = TensorDescription::cpu(&mut bytes, &[2]).with_flags(flags);
    assert_eq!(
        // SAFETY: refused before anything is read; the description covers live locals.
        unsafe { BorrowedTensorMut::<1>::from_description(&description) }.unwrap_err(),
        ExportError::FlagsNotRepresentable { flags }
    );
    // A shared lend implies READ_ONLY, so only the padding is refused; IS_COPIED is dropped.
    let description = description.with_flags(flags | DLPackFlags::IS_COPIED);
    assert_eq!(
        // SAFETY: refused before anything is read; the description covers live locals.
        unsafe { BorrowedTensor::<1>::from_description(&description) }.unwrap_err(),
        ExportError::FlagsNotRepresentable {
            flags: DLPackFlags::IS_SUBBYTE_TYPE_PADDED
        }
    );
}

#[test]
#[cfg(target_pointer_width = "64")]
fn extents_that_do_not_fit_i64_are_refused_even_when_empty() {
    let mut bytes = [0u8; 4];
    let (shape, strides): ([usize; 2], [isize; 2]) = ([0, usize::MAX], [1, 1]);
    let description = TensorDescription::cpu(&mut bytes, &[]).with_native_dims(&shape, &strides);
    let expected = ExportError::Invalid(ImportError::SizeOverflow {
        dim: 1,
        extent: i64::MAX,
    });
    assert_eq!(
        // SAFETY: refused before anything is read; the description covers live locals.
        unsafe { BorrowedTensor::<2>::from_description(&description) }.unwrap_err(),
        expected
    );
}

#[test]
fn lent_mutable_memory_is_written_without_unsafe() {
    let mut values = [0i16; 4];
    let mut lent = BorrowedTensorMut::strided(&mut values, [2, 2], [1, 2], 0).unwrap();
    let mut raw = lent.dl_tensor_mut();
    let mut out = raw.view_mut();
    out.set(&[1, 0], 7i16).unwrap();
    *out.get_mut::<i16>(&[0, 1]).unwrap() = 9;
    assert_eq!(out.view().element_offsets(), (0, 3));
    assert_eq!(values, [0, 7, 9, 0]);
}

/// A strided tensor of `u32` over a 256-element buffer, described by its strides (`None`:
/// NULL, compact row-major) and its first element.
#[derive(Debug, Clone)]
struct Strided {
    first: usize,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
}

const BUFFER: usize = 256;

impl Strided {
    /// The element offsets (from the buffer's start) of every index, in row-major order: the
    /// slow, obvious walk that `iter` and `iter_mut` must agree with.
    fn offsets(&self) -> Vec<i64> {
        let count: i64 = self.shape.iter().product();
        let strides = self.strides.clone().unwrap_or_else(|| {
            let mut strides = vec![1i64; self.shape.len()];
            for d in (0..self.shape.len().saturating_sub(1)).rev() {
                strides[d] = strides[d + 1] * self.shape[d + 1];
            }
            strides
        });
        (0..count)
            .map(|mut linear| {
                let mut at = self.first as i64;
                for (&extent, &stride) in self.shape.iter().zip(&strides).rev() {
                    at += (linear % extent) * stride;
                    linear /= extent;
                }
                at
            })
            .collect()
    }

    /// The bare tensor over the buffer at `base` (shape and strides borrowed from `self`).
    fn tensor(&mut self, base: *mut u32) -> DLTensor {
        DLTensor {
            data: base.cast(),
            device: CPU,
            ndim: self.shape.len() as i32,
            dtype: u32::DTYPE,
            shape: self.shape.as_mut_ptr(),
            strides: self
                .strides
                .as_mut()
                .map_or(ptr::null_mut(), |strides| strides.as_mut_ptr()),
            byte_offset: (self.first * 4) as u64,
        }
    }
}

/// Up to 3 dimensions of extent 0..5 (rarely 0) whose elements lie in the buffer: random strides of
/// either sign (zero and interleaving ones too), compact row-major strides given explicitly
/// (the memory-order fast path; extent-1 dimensions with any stride), or NULL strides. An
/// extent-1 dimension's stride is sometimes `i64::MIN` or `i64::MAX`: the odometer adds and
/// removes it, wrapping.
fn strided() -> impl Strategy<Value = Strided> {
    let extent = prop_oneof![9 => 1i64..5, 1 => Just(0i64)];
    let dim = extent.prop_flat_map(|extent| {
        let stride = match extent {
            1 => prop_oneof![8 => -6i64..7, 1 => Just(i64::MIN), 1 => Just(i64::MAX)].boxed(),
            _ => (-6i64..7).boxed(),
        };
        (Just(extent), stride)
    });
    (
        prop::collection::vec(dim, 0..=3),
        prop_oneof![3 => Just(0usize), 1 => Just(1), 1 => Just(2)],
        0usize..BUFFER,
    )
        .prop_filter_map("fits the buffer", |(dims, mode, first)| {
            let (shape, random): (Vec<i64>, Vec<i64>) = dims.into_iter().unzip();
            let strides = match mode {
                0 => Some(random),
                1 => {
                    let mut strides = Vec::with_capacity(shape.len());
                    let mut step = 1i64;
                    for (d, &extent) in shape.iter().enumerate().rev() {
                        strides.push(if extent == 1 { random[d] } else { step });
                        step *= extent.max(1);
                    }
                    strides.reverse();
                    Some(strides)
                }
                _ => None,
            };
            let described = Strided {
                first,
                shape,
                strides,
            };
            let offsets = described.offsets();
            offsets
                .iter()
                .all(|&at| (0..BUFFER as i64).contains(&at))
                .then_some(described)
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 12 } else { 3000 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// `iter_mut` visits exactly the elements `iter` reads, in the same (row-major) order, each
    /// once, on the memory-order fast path and on the strided walk alike; both agree with the
    /// obvious walk; and a tensor whose strides may reach an element twice is refused (never
    /// one whose strides do reach an element twice).
    #[test]
    fn iter_mut_visits_what_iter_reads_in_the_same_order(mut described in strided()) {
        let mut buffer: Vec<u32> = (0..BUFFER as u32).collect();
        let base = buffer.as_mut_ptr();
        let expected = described.offsets();
        let mut tensor = described.tensor(base);

        // SAFETY: the tensor, its shape, strides and buffer are live locals, used only through
        // this view while it lives.
        let view = unsafe { TensorView::from_raw(&tensor) }.unwrap();
        let read: Vec<u32> = view.iter::<u32>().unwrap().collect();
        let slow: Vec<u32> = expected.iter().map(|&at| at as u32).collect();
        prop_assert_eq!(&read, &slow, "iter against the obvious walk");
        let may_overlap = view.may_overlap();
        let mut distinct = expected.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() != expected.len() {
            prop_assert!(may_overlap, "strides that reach an element twice must be refused");
        }

        // SAFETY: as above; the read view is no longer used.
        let mut out = unsafe { TensorViewMut::from_raw(&mut tensor) }.unwrap();
        if may_overlap {
            prop_assert_eq!(out.iter_mut::<u32>().unwrap_err(), AccessError::Overlapping);
            prop_assert_eq!(out.into_iter_mut::<u32>().unwrap_err(), AccessError::Overlapping);
            return Ok(());
        }
        let elements = out.iter_mut::<u32>().unwrap();
        prop_assert_eq!(elements.len(), expected.len());
        let mut visited = Vec::with_capacity(expected.len());
        for (k, element) in elements.enumerate() {
            visited.push(*element);
            *element = 1000 + k as u32;
        }
        prop_assert_eq!(&visited, &read, "iter_mut sees what iter read, in its order");
        // Each element was written once, by the index `iter` read it at; nothing else changed.
        for (k, &at) in expected.iter().enumerate() {
            prop_assert_eq!(buffer[at as usize], 1000 + k as u32);
        }
        let untouched = (0..BUFFER as u32).filter(|&i| distinct.binary_search(&i64::from(i)).is_err());
        for i in untouched {
            prop_assert_eq!(buffer[i as usize], i);
        }
    }
}

#[test]
fn a_strided_output_is_added_to_in_place_through_iter_mut() {
    // out += x with out = a[::2] and x = a[1::2]: two disjoint views of one buffer, both made
    // from one pointer (as a caller passing both halves of an array would).
    let mut values = [0.0f64, 1.0, 10.0, 11.0, 20.0, 21.0];
    let base = values.as_mut_ptr();
    let (mut out_shape, mut out_strides) = ([3i64], [2i64]);
    let (mut x_shape, mut x_strides) = ([3i64], [2i64]);
    let mut out = DLTensor {
        data: base.cast(),
        device: CPU,
        ndim: 1,
        dtype: f64::DTYPE,
        shape: out_shape.as_mut_ptr(),
        strides: out_strides.as_mut_ptr(),
        byte_offset: 0,
    };
    let x = DLTensor {
        shape: x_shape.as_mut_ptr(),
        strides: x_strides.as_mut_ptr(),
        byte_offset: 8,
        ..out
    };
    // SAFETY: the views reach disjoint elements of a live local, each used only through its
    // view while the views live.
    let (mut out_view, x_view) = unsafe {
        (
            TensorViewMut::from_raw(&mut out).unwrap(),
            TensorView::from_raw(&x).unwrap(),
        )
    };
    assert_eq!(
        out_view.as_mut_slice::<f64>(),
        Err(AccessError::NotContiguous),
        "no slice of a[::2]"
    );
    for (out, x) in out_view
        .iter_mut::<f64>()
        .unwrap()
        .zip(x_view.iter::<f64>().unwrap())
    {
        *out += x;
    }
    assert_eq!(values, [1.0, 1.0, 21.0, 11.0, 41.0, 21.0]);
}

#[test]
fn iter_mut_refuses_overlapping_strides_and_names_the_way_out() {
    // A broadcast row (a zero stride) and interleaving strides (2 x 2 over 3 elements).
    let mut one = [0u8; 3];
    for (shape, strides) in [([4i64, 1], [0i64, 1]), ([2, 2], [1, 1])] {
        let (mut shape, mut strides) = (shape, strides);
        let mut t = bare(&mut one, &mut shape, Some(&mut strides));
        // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
        let mut out = unsafe { TensorViewMut::from_raw(&mut t) }.unwrap();
        let error = out.iter_mut::<u8>().unwrap_err();
        assert_eq!(error, AccessError::Overlapping);
        let message = error.to_string();
        assert!(
            message.contains("get_mut") && message.contains("set"),
            "{message}"
        );
        // One element at a time works for any layout.
        *out.get_mut::<u8>(&[1, 0]).unwrap() += 1;
        // The dtype is checked before the layout.
        assert!(matches!(
            out.iter_mut::<i8>(),
            Err(AccessError::DtypeMismatch { .. })
        ));
        assert_eq!(
            out.into_iter_mut::<u8>().unwrap_err(),
            AccessError::Overlapping
        );
    }
    assert_eq!(one, [1, 1, 0]);
    assert!(AccessError::NotContiguous.to_string().contains("iter_mut"));
}

#[test]
fn iter_mut_of_scalars_and_empty_tensors() {
    let mut scalar = [5i32];
    let mut t = bare(&mut scalar, &mut [], None);
    // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
    let out = unsafe { TensorViewMut::from_raw(&mut t) }.unwrap();
    out.into_iter_mut::<i32>().unwrap().for_each(|x| *x *= 2);
    assert_eq!(scalar, [10]);

    // Empty: a zero stride on another dimension reaches nothing twice, and nothing is visited.
    let mut none = [0i32; 1];
    let (mut shape, mut strides) = ([0i64, 3], [0i64, 0]);
    let mut t = bare(&mut none, &mut shape, Some(&mut strides));
    // SAFETY: as above.
    let mut out = unsafe { TensorViewMut::from_raw(&mut t) }.unwrap();
    assert_eq!(out.iter_mut::<i32>().unwrap().len(), 0);
}
