//! DLPack tensors into candle: [`copy_tensor`], a copy (candle cannot wrap memory it does not
//! own).

use alloc::vec::Vec;
use core::convert::identity;

use candle_core::cpu_backend::CpuStorage;
use candle_core::op::BackpropOp;
use candle_core::{DType, Device, Storage, Tensor};
use float8::F8E4M3;

use dlpack_abi::dlpack::{AccessError, Element, TensorView};
use dlpack_abi::raw::kDLCPU;

use crate::dtype::{E4m3fn, E8m0fnu};
use crate::{candle_dtype, CandleError};

/// The elements of `view` in row-major order (through its strides and `byte_offset`), converted.
fn elements<T: Element, U>(
    view: &TensorView<'_>,
    convert: impl Fn(T) -> U,
) -> Result<Vec<U>, AccessError> {
    Ok(view.iter::<T>()?.map(convert).collect())
}

/// Copies a DLPack CPU tensor into a new candle CPU tensor of the same shape and dtype (candle
/// cannot wrap memory it does not own). Any strides (negative and zero ones too) and
/// `byte_offset` are honoured; the result is contiguous and owns its storage, so `view`'s tensor
/// may be dropped (its deleter run) right after.
///
/// # Errors
/// [`CandleError::UnsupportedDevice`] unless the tensor is on `kDLCPU`,
/// [`CandleError::VectorDtype`] or [`CandleError::UnsupportedDtype`] for an element type candle
/// has no dtype for, [`CandleError::Access`] when typed access refuses the tensor (misaligned
/// data, unknown flags), and [`CandleError::Candle`] if candle refuses the result.
///
/// ```
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_candle::copy_tensor;
///
/// // A 2 x 3 tensor whose columns run backwards.
/// let values = vec![0.5f64, 1.5, 2.5, 3.5, 4.5, 5.5];
/// let tensor = Export::new(values, &[2, 3]).first_element(2).strides(&[3, -1]).finish()?;
/// let imported = copy_tensor(&tensor.view())?;
/// drop(tensor); // candle has its own copy
/// assert_eq!(imported.to_vec2::<f64>()?, [[2.5, 1.5, 0.5], [5.5, 4.5, 3.5]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn copy_tensor(view: &TensorView<'_>) -> Result<Tensor, CandleError> {
    let device = view.device();
    if device.device_type != kDLCPU {
        return Err(CandleError::UnsupportedDevice(device));
    }
    let dtype = candle_dtype(view.dtype())?;
    // Validated at import: every extent is non-negative and fits `usize` (the size does).
    let shape: Vec<usize> = view
        .shape()
        .iter()
        .map(|&extent| usize::try_from(extent).unwrap_or(0))
        .collect();
    let cpu = &Device::Cpu;
    Ok(match dtype {
        DType::U8 => Tensor::from_vec(elements(view, identity::<u8>)?, shape, cpu)?,
        DType::U32 => Tensor::from_vec(elements(view, identity::<u32>)?, shape, cpu)?,
        DType::I16 => Tensor::from_vec(elements(view, identity::<i16>)?, shape, cpu)?,
        DType::I32 => Tensor::from_vec(elements(view, identity::<i32>)?, shape, cpu)?,
        DType::I64 => Tensor::from_vec(elements(view, identity::<i64>)?, shape, cpu)?,
        DType::BF16 => Tensor::from_vec(elements(view, identity::<half::bf16>)?, shape, cpu)?,
        DType::F16 => Tensor::from_vec(elements(view, identity::<half::f16>)?, shape, cpu)?,
        DType::F32 => Tensor::from_vec(elements(view, identity::<f32>)?, shape, cpu)?,
        DType::F64 => Tensor::from_vec(elements(view, identity::<f64>)?, shape, cpu)?,
        DType::F8E4M3 => {
            let values = elements(view, |byte: E4m3fn| F8E4M3::from_bits(byte.0))?;
            Tensor::from_vec(values, shape, cpu)?
        }
        DType::F8E8M0 => {
            // candle has no element type for it: the storage is its bytes.
            let bytes = elements(view, |byte: E8m0fnu| byte.0)?;
            let storage = Storage::Cpu(CpuStorage::F8E8M0(bytes));
            Tensor::from_storage(storage, shape, BackpropOp::none(), false)
        }
        other => return Err(CandleError::UnsupportedCandleDtype(other)),
    })
}
