//! Exporting a `#[pyclass]` of one's own: the [`DlpackExporter`] trait says where the data is and
//! makes one tensor per consumer; the [`#[dlpack_exporter]`](crate::dlpack_exporter)
//! attribute, placed above the class's own `#[pymethods]` block, adds every dunder of the DLPack
//! and Arrow PyCapsule protocols to that block on top of it
//! ([`dlpack_pymethods!`](crate::dlpack_pymethods) does the same for a class whose block it
//! writes itself). The functions here are those dunders' bodies, for a class that writes its own
//! dunders and delegates.
//!
//! ```no_run
//! use std::sync::Arc;
//! use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
//! use dlpack_abi_pyo3::{DlpackExporter, PyDlpackResult, dlpack_exporter};
//! use dlpack_abi::raw::{kDLCPU, DLDevice};
//! use pyo3::prelude::*;
//!
//! /// numpy.from_dlpack(Ramp(5)), torch.from_dlpack(...) and pyarrow.array(...) all read it.
//! #[pyclass(frozen)]
//! struct Ramp { values: Arc<[f64]>, shape: [i64; 1] }
//! impl DlpackExporter for Ramp {
//!     fn dlpack_device(&self) -> DLDevice { DLDevice { device_type: kDLCPU, device_id: 0 } }
//!     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
//!         Ok(Export::new(Arc::clone(&self.values), &self.shape).finish()?)
//!     }
//! }
//!
//! #[dlpack_exporter] // adds __dlpack__, __dlpack_device__, ... to the block below
//! #[pymethods]
//! impl Ramp {
//!     #[new]
//!     fn new(n: i64) -> Self {
//!         Self { values: (0..n).map(|i| i as f64).collect(), shape: [n] }
//!     }
//!
//!     /// The author's own method, beside the protocol's.
//!     fn total(&self) -> f64 {
//!         self.values.iter().sum()
//!     }
//! }
//! ```
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::format;

use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};
use pyo3::PyClass;

use super::capsule::dlpack_capsule;
use super::errors::{PyDlpackResult, ToPyResult};
use super::fastcall::{self, MethodDef};
use super::gil::Held;
use super::{arrow, PyTensor};
use dlpack_abi::dlpack::{work_stream, ConsumerStream, DeviceEvent, VersionedTensor};
use dlpack_abi::raw::{kDLCPU, DLDevice, DLDeviceType};

/// A Python object that exports its memory as DLPack tensors (and, through the zero-copy
/// bridge, as Arrow device arrays): the two facts a producer knows, from which
/// [`#[dlpack_exporter]`](crate::dlpack_exporter) (or
/// [`dlpack_pymethods!`](crate::dlpack_pymethods)) writes the protocol.
///
/// - [`dlpack_device`](Self::dlpack_device) is `__dlpack_device__`: where the data lives.
/// - [`dlpack_tensor`](Self::dlpack_tensor) makes one export: a [`VersionedTensor`] sharing the
///   object's memory (an `Arc` clone of it, typically). It is also the **stream
///   hook**: it receives the consumer's stream, already checked against the array API's table
///   for the device ([`ConsumerStream::parse`]), and makes the data ready there before it
///   returns, or refuses with an exception. CPU data has nothing to order.
///
/// Whether consumers may write is the tensor's own `READ_ONLY` flag, which
/// [`Export`](dlpack_abi::dlpack::Export) sets from the owner (a shared `Arc<[T]>` is read-only, a
/// `Vec<T>` moved in is not), so a safe implementation cannot hand out writable memory that Rust
/// still reads.
///
/// The rest is the protocol's, the same for every class: versions (`max_version`, with a legacy
/// capsule for old consumers), `copy` (64-byte aligned, `IS_COPIED`), `dl_device` (a copy to the
/// CPU from host-accessible memory), capsule names and destructors, the exchange API's table, and
/// the Arrow dunders.
///
/// ```no_run
/// use std::sync::Arc;
/// use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
/// use dlpack_abi_pyo3::{DlpackExporter, PyDlpackResult};
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
/// use pyo3::prelude::*;
///
/// /// An 8-bit image that NumPy, pyarrow or JAX read zero-copy: `np.from_dlpack(image)`.
/// #[pyclass(frozen, immutable_type)]
/// struct Image { pixels: Arc<[u8]>, height: i64, width: i64 }
///
/// impl DlpackExporter for Image {
///     fn dlpack_device(&self) -> DLDevice {
///         DLDevice { device_type: kDLCPU, device_id: 0 }
///     }
///     fn dlpack_tensor(&self, _stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
///         // Shares the pixels: read-only, since the Arc is shared.
///         Ok(Export::new(Arc::clone(&self.pixels), &[self.height, self.width]).finish()?)
///     }
/// }
///
/// #[dlpack_abi_pyo3::dlpack_exporter]
/// #[pymethods]
/// impl Image {
///     #[new]
///     fn new(height: i64, width: i64) -> PyDlpackResult<Self> {
///         let pixels = vec![0u8; usize::try_from(height * width)?].into();
///         Ok(Self { pixels, height, width })
///     }
/// }
/// ```
pub trait DlpackExporter {
    /// The device every tensor of [`dlpack_tensor`](Self::dlpack_tensor) lives on.
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
    /// use dlpack_abi_pyo3::{DlpackExporter, PyDlpackResult};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice};
    /// use pyo3::prelude::*;
    ///
    /// #[pyclass(frozen)]
    /// struct Samples { values: std::sync::Arc<[i16]> }
    /// impl DlpackExporter for Samples {
    ///     fn dlpack_device(&self) -> DLDevice {
    ///         DLDevice { device_type: kDLCPU, device_id: 0 } // what `__dlpack_device__` returns
    ///     }
    ///     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
    ///         Ok(Export::new(self.values.clone(), &[self.values.len() as i64]).finish()?)
    ///     }
    /// }
    /// dlpack_abi_pyo3::dlpack_pymethods! { impl Samples {} }
    /// ```
    fn dlpack_device(&self) -> DLDevice;

