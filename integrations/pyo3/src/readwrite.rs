//! Typed `#[pyfunction]` arguments whose access is checked at run time against every other
//! import in the process ([`borrows`](super::borrows)): [`ReadonlyTensor`] and
//! [`ReadwriteTensor`], whose `&mut` needs no `unsafe`.
#![allow(unsafe_code)]

use core::marker::PhantomData;
use core::ops::Deref;

use pyo3::prelude::*;
use pyo3::Borrowed;

use super::errors::{IntoPyErr, ToPyResult};
use super::{borrows, import, numpy_borrow, streams, DlpackRequest};
use dlpack_abi::dlpack::{
    AccessError, ConsumerStream, Element, ElementsMut, TensorViewMut, VersionedTensor,
};
use dlpack_abi::raw::{kDLCPU, DLPackFlags};

/// Imports `source` for host access as a `T` tensor, checking in the order that gives the
/// clearest error: the dtype (`TypeError`); host access, flags and alignment (`BufferError`);
/// for writing, `READ_ONLY` and `IS_COPIED` (`BufferError`); then the data is made ready for the
/// host (device memory the host can read: the producer's pending work waited for) and the borrow
/// registered, shared or `mutable` (`BufferError`).
#[inline(always)]
fn import_checked<T: Element>(
    source: &Bound<'_, PyAny>,
    mutable: bool,
) -> PyResult<(VersionedTensor, Option<numpy_borrow::NumpyBorrow>)> {
    let mut tensor = import::untracked(source, &DlpackRequest::default())?;
    let view = tensor.view();
    view.check_dtype::<T>().py()?;
    view.typed_ptr::<T>().py()?;
    if mutable {
        if view.flags().contains(DLPackFlags::READ_ONLY) {
            return Err(AccessError::ReadOnly.into_py_err());
        }
        if view.flags().contains(DLPackFlags::IS_COPIED) {
            return Err(borrows::BorrowError::Copied.into());
        }
    }
    let device = view.device();
    if device.device_type != kDLCPU {
        // Ready on the device's default stream (`untracked`'s contract); the host waits for it.
        if let Some(order) = streams::ready_on(device, ConsumerStream::Unspecified).py()? {
            order.ready_on(device, ConsumerStream::Host).py()?;
        }
    }
    borrows::track(source.py(), &mut tensor, mutable)?;
    // After ours: a refusal here is rust-numpy's (a `PyReadwriteArray` of the same array).
    let numpy = numpy_borrow::acquire(source, mutable)?;
    Ok((tensor, numpy))
}

/// A host tensor of `T` elements from any DLPack producer, registered as *shared* while it
/// lives: a [`ReadwriteTensor`] of memory it may share a byte with is refused meanwhile, in
/// this extension and in every other built on this crate. Reads go through
/// [`VersionedTensor`]'s (`Deref`).
///
/// Extraction checks, in order: the dtype is `T`'s (`TypeError`); the memory is host-readable,
/// its flags known and the data aligned for `T` (`BufferError`); device memory the host can read
/// (pinned, managed) is made ready for it; no live `ReadwriteTensor` may share a byte with it
/// (`BufferError`, [`BorrowError`](super::BorrowError)).
///
/// ```no_run
/// use dlpack_abi_pyo3::{PyDlpackResult, ReadonlyTensor};
/// use pyo3::prelude::*;
///
/// /// The sum of a float64 array of any layout.
/// #[pyfunction]
/// fn total(x: ReadonlyTensor<f64>) -> PyDlpackResult<f64> {
///     Ok(x.view().iter::<f64>()?.sum())
/// }
/// ```
pub struct ReadonlyTensor<T: Element> {
    tensor: VersionedTensor,
    /// rust-numpy's shared borrow of a NumPy producer, when rust-numpy's registry is in use.
    _numpy: Option<numpy_borrow::NumpyBorrow>,
    _element: PhantomData<fn() -> T>,
}

impl<T: Element> ReadonlyTensor<T> {
    /// The elements in row-major order, for a C-contiguous tensor.
    ///
    /// # Errors
    /// [`AccessError::NotContiguous`] for other layouts (read them with
    /// `view().iter::<T>()`).
    ///
    /// ```no_run
    /// use dlpack_abi_pyo3::{PyDlpackResult, ReadonlyTensor};
    /// use pyo3::prelude::*;
    ///
    /// #[pyfunction]
    /// fn first(x: ReadonlyTensor<f32>) -> PyDlpackResult<Option<f32>> {
    ///     Ok(x.as_slice()?.first().copied())
    /// }
    /// ```
    pub fn as_slice(&self) -> Result<&[T], AccessError> {
        self.tensor.view().as_slice::<T>()
    }

