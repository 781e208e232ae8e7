//! A borrowed `DLTensor`, as a kernel receives it: validate it (`TensorView::from_raw`) and take
//! the typed slice (`as_slice::<f32>`), against the floor of reading the raw fields into a slice
//! with no checks at all (what an unchecked kernel does). Both run on the same C-contiguous
//! tensor, for 1, 2 and 4 dimensions; the cost does not depend on the number of elements.
//!
//! A second group times the strided iterator over a C-contiguous 256 x 256 f32 tensor
//! (`iter::<f32>()`, folded into a sum) against folding its slice (`as_slice::<f32>()`), the
//! floor for reading every element in order.
//!
//! Run with `cargo bench --bench borrowed`; the ratio is ours / floor, per shape.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use dlpack_abi::dlpack::{Element, TensorView};
use dlpack_abi::raw::{kDLCPU, DLDevice, DLTensor};

/// The floor: `data + byte_offset` as `*const f32` and the product of the extents, unchecked.
///
/// # Safety
/// `t` is a valid, C-contiguous f32 tensor on the CPU.
#[inline(never)]
unsafe fn raw_slice(t: &DLTensor) -> &[f32] {
    let mut elements = 1usize;
    for dim in 0..t.ndim as usize {
        // SAFETY: `shape` holds `ndim` extents (the caller's contract).
        elements *= unsafe { *t.shape.add(dim) } as usize;
    }
    let start = t
        .data
        .cast::<u8>()
        .wrapping_add(t.byte_offset as usize)
        .cast::<f32>();
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(start, elements) }
}

/// Ours: full validation, then the checked slice.
#[inline(never)]
fn checked_slice(t: &DLTensor) -> &[f32] {
    // SAFETY: `t`, its shape, strides and data outlive the returned slice and are not written.
    let view = unsafe { TensorView::from_raw(t) }.unwrap();
    view.as_slice::<f32>().unwrap()
}

fn borrowed(c: &mut Criterion) {
    let mut group = c.benchmark_group("borrowed");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let mut values = vec![1.0f32; 1024];
    for shape in [vec![1024i64], vec![32, 32], vec![4, 4, 8, 8]] {
        let mut shape = shape;
        let mut strides: Vec<i64> = (0..shape.len())
            .map(|d| shape[d + 1..].iter().product())
            .collect();
        let tensor = DLTensor {
            data: values.as_mut_ptr().cast(),
            device: DLDevice {
                device_type: kDLCPU,
                device_id: 0,
            },
            ndim: shape.len() as i32,
            dtype: f32::DTYPE,
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            byte_offset: 0,
        };
        let ndim = shape.len();
        group.bench_with_input(BenchmarkId::new("floor", ndim), &tensor, |b, t| {
            // SAFETY: a valid C-contiguous f32 CPU tensor.
            b.iter(|| black_box(unsafe { raw_slice(black_box(t)) }).len())
        });
        group.bench_with_input(BenchmarkId::new("dlpack-abi", ndim), &tensor, |b, t| {
            b.iter(|| black_box(checked_slice(black_box(t))).len())
        });
    }
    group.finish();
}

fn iterate(c: &mut Criterion) {
    let mut group = c.benchmark_group("iterate");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let mut values: Vec<f32> = (0..65536).map(|i| i as f32).collect();
    let (mut shape, mut strides) = ([256i64, 256], [256i64, 1]);
    let tensor = DLTensor {
        data: values.as_mut_ptr().cast(),
        device: DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        },
        ndim: 2,
        dtype: f32::DTYPE,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    // SAFETY: the tensor, its shape, strides and data outlive the view and are not written.
    let view = unsafe { TensorView::from_raw(&tensor) }.unwrap();
    group.bench_function("slice", |b| {
        b.iter(|| {
            let slice = black_box(view).as_slice::<f32>().unwrap();
            slice.iter().fold(0.0f32, |sum, x| sum + x)
        })
    });
    group.bench_function("dlpack-abi", |b| {
        b.iter(|| {
            let elements = black_box(view).iter::<f32>().unwrap();
            elements.fold(0.0f32, |sum, x| sum + x)
        })
    });
    group.finish();
}

criterion_group!(benches, borrowed, iterate);
criterion_main!(benches);
