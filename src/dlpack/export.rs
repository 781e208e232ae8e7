//! Export of Rust-owned memory as DLPack tensors, without copying the data: what an owner
//! describes ([`TensorDescription`]), the [`TensorOwner`] trait, and
//! [`ManagedTensor::from_owner`].
//!
//! Every export is checked: the description as an import would check it, and every byte it
//! reaches against the buffer the owner states. The allocation itself lives in `placed`.
#![allow(unsafe_code)]

use core::ffi::c_void;

use super::placed::Placed;
use super::{
    Element, ExportError, ImportError, ManagedStruct, ManagedTensor, TensorView, MAX_NDIM,
};
use crate::raw::{kDLCPU, DLDataType, DLDevice, DLPackFlags};

/// What a DLPack tensor says about its memory, as an owner describes it for export.
///
/// `data` and `len` name the buffer: `len` bytes from `data` (an address, or an opaque handle on
/// devices that use one). Every byte the tensor reaches from `data + byte_offset` through its
/// shape and strides must lie inside it, or the export is refused with
/// [`ExportError::OutsideBuffer`]. `strides` `None` means compact row-major; export then writes
/// those strides (DLPack 1.3 producers send strides whenever `ndim > 0`). An empty tensor is
/// exported with `data` NULL and `byte_offset` 0.
///
/// ```
/// use dlpack_abi::dlpack::TensorDescription;
/// use dlpack_abi::raw::DLPackFlags;
///
/// let mut data = [0f32; 6];
/// let description = TensorDescription::cpu(&mut data, &[3, 2])
///     .with_strides(&[1, 3])
///     .with_flags(DLPackFlags::READ_ONLY);
/// assert_eq!((description.len, description.strides), (24, Some(&[1, 3][..])));
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct TensorDescription<'a> {
    /// The buffer's start on `device` (an address, or an opaque handle for devices that use one).
    pub data: *mut c_void,
    /// The buffer's length in bytes, counted from `data`.
    pub len: usize,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
    /// Where the memory lives.
    pub device: DLDevice,
    /// The element type.
    pub dtype: DLDataType,
    /// The extents; copied into the export's allocation.
    pub shape: &'a [i64],
    /// The strides in elements, one per dimension; `None` for compact row-major. Copied.
    pub strides: Option<&'a [i64]>,
    /// `READ_ONLY`, `IS_COPIED`, `IS_SUBBYTE_TYPE_PADDED`, as they apply.
    pub flags: DLPackFlags,
}

impl<'a> TensorDescription<'a> {
    /// A compact row-major tensor at the start of the `len`-byte buffer `data`, with no flags.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorDescription};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLPackFlags};
    ///
    /// let mut data = vec![1u8, 2, 3];
    /// let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
    /// let description = TensorDescription::new(data.as_mut_ptr().cast(), 3, cpu, u8::DTYPE, &[3]);
    /// assert_eq!((description.byte_offset, description.strides), (0, None));
    /// assert_eq!(description.flags, DLPackFlags::empty());
    /// ```
    pub fn new(
        data: *mut c_void,
        len: usize,
        device: DLDevice,
        dtype: DLDataType,
        shape: &'a [i64],
    ) -> Self {
        Self {
            data,
            len,
            byte_offset: 0,
            device,
            dtype,
            shape,
            strides: None,
            flags: DLPackFlags::empty(),
        }
    }

