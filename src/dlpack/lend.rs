//! Rust memory lent to C as a bare `DLTensor`, without allocation: [`BorrowedTensor`] over a
//! `&[T]`, [`BorrowedTensorMut`] over a `&mut [T]`, with the shape and strides stored inline (a
//! const-generic capacity). The description is checked as every export is: as an import would
//! check it, and every byte it reaches against the slice.
#![allow(unsafe_code)]

use core::ffi::c_void;
use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;

use super::description::{check_dims, check_reach, checked_ndim, host_slice};
use super::validate::{self, Meta};
use super::{
    flagless_representable, Element, ExportError, TensorDescription, TensorView, TensorViewMut,
};
use crate::raw::{DLDataType, DLDevice, DLPackFlags, DLPackVersion, DLTensor};

/// A `&'a [T]` described as a `DLTensor` with room for `N` dimensions, to pass to C as a
/// `const DLTensor*` (through [`dl_tensor`](Self::dl_tensor)). Nothing is allocated: the shape and
/// strides live inline, and the strides are always written (compact row-major unless given).
///
/// The elements can never be reached as writable through safe code on the Rust side; the C side
/// must not write them either (a bare `DLTensor` cannot say `READ_ONLY`, so that is the C
/// convention for `const DLTensor*` inputs).
///
/// ```
/// use dlpack_abi::dlpack::BorrowedTensor;
/// use dlpack_abi::raw::DLTensor;
///
/// /// Stands for a C kernel: `float sum(const DLTensor *x)`.
/// unsafe extern "C" fn sum(x: *const DLTensor) -> f32 {
///     let x = unsafe { &*x };
///     let values = unsafe { core::slice::from_raw_parts(x.data.cast::<f32>(), 6) };
///     values.iter().sum()
/// }
///
/// let values = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let x = BorrowedTensor::new(&values, [2, 3])?;
/// assert_eq!(unsafe { sum(x.dl_tensor().as_ptr()) }, 21.0);
/// assert_eq!(x.dl_tensor().view().strides(), [3, 1]);
/// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
/// ```
#[derive(Clone, Copy)]
pub struct BorrowedTensor<'a, const N: usize> {
    data: *mut c_void,
    byte_offset: u64,
    device: DLDevice,
    dtype: DLDataType,
    /// `<= N` and `<= MAX_NDIM`.
    ndim: usize,
    shape: [i64; N],
    strides: [i64; N],
    meta: Meta,
    _data: PhantomData<&'a [u8]>,
}

impl<'a, const N: usize> BorrowedTensor<'a, N> {
    /// `data` as a compact row-major CPU tensor of this shape, from its first element.
    ///
    /// # Errors
    /// [`ExportError::OutsideBuffer`] when the shape needs more elements than `data` holds, and
    /// [`ExportError::Invalid`] for a negative or overflowing extent.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{BorrowedTensor, ExportError};
    ///
    /// let values = [0u8; 6];
    /// assert!(BorrowedTensor::new(&values, [3, 2]).is_ok());
    /// let error = BorrowedTensor::new(&values, [7]).unwrap_err();
    /// assert_eq!(error, ExportError::OutsideBuffer { first: 0, end: 7, len: 6 });
    /// ```
    pub fn new<T: Element>(data: &'a [T], shape: [i64; N]) -> Result<Self, ExportError> {
        // Only read through: a shared slice's pointer.
        let description = host_slice(data.as_ptr().cast_mut(), data.len(), &shape, None, 0);
        // SAFETY: the description covers exactly `data`, readable and unwritten for `'a`.
        unsafe { Self::from_description(&description) }
    }