    /// A new tensor sharing this object's data for one consumer, ready for use on `stream`.
    ///
    /// `stream` is [`ConsumerStream::Unspecified`] for CPU data and for consumers that name
    /// none; [`ConsumerStream::Host`] for copies (`copy=True`, `dl_device` the CPU) and for the
    /// Arrow dunders without an [`arrow_event`](Self::arrow_event) (whose exports must be ready
    /// for any use when they return); for the exchange API's `no_sync` export, the stream
    /// [`current_work_stream`](Self::current_work_stream) names (the device's default stream
    /// for `None`), where its consumer works; [`ConsumerStream::NoSync`] for `stream=-1` and
    /// for Arrow device exports that carry an event. A producer whose ordering is a
    /// [`StreamOrder`](dlpack_abi::dlpack::StreamOrder) calls its `ready_on` here; one that holds
    /// data imported from Python holds it as a [`PyTensor`] and returns
    /// [`PyTensor::share`].
    ///
    /// # Errors
    /// Any exception, raised to the consumer as it is: a stream this producer cannot order on is
    /// a `BufferError` by the array API's convention (what an
    /// [`OrderError`](dlpack_abi::dlpack::OrderError) converts to).
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
    /// use dlpack_abi_pyo3::{DlpackExporter, PyDlpackResult};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice};
    /// use pyo3::prelude::*;
    ///
    /// #[pyclass(frozen)]
    /// struct Samples { values: std::sync::Arc<[i16]> }
    /// impl DlpackExporter for Samples {
    ///     fn dlpack_device(&self) -> DLDevice {
    ///         DLDevice { device_type: kDLCPU, device_id: 0 }
    ///     }
    ///     fn dlpack_tensor(&self, stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
    ///         // CPU data is ready on any stream; a device producer orders its work on `stream` here.
    ///         let _ = stream;
    ///         let len = i64::try_from(self.values.len())?;
    ///         // One tensor per consumer, sharing the samples (read-only: the Arc is shared).
    ///         Ok(Export::new(self.values.clone(), &[len]).finish()?)
    ///     }
    /// }
    /// dlpack_abi_pyo3::dlpack_pymethods! { impl Samples {} }
    /// ```
    fn dlpack_tensor(&self, stream: ConsumerStream) -> PyDlpackResult<VersionedTensor>;

