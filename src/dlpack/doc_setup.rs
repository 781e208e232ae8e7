// Doc-test helpers, included by the examples in this module (not compiled into the crate).
// They stand for a C producer: each returns a tensor whose deleter frees everything.

use dlpack_abi::raw::*;

struct Producer {
    _data: Vec<f32>,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
}

/// Builds the producer's context (as a raw pointer, so that the pointers into it stay valid):
/// data 0.0, 1.0, ... covering every reachable element.
fn producer(shape: &[i64], strides: Option<&[i64]>) -> (*mut Producer, DLTensor) {
    let reach: i64 = match strides {
        Some(s) => shape.iter().zip(s).map(|(&e, &s)| (e - 1).max(0) * s).sum::<i64>() + 1,
        None => shape.iter().product(),
    };
    let ctx = Box::into_raw(Box::new(Producer {
        _data: (0..reach.max(1)).map(|i| i as f32).collect(),
        shape: shape.to_vec(),
        strides: strides.map(|s| s.to_vec()),
    }));
    let ctx_ref = unsafe { &mut *ctx };
    let tensor = DLTensor {
        data: ctx_ref._data.as_mut_ptr().cast(),
        device: DLDevice { device_type: kDLCPU, device_id: 0 },
        ndim: shape.len() as i32,
        dtype: DLDataType { code: kDLFloat, bits: 32, lanes: 1 },
        shape: ctx_ref.shape.as_mut_ptr(),
        strides: ctx_ref.strides.as_mut().map_or(std::ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: 0,
    };
    (ctx, tensor)
}

/// A 1.3 f32 CPU tensor with the given shape, strides (`None`: compact row-major, sent as
/// non-NULL strides) and flags.
fn c_tensor_f32(shape: &[i64], strides: Option<&[i64]>, flags: u64) -> *mut DLManagedTensorVersioned {
    unsafe extern "C" fn delete(t: *mut DLManagedTensorVersioned) {
        let t = unsafe { Box::from_raw(t) };
        drop(unsafe { Box::from_raw(t.manager_ctx.cast::<Producer>()) });
    }
    let compact: Vec<i64> = (0..shape.len()).map(|i| shape[i + 1..].iter().product()).collect();
    let (ctx, dl_tensor) = producer(shape, Some(strides.unwrap_or(&compact)));
    Box::into_raw(Box::new(DLManagedTensorVersioned {
        version: DLPackVersion::CURRENT,
        manager_ctx: ctx.cast(),
        deleter: Some(delete),
        flags,
        dl_tensor,
    }))
}

/// A legacy f32 CPU tensor with NULL strides (compact row-major).
fn c_legacy_f32(shape: &[i64]) -> *mut DLManagedTensor {
    unsafe extern "C" fn delete(t: *mut DLManagedTensor) {
        let t = unsafe { Box::from_raw(t) };
        drop(unsafe { Box::from_raw(t.manager_ctx.cast::<Producer>()) });
    }
    let (ctx, dl_tensor) = producer(shape, None);
    Box::into_raw(Box::new(DLManagedTensor {
        dl_tensor,
        manager_ctx: ctx.cast(),
        deleter: Some(delete),
    }))
}