    /// `data` as a CPU tensor with these strides (in elements; negative and zero ones too),
    /// starting at element `first_element` of the slice. Every element reached must lie in it.
    ///
    /// # Errors
    /// [`ExportError::OutsideBuffer`] when an element reached lies outside `data`, and
    /// [`ExportError::Invalid`] for a description an import would refuse.
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensor;
    ///
    /// // The rows of a 2 x 3 matrix, backwards: starts at element 3.
    /// let values = [0i32, 1, 2, 3, 4, 5];
    /// let x = BorrowedTensor::strided(&values, [2, 3], [-3, 1], 3)?;
    /// assert!(x.dl_tensor().view().iter::<i32>()?.eq([3, 4, 5, 0, 1, 2]));
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn strided<T: Element>(
        data: &'a [T],
        shape: [i64; N],
        strides: [i64; N],
        first_element: usize,
    ) -> Result<Self, ExportError> {
        let (start, len) = (data.as_ptr().cast_mut(), data.len());
        let description = host_slice(start, len, &shape, Some(&strides), first_element);
        // SAFETY: the description's buffer is exactly `data`, readable and unwritten for `'a`.
        unsafe { Self::from_description(&description) }
    }

    /// Any description (any device, `Dims` of any integer type), for memory that is not a
    /// slice: a strided view whose gaps belong to someone else, device memory. `IS_COPIED` is
    /// dropped and `READ_ONLY` is implied; `IS_SUBBYTE_TYPE_PADDED` cannot be carried by a bare
    /// `DLTensor` ([`ExportError::FlagsNotRepresentable`]).
    ///
    /// # Safety
    /// Every element the description reaches (from `data + byte_offset` through the shape and
    /// strides) stays allocated and is not written by anyone for `'a`. Its `len` need not be
    /// backed by memory: it bounds the reach, which is checked against it.
    ///
    /// # Errors
    /// [`ExportError::Invalid`] for a description an import would refuse, and
    /// [`ExportError::FlagsNotRepresentable`] for `IS_SUBBYTE_TYPE_PADDED` or unknown flags.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{BorrowedTensor, Element, TensorDescription};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice};
    ///
    /// let values = [1u16, 2, 3, 4];
    /// let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
    /// let (shape, strides): ([usize; 1], [isize; 1]) = ([2], [2]);
    /// let description = TensorDescription::new(values.as_ptr().cast_mut().cast(), 8, cpu, u16::DTYPE, &[])
    ///     .with_native_dims(&shape, &strides);
    /// // SAFETY: `values` outlives `x` and is not written.
    /// let x = unsafe { BorrowedTensor::<1>::from_description(&description) }?;
    /// assert!(x.dl_tensor().view().iter::<u16>()?.eq([1, 3]));
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub unsafe fn from_description(
        description: &TensorDescription<'_>,
    ) -> Result<Self, ExportError> {
        let ndim = checked_ndim(description.shape.len())?;
        if ndim > N {
            return Err(ExportError::Capacity { ndim, capacity: N });
        }
        // `READ_ONLY` is what lending a shared slice means; the rest as for any bare tensor.
        flagless_representable(description.flags.difference(DLPackFlags::READ_ONLY))?;
        let flags = DLPackFlags::empty();
        check_dims(description)?;
        let mut shape = [0i64; N];
        for (slot, extent) in shape.iter_mut().zip(description.shape.iter()) {
            *slot = extent;
        }
        let mut strides = [0i64; N];
        match description.strides {
            Some(given) => {
                for (slot, stride) in strides.iter_mut().zip(given.iter()) {
                    *slot = stride;
                }
            }
            None => validate::write_row_major(&shape[..ndim], |dim, stride| strides[dim] = stride),
        }
        let raw = DLTensor {
            data: description.data,
            device: description.device,
            // `ndim <= MAX_NDIM`.
            ndim: ndim as i32,
            dtype: description.dtype,
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            byte_offset: description.byte_offset,
        };
        // SAFETY: `shape` and `strides` point to `ndim` values on this stack frame, unwritten
        // while `raw` is used.
        let meta = unsafe { validate::validate(&raw, Some(DLPackVersion::CURRENT), flags) }?;
        check_reach(&TensorView::new(&raw, meta, None, flags), description.len)?;
        Ok(Self {
            data: description.data,
            // An empty tensor reaches nothing: its offset says nothing (a managed export writes
            // 0 too), and must not point past the slice.
            byte_offset: if meta.elements() == 0 {
                0
            } else {
                description.byte_offset
            },
            device: description.device,
            dtype: description.dtype,
            ndim,
            shape,
            strides,
            meta,
            _data: PhantomData,
        })
    }

