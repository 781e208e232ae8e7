//! `TensorData` out as a DLPack tensor: its `Bytes` become the export's owner.
#![allow(unsafe_code)]

use alloc::vec::Vec;
use core::ptr;

use burn_std::{Bytes, Reader, TensorData, Writer};

use crate::{dlpack_dtype, BurnError};
use dlpack_abi::dlpack::{TensorDescription, TensorOwner, VersionedTensor};
use dlpack_abi::raw::{kDLCPU, DLDataType, DLDevice, DLPackFlags};

/// burn's bytes, with what the export says about them.
struct DataOwner {
    /// The elements, row-major; dropped by the deleter.
    bytes: Bytes,
    /// The shape, as DLPack's `i64`s.
    shape: Vec<i64>,
    dtype: DLDataType,
    /// burn holds the bytes alone (a write needs no copy): the export is writable and
    /// `IS_COPIED`. Otherwise shared (copy-on-write in burn) or materialised from a file or
    /// device: `READ_ONLY`.
    exclusive: bool,
}

// SAFETY: the description states the bytes `Bytes` itself hands out for its initialised length:
// through `write` without a copy (so burn holds them alone, and nothing else reads or writes
// them while the export owns the `Bytes`; the export is then the one way to them: `IS_COPIED`),
// or through `read`, marked `READ_ONLY` (burn never writes shared bytes in place: it copies on
// write). Either allocation is owned by the `Bytes`' controller, outside the `Bytes` itself,
// so moving the owner does not move it, and it lives until the `Bytes` drops. A failed access
// states no buffer, which the export refuses.
unsafe impl TensorOwner for DataOwner {
    fn describe(&mut self) -> TensorDescription<'_> {
        let (data, len, flags) = if self.exclusive {
            match self.bytes.write(Writer::new().no_copy()) {
                Ok(bytes) => (bytes.as_mut_ptr(), bytes.len(), DLPackFlags::IS_COPIED),
                Err(_) => (ptr::null_mut(), 0, DLPackFlags::IS_COPIED),
            }
        } else {
            // Host-resident now (`export_tensor_data` read it): no copy is made here.
            match self.bytes.read(Reader::new()) {
                Ok(bytes) => (
                    bytes.as_ptr().cast_mut(),
                    bytes.len(),
                    DLPackFlags::READ_ONLY,
                ),
                Err(_) => (ptr::null_mut(), 0, DLPackFlags::READ_ONLY),
            }
        };
        let cpu = DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        };
        TensorDescription::new(data.cast(), len, cpu, self.dtype, &self.shape).with_flags(flags)
    }

    fn ndim(&mut self) -> usize {
        self.shape.len()
    }
}

/// Exports burn's `TensorData` (from `Tensor::into_data`, `TensorData::new`, ...) as a
/// row-major CPU tensor of the same shape and dtype, without copying: the bytes move into the
/// export, and its deleter drops them. Bytes burn holds alone (the usual case: `into_data` of a
/// CPU tensor, `TensorData::new`) are exported writable and `IS_COPIED`, so the consumer owns
/// them outright; shared ones (`bytes::Bytes` from a memory map, copy-on-write clones)
/// `READ_ONLY`; lazy ones (a file, a device) are read to the host by burn first, as burn's own
/// reads do. The dtype maps to exactly the same format ([`dlpack_dtype`]).
///
/// # Errors
/// [`BurnError::Quantized`] and [`BurnError::NoDlpackDtype`] for dtypes DLPack cannot
/// describe ([`dlpack_dtype`]), [`BurnError::HostAccess`] when burn cannot read lazy bytes,
/// [`BurnError::Misaligned`] for bytes not aligned for their dtype,
/// [`BurnError::ShapeTooLarge`] and [`BurnError::Export`] for shapes DLPack cannot hold. The
/// data is dropped, once.
///
/// ```
/// use burn_std::TensorData;
/// use dlpack_abi::raw::DLPackFlags;
/// use dlpack_abi_burn::export_tensor_data;
///
/// let data = TensorData::new(vec![1i64, -2, 3], [3, 1]);
/// let tensor = export_tensor_data(data)?;
/// assert_eq!(tensor.view().strides(), [1, 1]);
/// assert_eq!(tensor.view().flags(), DLPackFlags::IS_COPIED); // burn's alone: the consumer's now
/// assert_eq!(tensor.view().get::<i64>(&[1, 0])?, -2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_tensor_data(data: TensorData) -> Result<VersionedTensor, BurnError> {
    let (mut bytes, shape, dtype) = data.into_parts();
    let dl_dtype = dlpack_dtype(dtype)?;
    let shape = shape
        .as_slice()
        .iter()
        .enumerate()
        .map(|(dim, &extent)| {
            i64::try_from(extent).map_err(|_| BurnError::ShapeTooLarge { dim, extent })
        })
        .collect::<Result<Vec<i64>, BurnError>>()?;
    let exclusive = bytes.write(Writer::new().no_copy()).is_ok();
    if !exclusive {
        // Brings lazy bytes to the host, into burn's own buffer (burn's `Deref` does the
        // same); shared bytes are only looked at.
        bytes.read(Reader::new()).map_err(BurnError::HostAccess)?;
    }
    let owner = DataOwner {
        bytes,
        shape,
        dtype: dl_dtype,
        exclusive,
    };
    let tensor = VersionedTensor::from_owner(owner)?;
    // The address the consumer gets (an empty tensor has none to align).
    let address = tensor.view().data_ptr() as usize;
    let align = dtype.size();
    if tensor.view().element_count() > 0 && !address.is_multiple_of(align) {
        // `tensor` drops here: the deleter drops the bytes, once.
        return Err(BurnError::Misaligned { address, align });
    }
    Ok(tensor)
}
