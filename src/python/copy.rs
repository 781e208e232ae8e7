//! Copies of host-accessible tensors into Rust memory, for `copy=True` and `dl_device=CPU`.

use alloc::format;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;
use core::ptr;

use pyo3::exceptions::{PyBufferError, PyMemoryError};
use pyo3::PyResult;

use crate::dlpack::{ManagedStruct, ManagedTensor, TensorDescription, TensorOwner, TensorView};
use crate::raw::{kDLCPU, DLDataType, DLDevice, DLPackFlags};

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

/// The alignment of every buffer the Python glue allocates, in bytes: what JAX requires for a
/// zero-copy import (`copy=False`), a cache line, and enough for every DLPack element type.
pub(crate) const HOST_ALIGN: usize = 64;

/// One aligned block of host storage.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([u8; HOST_ALIGN]);

// SAFETY: `Block` is `repr(C)` over a byte array whose size equals its alignment (no padding);
// zero is a valid value.
unsafe impl bytemuck::Zeroable for Block {}
// SAFETY: as above: no padding, every bit pattern is valid, `Copy` and `'static`.
unsafe impl bytemuck::Pod for Block {}

/// CPU memory Rust owns, exported as a tensor: copies, `Tensor.from_bytes`, and the exchange
/// API's allocator. Aligned to [`HOST_ALIGN`] bytes.
pub(crate) struct HostTensor {
    /// The storage, in aligned blocks.
    blocks: Vec<Block>,
    /// The bytes of `blocks` the tensor may reach (at most `HOST_ALIGN * blocks.len()`).
    len: usize,
    shape: Vec<i64>,
    /// `None`: row-major.
    strides: Option<Vec<i64>>,
    dtype: DLDataType,
    flags: DLPackFlags,
}

impl HostTensor {
    /// Zeroed storage for `len` bytes aligned to [`HOST_ALIGN`], or `None` if the allocation
    /// fails.
    pub(crate) fn zeroed(
        len: usize,
        shape: Vec<i64>,
        strides: Option<Vec<i64>>,
        dtype: DLDataType,
        flags: DLPackFlags,
    ) -> Option<Self> {
        let count = len.div_ceil(HOST_ALIGN);
        let mut blocks = Vec::new();
        blocks.try_reserve_exact(count).ok()?;
        blocks.resize(count, Block([0; HOST_ALIGN]));
        Some(Self {
            blocks,
            len,
            shape,
            strides,
            dtype,
            flags,
        })
    }

    /// The first `len` bytes of the storage, to fill.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut::<Block, u8>(&mut self.blocks)[..self.len]
    }
}

// SAFETY: `blocks` is the owner's own allocation of at least `len` bytes, which nothing else
// references; the export checks that every byte the shape and strides reach lies in the first
// `len` (so no constructor can under-allocate); 64-byte blocks are aligned for every element.
unsafe impl TensorOwner for HostTensor {
    fn describe(&mut self) -> TensorDescription<'_> {
        let cpu = DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        };
        // An empty `Vec` gives a dangling pointer aligned to 64: fine for an empty tensor.
        let data = self.blocks.as_mut_ptr().cast();
        let description = TensorDescription::new(data, self.len, cpu, self.dtype, &self.shape)
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