    /// The event an Arrow device export (`__arrow_c_device_array__`) carries as its
    /// `sync_event`, recorded after the producer's pending writes (a
    /// [`StreamOrder::record_event`](dlpack_abi::dlpack::StreamOrder::record_event)), which the
    /// consumer waits on; the tensor is then asked for with [`ConsumerStream::NoSync`]. The
    /// default, `None`, asks for it with [`ConsumerStream::Host`] instead: ready for any use.
    ///
    /// # Errors
    /// Any exception, raised to the consumer as it is.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ConsumerStream, VersionedTensor};
    /// use dlpack_abi_pyo3::DlpackExporter;
    /// use dlpack_abi::raw::{kDLCPU, DLDevice};
    ///
    /// struct Empty;
    /// impl DlpackExporter for Empty {
    ///     fn dlpack_device(&self) -> DLDevice { DLDevice { device_type: kDLCPU, device_id: 0 } }
    ///     fn dlpack_tensor(&self, _: ConsumerStream) -> dlpack_abi_pyo3::PyDlpackResult<VersionedTensor> {
    ///         unimplemented!()
    ///     }
    /// }
    /// assert!(Empty.arrow_event().unwrap().is_none());
    /// ```
    fn arrow_event(&self) -> PyDlpackResult<Option<Box<dyn DeviceEvent>>> {
        Ok(None)
    }

    /// The exchange API's `current_work_stream` for this class: the stream, as a handle, on
    /// which this producer's work on `device` runs and on which a `no_sync` consumer should
    /// run its own (`torch.cuda.current_stream()` for PyTorch); `None` (a NULL stream: the
    /// default stream, or no streams) by default.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ConsumerStream, VersionedTensor};
    /// use dlpack_abi_pyo3::DlpackExporter;
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// struct Kernels;
    /// impl DlpackExporter for Kernels {
    ///     fn dlpack_device(&self) -> DLDevice { DLDevice { device_type: kDLCUDA, device_id: 0 } }
    ///     fn dlpack_tensor(&self, _: ConsumerStream) -> dlpack_abi_pyo3::PyDlpackResult<VersionedTensor> {
    ///         unimplemented!()
    ///     }
    ///     fn current_work_stream(_: DLDevice) -> Option<usize> { Some(0x7f00_1000) }
    /// }
    /// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
    /// assert_eq!(Kernels::current_work_stream(gpu), Some(0x7f00_1000));
    /// ```
    fn current_work_stream(device: DLDevice) -> Option<usize>
    where
        Self: Sized,
    {
        let _ = device;
        None
    }
}

/// Asks `exporter` for a tensor and checks that it lies where `__dlpack_device__` says.
fn tensor_of<E: DlpackExporter + ?Sized>(
    exporter: &E,
    device: DLDevice,
    stream: ConsumerStream,
) -> PyResult<VersionedTensor> {
    let tensor = exporter.dlpack_tensor(stream)?;
    let found = tensor.view().device();
    if found != device {
        return Err(PyBufferError::new_err(format!(
            "the exporter's tensor is on {found}, but its __dlpack_device__ is {device}"
        )));
    }
    Ok(tensor)
}

/// The array API's checks of a `__dlpack__` request for data on `device`: the stream the data
/// must be ready on (the consumer's, which must be `None` when `dl_device` is the CPU, where the
/// producer synchronises; [`ConsumerStream::Host`] for a copy, which the host makes), and
/// whether the request asks for a copy.
pub(crate) fn check_request(
    device: DLDevice,
    stream: Option<i64>,
    dl_device: Option<(i32, i32)>,
    copy: Option<bool>,
) -> PyResult<(ConsumerStream, bool)> {
    if stream.is_some() && matches!(dl_device, Some((device_type, _)) if device_type == kDLCPU.0) {
        return Err(PyBufferError::new_err(
            "stream must be None when dl_device is the CPU (the producer synchronises)",
        ));
    }
    let stream = ConsumerStream::parse(device, stream).py()?;
    let copy = copy_requested(device, dl_device, copy)?;
    // A copy is made on the host, which reads the data: the producer's work must be complete.
    Ok((if copy { ConsumerStream::Host } else { stream }, copy))
}

