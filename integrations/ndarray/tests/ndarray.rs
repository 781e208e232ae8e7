//! ndarray ⇄ DLPack, zero-copy, as properties over random shapes, slices (negative steps too)
//! and transposes: element-wise equal, at the same address, and the owner freed once. A small
//! budget under Miri.

use std::cell::Cell;

use dlpack_abi::dlpack::{AccessError, BorrowedTensor, TensorView, TensorViewMut};
use dlpack_abi::raw::DLPackFlags;
use dlpack_abi_ndarray::{
    export_array, lend_array, lend_array_mut, view_array, view_array_as, view_array_mut,
};
use ndarray::{ArcArray, Array, ArrayD, Ix2, IxDyn, Slice};
use proptest::prelude::*;
use proptest::test_runner::Config;

thread_local! {
    /// Bytes this thread's allocations hold (see `Counting`).
    static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
}

/// Counts the bytes each thread's allocations hold (`LIVE_BYTES`), so that a test can see a
/// leak, or a free, on its own thread.
struct Counting;

/// A size in bytes as a count: an allocation's size fits `isize`.
fn bytes(layout: std::alloc::Layout) -> isize {
    isize::try_from(layout.size()).unwrap_or(isize::MAX)
}

// SAFETY: forwards every call to the system allocator unchanged; the counter is a `const`
// thread-local `Cell` (no allocation, no destructor).
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = LIVE_BYTES.try_with(|live| live.set(live.get() + bytes(layout)));
        // SAFETY: the caller's contract, forwarded.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        let _ = LIVE_BYTES.try_with(|live| live.set(live.get() - bytes(layout)));
        // SAFETY: the caller's contract, forwarded.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// A random array layout: extents, then per axis a slice (start, end, step; negative steps run
/// backwards) and a permutation of the axes.
#[derive(Debug, Clone)]
struct Layout {
    shape: Vec<usize>,
    slices: Vec<(usize, usize, isize)>,
    order: Vec<usize>,
}

fn layouts() -> impl Strategy<Value = Layout> {
    prop::collection::vec(0usize..5, 0..4).prop_flat_map(|shape| {
        let ndim = shape.len();
        let slices = shape
            .iter()
            .map(|&extent| {
                (
                    0..=extent,
                    0..=extent,
                    prop_oneof![-3isize..=-1, 1isize..=3],
                )
            })
            .collect::<Vec<_>>();
        let order = Just((0..ndim).collect::<Vec<_>>()).prop_shuffle();
        (Just(shape), slices, order).prop_map(|(shape, slices, order)| Layout {
            shape,
            slices: slices
                .into_iter()
                .map(|(a, b, s)| (a.min(b), a.max(b), s))
                .collect(),
            order,
        })
    })
}

/// `0..n` in the layout's shape, sliced and transposed: the buffer stays the original one.
fn array(layout: &Layout) -> ArrayD<i32> {
    let count: usize = layout.shape.iter().product();
    let values: Vec<i32> = (0..count as i32).collect();
    let mut array = Array::from_shape_vec(IxDyn(&layout.shape), values).unwrap();
    for (axis, &(start, end, step)) in layout.slices.iter().enumerate() {
        let slice = Slice::new(start as isize, Some(end as isize), step);
        array.slice_axis_inplace(ndarray::Axis(axis), slice);
    }
    array.permuted_axes(IxDyn(&layout.order))
}

fn config() -> Config {
    Config {
        cases: if cfg!(miri) { 6 } else { 256 },
        failure_persistence: None,
        ..Config::default()
    }
}

