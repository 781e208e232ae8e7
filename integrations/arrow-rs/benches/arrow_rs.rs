//! Exporting an arrow-rs `RecordBatch` of 1M rows (int64, float64 with nulls, utf8) as a C
//! struct array, then releasing it: through this crate (`dlpack_abi_arrow_rs::export_record_batch`, a
//! validated `Schema` and `Array`) against arrow-rs's own C Data path (`FFI_ArrowArray::new` and
//! `FFI_ArrowSchema::try_from`), measured in the same run. Nothing touches the data on either.
//!
//! Run with `cargo bench -p dlpack-abi-arrow-rs --bench arrow_rs`; the ratio is ours / arrow-rs.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::{
    Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, StructArray,
};
use arrow_schema::ffi::FFI_ArrowSchema;
use criterion::{criterion_group, criterion_main, Criterion};

fn batch(rows: usize) -> RecordBatch {
    let ids = Int64Array::from_iter_values(0..rows as i64);
    let values: Float64Array = (0..rows)
        .map(|i| (i % 7 != 0).then_some(i as f64))
        .collect();
    let names = StringArray::from_iter_values((0..rows).map(|i| format!("row {}", i % 1000)));
    RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as ArrayRef),
        ("value", Arc::new(values) as ArrayRef),
        ("name", Arc::new(names) as ArrayRef),
    ])
    .expect("a valid batch")
}

fn export(c: &mut Criterion) {
    let batch = batch(1_000_000);
    let mut group = c.benchmark_group("export-record-batch-1M");
    group.bench_function("dlpack-abi", |b| {
        b.iter(|| {
            let exported = dlpack_abi_arrow_rs::export_record_batch(black_box(&batch));
            black_box(exported.expect("exported"))
        })
    });
    group.bench_function("arrow-rs FFI", |b| {
        b.iter(|| {
            let data = StructArray::from(black_box(&batch).clone()).to_data();
            let array = FFI_ArrowArray::new(&data);
            let schema = FFI_ArrowSchema::try_from(data.data_type()).expect("exported");
            black_box((array, schema))
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(50)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = export
}
criterion_main!(benches);