/// Whether `__dlpack__(dl_device=..., copy=...)` asks for a copy of data on `device`, or the
/// `BufferError` that the array API calls for when it cannot be had: another device than
/// `device` is reachable only by a copy to the CPU (`(kDLCPU, 0)`: DLPack numbers plain CPU
/// memory 0) from host-accessible memory.
fn copy_requested(
    device: DLDevice,
    dl_device: Option<(i32, i32)>,
    copy: Option<bool>,
) -> PyResult<bool> {
    let Some((device_type, device_id)) = dl_device else {
        return Ok(copy == Some(true));
    };
    let target = DLDevice {
        device_type: DLDeviceType(device_type),
        device_id,
    };
    if target == device {
        return Ok(copy == Some(true));
    }
    let the_cpu = target.device_type == kDLCPU && target.device_id == 0;
    if the_cpu && device.device_type.is_host_accessible() {
        if copy == Some(false) {
            return Err(PyBufferError::new_err(
                "dl_device asks for a copy to the CPU but copy=False",
            ));
        }
        return Ok(true);
    }
    let hint = if target.device_type == kDLCPU && !the_cpu {
        " (the CPU is device 0)"
    } else {
        ""
    };
    Err(PyBufferError::new_err(format!(
        "cannot export a tensor on {device} to {target}{hint}"
    )))
}

/// Whether `max_version` asks for the versioned struct (a major version of 1 or more).
pub(crate) fn wants_versioned(max_version: Option<(i64, i64)>) -> bool {
    matches!(max_version, Some((major, _)) if major >= 1)
}

/// `__dlpack__` of an exporter, with the array API's rules: `stream` checked for the device and
/// passed to the hook, a versioned capsule for `max_version` 1.x (the exporter's own tensor,
/// with no further allocation) and a legacy one otherwise (`BufferError` for read-only data,
/// which a legacy struct cannot mark), `copy` and `dl_device` as [`PyTensor::__dlpack__`]
/// handles them.
///
/// # Errors
/// `BufferError` (or `ValueError` for a `stream` no device allows) for a request the array API
/// refuses; the exporter's own exceptions as they are.
///
/// ```no_run
/// use dlpack_abi_pyo3::{exporter, DlpackExporter};
/// use pyo3::prelude::*;
/// use pyo3::types::PyCapsule;
///
/// // In a `#[pymethods]` block of a class that implements `DlpackExporter`:
/// fn __dlpack__<'py>(this: &impl DlpackExporter, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
///     exporter::dlpack(this, py, None, Some((1, 3)), None, None)
/// }
/// ```
pub fn dlpack<'py, E: DlpackExporter + ?Sized>(
    exporter: &E,
    py: Python<'py>,
    stream: Option<i64>,
    max_version: Option<(i64, i64)>,
    dl_device: Option<(i32, i32)>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let device = exporter.dlpack_device();
    let (stream, copy) = check_request(device, stream, dl_device, copy)?;
    let tensor = tensor_of(exporter, device, stream)?;
    let versioned = wants_versioned(max_version);
    if versioned && !copy {
        return dlpack_capsule(py, tensor);
    }
    // A copy, or a legacy struct: the `Tensor` rules, over this one export.
    PyTensor::with(Held::local(tensor), true).capsule(py, versioned, copy)
}

/// `__dlpack_device__` of an exporter: `(device_type, device_id)` with DLPack numbering.
///
/// ```
/// use dlpack_abi::dlpack::{ConsumerStream, VersionedTensor};
/// use dlpack_abi_pyo3::{exporter, DlpackExporter};
/// use dlpack_abi::raw::{kDLCUDA, DLDevice};
///
/// struct OnGpu;
/// impl DlpackExporter for OnGpu {
///     fn dlpack_device(&self) -> DLDevice {
///         DLDevice { device_type: kDLCUDA, device_id: 1 }
///     }
///     fn dlpack_tensor(&self, _: ConsumerStream) -> dlpack_abi_pyo3::PyDlpackResult<VersionedTensor> {
///         unimplemented!()
///     }
/// }
/// assert_eq!(exporter::dlpack_device(&OnGpu), (2, 1));
/// ```
pub fn dlpack_device<E: DlpackExporter + ?Sized>(exporter: &E) -> (i32, i32) {
    let device = exporter.dlpack_device();
    (device.device_type.0, device.device_id)
}

