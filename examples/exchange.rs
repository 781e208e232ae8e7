//! A full DLPack exchange: Rust exports a `Vec<f32>` without copying it, hands the
//! `DLManagedTensorVersioned*` through a C-ABI function (where a C, C++ or Python library would
//! receive it), and that consumer imports it back, validates it, reads it and drops it. The
//! deleter runs exactly once and frees the vector.
//!
//! Run with `cargo run --example exchange`.

use std::sync::atomic::{AtomicUsize, Ordering};

use dlpack_abi::dlpack::{Export, HostBuffer, HostMemory, TensorError, VersionedTensor};
use dlpack_abi::raw::DLManagedTensorVersioned;

/// How many times an exported vector was dropped.
static DROPS: AtomicUsize = AtomicUsize::new(0);

/// A `Vec<f32>` that reports its drop (a plain `Vec` works the same way, silently).
struct Tracked(Vec<f32>);

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
        println!(
            "deleter: the owner is dropped, its {} floats freed",
            self.0.len()
        );
    }
}

// SAFETY: reports the vector's own elements, which only this buffer holds.
unsafe impl HostBuffer for Tracked {
    type Element = f32;
    fn memory(&mut self) -> HostMemory<f32> {
        self.0.memory()
    }
}

/// The consumer: any library that speaks the DLPack C ABI. It takes ownership of `tensor`.
///
/// # Safety
/// `tensor` is NULL or a live tensor that the caller hands over.
unsafe extern "C" fn consume(tensor: *mut DLManagedTensorVersioned) -> f64 {
    // SAFETY: the caller hands the tensor over.
    let tensor = match unsafe { VersionedTensor::from_raw(tensor) } {
        Ok(tensor) => tensor,
        Err(error) => {
            println!("consumer: refused: {error}");
            return f64::NAN;
        }
    };
    let view = tensor.view();
    println!(
        "consumer: version {:?}, shape {:?}, strides {:?}, {:?}, flags {:?}",
        view.version().map(|v| (v.major, v.minor)),
        view.shape(),
        view.strides(),
        view.dtype(),
        view.flags()
    );
    let Ok(values) = view.as_slice::<f32>() else {
        return f64::NAN;
    };
    println!("consumer: data at {:p}: {values:?}", values.as_ptr());
    values.iter().copied().map(f64::from).sum()
} // the tensor drops here: its deleter runs

fn main() -> Result<(), TensorError> {
    let values: Vec<f32> = (1..=6).map(|v| v as f32).collect();
    println!("producer: data at {:p}", values.as_ptr());

    // One allocation (managed struct + owner + shape and strides); the data is not copied.
    let tensor = Export::new(Tracked(values), &[2, 3]).finish()?;
    let raw: *mut DLManagedTensorVersioned = tensor.into_raw();

    // Through the C ABI, as a foreign library would be called.
    let consumer: unsafe extern "C" fn(*mut DLManagedTensorVersioned) -> f64 = consume;
    // SAFETY: `raw` is a fresh export, handed over once.
    let sum = unsafe { consumer(raw) };

    println!(
        "producer: sum {sum}, owner dropped {} time(s)",
        DROPS.load(Ordering::SeqCst)
    );
    assert_eq!(sum, 21.0);
    assert_eq!(DROPS.load(Ordering::SeqCst), 1);
    Ok(())
}
