//! [candle](https://docs.rs/candle-core) 0.11 and DLPack (feature `candle`): candle CPU tensors
//! out, DLPack CPU tensors in.
//!
//! **candle → DLPack.** [`export`] hands a CPU tensor's own storage to a consumer without a
//! copy: the export holds a detached clone of the `Tensor` (an `Arc`), so the storage stays allocated
//! until the consumer's deleter runs, however early the caller drops its tensors; the shape, the
//! strides (in elements, zero ones of broadcasts too) and the start offset are candle's
//! [`Layout`](candle_core::Layout)'s, the offset written as `byte_offset` with `data` the
//! storage's start. It is always `READ_ONLY`: candle's other holders read the same memory. It is
//! an `unsafe fn`, because candle's safe API writes a storage in place through any tensor that
//! shares it (`slice_set`, `const_set`/`zero_set`/`one_set`, `scatter_set`/`scatter_add_set`,
//! `inplace_op1/2/3`, `Var::set`), and nothing candle exposes proves that no other tensor shares
//! it: such a write while the export lives would be seen by a consumer that holds the elements as
//! a `&[T]` (and an in-place custom op may even reallocate them). [`export_copy`] is the safe
//! path: it copies the elements once (twice for a non-contiguous tensor, which candle compacts
//! first) into a `Vec` the export owns, writable and marked `IS_COPIED`.
//!
//! **DLPack → candle.** [`import`] copies a validated CPU tensor (any strides, negative ones too,
//! and `byte_offset`, read through [`TensorView::iter`]) into a new candle CPU tensor: candle has
//! no way to wrap memory it does not own, so the DLPack tensor can be dropped (its deleter run)
//! right after.
//!
//! | candle `DType` | DLPack dtype |
//! |---|---|
//! | `U8`, `U32` | `kDLUInt` 8, 32 |
//! | `I16`, `I32`, `I64` | `kDLInt` 16, 32, 64 |
//! | `BF16` | `kDLBfloat` 16 |
//! | `F16`, `F32`, `F64` | `kDLFloat` 16, 32, 64 |
//! | `F8E4M3` | `kDLFloat8_e4m3fn` 8 (the OCP format: bias 7, no infinities, NaN `S.1111.111`) |
//! | `F8E8M0` | `kDLFloat8_e8m0fnu` 8 |
//! | `F6E2M3`, `F6E3M2`, `F4` | refused: candle keeps them as a file's raw bytes with no defined size per element |
//!
//! Only the CPU: candle's CUDA tensors are not bridged. candle's `cuda` feature builds CUDA
//! kernels with `nvcc` (the CUDA toolkit, at build time) and links cudarc dynamically, which
//! cudarc refuses to combine with the dynamic loading this crate's `cudarc` feature uses.
//!
//! ```
//! use candle_core::{Device, Tensor};
//! use dlpack_abi::candle;
//!
//! let matrix = Tensor::arange(0f32, 6.0, &Device::Cpu)?.reshape((2, 3))?;
//! let transposed = matrix.t()?;
//! // The safe copy: the consumer owns it, whatever candle does next.
//! let copy = candle::export_copy(&transposed)?;
//! assert_eq!(copy.view().as_slice::<f32>()?, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
//! // Zero-copy: the same memory, read-only, with candle's strides.
//! // SAFETY: nothing writes `matrix`'s storage in place while `shared` lives.
//! let shared = unsafe { candle::export(&transposed) }?;
//! assert_eq!(shared.view().strides(), [1, 3]);
//! // And back: a new candle tensor, copied.
//! let back = candle::import(&shared.view())?;
//! assert_eq!(back.to_vec2::<f32>()?, transposed.to_vec2::<f32>()?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![allow(unsafe_code)]

extern crate alloc;

/// `From` impls for errors that wrap others: `wraps! { Outer::Variant(Inner), ... }`.
#[allow(unused_macros)]
macro_rules! wraps {
    ($($outer:ident :: $variant:ident ($inner:ty)),+ $(,)?) => {$(
        impl From<$inner> for $outer {
            fn from(error: $inner) -> Self {
                Self::$variant(error)
            }
        }
    )+};
}

use alloc::vec::Vec;
use core::convert::identity;
use core::fmt;
use core::ptr;

use ::candle_core::cpu_backend::CpuStorage;
use ::candle_core::op::BackpropOp;
use ::candle_core::{DType, Device, DeviceLocation, Storage, Tensor};
use float8::F8E4M3;

use dlpack_abi::dlpack::{
    AccessError, Element, Export, ExportError, TensorDescription, TensorOwner, TensorView,
    VersionedTensor,
};
use dlpack_abi::raw::{
    kDLCPU, kDLFloat8_e4m3fn, kDLFloat8_e8m0fnu, DLDataType, DLDataTypeCode, DLDevice, DLPackFlags,
};

/// One byte holding an element of the 8-bit DLPack float type `CODE` (typed access to formats
/// Rust has no type for).
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
struct Byte<const CODE: u8>(u8);