/// `__arrow_c_device_array__` of an exporter: `(arrow_schema, arrow_device_array)` capsules
/// through the zero-copy bridge (primitive dtypes, `bool` as `arrow.bool8`, more than one
/// dimension as `arrow.fixed_shape_tensor`), checked against `requested_schema` when one is given.
///
/// # Errors
/// `BufferError` for a tensor Arrow cannot describe, `NotImplementedError` for keywords other
/// than `None`, `ValueError` for a `requested_schema` that differs.
///
/// ```no_run
/// use dlpack_abi_pyo3::{exporter, DlpackExporter};
/// use pyo3::prelude::*;
/// use pyo3::types::PyTuple;
///
/// fn arrow<'py>(this: &impl DlpackExporter, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
///     exporter::arrow_c_device_array(this, py, None, None)
/// }
/// ```
pub fn arrow_c_device_array<'py, E: DlpackExporter + ?Sized>(
    exporter: &E,
    py: Python<'py>,
    requested_schema: Option<&Bound<'py, PyAny>>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyTuple>> {
    arrow::check_device_kwargs(kwargs)?;
    let device = exporter.dlpack_device();
    let event = exporter.arrow_event()?;
    let stream = match event {
        Some(_) => ConsumerStream::NoSync,
        None => ConsumerStream::Host,
    };
    let tensor = tensor_of(exporter, device, stream)?;
    arrow::tensor_capsules(py, tensor, requested_schema, true, event)
}

/// `__arrow_c_array__` of an exporter of CPU data: `(arrow_schema, arrow_array)` capsules, as
/// [`arrow_c_device_array`] makes them.
///
/// # Errors
/// As [`arrow_c_device_array`], and `BufferError` for data that is not on the CPU.
///
/// ```no_run
/// use dlpack_abi_pyo3::{exporter, DlpackExporter};
/// use pyo3::prelude::*;
/// use pyo3::types::PyTuple;
///
/// fn arrow<'py>(this: &impl DlpackExporter, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
///     exporter::arrow_c_array(this, py, None)
/// }
/// ```
pub fn arrow_c_array<'py, E: DlpackExporter + ?Sized>(
    exporter: &E,
    py: Python<'py>,
    requested_schema: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let device = exporter.dlpack_device();
    let tensor = tensor_of(exporter, device, ConsumerStream::Host)?;
    arrow::tensor_capsules(py, tensor, requested_schema, false, None)
}

/// The `__dlpack__` method of an exporter class `T`: a method descriptor whose keywords are
/// parsed by hand (the protocol's hottest call), calling [`dlpack`].
/// [`dlpack_pymethods!`](crate::dlpack_pymethods) keeps one in a `static` per class.
///
/// ```no_run
/// use dlpack_abi::dlpack::{ConsumerStream, VersionedTensor};
/// use dlpack_abi_pyo3::{DlpackExporter, PyDlpackResult};
/// use pyo3::prelude::*;
/// #[pyclass]
/// struct Image;
/// impl DlpackExporter for Image {
///     fn dlpack_device(&self) -> dlpack_abi::raw::DLDevice { unimplemented!() }
///     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> { unimplemented!() }
/// }
/// use dlpack_abi_pyo3::exporter::DlpackMethod;
///
/// static IMAGE_DLPACK: DlpackMethod<Image> = DlpackMethod::of();
/// Python::attach(|py| {
///     let method = IMAGE_DLPACK.descriptor(py)?; // the class attribute `Image.__dlpack__`
///     PyResult::Ok(())
/// });
/// ```
pub struct DlpackMethod<T>(MethodDef<T>);

impl<T: DlpackExporter + PyClass> DlpackMethod<T> {
    /// The method of `T`.
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::{ConsumerStream, VersionedTensor};
    /// use dlpack_abi_pyo3::{DlpackExporter, PyDlpackResult, exporter::DlpackMethod};
    /// use pyo3::prelude::*;
    ///
    /// #[pyclass]
    /// struct Image;
    /// impl DlpackExporter for Image {
    ///     fn dlpack_device(&self) -> dlpack_abi::raw::DLDevice { unimplemented!() }
    ///     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> { unimplemented!() }
    /// }
    /// static IMAGE_DLPACK: DlpackMethod<Image> = DlpackMethod::of();
    /// ```
    pub const fn of() -> Self {
        // SAFETY: `exporter_dlpack::<T>` takes its `self` for a `T`.
        Self(unsafe { MethodDef::dlpack(exporter_dlpack::<T>) })
    }