    /// The `DLTensor`, borrowing `self`: pass [`DLTensorRef::as_ptr`] to C, or read it through
    /// [`DLTensorRef::view`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensor;
    ///
    /// let values = [1.5f64; 4];
    /// let x = BorrowedTensor::new(&values, [2, 2])?;
    /// let raw = x.dl_tensor();
    /// assert_eq!((raw.ndim, raw.byte_offset), (2, 0));
    /// assert_eq!(raw.view().as_slice::<f64>()?, values);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn dl_tensor(&self) -> DLTensorRef<'_> {
        DLTensorRef {
            raw: self.raw(),
            meta: self.meta,
            _borrow: PhantomData,
        }
    }

    /// The `DLTensor` with `shape` and `strides` pointing into `self`.
    fn raw(&self) -> DLTensor {
        DLTensor {
            data: self.data,
            device: self.device,
            // `ndim <= MAX_NDIM`.
            ndim: self.ndim as i32,
            dtype: self.dtype,
            // C never writes `shape` or `strides` (the DLPack contract); the pointers are mutable
            // only because the C struct says so.
            shape: self.shape.as_ptr().cast_mut(),
            strides: self.strides.as_ptr().cast_mut(),
            byte_offset: self.byte_offset,
        }
    }
}

impl<const N: usize> fmt::Debug for BorrowedTensor<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BorrowedTensor")
            .field(&self.dl_tensor().view())
            .finish()
    }
}

/// A `&'a mut [T]` described as a `DLTensor` with room for `N` dimensions, for C to write: an
/// output argument (`DLTensor*`, through [`dl_tensor_mut`](Self::dl_tensor_mut)). Like
/// [`BorrowedTensor`], without allocation; the mutable borrow of the slice guarantees that
/// nothing else reads or writes it meanwhile.
///
/// ```
/// use dlpack_abi::dlpack::BorrowedTensorMut;
/// use dlpack_abi::raw::DLTensor;
///
/// /// Stands for a C kernel: `void iota(DLTensor *out)` for a compact 1-d int32 tensor.
/// unsafe extern "C" fn iota(out: *mut DLTensor) {
///     let out = unsafe { &mut *out };
///     let n = unsafe { *out.shape } as usize;
///     let values = unsafe { core::slice::from_raw_parts_mut(out.data.cast::<i32>(), n) };
///     for (i, v) in values.iter_mut().enumerate() { *v = i as i32; }
/// }
///
/// let mut values = [0i32; 4];
/// let mut out = BorrowedTensorMut::new(&mut values, [4])?;
/// unsafe { iota(out.dl_tensor_mut().as_mut_ptr()) };
/// assert_eq!(values, [0, 1, 2, 3]);
/// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
/// ```
pub struct BorrowedTensorMut<'a, const N: usize> {
    tensor: BorrowedTensor<'a, N>,
    _data: PhantomData<&'a mut [u8]>,
}

impl<'a, const N: usize> BorrowedTensorMut<'a, N> {
    /// `data` as a compact row-major CPU tensor of this shape, from its first element.
    ///
    /// # Errors
    /// As [`BorrowedTensor::new`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensorMut;
    ///
    /// let mut values = [0f32; 6];
    /// let out = BorrowedTensorMut::new(&mut values, [2, 3])?;
    /// assert_eq!(out.dl_tensor().view().shape(), [2, 3]);
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn new<T: Element>(data: &'a mut [T], shape: [i64; N]) -> Result<Self, ExportError> {
        // Written through: the mutable slice's pointer.
        let description = host_slice(data.as_mut_ptr(), data.len(), &shape, None, 0);
        // SAFETY: the description covers exactly `data`, borrowed mutably (so writable and
        // ours alone) for `'a`.
        unsafe { Self::from_description(&description) }
    }

    /// `data` with these strides (in elements), from element `first_element`; see
    /// [`BorrowedTensor::strided`].
    ///
    /// # Errors
    /// As [`BorrowedTensor::strided`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensorMut;
    ///
    /// let mut values = [0u8; 6];
    /// // The transpose of a 2 x 3 row-major matrix.
    /// let out = BorrowedTensorMut::strided(&mut values, [3, 2], [1, 3], 0)?;
    /// assert!(out.dl_tensor().view().is_f_contiguous());
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn strided<T: Element>(
        data: &'a mut [T],
        shape: [i64; N],
        strides: [i64; N],
        first_element: usize,
    ) -> Result<Self, ExportError> {
        let (start, len) = (data.as_mut_ptr(), data.len());
        let description = host_slice(start, len, &shape, Some(&strides), first_element);
        // SAFETY: the description's buffer is exactly `data`, borrowed mutably for `'a`.
        unsafe { Self::from_description(&description) }
    }