    /// A compact row-major CPU tensor over `values` (`kDLCPU`, device 0, `T`'s dtype).
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorDescription};
    ///
    /// let mut values = [1.5f64, 2.5];
    /// let description = TensorDescription::cpu(&mut values, &[2]);
    /// assert_eq!((description.len, description.dtype), (16, f64::DTYPE));
    /// ```
    pub fn cpu<T: Element>(values: &'a mut [T], shape: &'a [i64]) -> Self {
        let cpu = DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        };
        // A slice's size in bytes always fits in `isize`.
        let len = core::mem::size_of_val(values);
        Self::new(values.as_mut_ptr().cast(), len, cpu, T::DTYPE, shape)
    }

    /// Describes a validated tensor again (to re-export an imported tensor, or one shared by
    /// several exports): its data, offset, device, dtype, shape, strides and flags (but
    /// `IS_COPIED`: the memory stays the view's too), with a buffer of exactly the bytes its
    /// elements reach. When some of them lie before `data`
    /// (negative strides from a `data` at the first element), the buffer starts at the lowest
    /// one instead, on devices whose `data` is an address, with `byte_offset` grown to match.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Export, TensorDescription};
    ///
    /// // The last row of a 2 x 2 buffer, read backwards.
    /// let tensor = Export::new(vec![1u16, 2, 3, 4], &[2]).offset(3).strides(&[-1]).finish()?;
    /// let again = TensorDescription::of(&tensor.view());
    /// assert_eq!((again.byte_offset, again.len, again.strides), (6, 8, Some(&[-1][..])));
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn of(view: &TensorView<'a>) -> Self {
        let raw = view.raw();
        let (first, end) = view.reach_from_data();
        let (data, byte_offset, end) = if first < 0 && raw.device.device_type.is_addressable() {
            // Validated: the reach lies in the address space, so these fit.
            let before = first.unsigned_abs() as usize;
            let data = raw.data.cast::<u8>().wrapping_sub(before).cast();
            (data, raw.byte_offset + before as u64, end - first)
        } else {
            (raw.data, raw.byte_offset, end)
        };
        Self {
            data,
            len: usize::try_from(end).unwrap_or(0),
            byte_offset,
            device: raw.device,
            dtype: raw.dtype,
            shape: view.shape(),
            strides: view.strides().as_slice(),
            // The memory is the view's too: whatever it was, it is not a copy the consumer owns.
            flags: view.flags().difference(DLPackFlags::IS_COPIED),
        }
    }

    /// Sets the strides, in elements.
    ///
    /// ```
    /// # use dlpack_abi::dlpack::TensorDescription;
    /// let mut values = [0u8; 2];
    /// let d = TensorDescription::cpu(&mut values, &[0, 2]).with_strides(&[1, 0]);
    /// assert_eq!(d.strides, Some(&[1, 0][..]));
    /// ```
    pub fn with_strides(mut self, strides: &'a [i64]) -> Self {
        self.strides = Some(strides);
        self
    }

    /// Sets the byte offset from `data` to the first element.
    ///
    /// ```
    /// # use dlpack_abi::dlpack::TensorDescription;
    /// let mut values = [0u8; 32];
    /// let d = TensorDescription::cpu(&mut values, &[16]).with_byte_offset(16);
    /// assert_eq!(d.byte_offset, 16);
    /// ```
    pub fn with_byte_offset(mut self, byte_offset: u64) -> Self {
        self.byte_offset = byte_offset;
        self
    }

    /// Sets the flags.
    ///
    /// ```
    /// # use dlpack_abi::dlpack::TensorDescription;
    /// # use dlpack_abi::raw::DLPackFlags;
    /// let mut values = [0u8; 1];
    /// let d = TensorDescription::cpu(&mut values, &[1])
    ///     .with_flags(DLPackFlags::READ_ONLY | DLPackFlags::IS_COPIED);
    /// assert!(d.flags.contains(DLPackFlags::READ_ONLY));
    /// ```
    pub fn with_flags(mut self, flags: DLPackFlags) -> Self {
        self.flags = flags;
        self
    }
}

/// Anything that keeps tensor memory alive and can describe it: an `ndarray` array, a GPU buffer
/// handle, a memory-mapped file, an imported tensor viewed differently.
/// [`ManagedTensor::from_owner`] moves it into the export's allocation; the deleter drops it.
///
/// Owners are `Send` because the consumer may call the deleter on any thread, and `'static`
/// because nothing ties the deleter call to a Rust lifetime.
///
/// # Safety
/// The export uses the description [`describe`](Self::describe) returns once the owner has been
/// moved to the place where it stays until the deleter drops it (the default
/// [`ndim`](Self::ndim) also calls it before that move, and uses only the shape's length). Until
/// the deleter runs:
/// - `data` and `len` are a live allocation on `device` that the owner keeps allocated and
///   initialised;
/// - unless `flags` has `READ_ONLY`, the consumer may write it, so nothing else holds Rust
///   references to it;
/// - `IS_COPIED` only when this export is the one way to the memory (the consumer owns it
///   outright, as the spec says): a consumer that imports it may write it through a safe `&mut`.
///
/// Everything else is checked by the export: ndim, dtype, extents, strides, overflow, NULL data,
/// and that every byte the tensor reaches lies in the buffer.
///
/// ```
/// use dlpack_abi::dlpack::{Element, TensorDescription, TensorOwner, VersionedTensor};
///
/// /// A column-major matrix.
/// struct Matrix { values: Vec<f64>, shape: [i64; 2], strides: [i64; 2] }
///
/// // SAFETY: `values` is the matrix's own allocation, which nothing else references.
/// unsafe impl TensorOwner for Matrix {
///     fn describe(&mut self) -> TensorDescription<'_> {
///         TensorDescription::cpu(&mut self.values, &self.shape).with_strides(&self.strides)
///     }
///     fn ndim(&mut self) -> usize { 2 }
/// }
///
/// let matrix = Matrix { values: vec![1.0, 2.0, 3.0, 4.0], shape: [2, 2], strides: [1, 2] };
/// let tensor = VersionedTensor::from_owner(matrix)?;
/// assert!(tensor.view().is_f_contiguous());
/// assert_eq!(tensor.view().get::<f64>(&[0, 1])?, 3.0);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub unsafe trait TensorOwner: Send + 'static {
    /// Describes the memory. The export uses the call made once the owner is in its final place.
    ///
    /// ```
    /// # use dlpack_abi::dlpack::{TensorDescription, TensorOwner};
    /// struct Scalar(Box<[i32; 1]>);
    /// // SAFETY: the boxed value is the owner's own allocation.
    /// unsafe impl TensorOwner for Scalar {
    ///     fn describe(&mut self) -> TensorDescription<'_> {
    ///         TensorDescription::cpu(&mut self.0[..], &[])
    ///     }
    /// }
    /// assert_eq!(Scalar(Box::new([7])).describe().shape, [0i64; 0]);
    /// ```
    fn describe(&mut self) -> TensorDescription<'_>;

    /// The number of dimensions `describe` will report, to size the allocation before the owner
    /// is moved into it. The default calls `describe`; override it when that is costly. A
    /// mismatch is refused with [`ExportError::NdimChanged`].
    ///
    /// ```
    /// # use dlpack_abi::dlpack::{TensorDescription, TensorOwner};
    /// struct Row(Vec<u8>, [i64; 1]);
    /// // SAFETY: the vector is the owner's own allocation.
    /// unsafe impl TensorOwner for Row {
    ///     fn describe(&mut self) -> TensorDescription<'_> {
    ///         TensorDescription::cpu(&mut self.0, &self.1)
    ///     }
    /// }
    /// assert_eq!(Row(vec![1, 2], [2]).ndim(), 1);
    /// ```
    fn ndim(&mut self) -> usize {
        self.describe().shape.len()
    }
}