    /// The method descriptor, for a `#[classattr]` named `__dlpack__`.
    ///
    /// # Errors
    /// Python's, when the descriptor cannot be made.
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::{ConsumerStream, VersionedTensor};
    /// use dlpack_abi_pyo3::{DlpackExporter, PyDlpackResult, exporter::DlpackMethod};
    /// use pyo3::prelude::*;
    ///
    /// #[pyclass]
    /// struct Image;
    /// impl DlpackExporter for Image {
    ///     fn dlpack_device(&self) -> dlpack_abi::raw::DLDevice { unimplemented!() }
    ///     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> { unimplemented!() }
    /// }
    /// #[pymethods]
    /// impl Image {
    ///     #[classattr]
    ///     #[pyo3(name = "__dlpack__")]
    ///     fn dlpack_method(py: Python<'_>) -> PyResult<Py<PyAny>> {
    ///         static METHOD: DlpackMethod<Image> = DlpackMethod::of();
    ///         METHOD.descriptor(py)
    ///     }
    /// }
    /// ```
    pub fn descriptor(&'static self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.0.descriptor(py)
    }
}

/// `__dlpack__` of an exporter class `T` (`METH_FASTCALL | METH_KEYWORDS`).
///
/// # Safety
/// Called by CPython through `T`'s method descriptor: attached, `slf` a `T`, vectorcall
/// arguments.
unsafe extern "C" fn exporter_dlpack<T: DlpackExporter + PyClass>(
    slf: *mut pyo3::ffi::PyObject,
    args: *const *mut pyo3::ffi::PyObject,
    nargs: pyo3::ffi::Py_ssize_t,
    kwnames: *mut pyo3::ffi::PyObject,
) -> *mut pyo3::ffi::PyObject {
    let export: fastcall::Export<T> = |object, args| {
        let this = object.try_borrow()?;
        dlpack(
            &*this,
            object.py(),
            args.stream,
            args.max_version,
            args.dl_device,
            args.copy,
        )
    };
    // SAFETY: as this function's contract.
    unsafe { fastcall::call(export, slf, args, nargs, kwnames) }
}

/// The exchange API's owning export for an exporter class `T`: what `__dlpack__(max_version=(1,
/// 3))` makes, ready on the stream `T`'s `current_work_stream` names for the device (the
/// exchange API's consumer works there, or orders its own stream after it).
///
/// # Safety
/// Attached to the interpreter, with `object` a live object.
pub(crate) unsafe fn exchange_export<T: DlpackExporter + PyClass>(
    py: Python<'_>,
    object: *mut core::ffi::c_void,
) -> PyResult<VersionedTensor> {
    // SAFETY: a live object, attached (caller), borrowed for the call.
    let object = unsafe { Bound::from_borrowed_ptr_or_err(py, object.cast()) }?;
    let object = object
        .cast_into::<T>()
        .map_err(|error| PyTypeError::new_err(alloc::string::ToString::to_string(&error)))?;
    let this = object.try_borrow()?;
    let device = this.dlpack_device();
    let work = T::current_work_stream(device).unwrap_or(0);
    tensor_of(&*this, device, work_stream(device, work))
}

