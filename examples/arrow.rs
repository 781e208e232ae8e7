//! DLPack -> Arrow -> C ABI -> Arrow -> DLPack, without copying: a `Vec<f32>` tensor becomes an
//! `arrow.fixed_shape_tensor` array, crosses an `extern "C"` boundary as `ArrowSchema` and
//! `ArrowDeviceArray`, is imported and validated, bridged back to a read-only DLPack tensor,
//! and every owner is freed exactly once.
//!
//! ```sh
//! cargo run --example arrow
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};

use dlpack_abi::arrow::{DeviceArray, Schema};
use dlpack_abi::dlpack::{TensorDescription, TensorOwner, VersionedTensor};
use dlpack_abi::raw::{ArrowDeviceArray, ArrowSchema};

static FREED: AtomicUsize = AtomicUsize::new(0);

/// The tensor's memory; counts its own drop.
struct Pixels {
    values: Vec<f32>,
    shape: [i64; 3],
}

impl Drop for Pixels {
    fn drop(&mut self) {
        FREED.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: `values` is the owner's own allocation, kept until it is dropped, and nothing else
// references it.
unsafe impl TensorOwner for Pixels {
    fn describe(&mut self) -> TensorDescription<'_> {
        TensorDescription::cpu(&mut self.values, &self.shape)
    }
}

/// Stands for a C consumer: takes the structs by pointer, as C would.
unsafe extern "C" fn consume(schema: *mut ArrowSchema, array: *mut ArrowDeviceArray) -> f32 {
    // SAFETY: the caller hands over a valid schema and device array it no longer uses.
    let schema = unsafe { Schema::from_raw(schema) }.expect("schema");
    // SAFETY: as above; the array matches the schema.
    let array = unsafe { DeviceArray::from_raw(array, schema.view()) }.expect("array");
    let view = array.view(schema.view()).expect("view");
    println!(
        "C side: {} cells of shape {:?}",
        view.len(),
        schema
            .view()
            .fixed_shape_tensor()
            .map(|t| t.shape().to_vec())
    );
    let tensor = array.into_tensor(schema.view()).expect("bridge back");
    println!(
        "back in DLPack: shape {:?}, strides {:?}, flags {:?}, data {:p}",
        tensor.view().shape(),
        tensor.view().strides().as_slice(),
        tensor.view().flags(),
        tensor.view().data_ptr()
    );
    tensor.view().iter::<f32>().expect("host f32").sum()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pixels = Pixels {
        values: (0..24).map(|v| v as f32).collect(),
        shape: [2, 3, 4],
    };
    let tensor = VersionedTensor::from_owner(pixels)?;
    println!(
        "DLPack tensor: shape {:?}, data {:p}",
        tensor.view().shape(),
        tensor.view().data_ptr()
    );

    let (schema, array) = DeviceArray::from_tensor(tensor)?;
    let mut c_schema = schema.export()?.into_raw();
    let mut c_array = array.into_raw();
    // SAFETY: both structs are valid and handed over.
    let sum = unsafe { consume(&mut c_schema, &mut c_array) };
    assert!(
        c_schema.release.is_none() && c_array.array.release.is_none(),
        "moved out"
    );
    println!(
        "sum {sum}; owner freed {} time(s)",
        FREED.load(Ordering::SeqCst)
    );
    assert_eq!(sum, (0..24).sum::<i32>() as f32);
    assert_eq!(FREED.load(Ordering::SeqCst), 1);
    Ok(())
}
