//! What an exporter says about its memory ([`TensorDescription`], with shape and strides as
//! [`Dims`] in the integer type the owner keeps), and the rules every export checks it by: the
//! one home of "every byte reached lies in the buffer". Needs no `alloc`: borrowed exports
//! ([`BorrowedTensor`](super::BorrowedTensor)) use it as well as managed ones.

use core::ffi::c_void;

use super::{Element, ExportError, ImportError, TensorView, MAX_NDIM};
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
/// use dlpack_abi::dlpack::{Dims, TensorDescription};
/// use dlpack_abi::raw::DLPackFlags;
///
/// let mut data = [0f32; 6];
/// let description = TensorDescription::cpu(&mut data, &[3, 2])
///     .with_strides(&[1, 3])
///     .with_flags(DLPackFlags::READ_ONLY);
/// assert_eq!((description.len, description.strides), (24, Some(Dims::I64(&[1, 3]))));
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
    /// The extents; copied into the export.
    pub shape: Dims<'a>,
    /// The strides in elements, one per dimension; `None` for compact row-major. Copied.
    pub strides: Option<Dims<'a>>,
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
    /// assert_eq!((description.byte_offset, description.strides.is_none()), (0, true));
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
            shape: Dims::I64(shape),
            strides: None,
            flags: DLPackFlags::empty(),
        }
    }

    /// `len` elements of `T` at `start` on `device` (a GPU allocation, say) as the buffer of a
    /// row-major tensor of `shape` whose first element is element `first_element` of the
    /// buffer (its `byte_offset`). What it reaches is checked by the export, as always.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorDescription};
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
    /// let start = core::ptr::null_mut::<u8>().wrapping_add(0x7000_0000).cast::<f64>();
    /// let description = TensorDescription::elements(start, 100, gpu, &[10], 90);
    /// assert_eq!((description.len, description.byte_offset), (800, 720));
    /// assert_eq!(description.dtype, f64::DTYPE);
    /// ```
    pub fn elements<T: Element>(
        start: *mut T,
        len: usize,
        device: DLDevice,
        shape: &'a [i64],
        first_element: usize,
    ) -> Self {
        let size = core::mem::size_of::<T>();
        // A real allocation's size fits `usize`; a saturated one is refused by validation.
        let mut description = Self::new(
            start.cast(),
            len.saturating_mul(size),
            device,
            T::DTYPE,
            shape,
        );
        description.byte_offset = (first_element as u64).saturating_mul(size as u64);
        description
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
    /// use dlpack_abi::dlpack::{BorrowedTensor, TensorDescription};
    ///
    /// // The last row of a 2 x 2 buffer, read backwards.
    /// let values = [1u16, 2, 3, 4];
    /// let lent = BorrowedTensor::strided(&values, [2], [-1], 3)?;
    /// let raw = lent.dl_tensor();
    /// let again = TensorDescription::of(&raw.view());
    /// assert_eq!((again.byte_offset, again.len), (6, 8));
    /// assert_eq!(again.strides.unwrap(), [-1]);
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn of(view: &TensorView<'a>) -> Self {
        Self::of_reach(view, view.reach_from_data())
    }

    /// [`of`](Self::of), given the view's reach from its `data` in bytes
    /// (`TensorView::reach_from_data`), for a caller that needs it too.
    pub(crate) fn of_reach(view: &TensorView<'a>, (first, end): (i128, i128)) -> Self {
        let raw = view.raw();
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
            shape: Dims::I64(view.shape()),
            strides: view.strides().as_slice().map(Dims::I64),
            // The memory is the view's too: whatever it was, it is not a copy the consumer owns.
            flags: view.flags().difference(DLPackFlags::IS_COPIED),
        }
    }

    /// Sets the strides, in elements.
    ///
    /// ```
    /// use dlpack_abi::dlpack::TensorDescription;
    /// let mut values = [0u8; 2];
    /// let d = TensorDescription::cpu(&mut values, &[0, 2]).with_strides(&[1, 0]);
    /// assert_eq!(d.strides.unwrap(), [1, 0]);
    /// ```
    pub fn with_strides(mut self, strides: &'a [i64]) -> Self {
        self.strides = Some(Dims::I64(strides));
        self
    }

    /// Sets the shape and strides in Rust's index types, as `ndarray` and most Rust containers
    /// keep them: no `i64` copy is needed, they are converted while the export copies them.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Dims, TensorDescription};
    /// let mut values = [0u8; 6];
    /// let (shape, strides): ([usize; 2], [isize; 2]) = ([3, 2], [1, 3]);
    /// let d = TensorDescription::cpu(&mut values, &[]).with_native_dims(&shape, &strides);
    /// assert_eq!(d.shape, [3, 2]);
    /// assert_eq!(d.strides, Some(Dims::Isize(&[1, 3])));
    /// ```
    pub fn with_native_dims(mut self, shape: &'a [usize], strides: &'a [isize]) -> Self {
        self.shape = Dims::Usize(shape);
        self.strides = Some(Dims::Isize(strides));
        self
    }

    /// Sets the byte offset from `data` to the first element.
    ///
    /// ```
    /// use dlpack_abi::dlpack::TensorDescription;
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
    /// use dlpack_abi::dlpack::TensorDescription;
    /// use dlpack_abi::raw::DLPackFlags;
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

/// The description of the `len` elements at `start` (a slice's) on the CPU: compact row-major
/// unless `strides` are given, from element `first_element` (its byte offset saturates; the
/// export refuses it). `start` keeps the provenance of the borrow it came from: a shared slice's
/// for reading, a mutable one's for writing.
pub(crate) fn host_slice<'d, T: Element>(
    start: *mut T,
    len: usize,
    shape: &'d [i64],
    strides: Option<&'d [i64]>,
    first_element: usize,
) -> TensorDescription<'d> {
    let cpu = DLDevice {
        device_type: kDLCPU,
        device_id: 0,
    };
    let mut description = TensorDescription::elements(start, len, cpu, shape, first_element);
    description.strides = strides.map(Dims::I64);
    description
}