/// Gives a `#[pyclass]` that implements [`DlpackExporter`](crate::DlpackExporter) the
/// whole producer side of the DLPack and Arrow PyCapsule protocols, next to its own methods:
/// `__dlpack__`, `__dlpack_device__`, `__dlpack_c_exchange_api__` (a table of the class's own),
/// `__arrow_c_device_array__` and `__arrow_c_array__`.
///
/// The macro writes the class's `#[pymethods]` block itself: write the class's own methods
/// inside it (an empty `impl MyClass {}` when it has none). pyo3 allows one `#[pymethods]`
/// block per class, so a block of one's own **next to** the macro is refused (E0119, conflicting
/// implementations of `PyMethods`): to keep your own `#[pymethods]` block, put the
/// [`#[dlpack_exporter]`](crate::dlpack_exporter) attribute above it instead, which
/// adds the same methods to it. (With pyo3's `multiple-pymethods` feature, which allows several
/// blocks per class, `dlpack_pymethods! { impl MyClass {} }` may also sit beside your block.)
///
/// The class keeps its own name and module (`#[pyclass(module = "...")]`). Make it
/// `immutable_type` where the build allows (pyo3 refuses it in stable-ABI builds before
/// CPython 3.14): consumers such as `from_dlpack` then look its exchange table up once per type
/// instead of once per call.
///
/// ```no_run
/// use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
/// use dlpack_abi_pyo3::{DlpackExporter, PyDlpackResult};
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
/// use pyo3::prelude::*;
///
/// /// A ramp of `n` float32 values that NumPy writes into: each export moves a fresh vector in.
/// #[pyclass(frozen, immutable_type, module = "my_package")]
/// struct Ramp { n: usize }
///
/// impl DlpackExporter for Ramp {
///     fn dlpack_device(&self) -> DLDevice {
///         DLDevice { device_type: kDLCPU, device_id: 0 }
///     }
///     fn dlpack_tensor(&self, _stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
///         let values: Vec<f32> = (0..self.n).map(|i| i as f32).collect();
///         Ok(Export::new(values, &[i64::try_from(self.n)?]).finish()?)
///     }
/// }
///
/// dlpack_abi_pyo3::dlpack_pymethods! {
///     impl Ramp {
///         #[new]
///         fn new(n: usize) -> Self {
///             Self { n }
///         }
///     }
/// }
/// ```
#[macro_export]
macro_rules! dlpack_pymethods {
    ($(#[$attribute:meta])* impl $class:ty { $($methods:tt)* }) => {
        $crate::__dlpack_exporter_methods! {
            [#[::pyo3::pymethods] $(#[$attribute])*]
            impl $class { $($methods)* }
        }
    };
}

/// The body of [`dlpack_pymethods!`](crate::dlpack_pymethods) and of
/// [`#[dlpack_exporter]`](crate::dlpack_exporter): the block's attributes (its
/// `#[pymethods]` among them) and methods, with the protocol's methods added. Not an API.
#[doc(hidden)]
#[macro_export]
macro_rules! __dlpack_exporter_methods {
    ([$($attributes:tt)*] impl $class:ty { $($methods:tt)* }) => {
        $($attributes)*
        impl $class {
            $($methods)*

            /// The DLPack export (array API 2023.12).
            #[classattr]
            #[pyo3(name = "__dlpack__")]
            fn __dlpack_abi_dlpack_method(
                py: ::pyo3::Python<'_>,
            ) -> ::pyo3::PyResult<::pyo3::Py<::pyo3::PyAny>> {
                static DLPACK: $crate::exporter::DlpackMethod<$class> =
                    $crate::exporter::DlpackMethod::of();
                DLPACK.descriptor(py)
            }

            /// Return ``(device_type, device_id)``, with DLPack's numbering.
            fn __dlpack_device__(&self) -> (i32, i32) {
                $crate::exporter::dlpack_device(self)
            }

            /// The DLPack C exchange API table of this class (a ``dlpack_exchange_api`` capsule).
            #[classattr]
            fn __dlpack_c_exchange_api__(
                py: ::pyo3::Python<'_>,
            ) -> ::pyo3::PyResult<::pyo3::Py<::pyo3::types::PyCapsule>> {
                static API: $crate::ExchangeApi = $crate::ExchangeApi::of::<$class>();
                API.capsule(py)
            }

            /// Return ``(arrow_schema, arrow_device_array)`` capsules sharing the memory.
            #[pyo3(signature = (requested_schema=None, **kwargs))]
            fn __arrow_c_device_array__<'py>(
                &self,
                py: ::pyo3::Python<'py>,
                requested_schema: ::core::option::Option<::pyo3::Bound<'py, ::pyo3::PyAny>>,
                kwargs: ::core::option::Option<::pyo3::Bound<'py, ::pyo3::types::PyDict>>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::types::PyTuple>> {
                $crate::exporter::arrow_c_device_array(
                    self, py, requested_schema.as_ref(), kwargs.as_ref(),
                )
            }

            /// Return ``(arrow_schema, arrow_array)`` capsules sharing the memory (CPU data).
            #[pyo3(signature = (requested_schema=None))]
            fn __arrow_c_array__<'py>(
                &self,
                py: ::pyo3::Python<'py>,
                requested_schema: ::core::option::Option<::pyo3::Bound<'py, ::pyo3::PyAny>>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::types::PyTuple>> {
                $crate::exporter::arrow_c_array(self, py, requested_schema.as_ref())
            }
        }
    };
}