// SAFETY: a `repr(transparent)` `u8`: all zeroes is a valid value.
unsafe impl<const CODE: u8> bytemuck::Zeroable for Byte<CODE> {}
// SAFETY: a `repr(transparent)` `u8`: every bit pattern is valid, no padding; `Copy`, `'static`.
unsafe impl<const CODE: u8> bytemuck::Pod for Byte<CODE> {}

impl<const CODE: u8> Element for Byte<CODE> {
    const DTYPE: DLDataType = DLDataType {
        code: DLDataTypeCode(CODE),
        bits: 8,
        lanes: 1,
    };
}

/// candle's `F8E4M3` (the `float8` crate's: OCP E4M3, bias 7, NaN only at `S.1111.111`).
type E4m3fn = Byte<{ kDLFloat8_e4m3fn.0 }>;
/// candle's `F8E8M0` (stored as raw bytes: OCP E8M0, an unsigned power of two).
type E8m0fnu = Byte<{ kDLFloat8_e8m0fnu.0 }>;

/// The CPU as DLPack names it.
const CPU: DLDevice = DLDevice {
    device_type: kDLCPU,
    device_id: 0,
};

/// The candle dtypes that have a DLPack equivalent, in `DType`'s order.
const MAPPED: [DType; 11] = [
    DType::U8,
    DType::U32,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::BF16,
    DType::F16,
    DType::F32,
    DType::F64,
    DType::F8E4M3,
    DType::F8E8M0,
];

/// Why a candle export or import failed.
///
/// ```
/// use candle_core::DType;
/// use dlpack_abi_candle::CandleError;
///
/// let error = CandleError::UnsupportedCandleDtype(DType::F4);
/// assert_eq!(error.to_string(), "candle's F4 has no DLPack dtype of exactly its format");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum CandleError {
    /// Export: the candle tensor is not on the CPU (CUDA and Metal tensors are not exported).
    UnsupportedCandleDevice(DeviceLocation),
    /// Export: the candle dtype has no DLPack dtype of exactly its format (`F6E2M3`, `F6E3M2`,
    /// `F4`, and dtypes newer than this crate).
    UnsupportedCandleDtype(DType),
    /// Import: the tensor is not in CPU memory (`kDLCPU`).
    UnsupportedDevice(DLDevice),
    /// Import: candle has no dtype for the tensor's element type.
    UnsupportedDtype(DLDataType),
    /// Import: a vector element type (`lanes != 1`); candle's elements are scalars.
    VectorDtype(DLDataType),
    /// Export: a dimension, stride or offset of the candle tensor does not fit DLPack's `int64_t`.
    DimsOverflow,
    /// candle refused (building the imported tensor, or compacting the exported one).
    Candle(::candle_core::Error),
    /// The export's checks refused the tensor.
    Export(ExportError),
    /// Typed access to the imported tensor refused it (misaligned data, unknown flags).
    Access(AccessError),
}

wraps! {
    CandleError::Candle(::candle_core::Error),
    CandleError::Export(ExportError),
    CandleError::Access(AccessError),
}

impl fmt::Display for CandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedCandleDevice(location) => write!(
                f,
                "the candle tensor is on {location:?}; only CPU tensors are exported"
            ),
            Self::UnsupportedCandleDtype(dtype) => write!(
                f,
                "candle's {dtype:?} has no DLPack dtype of exactly its format"
            ),
            Self::UnsupportedDevice(device) => write!(
                f,
                "the tensor is on {:?}:{}; candle imports CPU tensors only",
                device.device_type, device.device_id
            ),
            Self::UnsupportedDtype(dtype) => write!(
                f,
                "candle has no dtype for {:?} with {} bits",
                dtype.code, dtype.bits
            ),
            Self::VectorDtype(dtype) => write!(
                f,
                "the dtype has {} lanes; candle's elements are scalars",
                dtype.lanes
            ),
            Self::DimsOverflow => f.write_str(
                "a dimension, stride or offset of the candle tensor does not fit an int64_t",
            ),
            Self::Candle(error) => write!(f, "candle: {error}"),
            Self::Export(error) => error.fmt(f),
            Self::Access(error) => error.fmt(f),
        }
    }
}

impl core::error::Error for CandleError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Candle(error) => Some(error),
            Self::Export(error) => Some(error),
            Self::Access(error) => Some(error),
            _ => None,
        }
    }
}