fn live() -> isize {
    LIVE_BYTES.with(Cell::get)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn owned_arrays_round_trip_in_place_and_are_freed_once(layout in layouts()) {
        let array = array(&layout);
        let expected = array.clone();
        let address = array.as_ptr();
        let buffer_bytes = layout.shape.iter().product::<usize>() * 4;
        let before = live();
        let tensor = export_array(array).unwrap();
        let view = tensor.view();
        let seen = view_array::<i32, IxDyn>(&view).unwrap();
        prop_assert_eq!(&seen, &expected);
        if !expected.is_empty() {
            prop_assert_eq!(seen.as_ptr(), address);
        }
        prop_assert_eq!(view.flags(), DLPackFlags::empty());
        drop(tensor);
        prop_assert_eq!(live(), before - buffer_bytes as isize, "the array and the block freed");
    }

    #[test]
    fn views_are_lent_and_read_back_in_place(layout in layouts()) {
        let array = array(&layout);
        let view = array.view();
        let lent = lend_array::<4, _, _>(&view).unwrap();
        let raw = lent.dl_tensor();
        // As C would pass it back: a bare `const DLTensor*`.
        // SAFETY: a lent tensor, validated, whose memory is borrowed for as long as the view lives.
        let again = unsafe { TensorView::from_raw(raw.as_ptr()) }.unwrap();
        let seen = view_array::<i32, IxDyn>(&again).unwrap();
        prop_assert_eq!(&seen, &view);
        if !view.is_empty() {
            prop_assert_eq!(seen.as_ptr(), view.as_ptr());
            prop_assert_eq!(again.typed_ptr::<i32>().unwrap(), view.as_ptr());
        }
        prop_assert!(again.iter::<i32>().unwrap().eq(view.iter().copied()));
    }

    #[test]
    fn converted_arrays_are_copies_and_the_same_dtype_is_the_same_view(layout in layouts()) {
        let array = array(&layout);
        let view = array.view();
        let lent = lend_array::<4, _, _>(&view).unwrap();
        let raw = lent.dl_tensor();
        let again = raw.view();
        let converted = view_array_as::<f64, IxDyn>(&again).unwrap();
        prop_assert!(converted.is_owned() && converted.is_standard_layout());
        prop_assert_eq!(&converted, &view.mapv(f64::from));
        let same = view_array_as::<i32, IxDyn>(&again).unwrap();
        prop_assert!(same.is_view());
        prop_assert_eq!(&same, &view);
        if !view.is_empty() {
            prop_assert_eq!(same.as_ptr(), view.as_ptr());
        }
    }

    #[test]
    fn mutable_views_are_written_in_place(layout in layouts()) {
        let mut array = array(&layout);
        let mut expected = array.clone();
        expected.mapv_inplace(|x| -x - 1);
        let mut view = array.view_mut();
        let mut lent = lend_array_mut::<4, _, _>(&mut view).unwrap();
        let mut raw = lent.dl_tensor_mut();
        // SAFETY: a lent tensor, validated, whose memory is borrowed for as long as the view lives.
        let mut out = unsafe { TensorViewMut::from_raw(raw.as_mut_ptr()) }.unwrap();
        view_array_mut::<i32, IxDyn>(&mut out).unwrap().mapv_inplace(|x| -x - 1);
        prop_assert_eq!(array, expected);
    }
}

#[test]
fn converted_arrays_check_the_dimension_and_the_dtype() {
    let values = [1u16, 2, 3, 4];
    let lent = BorrowedTensor::<2>::new(&values, [2, 2]).unwrap();
    let raw = lent.dl_tensor();
    let error = view_array_as::<f64, ndarray::Ix1>(&raw.view()).unwrap_err();
    assert_eq!(
        error,
        AccessError::DimensionMismatch {
            ndim: 2,
            expected: 1
        }
    );
    let error = view_array_as::<i8, Ix2>(&raw.view()).unwrap_err();
    assert!(
        matches!(error, AccessError::UnsupportedDtype { supported, .. } if supported.len() == 1)
    );
    let wide = view_array_as::<u64, Ix2>(&raw.view()).unwrap();
    assert_eq!(wide, ndarray::array![[1u64, 2], [3, 4]]);
}

#[test]
fn shared_arc_arrays_are_exported_read_only() {
    let unique: ArcArray<f32, Ix2> = ArcArray::zeros((2, 2));
    let tensor = export_array(unique).unwrap();
    assert_eq!(tensor.view().flags(), DLPackFlags::empty());

    let shared: ArcArray<f32, Ix2> = ArcArray::zeros((2, 2));
    let holder = shared.clone();
    let tensor = export_array(shared).unwrap();
    assert_eq!(tensor.view().flags(), DLPackFlags::READ_ONLY);
    assert_eq!(
        view_array::<f32, Ix2>(&tensor.view()).unwrap().as_ptr(),
        holder.as_ptr()
    );
}

#[test]
fn what_ndarray_cannot_represent_is_refused() {
    // A zero stride reaches one element from every index: readable, never mutably viewed.
    let mut one = [3i8];
    let mut shape = [4i64];
    let mut strides = [0i64];
    let mut raw = dlpack_abi::raw::DLTensor {
        data: one.as_mut_ptr().cast(),
        device: dlpack_abi::raw::DLDevice {
            device_type: dlpack_abi::raw::kDLCPU,
            device_id: 0,
        },
        ndim: 1,
        dtype: <i8 as dlpack_abi::dlpack::Element>::DTYPE,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
    let view = unsafe { TensorView::from_raw(&raw) }.unwrap();
    assert_eq!(
        view_array::<i8, IxDyn>(&view)
            .unwrap()
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [3, 3, 3, 3]
    );
    assert_eq!(
        view_array::<i8, Ix2>(&view).unwrap_err(),
        AccessError::DimensionMismatch {
            ndim: 1,
            expected: 2
        }
    );
    // SAFETY: the tensor, its shape, strides and data are live locals, used only through the view while it lives.
    let mut out = unsafe { TensorViewMut::from_raw(&mut raw) }.unwrap();
    assert_eq!(
        view_array_mut::<i8, IxDyn>(&mut out).unwrap_err(),
        AccessError::Overlapping
    );
    assert!(matches!(
        view_array_mut::<u8, IxDyn>(&mut out),
        Err(AccessError::DtypeMismatch { .. })
    ));
}
