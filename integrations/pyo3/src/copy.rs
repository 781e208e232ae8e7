//! Copies of host-accessible tensors into Rust memory, for `copy=True` and `dl_device=CPU`.
#![allow(unsafe_code)]

use alloc::format;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;
use core::ptr;

use pyo3::exceptions::{PyBufferError, PyMemoryError};
use pyo3::PyResult;

use dlpack_abi::dlpack::{
    AlignedVec, ManagedStruct, ManagedTensor, TensorDescription, TensorOwner, TensorView,
};
use dlpack_abi::raw::{kDLCPU, DLDataType, DLDevice, DLPackFlags};

/// The elements of a host-accessible tensor in row-major order, as bytes.
///
/// The tensor was validated at import, so every element reachable through its strides lies in
/// memory its producer keeps readable while we hold it; the copy reads it through raw pointers
/// (as NumPy's copies do, it races with a concurrent writer, which the producer must exclude).
pub(crate) fn gather(view: &TensorView<'_>) -> PyResult<Vec<u8>> {
    if !view.device().device_type.is_host_accessible() {
        return Err(PyBufferError::new_err(format!(
            "cannot copy memory on {} to the CPU (no device runtime)",
            view.device()
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
    let Some(element) = view.element_bytes() else {
        return Err(PyBufferError::new_err(
            "cannot copy strided packed sub-byte elements",
        ));
    };
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
/// API's allocator. Aligned to [`HOST_ALIGNMENT`](dlpack_abi::dlpack::HOST_ALIGNMENT) bytes.
pub(crate) struct HostTensor {
    /// The bytes the tensor may reach.
    bytes: AlignedVec<u8>,
    shape: Vec<i64>,
    /// `None`: row-major.
    strides: Option<Vec<i64>>,
    dtype: DLDataType,
    flags: DLPackFlags,
}

impl HostTensor {
    /// Zeroed storage for `len` bytes aligned to [`HOST_ALIGNMENT`](dlpack_abi::dlpack::HOST_ALIGNMENT), or `None` if the
    /// allocation fails.
    pub(crate) fn zeroed(
        len: usize,
        shape: Vec<i64>,
        strides: Option<Vec<i64>>,
        dtype: DLDataType,
        flags: DLPackFlags,
    ) -> Option<Self> {
        Some(Self {
            bytes: AlignedVec::try_zeroed(len)?,
            shape,
            strides,
            dtype,
            flags,
        })
    }

    /// The first `len` bytes of the storage, to fill.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        self.bytes.as_mut_slice()
    }
}

// SAFETY: `bytes` is the owner's own allocation, which nothing else references; the export
// checks that every byte the shape and strides reach lies in it (so no constructor can
// under-allocate); 64-byte alignment suits every element.
unsafe impl TensorOwner for HostTensor {
    fn describe(&mut self) -> TensorDescription<'_> {
        let cpu = DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        };
        // No bytes give a dangling pointer aligned to 64: fine for an empty tensor.
        let len = self.bytes.len();
        let data = self.bytes.as_mut_slice().as_mut_ptr().cast();
        let description =
            TensorDescription::new(data, len, cpu, self.dtype, &self.shape).with_flags(self.flags);
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
    let mut owner = HostTensor::zeroed(
        bytes.len(),
        view.shape().to_vec(),
        None,
        view.dtype(),
        flags,
    )
    .ok_or_else(|| PyMemoryError::new_err("cannot allocate the copy"))?;
    owner.bytes_mut().copy_from_slice(&bytes);
    ManagedTensor::from_owner(owner).map_err(|error| PyBufferError::new_err(error.to_string()))
}