    /// Any description; see [`BorrowedTensor::from_description`]. `READ_ONLY` is refused
    /// ([`ExportError::FlagsNotRepresentable`], with any other flag a bare `DLTensor` cannot
    /// carry): this tensor is for writing.
    ///
    /// # Safety
    /// Every element the description reaches stays allocated, may be written, and is read or
    /// written by nobody else for `'a`.
    ///
    /// # Errors
    /// As [`BorrowedTensor::from_description`], and
    /// [`ExportError::FlagsNotRepresentable`] for `READ_ONLY`.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{BorrowedTensorMut, ExportError, TensorDescription};
    /// use dlpack_abi::raw::DLPackFlags;
    ///
    /// let mut values = [0u8; 2];
    /// let frozen = TensorDescription::cpu(&mut values, &[2]).with_flags(DLPackFlags::READ_ONLY);
    /// let error = unsafe { BorrowedTensorMut::<1>::from_description(&frozen) }.unwrap_err();
    /// assert_eq!(error, ExportError::FlagsNotRepresentable { flags: DLPackFlags::READ_ONLY });
    /// ```
    pub unsafe fn from_description(
        description: &TensorDescription<'_>,
    ) -> Result<Self, ExportError> {
        // Nothing but `IS_COPIED` (whose loss grants less): `READ_ONLY` is refused, as is
        // anything a bare tensor cannot carry.
        flagless_representable(description.flags)?;
        Ok(Self {
            // SAFETY: the caller's contract includes `BorrowedTensor::from_description`'s.
            tensor: unsafe { BorrowedTensor::from_description(description) }?,
            _data: PhantomData,
        })
    }

    /// The `DLTensor` for reading; see [`BorrowedTensor::dl_tensor`].
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensorMut;
    /// let mut values = [3i16; 2];
    /// let out = BorrowedTensorMut::new(&mut values, [2])?;
    /// assert_eq!(out.dl_tensor().view().as_slice::<i16>()?, [3, 3]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn dl_tensor(&self) -> DLTensorRef<'_> {
        self.tensor.dl_tensor()
    }

    /// The `DLTensor` for writing, borrowing `self` mutably: pass [`DLTensorMut::as_mut_ptr`] to
    /// C.
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensorMut;
    /// let mut values = [0u32; 3];
    /// let mut out = BorrowedTensorMut::new(&mut values, [3])?;
    /// let mut raw = out.dl_tensor_mut();
    /// // SAFETY: element 1 is in bounds and the tensor is writable.
    /// unsafe { *raw.as_mut_ptr().read().data.cast::<u32>().add(1) = 8 };
    /// assert_eq!(values, [0, 8, 0]);
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn dl_tensor_mut(&mut self) -> DLTensorMut<'_> {
        DLTensorMut {
            raw: self.tensor.raw(),
            meta: self.tensor.meta,
            _borrow: PhantomData,
        }
    }
}

impl<const N: usize> fmt::Debug for BorrowedTensorMut<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BorrowedTensorMut")
            .field(&self.dl_tensor().view())
            .finish()
    }
}

/// A validated `DLTensor` borrowed from a [`BorrowedTensor`] (or a [`BorrowedTensorMut`]): what
/// to pass to C as `const DLTensor*`. Dereferences to the [`DLTensor`].
///
/// ```
/// use dlpack_abi::dlpack::BorrowedTensor;
///
/// let values = [1u8, 2, 3];
/// let x = BorrowedTensor::new(&values, [3])?;
/// let raw = x.dl_tensor();
/// assert_eq!(unsafe { *raw.shape }, 3);
/// assert_eq!(raw.view().get::<u8>(&[2])?, 3);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub struct DLTensorRef<'t> {
    raw: DLTensor,
    meta: Meta,
    _borrow: PhantomData<&'t [u8]>,
}

