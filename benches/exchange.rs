//! One DLPack exchange: export a `Vec<f32>` → hand the raw pointer over → import with full
//! validation → typed slice → drop (the deleter frees the export). Measured for 1, 1 000,
//! 1 000 000 and 100 000 000 elements, with the import that learns the element type at the slice
//! (`dlpack-abi`: `VersionedTensor::from_raw`, then `as_slice::<f32>`) and with the one that
//! knows it from the start (`dlpack-abi-typed`: `HostSlice::<f32>::from_raw`), against, in the
//! same run:
//!
//! - `floor`: one heap allocation and free of the size of our export's allocation (managed struct,
//!   context and the shape/strides arrays), the least any exporter that allocates must pay;
//! - `by-hand`: the same exchange written by hand (`exchange/by_hand.rs`): one allocation, the
//!   same checks on this path as bare branches, no error values, no cached metadata, the element
//!   type fixed at `f32`; what any library could reach with these checks kept;
//! - `dlpark`: dlpark 0.10's export (`Dynamic::compact(..).initialize(Box::new(vec))`) and import
//!   (`Managed::from_raw`, `validate`, `cpu_slice`).
//!
//! The data is one `Vec<f32>` per size, made before timing. The exporters own a `Lent` view of it
//! (pointer and length; dropping it does nothing), so that neither the data's allocation nor its
//! free (a 400 MB `munmap` at 10^8 elements) is timed, for either crate: both export exactly the
//! same owner. `Vec<f32>` itself goes through the same code (`HostBuffer for Vec` is the same
//! three fields); `dlpack-abi-vec` times it with the vector freed by the deleter, for the sizes
//! where freeing is cheap.
//!
//! Run with `cargo bench --bench exchange`; `scripts/bench_table.py` turns criterion's medians
//! into the table in BENCHMARKS.md.

use std::alloc::{alloc, dealloc, Layout};
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use dlpack_abi::dlpack::{Export, HostBuffer, HostMemory, HostSlice, VersionedTensor};
use dlpack_abi::raw::DLManagedTensorVersioned;

#[path = "exchange/by_hand.rs"]
mod by_hand;

/// A view of the benchmark's vector, lent to the exporter; dropping it does nothing.
#[derive(Clone, Copy)]
struct Lent {
    start: *mut f32,
    len: usize,
}

// SAFETY: the vector outlives every export (each is dropped within its iteration), and the
// benchmark does not touch it while an export is alive.
unsafe impl Send for Lent {}

// SAFETY: as above: `len` initialised, aligned elements that nothing else accesses meanwhile.
unsafe impl HostBuffer for Lent {
    type Element = f32;
    fn memory(&mut self) -> HostMemory<f32> {
        HostMemory {
            start: self.start,
            len: self.len,
            read_only: false,
        }
    }
}

#[inline(always)]
fn ours<B: HostBuffer<Element = f32>>(buffer: B, shape: &[i64]) {
    let raw = Export::new(buffer, shape).finish().unwrap().into_raw();
    // SAFETY: a fresh export, handed over once.
    let tensor = unsafe { VersionedTensor::from_raw(black_box(raw)) }.unwrap();
    let values = tensor.view().as_slice::<f32>().unwrap();
    black_box((values.as_ptr(), values.len()));
}

/// `ours` with the typed import: `HostSlice::from_raw` validates knowing the element type.
#[inline(always)]
fn ours_typed<B: HostBuffer<Element = f32>>(buffer: B, shape: &[i64]) {
    let raw = Export::new(buffer, shape).finish().unwrap().into_raw();
    // SAFETY: a fresh export, handed over once.
    let values = unsafe { HostSlice::<f32>::from_raw(black_box(raw)) }.unwrap();
    black_box((values.as_ptr(), values.len()));
}

#[inline(always)]
fn dlpark(lent: Lent, shape: &[i64]) {
    use dlpark::ffi::{DLDataType, DLDevice};
    use dlpark::metadata::Dynamic;
    use dlpark::versioned;

    let mut initialized = Dynamic::compact(shape).initialize(Box::new(lent)).unwrap();
    initialized
        .set_data(lent.start.cast())
        .set_dtype(DLDataType::F32)
        .set_device(DLDevice::CPU);
    // SAFETY: the description covers exactly the lent vector, alive for the whole iteration.
    let exported: versioned::Dlpack = unsafe { initialized.finish() };
    let raw = exported.into_raw();
    // SAFETY: a fresh export, handed over once.
    let tensor = unsafe { versioned::Dlpack::from_raw(black_box(raw)) }.unwrap();
    let view = tensor.validate().unwrap();
    // SAFETY: the export's own elements, alive while `tensor` is.
    let values = unsafe { view.cpu_slice::<f32>() }.unwrap();
    black_box((values.as_ptr(), values.len()));
}

/// The size of our export's one allocation for a 1-D tensor: the managed struct, the layout the
/// deleter frees with, the owner, and shape + strides.
fn floor_layout() -> Layout {
    let context = std::mem::size_of::<DLManagedTensorVersioned>()
        + std::mem::size_of::<Layout>()
        + std::mem::size_of::<Lent>();
    Layout::from_size_align(context + 2 * 8, 8).unwrap()
}

#[inline(always)]
fn floor(layout: Layout) {
    // SAFETY: a non-zero-size layout; the block is freed with the same layout.
    unsafe {
        let block = black_box(alloc(layout));
        assert!(!block.is_null());
        dealloc(block, layout);
    }
}

fn exchange(c: &mut Criterion) {
    let layout = floor_layout();
    let mut group = c.benchmark_group("exchange");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for elements in [1usize, 1_000, 1_000_000, 100_000_000] {
        let mut values = vec![1.0f32; elements];
        let lent = Lent {
            start: values.as_mut_ptr(),
            len: values.len(),
        };
        let shape = [elements as i64];
        group.bench_function(BenchmarkId::new("floor", elements), |b| {
            b.iter(|| floor(layout))
        });
        group.bench_function(BenchmarkId::new("dlpack-abi", elements), |b| {
            b.iter(|| ours(lent, black_box(&shape)))
        });
        group.bench_function(BenchmarkId::new("dlpack-abi-typed", elements), |b| {
            b.iter(|| ours_typed(lent, black_box(&shape)))
        });
        group.bench_function(BenchmarkId::new("by-hand", elements), |b| {
            b.iter(|| by_hand::exchange(lent, black_box(&shape)))
        });
        group.bench_function(BenchmarkId::new("dlpark", elements), |b| {
            b.iter(|| dlpark(lent, black_box(&shape)))
        });
        if elements <= 1_000 {
            group.bench_function(BenchmarkId::new("dlpack-abi-vec", elements), |b| {
                b.iter_batched(
                    || vec![1.0f32; elements],
                    |vec| ours(vec, black_box(&shape)),
                    BatchSize::SmallInput,
                )
            });
        }
        drop(values);
    }
    group.finish();
}

criterion_group!(benches, exchange);
criterion_main!(benches);