impl<M: ManagedStruct> ManagedTensor<M> {
    /// Exports memory held by a custom [`TensorOwner`] (use [`Export`](super::Export) for `Vec`,
    /// `Box<[T]>` and `Arc<[T]>`). The owner is dropped by the deleter; on error, before this
    /// returns.
    ///
    /// The description is checked as an import would check it ([`ExportError::Invalid`]), every
    /// byte it reaches must lie in its buffer ([`ExportError::OutsideBuffer`]), and a legacy
    /// export also refuses flags it cannot carry.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorDescription, TensorOwner, LegacyTensor};
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// /// A device allocation this program manages (here only an address and a length).
    /// struct DeviceBuffer { address: usize, bytes: usize, shape: [i64; 1] }
    /// // SAFETY: stands for a real allocation of `bytes` bytes on CUDA device 0.
    /// unsafe impl TensorOwner for DeviceBuffer {
    ///     fn describe(&mut self) -> TensorDescription<'_> {
    ///         let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
    ///         let data = core::ptr::null_mut::<u8>().wrapping_add(self.address).cast();
    ///         TensorDescription::new(data, self.bytes, gpu, f32::DTYPE, &self.shape)
    ///     }
    /// }
    ///
    /// let buffer = DeviceBuffer { address: 0x7000_0000, bytes: 1024, shape: [256] };
    /// let tensor = LegacyTensor::from_owner(buffer)?;
    /// assert_eq!(tensor.view().device().device_type, kDLCUDA);
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn from_owner<O: TensorOwner>(mut owner: O) -> Result<Self, ExportError> {
        let ndim = checked_ndim(owner.ndim())?;
        let placed = Placed::<M, O>::new(owner, ndim);
        // SAFETY: the owner stays in place until `placed` is dropped or finished, and the
        // description borrowed from it is last used by `finish`, before either.
        let description = unsafe { placed.owner() }.describe();
        let mut tensor = placed.finish(&description)?;
        // An owner's `IS_COPIED` tells the consumer what it may do; it does not prove to Rust that
        // nothing else reaches the memory (an owner may share it): no safe `&mut` here.
        tensor.set_exclusive(false);
        Ok(tensor)
    }
}

/// `ndim`, refused above [`MAX_NDIM`].
#[inline(always)]
pub(super) fn checked_ndim(ndim: usize) -> Result<usize, ExportError> {
    if ndim > MAX_NDIM {
        return Err(ImportError::TooManyDims {
            ndim: i32::try_from(ndim).unwrap_or(i32::MAX),
        }
        .into());
    }
    Ok(ndim)
}

/// Refuses a reach `[first, end)` (bytes from the buffer's start) that leaves a buffer of `len`
/// bytes. The one buffer rule of every export.
#[inline(always)]
pub(super) fn check_inside(first: i128, end: i128, len: usize) -> Result<(), ExportError> {
    if first >= 0 && end <= len as i128 {
        return Ok(());
    }
    let clamp =
        |bytes: i128| i64::try_from(bytes).unwrap_or(if bytes < 0 { i64::MIN } else { i64::MAX });
    Err(ExportError::OutsideBuffer {
        first: clamp(first),
        end: clamp(end),
        len,
    })
}