impl DLTensorRef<'_> {
    /// The `const DLTensor*` for C, valid while `self` lives (not past the statement for a
    /// temporary: `kernel(x.dl_tensor().as_ptr())` is right, keeping the pointer is not).
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensor;
    /// let values = [0.5f32];
    /// let x = BorrowedTensor::new(&values, [])?;
    /// let raw = x.dl_tensor();
    /// assert_eq!(unsafe { (*raw.as_ptr()).ndim }, 0);
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn as_ptr(&self) -> *const DLTensor {
        &self.raw
    }

    /// The validated view, with typed read access.
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensor;
    /// let values = [4i64, 5];
    /// let x = BorrowedTensor::new(&values, [2])?;
    /// assert!(x.dl_tensor().view().iter::<i64>()?.eq([4, 5]));
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn view(&self) -> TensorView<'_> {
        TensorView::new(&self.raw, self.meta, None, DLPackFlags::empty())
    }
}

impl Deref for DLTensorRef<'_> {
    type Target = DLTensor;
    fn deref(&self) -> &DLTensor {
        &self.raw
    }
}

impl fmt::Debug for DLTensorRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DLTensorRef").field(&self.view()).finish()
    }
}

/// A validated `DLTensor` borrowed mutably from a [`BorrowedTensorMut`]: what to pass to C as
/// `DLTensor*` for an output. Dereferences to the [`DLTensor`].
///
/// ```
/// use dlpack_abi::dlpack::BorrowedTensorMut;
///
/// let mut values = [0u8; 2];
/// let mut out = BorrowedTensorMut::new(&mut values, [2])?;
/// let mut raw = out.dl_tensor_mut();
/// assert_eq!(raw.ndim, 1);
/// let _for_c: *mut dlpack_abi::raw::DLTensor = raw.as_mut_ptr();
/// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
/// ```
pub struct DLTensorMut<'t> {
    raw: DLTensor,
    meta: Meta,
    _borrow: PhantomData<&'t mut [u8]>,
}

impl DLTensorMut<'_> {
    /// The `DLTensor*` for C, valid while `self` lives; C may write the elements (never the
    /// struct, its `shape` or its `strides`).
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensorMut;
    /// let mut values = [0u8; 1];
    /// let mut out = BorrowedTensorMut::new(&mut values, [1])?;
    /// let mut raw = out.dl_tensor_mut();
    /// unsafe { *(*raw.as_mut_ptr()).data.cast::<u8>() = 1 };
    /// assert_eq!(values, [1]);
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn as_mut_ptr(&mut self) -> *mut DLTensor {
        &mut self.raw
    }

    /// The validated view, with typed read access.
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensorMut;
    /// let mut values = [9u8; 2];
    /// let mut out = BorrowedTensorMut::new(&mut values, [2])?;
    /// assert_eq!(out.dl_tensor_mut().view().as_slice::<u8>()?, [9, 9]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn view(&self) -> TensorView<'_> {
        TensorView::new(&self.raw, self.meta, None, DLPackFlags::empty())
    }

    /// The validated view for writing, without `unsafe`: what a kernel would see through
    /// [`TensorViewMut::from_raw`] on [`as_mut_ptr`](Self::as_mut_ptr), for Rust code that
    /// writes the lent memory itself.
    ///
    /// ```
    /// use dlpack_abi::dlpack::BorrowedTensorMut;
    /// let mut values = [0u8; 3];
    /// let mut out = BorrowedTensorMut::new(&mut values, [3])?;
    /// out.dl_tensor_mut().view_mut().set(&[1], 4u8)?;
    /// assert_eq!(values, [0, 4, 0]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn view_mut(&mut self) -> TensorViewMut<'_> {
        TensorViewMut::from_view(TensorView::new(
            &self.raw,
            self.meta,
            None,
            DLPackFlags::empty(),
        ))
    }
}

impl Deref for DLTensorMut<'_> {
    type Target = DLTensor;
    fn deref(&self) -> &DLTensor {
        &self.raw
    }
}

impl fmt::Debug for DLTensorMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DLTensorMut").field(&self.view()).finish()
    }
}
