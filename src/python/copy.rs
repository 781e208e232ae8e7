//! Copies of host-accessible tensors into Rust memory, for `copy=True` and `dl_device=CPU`.

use alloc::format;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;
use core::ptr;

use pyo3::exceptions::{PyBufferError, PyMemoryError};
use pyo3::PyResult;

use crate::dlpack::{
    host_accessible, ManagedStruct, ManagedTensor, TensorDescription, TensorOwner, TensorView,
};
use crate::raw::{kDLCPU, DLDataType, DLDevice, DLPackFlags};

/// Bytes of `shape` elements of `dtype` stored compactly (packed for sub-byte types), or
/// `None` for a negative extent or an overflow.
pub(crate) fn compact_bytes(shape: &[i64], dtype: DLDataType) -> Option<usize> {
    let bits = u64::from(dtype.bits) * u64::from(dtype.lanes);
    let total = shape.iter().try_fold(bits, |n, &extent| {
        n.checked_mul(u64::try_from(extent).ok()?)
    })?;
    usize::try_from(total.div_ceil(8)).ok()
}

/// The elements of a host-accessible tensor in row-major order, as bytes.
///
/// The tensor was validated at import, so every element reachable through its strides lies in
/// memory its producer keeps readable while we hold it; the copy reads it through raw pointers
/// (as NumPy's copies do, it races with a concurrent writer, which the producer must exclude).
pub(crate) fn gather(view: &TensorView<'_>) -> PyResult<Vec<u8>> {
    if !host_accessible(view.device()) {
        return Err(PyBufferError::new_err(format!(
            "cannot copy memory of device type {:?} to the CPU (no device runtime)",
            view.device().device_type
        )));
    }
    let size = view.byte_size();
    let mut out = vec![0u8; size];
    if size == 0 {
        return Ok(out);
    }
    let start = view.data_ptr().cast::<u8>().cast_const();
    if view.is_c_contiguous() {
        // SAFETY: validated: `size` bytes from the start are the contiguous elements, readable.
        unsafe { ptr::copy_nonoverlapping(start, out.as_mut_ptr(), size) };
        return Ok(out);
    }
    let dtype = view.dtype();
    let bits = usize::from(dtype.bits) * usize::from(dtype.lanes);
    if view.is_packed() || bits % 8 != 0 {
        return Err(PyBufferError::new_err(
            "cannot copy strided packed sub-byte elements",
        ));
    }
    let element = bits / 8;
    let shape = view.shape();
    let strides: Vec<i64> = view.strides().iter().collect();
    let mut index = vec![0i64; shape.len()];
    for chunk in out.chunks_exact_mut(element) {
        let offset: i64 = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
        // Validated reach: every index inside the shape addresses an element of the tensor.
        let source = start.wrapping_offset(offset as isize * element as isize);
        // SAFETY: `source` is an element of the tensor (validated reach), `element` bytes.
        unsafe { ptr::copy_nonoverlapping(source, chunk.as_mut_ptr(), element) };
        for dim in (0..shape.len()).rev() {
            index[dim] += 1;
            if index[dim] < shape[dim] {
                break;
            }
            index[dim] = 0;
        }
    }
    Ok(out)
}

/// CPU memory Rust owns, exported as a tensor: copies, `Tensor.from_bytes`, and the exchange
/// API's allocator.
pub(crate) struct HostTensor {
    /// 8-byte aligned storage for every DLPack element type up to 64-bit lanes.
    pub(crate) words: Vec<u64>,
    pub(crate) shape: Vec<i64>,
    /// `None`: row-major.
    pub(crate) strides: Option<Vec<i64>>,
    pub(crate) dtype: DLDataType,
    pub(crate) flags: DLPackFlags,
}

/// Zeroed words for `bytes` bytes, or `None` if the allocation fails.
pub(crate) fn zeroed_words(bytes: usize) -> Option<Vec<u64>> {
    let mut words = Vec::new();
    words.try_reserve_exact(bytes.div_ceil(8)).ok()?;
    words.resize(bytes.div_ceil(8), 0);
    Some(words)
}

// SAFETY: whoever builds a `HostTensor` checks that every element the shape and strides reach
// lies inside `words` (`copy_tensor`, `Tensor.from_bytes`, the allocator); the owner holds the
// words and nobody else touches them; `u64` storage is aligned for every element type.
unsafe impl TensorOwner for HostTensor {
    fn describe(&mut self) -> TensorDescription<'_> {
        let cpu = DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        };
        let description =
            TensorDescription::new(self.words.as_mut_ptr().cast(), cpu, self.dtype, &self.shape)
                .with_flags(self.flags);
        match &self.strides {
            Some(strides) => description.with_strides(strides),
            None => description,
        }
    }

    fn ndim(&mut self) -> usize {
        self.shape.len()
    }
}

/// A writable CPU copy of `view` with `flags` (`IS_COPIED` for versioned exports; legacy ones
/// cannot carry it).
pub(crate) fn copy_tensor<M: ManagedStruct>(
    view: &TensorView<'_>,
    flags: DLPackFlags,
) -> PyResult<ManagedTensor<M>> {
    let bytes = gather(view)?;
    let mut words = zeroed_words(bytes.len())
        .ok_or_else(|| PyMemoryError::new_err("cannot allocate the copy"))?;
    bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(&bytes);
    let owner = HostTensor {
        words,
        shape: view.shape().to_vec(),
        strides: None,
        dtype: view.dtype(),
        flags,
    };
    ManagedTensor::from_owner(owner).map_err(|error| PyBufferError::new_err(error.to_string()))
}
