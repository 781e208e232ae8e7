//! candle tensors out as DLPack tensors: [`export_tensor`] (zero-copy, `unsafe`) and
//! [`export_tensor_copy`] (a copy the consumer owns).
#![allow(unsafe_code)]

use alloc::vec::Vec;
use core::ptr;

use candle_core::cpu_backend::CpuStorage;
use candle_core::{DeviceLocation, Storage, Tensor};
use float8::F8E4M3;

use dlpack_abi::dlpack::{Element, Export, TensorDescription, TensorOwner, VersionedTensor};
use dlpack_abi::raw::{kDLCPU, DLDataType, DLDevice, DLPackFlags};

use crate::dtype::{E4m3fn, E8m0fnu};
use crate::{dlpack_dtype, CandleError};

/// The CPU as DLPack names it.
const CPU: DLDevice = DLDevice {
    device_type: kDLCPU,
    device_id: 0,
};

/// candle's dims, strides or offsets as DLPack's `int64_t`s.
fn to_i64(values: &[usize]) -> Result<Vec<i64>, CandleError> {
    values
        .iter()
        .map(|&value| i64::try_from(value).map_err(|_| CandleError::DimsOverflow))
        .collect()
}

/// The tensor's dtype as DLPack's, after checking that it lives on the CPU.
fn exportable(tensor: &Tensor) -> Result<DLDataType, CandleError> {
    let dtype = dlpack_dtype(tensor.dtype())?;
    match tensor.device().location() {
        DeviceLocation::Cpu => Ok(dtype),
        location => Err(CandleError::UnsupportedCandleDevice(location)),
    }
}

/// A candle tensor, kept alive by a zero-copy export: its storage is the export's buffer.
struct Shared {
    /// A detached clone of the exported tensor (no autograd graph): keeps its storage (an `Arc`) allocated.
    tensor: Tensor,
    /// The layout's extents.
    shape: Vec<i64>,
    /// The layout's strides, in elements.
    strides: Vec<i64>,
    /// The layout's start offset, in elements from the storage's start.
    start_offset: usize,
    /// The element type, checked before export.
    dtype: DLDataType,
}

/// The storage's elements as the buffer of a description of `shape` starting at element
/// `first`; `None` for a dtype without a DLPack equivalent.
fn storage_description<'a>(
    storage: &CpuStorage,
    shape: &'a [i64],
    first: usize,
) -> Option<TensorDescription<'a>> {
    fn of<'a, T: Element>(values: &[T], shape: &'a [i64], first: usize) -> TensorDescription<'a> {
        // Read only: the pointer of a shared borrow (the export is `READ_ONLY`).
        let start = values.as_ptr().cast_mut();
        TensorDescription::elements(start, values.len(), CPU, shape, first)
    }
    Some(match storage {
        CpuStorage::U8(values) => of(values, shape, first),
        CpuStorage::U32(values) => of(values, shape, first),
        CpuStorage::I16(values) => of(values, shape, first),
        CpuStorage::I32(values) => of(values, shape, first),
        CpuStorage::I64(values) => of(values, shape, first),
        CpuStorage::BF16(values) => of(values, shape, first),
        CpuStorage::F16(values) => of(values, shape, first),
        CpuStorage::F32(values) => of(values, shape, first),
        CpuStorage::F64(values) => of(values, shape, first),
        CpuStorage::F8E4M3(values) => of(e4m3_bits(values), shape, first),
        CpuStorage::F8E8M0(values) => of(bytemuck::cast_slice::<u8, E8m0fnu>(values), shape, first),
        _ => return None,
    })
}

/// candle's `F8E4M3` elements as the DLPack type of the same bits.
fn e4m3_bits(values: &[F8E4M3]) -> &[E4m3fn] {
    bytemuck::cast_slice(values)
}