/// Refuses dims an export cannot copy: strides of another length than the shape
/// ([`ExportError::StridesLength`]), and values that do not fit `i64`.
pub(crate) fn check_dims(description: &TensorDescription<'_>) -> Result<(), ExportError> {
    let ndim = description.shape.len();
    if let Some(strides) = description.strides {
        if strides.len() != ndim {
            return Err(ExportError::StridesLength {
                ndim,
                strides: strides.len(),
            });
        }
    }
    description.shape.check_fits()?;
    Ok(())
}

/// Refuses a validated tensor that reaches bytes outside the `len`-byte buffer at its `data`.
pub(crate) fn check_reach(view: &TensorView<'_>, len: usize) -> Result<(), ExportError> {
    let (first, end) = view.reach_from_data();
    check_inside(first, end, len)
}

/// `ndim`, refused above [`MAX_NDIM`].
#[inline(always)]
pub(crate) fn checked_ndim(ndim: usize) -> Result<usize, ExportError> {
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
pub(crate) fn check_inside(first: i128, end: i128, len: usize) -> Result<(), ExportError> {
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

/// Extents or strides in the integer type their owner keeps: `i64` (DLPack's), or `usize`
/// extents and `isize` strides (Rust's, as `ndarray` keeps them). An export converts them while it
/// copies them, and refuses a value that does not fit `i64` ([`ImportError::SizeOverflow`]).
///
/// ```
/// use dlpack_abi::dlpack::Dims;
///
/// let shape: &[usize] = &[2, 3];
/// let dims = Dims::from(shape);
/// assert_eq!((dims.len(), dims.get(1)), (2, Some(3)));
/// assert!(dims.iter().eq([2, 3]));
/// assert_eq!(dims, [2, 3]);
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Dims<'a> {
    /// DLPack's own type.
    I64(&'a [i64]),
    /// Extents as Rust indexes them.
    Usize(&'a [usize]),
    /// Strides as Rust offsets pointers by them.
    Isize(&'a [isize]),
}

impl<'a> Dims<'a> {
    /// The number of dimensions.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Dims;
    /// assert_eq!(Dims::I64(&[4, 5, 6]).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        match self {
            Dims::I64(values) => values.len(),
            Dims::Usize(values) => values.len(),
            Dims::Isize(values) => values.len(),
        }
    }

    /// `true` for a 0-d tensor's.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Dims;
    /// assert!(Dims::Usize(&[]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of dimension `dim` as an `i64` (`i64::MAX` if it does not fit, which an export
    /// refuses), or `None` past the end.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Dims;
    /// assert_eq!(Dims::Isize(&[-1, 8]).get(0), Some(-1));
    /// assert_eq!(Dims::Usize(&[1 << 20]).get(0), Some(1 << 20));
    /// assert_eq!(Dims::I64(&[]).get(0), None);
    /// ```
    #[inline(always)]
    pub fn get(&self, dim: usize) -> Option<i64> {
        let wide = |value: Result<i64, _>| value.unwrap_or(i64::MAX);
        match self {
            Dims::I64(values) => values.get(dim).copied(),
            Dims::Usize(values) => values.get(dim).map(|&v| wide(i64::try_from(v))),
            Dims::Isize(values) => values.get(dim).map(|&v| wide(i64::try_from(v))),
        }
    }

    /// The values as `i64`s, in dimension order.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Dims;
    /// assert_eq!(Dims::Usize(&[1, 2]).iter().sum::<i64>(), 3);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = i64> + 'a {
        let this = *self;
        (0..self.len()).map(move |dim| this.get(dim).unwrap_or(0))
    }

    /// The first dimension whose value does not fit `i64` (only `usize` extents above
    /// `i64::MAX` do not), as the error an export reports.
    pub(crate) fn check_fits(&self) -> Result<(), ImportError> {
        if let Dims::Usize(values) = self {
            if let Some(dim) = values.iter().position(|&v| i64::try_from(v).is_err()) {
                return Err(ImportError::SizeOverflow {
                    dim,
                    extent: i64::MAX,
                });
            }
        }
        Ok(())
    }

    /// The values, when they are already `i64`s.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Dims;
    /// assert_eq!(Dims::I64(&[7]).as_i64(), Some(&[7][..]));
    /// assert_eq!(Dims::Usize(&[7]).as_i64(), None);
    /// ```
    pub fn as_i64(&self) -> Option<&'a [i64]> {
        match self {
            Dims::I64(values) => Some(values),
            _ => None,
        }
    }
}

impl<'a> From<&'a [i64]> for Dims<'a> {
    fn from(values: &'a [i64]) -> Self {
        Dims::I64(values)
    }
}

impl<'a> From<&'a [usize]> for Dims<'a> {
    fn from(values: &'a [usize]) -> Self {
        Dims::Usize(values)
    }
}

impl<'a> From<&'a [isize]> for Dims<'a> {
    fn from(values: &'a [isize]) -> Self {
        Dims::Isize(values)
    }
}

impl PartialEq for Dims<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl PartialEq<[i64]> for Dims<'_> {
    fn eq(&self, other: &[i64]) -> bool {
        self.iter().eq(other.iter().copied())
    }
}

impl<const N: usize> PartialEq<[i64; N]> for Dims<'_> {
    fn eq(&self, other: &[i64; N]) -> bool {
        self == &other[..]
    }
}