    /// The import itself, still registered as shared until it is dropped.
    ///
    /// ```no_run
    /// use dlpack_abi_pyo3::{PyVersionedTensor, ReadonlyTensor};
    /// use pyo3::prelude::*;
    ///
    /// /// Hands a checked float32 array back to Python as a `dlpack_abi.Tensor`.
    /// #[pyfunction]
    /// fn checked(x: ReadonlyTensor<f32>) -> PyVersionedTensor {
    ///     x.into_inner().into()
    /// }
    /// ```
    pub fn into_inner(self) -> VersionedTensor {
        self.tensor
    }
}

impl<T: Element> Deref for ReadonlyTensor<T> {
    type Target = VersionedTensor;

    fn deref(&self) -> &VersionedTensor {
        &self.tensor
    }
}

/// Imports with [`from_dlpack`](super::from_dlpack)'s rules and checks as the type's docs say.
impl<'a, 'py, T: Element> FromPyObject<'a, 'py> for ReadonlyTensor<T> {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let (tensor, numpy) = import_checked::<T>(&source, false)?;
        Ok(Self {
            tensor,
            _numpy: numpy,
            _element: PhantomData,
        })
    }
}

/// A host tensor of `T` elements from any DLPack producer, writable through a safe `&mut`
/// ([`as_mut_slice`](Self::as_mut_slice) when C-contiguous, [`iter_mut`](Self::iter_mut) for
/// any layout that reaches no element twice, [`view_mut`](Self::view_mut)) because it is
/// registered as the *only* borrow of its memory while it lives: extraction is refused when
/// another live import may share a byte with it (the same array passed twice, `f(a, a[::2])`,
/// a `dlpack_abi.Tensor` of it, another extension's argument), and importing memory it may
/// share a byte with is refused while it lives. Disjoint parts of one array (`a[::2]` and
/// `a[1::2]`, two halves) may be borrowed together.
///
/// Extraction checks, in order: the dtype is `T`'s (`TypeError`); the memory is host-readable,
/// its flags known and the data aligned for `T` (`BufferError`); the producer allows writes (not
/// `READ_ONLY`, which legacy producers and read-only NumPy arrays are) and handed over the
/// array's own memory, not a copy (`IS_COPIED`: writes would be lost) (`BufferError`); device
/// memory the host can read (pinned, managed) is made ready for it; no other live import may
/// share a byte with it (`BufferError`, [`BorrowError`](super::BorrowError)).
///
/// **rust-numpy.** For a NumPy producer, rust-numpy's own borrow (its
/// `_RUST_NUMPY_BORROW_CHECKING_API` table) is taken too, for as long as the argument lives, so
/// a `PyReadwriteArray` of the same array in any extension and this argument refuse each other
/// (`BufferError`). Memory reached through another producer (`torch.from_numpy(a)`) is only in
/// this crate's registry, and `into_inner` ends rust-numpy's borrow.
///
/// **Not covered:** Python code and C extensions can still write the array meanwhile, as they
/// can under rust-numpy.
///
/// ```no_run
/// use dlpack_abi_pyo3::{PyDlpackResult, ReadwriteTensor};
/// use pyo3::prelude::*;
///
/// /// Multiplies a float32 array of any layout by `k`, in place: `scale_(a[::2], 2.0)`.
/// #[pyfunction]
/// fn scale_(mut x: ReadwriteTensor<f32>, k: f32) -> PyDlpackResult<()> {
///     x.iter_mut()?.for_each(|v| *v *= k);
///     Ok(())
/// }
/// ```
pub struct ReadwriteTensor<T: Element> {
    tensor: VersionedTensor,
    /// rust-numpy's mutable borrow of a NumPy producer (see [`ReadonlyTensor`]).
    _numpy: Option<numpy_borrow::NumpyBorrow>,
    _element: PhantomData<fn() -> T>,
}