// SAFETY: `describe` states the elements of the CPU storage of `tensor`, read through the
// storage's lock: the vector lives as long as a tensor holds its storage (this clone does, until
// the deleter drops it), and only an in-place write could write or reallocate it, which the
// caller of `export_tensor` (the one place a `Shared` is made) promises does not happen while the
// export lives. Always `READ_ONLY`: candle's other holders read the same memory. A storage that
// no longer matches (a broken promise) is described as an empty buffer, which the export's
// checks refuse.
unsafe impl TensorOwner for Shared {
    fn describe(&mut self) -> TensorDescription<'_> {
        let this = &*self;
        let (storage, _) = this.tensor.storage_and_layout();
        let described = match &*storage {
            Storage::Cpu(cpu) => storage_description(cpu, &this.shape, this.start_offset)
                .filter(|description| description.dtype == this.dtype),
            _ => None,
        };
        drop(storage);
        described
            .unwrap_or_else(|| {
                TensorDescription::new(ptr::null_mut(), 0, CPU, this.dtype, &this.shape)
            })
            .with_strides(&this.strides)
            .with_flags(DLPackFlags::READ_ONLY)
    }

    fn ndim(&mut self) -> usize {
        self.shape.len()
    }
}

/// Exports a candle CPU tensor without copying it: the tensor's own storage, with its shape,
/// strides and start offset, `READ_ONLY`. The export holds a detached clone of `tensor` (an
/// `Arc` of the same storage, without the autograd graph), so the storage stays allocated until
/// the consumer's deleter runs, on any thread.
///
/// Use [`export_tensor_copy`] unless you control every tensor that shares this storage. (Holding
/// candle's storage lock for the export's lifetime would make this safe, but the lock is private
/// to candle, its guard borrows the tensor and may not cross threads, and every in-place write,
/// an optimizer's `Var::set` among them, would then wait for the consumer: a deadlock when that
/// is the same thread.)
///
/// # Safety
/// While the export lives (until its deleter runs), nothing writes this storage in place: no
/// `slice_set`, `const_set`, `zero_set`, `one_set`, `scatter_set`, `scatter_add_set`,
/// `inplace_op1/2/3` or `Var::set` on `tensor` or on any tensor that shares its storage (the
/// tensors it was narrowed, transposed, reshaped or indexed from or into, their clones, the
/// `Var` it belongs to). Library code writes in place too: every optimizer step (`Var::set`),
/// and candle-nn's KV caches (`append`, a `slice_set` into storage that `current_data()`
/// shares). The consumer may hold the elements as a `&[T]`, and an in-place custom op may even
/// reallocate them.
///
/// # Errors
/// [`CandleError::UnsupportedCandleDevice`] for a CUDA or Metal tensor,
/// [`CandleError::UnsupportedCandleDtype`] for `F6E2M3`, `F6E3M2` and `F4`, and
/// [`CandleError::DimsOverflow`] or [`CandleError::Export`] for a layout DLPack cannot state.
///
/// ```
/// use candle_core::{Device, Tensor};
/// use dlpack_abi::raw::DLPackFlags;
/// use dlpack_abi_candle::export_tensor;
///
/// let rows = Tensor::arange(0i64, 12, &Device::Cpu)?.reshape((4, 3))?;
/// let middle = rows.narrow(0, 1, 2)?; // rows 1 and 2: starts at element 3
/// // SAFETY: nothing writes `rows`' storage in place while `exported` lives.
/// let exported = unsafe { export_tensor(&middle) }?;
/// drop((rows, middle)); // the export keeps the storage alive
/// let view = exported.view();
/// assert_eq!((view.shape(), view.raw().byte_offset), ([2i64, 3].as_slice(), 3 * 8));
/// assert_eq!(view.as_slice::<i64>()?, [3, 4, 5, 6, 7, 8]);
/// assert_eq!(view.flags(), DLPackFlags::READ_ONLY);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub unsafe fn export_tensor(tensor: &Tensor) -> Result<VersionedTensor, CandleError> {
    let dtype = exportable(tensor)?;
    let layout = tensor.layout();
    let shared = Shared {
        // Detached: the same storage, without the autograd graph (whose ancestors' storages
        // would otherwise stay allocated until the consumer's deleter runs).
        tensor: tensor.detach(),
        shape: to_i64(layout.dims())?,
        strides: to_i64(layout.stride())?,
        start_offset: layout.start_offset(),
        dtype,
    };
    Ok(VersionedTensor::from_owner(shared)?)
}