/// The DLPack dtype of exactly the format of candle's `dtype`.
///
/// # Errors
/// [`CandleError::UnsupportedCandleDtype`] for `F6E2M3`, `F6E3M2`, `F4` (candle stores them as
/// raw bytes with no defined size per element) and dtypes newer than this crate.
///
/// ```
/// use candle_core::DType;
/// use dlpack_abi_candle::dlpack_dtype;
/// use dlpack_abi::raw::{kDLBfloat, kDLFloat8_e4m3fn, DLDataType};
///
/// assert_eq!(dlpack_dtype(DType::BF16)?, DLDataType { code: kDLBfloat, bits: 16, lanes: 1 });
/// assert_eq!(dlpack_dtype(DType::F8E4M3)?.code, kDLFloat8_e4m3fn);
/// assert!(dlpack_dtype(DType::F6E2M3).is_err());
/// # Ok::<(), dlpack_abi_candle::CandleError>(())
/// ```
pub fn dlpack_dtype(dtype: DType) -> Result<DLDataType, CandleError> {
    Ok(match dtype {
        DType::U8 => u8::DTYPE,
        DType::U32 => u32::DTYPE,
        DType::I16 => i16::DTYPE,
        DType::I32 => i32::DTYPE,
        DType::I64 => i64::DTYPE,
        DType::BF16 => half::bf16::DTYPE,
        DType::F16 => half::f16::DTYPE,
        DType::F32 => f32::DTYPE,
        DType::F64 => f64::DTYPE,
        DType::F8E4M3 => E4m3fn::DTYPE,
        DType::F8E8M0 => E8m0fnu::DTYPE,
        other => return Err(CandleError::UnsupportedCandleDtype(other)),
    })
}

/// The candle dtype of exactly the format of the DLPack `dtype` (the inverse of
/// [`dlpack_dtype`]).
///
/// # Errors
/// [`CandleError::VectorDtype`] when `lanes != 1`, [`CandleError::UnsupportedDtype`] for an
/// element type candle has no dtype for (`kDLBool`, 8-bit `kDLInt`, `kDLComplex`, ...).
///
/// ```
/// use candle_core::DType;
/// use dlpack_abi_candle::{candle_dtype, CandleError};
/// use dlpack_abi::dlpack::Element;
///
/// assert_eq!(candle_dtype(u32::DTYPE)?, DType::U32);
/// assert!(matches!(candle_dtype(i8::DTYPE), Err(CandleError::UnsupportedDtype(_))));
/// # Ok::<(), CandleError>(())
/// ```
pub fn candle_dtype(dtype: DLDataType) -> Result<DType, CandleError> {
    if dtype.lanes != 1 {
        return Err(CandleError::VectorDtype(dtype));
    }
    MAPPED
        .into_iter()
        .find(|&candle| dlpack_dtype(candle).is_ok_and(|mapped| mapped == dtype))
        .ok_or(CandleError::UnsupportedDtype(dtype))
}

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
// caller of `export` (the one place a `Shared` is made) promises does not happen while the
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
/// Use [`export_copy`] unless you control every tensor that shares this storage. (Holding
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
/// use dlpack_abi::candle;
/// use dlpack_abi::raw::DLPackFlags;
///
/// let rows = Tensor::arange(0i64, 12, &Device::Cpu)?.reshape((4, 3))?;
/// let middle = rows.narrow(0, 1, 2)?; // rows 1 and 2: starts at element 3
/// // SAFETY: nothing writes `rows`' storage in place while `exported` lives.
/// let exported = unsafe { candle::export(&middle) }?;
/// drop((rows, middle)); // the export keeps the storage alive
/// let view = exported.view();
/// assert_eq!((view.shape(), view.raw().byte_offset), ([2i64, 3].as_slice(), 3 * 8));
/// assert_eq!(view.as_slice::<i64>()?, [3, 4, 5, 6, 7, 8]);
/// assert_eq!(view.flags(), DLPackFlags::READ_ONLY);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub unsafe fn export(tensor: &Tensor) -> Result<VersionedTensor, CandleError> {
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
/// use dlpack_abi::candle;
/// use dlpack_abi::raw::DLPackFlags;
///
/// let values = Tensor::new(&[[1u32, 2], [3, 4]], &Device::Cpu)?;
/// let mut copy = candle::export_copy(&values)?;
/// values.zero_set()?; // candle writes its storage in place: the copy is not affected
/// assert_eq!(copy.view().flags(), DLPackFlags::IS_COPIED);
/// copy.as_mut_slice::<u32>()?[0] = 10; // the consumer's own
/// assert_eq!(copy.view().as_slice::<u32>()?, [10, 2, 3, 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_copy(tensor: &Tensor) -> Result<VersionedTensor, CandleError> {
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
/// use dlpack_abi::candle;
/// use dlpack_abi::dlpack::Export;
///
/// // A 2 x 3 tensor whose columns run backwards.
/// let values = vec![0.5f64, 1.5, 2.5, 3.5, 4.5, 5.5];
/// let tensor = Export::new(values, &[2, 3]).first_element(2).strides(&[3, -1]).finish()?;
/// let imported = candle::import(&tensor.view())?;
/// drop(tensor); // candle has its own copy
/// assert_eq!(imported.to_vec2::<f64>()?, [[2.5, 1.5, 0.5], [5.5, 4.5, 3.5]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import(view: &TensorView<'_>) -> Result<Tensor, CandleError> {
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