impl<T: Element> ReadwriteTensor<T> {
    /// The elements as a mutable slice in row-major order, for a C-contiguous tensor.
    ///
    /// # Errors
    /// [`AccessError::NotContiguous`] for other layouts (write them through
    /// [`iter_mut`](Self::iter_mut), or [`view_mut`](Self::view_mut)).
    ///
    /// ```no_run
    /// use dlpack_abi_pyo3::{PyDlpackResult, ReadwriteTensor};
    /// use pyo3::prelude::*;
    ///
    /// #[pyfunction]
    /// fn fill_(mut x: ReadwriteTensor<i64>, value: i64) -> PyDlpackResult<()> {
    ///     x.as_mut_slice()?.fill(value);
    ///     Ok(())
    /// }
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], AccessError> {
        self.view_mut().into_mut_slice::<T>()
    }

    /// The elements in row-major order as `&mut T`, through the strides
    /// ([`TensorViewMut::iter_mut`]): in-place kernels over any layout whose strides reach no
    /// element twice (`a[::2]`, `a.T`, `a[::-1]`). Zip it with another argument's
    /// `view().iter::<T>()` to pair the elements of one index, after checking that the shapes
    /// are equal (`zip` stops at the shorter).
    ///
    /// # Errors
    /// [`AccessError::Overlapping`] (`BufferError`) for strides that may reach one element from
    /// two indices (a writable broadcast, `as_strided`): write those one element at a time
    /// through [`view_mut`](Self::view_mut) (`get_mut`, `set`). The dtype, host access and
    /// alignment were checked when the argument was extracted.
    ///
    /// ```no_run
    /// use dlpack_abi_pyo3::{PyDlpackResult, ReadonlyTensor, ReadwriteTensor};
    /// use pyo3::exceptions::PyValueError;
    /// use pyo3::prelude::*;
    ///
    /// /// out = a * out + x, in place, for float64 arrays of one shape in any layouts:
    /// /// `axpy_(2.0, a[::2], a[1::2])`.
    /// #[pyfunction]
    /// fn axpy_(a: f64, mut out: ReadwriteTensor<f64>, x: ReadonlyTensor<f64>) -> PyDlpackResult<()> {
    ///     if out.view().shape() != x.view().shape() {
    ///         return Err(PyValueError::new_err("axpy_ takes out and x of one shape").into());
    ///     }
    ///     for (out, x) in out.iter_mut()?.zip(x.view().iter::<f64>()?) {
    ///         *out = a * *out + x;
    ///     }
    ///     Ok(())
    /// }
    /// ```
    pub fn iter_mut(&mut self) -> Result<ElementsMut<'_, T>, AccessError> {
        self.view_mut().into_iter_mut::<T>()
    }

    /// A mutable view for any layout: `get_mut`, `set`, `iter_mut`, and with
    /// `dlpack-abi-ndarray`, `view_array_mut(&mut view)`.
    ///
    /// # Panics
    /// Never: a `READ_ONLY` tensor, the one refusal of the view, is refused when the
    /// `ReadwriteTensor` is made.
    ///
    /// ```no_run
    /// use dlpack_abi_pyo3::{PyDlpackResult, ReadwriteTensor};
    /// use pyo3::prelude::*;
    ///
    /// /// Sets the diagonal of a float64 matrix of any layout (a transposed one too).
    /// #[pyfunction]
    /// fn fill_diagonal_(mut x: ReadwriteTensor<f64>, value: f64) -> PyDlpackResult<()> {
    ///     let n = x.view().shape().iter().copied().min().unwrap_or(0);
    ///     let mut out = x.view_mut();
    ///     for i in 0..usize::try_from(n)? {
    ///         out.set::<f64>(&[i, i], value)?;
    ///     }
    ///     Ok(())
    /// }
    /// ```
    pub fn view_mut(&mut self) -> TensorViewMut<'_> {
        // SAFETY: the registry holds this tensor's memory as its only borrow (a mutable one:
        // every other import that may share a byte is refused while it lives), `&mut self`
        // makes this view the one way to it, and the producer allows writes (`READ_ONLY` and
        // `IS_COPIED` were refused before the borrow was taken).
        let view = unsafe { self.tensor.view_mut_unchecked() };
        view.expect("READ_ONLY tensors are refused before a ReadwriteTensor is made")
    }

    /// The import, registered as shared again: read-only access from here on.
    ///
    /// ```no_run
    /// use dlpack_abi_pyo3::{PyDlpackResult, PyVersionedTensor, ReadwriteTensor};
    /// use pyo3::prelude::*;
    ///
    /// /// Zeroes the array in place and returns it as a `dlpack_abi.Tensor`.
    /// #[pyfunction]
    /// fn zeroed(mut x: ReadwriteTensor<u8>) -> PyDlpackResult<PyVersionedTensor> {
    ///     x.as_mut_slice()?.fill(0);
    ///     Ok(x.into_inner().into())
    /// }
    /// ```
    pub fn into_inner(self) -> VersionedTensor {
        borrows::make_shared(&self.tensor);
        self.tensor
    }
}

impl<T: Element> Deref for ReadwriteTensor<T> {
    type Target = VersionedTensor;

    fn deref(&self) -> &VersionedTensor {
        &self.tensor
    }
}

/// Imports with [`from_dlpack`](super::from_dlpack)'s rules and checks as the type's docs say.
impl<'a, 'py, T: Element> FromPyObject<'a, 'py> for ReadwriteTensor<T> {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let (tensor, numpy) = import_checked::<T>(&source, true)?;
        Ok(Self {
            tensor,
            _numpy: numpy,
            _element: PhantomData,
        })
    }
}