/// Exports a copy of a candle CPU tensor, row-major and marked `IS_COPIED`: the consumer owns it
/// outright and may write it, whatever candle does with the original afterwards.
///
/// Costs one copy of the tensor's elements (only the elements, not the rest of a storage it
/// shares), and a second one for a tensor that is not contiguous, which candle compacts first.
///
/// # Errors
/// [`CandleError::UnsupportedCandleDevice`] for a CUDA or Metal tensor,
/// [`CandleError::UnsupportedCandleDtype`] for `F6E2M3`, `F6E3M2` and `F4`, and
/// [`CandleError::DimsOverflow`], [`CandleError::Candle`] or [`CandleError::Export`] when the
/// copy cannot be made.
///
/// ```
/// use candle_core::{Device, Tensor};
/// use dlpack_abi::raw::DLPackFlags;
/// use dlpack_abi_candle::export_tensor_copy;
///
/// let values = Tensor::new(&[[1u32, 2], [3, 4]], &Device::Cpu)?;
/// let mut copy = export_tensor_copy(&values)?;
/// values.zero_set()?; // candle writes its storage in place: the copy is not affected
/// assert_eq!(copy.view().flags(), DLPackFlags::IS_COPIED);
/// copy.as_mut_slice::<u32>()?[0] = 10; // the consumer's own
/// assert_eq!(copy.view().as_slice::<u32>()?, [10, 2, 3, 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_tensor_copy(tensor: &Tensor) -> Result<VersionedTensor, CandleError> {
    exportable(tensor)?;
    let compact = tensor.contiguous()?;
    let shape = to_i64(compact.dims())?;
    let (storage, layout) = compact.storage_and_layout();
    let Storage::Cpu(cpu) = &*storage else {
        return Err(CandleError::UnsupportedCandleDevice(
            compact.device().location(),
        ));
    };
    let start = layout.start_offset();
    let end = start + layout.shape().elem_count();
    /// The elements `start..end`, copied; a range outside the storage gives no elements, which
    /// the export refuses for `shape`.
    fn copy<T: Element + Send>(
        values: &[T],
        (start, end): (usize, usize),
        shape: &[i64],
    ) -> Result<VersionedTensor, CandleError> {
        let elements = values.get(start..end).unwrap_or(&[]);
        Ok(Export::copy_of(elements, shape).finish()?)
    }
    let range = (start, end);
    match cpu {
        CpuStorage::U8(values) => copy(values, range, &shape),
        CpuStorage::U32(values) => copy(values, range, &shape),
        CpuStorage::I16(values) => copy(values, range, &shape),
        CpuStorage::I32(values) => copy(values, range, &shape),
        CpuStorage::I64(values) => copy(values, range, &shape),
        CpuStorage::BF16(values) => copy(values, range, &shape),
        CpuStorage::F16(values) => copy(values, range, &shape),
        CpuStorage::F32(values) => copy(values, range, &shape),
        CpuStorage::F64(values) => copy(values, range, &shape),
        CpuStorage::F8E4M3(values) => copy(e4m3_bits(values), range, &shape),
        CpuStorage::F8E8M0(values) => {
            copy(bytemuck::cast_slice::<u8, E8m0fnu>(values), range, &shape)
        }
        _ => Err(CandleError::UnsupportedCandleDtype(compact.dtype())),
    }
}
