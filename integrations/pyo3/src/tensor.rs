//! `dlpack_abi.Tensor`: a tensor handed to Python, exported through `__dlpack__`, the C exchange
//! API and the Arrow device-array capsules, sharing its memory with every consumer.
#![allow(unsafe_code)]

use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;

use pyo3::exceptions::{PyBufferError, PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict, PyTuple};

use super::capsule::{dlpack_capsule, DlpackCapsule};
use super::copy::{copy_tensor, gather, HostTensor};
use super::errors::ToPyResult;
use super::exporter::{check_request, wants_versioned};
use super::fastcall::{self, MethodDef};
use super::gil::Held;
use super::shared::{Share, SharedTensor};
use super::{arrow, Live};
use dlpack_abi::dlpack::{
    flagless_representable, ConsumerStream, DeviceEvent, ManagedTensor, StreamOrder, TensorView,
    VersionedTensor,
};
use dlpack_abi::raw::{
    kDLCPU, DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensor,
    DLManagedTensorVersioned, DLPackFlags,
};

/// A DLPack tensor that shares its memory with every consumer.
///
/// Every export (``__dlpack__``, the C exchange API ``__dlpack_c_exchange_api__``, and
/// ``__arrow_c_device_array__`` / ``__arrow_c_array__`` through the zero-copy Arrow bridge)
/// shares the memory, one small allocation each, and copies only when asked to. The memory is
/// freed when the Tensor and every export are gone.
///
/// Make one with ``Tensor.from_dlpack(obj)`` (any DLPack producer), ``Tensor.from_bytes(...)`` or
/// ``Tensor.from_arrow(obj)``; hand it to NumPy, pyarrow, JAX or tvm-ffi with their own
/// ``from_dlpack``.
#[cfg_attr(
    not(doc),
    doc = r#"
Examples
--------
>>> import numpy as np
>>> t = dlpack_abi.Tensor.from_dlpack(np.arange(4, dtype=np.int32))
>>> t
Tensor(shape=(4,), dtype=int32, device=cpu:0, readonly=False)
>>> np.from_dlpack(t)
array([0, 1, 2, 3], dtype=int32)"#
)]
#[cfg_attr(
    doc,
    doc = r#"
**In Rust** ([`PyTensor`], the type of `dlpack_abi.Tensor`): made with [`new`](Self::new), the exports are `READ_ONLY` and Rust keeps shared access
([`tensor`](Self::tensor)). Made with [`new_writable`](Self::new_writable), consumers may
write (unless the tensor itself is `READ_ONLY`), so Rust gives up access to the elements.

```no_run
use dlpack_abi::dlpack::{AlignedVec, Export, VersionedTensor};
use dlpack_abi_pyo3::{PyDlpackResult, PyTensor};
use pyo3::prelude::*;

#[pyfunction]
fn ramp(n: usize) -> PyDlpackResult<PyTensor> {
    let values: AlignedVec<f32> = (0..n).map(|i| i as f32).collect();
    let tensor: VersionedTensor = Export::new(values, &[i64::try_from(n)?]).finish()?;
    Ok(PyTensor::new(tensor)) // numpy.from_dlpack(ramp(4)) is a read-only view
}
```"#
)]
// Immutable where the build allows it (the stable ABI only from 3.14): `from_dlpack` then
// remembers the type's exchange table.
#[cfg_attr(
    not(Py_LIMITED_API),
    pyclass(frozen, immutable_type, module = "dlpack_abi", name = "Tensor")
)]
#[cfg_attr(
    Py_LIMITED_API,
    pyclass(frozen, module = "dlpack_abi", name = "Tensor")
)]
pub struct PyTensor {
    shared: SharedTensor,
    writable: bool,
    /// Where the data is ready, and how it is made ready elsewhere.
    order: Ordering,
}

/// Where a `Tensor`'s data is ready.
#[derive(Clone)]
enum Ordering {
    /// Everywhere: made in Rust without a hook, its maker promises the work is complete.
    Complete,
    /// On its device's default stream, as the array API assumes of data given without a
    /// stream: imported from Python, or returned to it as a `VersionedTensor`.
    DefaultStream,
    /// Where the hook says: a producer's own ([`PyTensor::with_order`]), or the stream an
    /// import was made for ([`StreamReady`](dlpack_abi::dlpack::StreamReady)).
    Hook(Arc<dyn StreamOrder>),
}

impl PyTensor {
    /// Wraps `tensor`; its exports are `READ_ONLY`, and Rust keeps shared access.
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi_pyo3::{PyDlpackResult, PyTensor};
    /// use pyo3::prelude::*;
    ///
    /// #[pyfunction] // numpy.from_dlpack(ramp(4)) reads [0, 1, 2, 3], read-only
    /// fn ramp(n: i64) -> PyDlpackResult<PyTensor> {
    ///     let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
    ///     Ok(PyTensor::new(Export::new(values, &[n]).finish()?))
    /// }
    /// ```
    pub fn new(tensor: VersionedTensor) -> Self {
        Self::with(Held::local(tensor), false)
    }

    /// Wraps `tensor` with writable exports (unless it is `READ_ONLY`): consumers may write the
    /// elements, so [`tensor`](Self::tensor) is `None` from then on.
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi_pyo3::{PyDlpackResult, PyTensor};
    /// use pyo3::prelude::*;
    ///
    /// #[pyfunction] // a fresh buffer the consumer may fill: numpy.from_dlpack(zeros(8))[0] = 1.0
    /// fn zeros(n: i64) -> PyDlpackResult<PyTensor> {
    ///     let tensor = PyTensor::new_writable(Export::new(vec![0.0f32; usize::try_from(n)?], &[n]).finish()?);
    ///     assert!(tensor.tensor().is_none()); // Rust gave up shared access
    ///     Ok(tensor)
    /// }
    /// ```
    pub fn new_writable(tensor: VersionedTensor) -> Self {
        Self::with(Held::local(tensor), true)
    }

    /// A tensor imported from Python: writable exports unless `READ_ONLY`, dropped attached,
    /// ready on its device's default stream (CPU data: everywhere).
    pub(crate) fn imported(tensor: VersionedTensor) -> Self {
        let mut tensor = Self::with(Held::imported(tensor), true);
        if tensor.device().device_type != kDLCPU {
            tensor.order = Ordering::DefaultStream;
        }
        tensor
    }

    pub(crate) fn with(tensor: Held<VersionedTensor>, writable: bool) -> Self {
        let writable = writable && !tensor.view().flags().contains(DLPackFlags::READ_ONLY);
        Self {
            shared: SharedTensor::new(tensor),
            writable,
            order: Ordering::Complete,
        }
    }

    /// Imports any DLPack producer as `Tensor.from_dlpack` does: without a copy, and ready
    /// where the import was made for, so that every export of it is ready where its consumer
    /// uses it (through the installed [stream runtime](super::install_stream_runtime)), or
    /// refused. `request.stream` names the stream to import for: `None` is the device's
    /// default stream, `-1` leaves every hand-over to the caller. A producer whose type has an
    /// exchange API table is imported through it for a plain request, ready on the producer's
    /// current work stream.
    ///
    /// # Errors
    /// Those of [`from_dlpack`](super::from_dlpack); an ordering refusal as `BufferError`.
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::ConsumerStream;
    /// use dlpack_abi_pyo3::{DlpackExporter, DlpackRequest, PyDlpackResult, PyTensor};
    /// use dlpack_abi::dlpack::VersionedTensor;
    /// use dlpack_abi::raw::DLDevice;
    /// use pyo3::prelude::*;
    ///
    /// /// Holds any producer's data and hands it on, ready where each consumer asks for it.
    /// #[pyclass(frozen)]
    /// struct Holder { data: PyTensor }
    /// impl DlpackExporter for Holder {
    ///     fn dlpack_device(&self) -> DLDevice { self.data.device() }
    ///     fn dlpack_tensor(&self, stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
    ///         Ok(self.data.share(stream)?)
    ///     }
    /// }
    /// dlpack_abi_pyo3::dlpack_pymethods! {
    ///     impl Holder {
    ///         #[new]
    ///         fn new(source: &Bound<'_, PyAny>) -> PyDlpackResult<Self> {
    ///             Ok(Self { data: PyTensor::from_dlpack(source, &DlpackRequest::default())? })
    ///         }
    ///     }
    /// }
    /// ```
    pub fn from_dlpack(
        source: &Bound<'_, PyAny>,
        request: &super::DlpackRequest,
    ) -> PyResult<Self> {
        // Our own tensor: share it, as an export would, without making one.
        if request.is_plain() {
            if let Ok(ours) = source.cast::<PyTensor>() {
                let ours = ours.get();
                return Ok(Self {
                    shared: ours.shared.clone(),
                    writable: ours.writable,
                    // The same data, with the same pending work.
                    order: ours.order.clone(),
                });
            }
        }
        let (tensor, stream) = super::import::import(source, request)?;
        let mut imported = Self::imported(tensor);
        let device = imported.device();
        // Ready on the device's default stream: `DefaultStream` already says so, and makes its
        // hook only at a hand-over that needs one (issue 38: building it at every import, a
        // runtime lookup and an allocation, cost a third of a CUDA import from PyTorch).
        let on_default = super::streams::on_default_stream(device, stream);
        if matches!(imported.order, Ordering::DefaultStream) && !on_default {
            if let Some(ready) = super::streams::ready_on(device, stream).py()? {
                imported.order = Ordering::Hook(ready);
            }
        }
        Ok(imported)
    }

    /// Gives the tensor its producer's ordering hook: every export is then ready where the
    /// consumer uses it. `__dlpack__` calls [`StreamOrder::ready_on`] with the consumer's
    /// `stream` (parsed for the device; [`ConsumerStream::Host`] for a copy),
    /// `__arrow_c_array__` with [`ConsumerStream::Host`], and `__arrow_c_device_array__` asks
    /// [`StreamOrder::record_event`] for the array's `sync_event`, `tobytes` with
    /// [`ConsumerStream::Host`]. The exchange API's `no_sync` export is made ready on the stream
    /// the table's `current_work_stream` names (the device's default stream: the exchange API's
    /// consumer works there, or orders its own stream after it). Only `stream=-1` skips it.
    ///
    /// A `Tensor` made in Rust without a hook has no pending work: its data was ready when it
    /// was made. One imported from Python (`Tensor.from_dlpack`, a `VersionedTensor` returned
    /// to Python) is ready where it was imported for: the hook then is a
    /// [`StreamReady`](dlpack_abi::dlpack::StreamReady) over that stream.
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::{ConsumerStream, Export, OrderError, StreamOrder};
    /// use dlpack_abi_pyo3::PyTensor;
    /// use dlpack_abi::raw::DLDevice;
    ///
    /// /// Stands for a device runtime's hook (see the `cudarc` module for CUDA's).
    /// struct Finished;
    /// // SAFETY: this producer's work is always complete.
    /// unsafe impl StreamOrder for Finished {
    ///     fn ready_on(&self, _: DLDevice, _: ConsumerStream) -> Result<(), OrderError> { Ok(()) }
    /// }
    ///
    /// let tensor = PyTensor::new(Export::new(vec![1.0f32], &[1]).finish()?).with_order(Finished);
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn with_order(mut self, order: impl StreamOrder + 'static) -> Self {
        self.order = Ordering::Hook(Arc::new(order));
        self
    }

    /// The hook that makes the data ready elsewhere: the tensor's own, or, for data on its
    /// device's default stream, one over that stream with the installed runtime.
    fn hook(&self) -> PyResult<Option<Arc<dyn StreamOrder>>> {
        match &self.order {
            Ordering::Complete => Ok(None),
            Ordering::Hook(order) => Ok(Some(Arc::clone(order))),
            Ordering::DefaultStream => {
                Ok(super::streams::ready_on(self.device(), ConsumerStream::Unspecified).py()?)
            }
        }
    }

    /// Makes the data ready on `stream` through the hook, if there is one (never for
    /// [`ConsumerStream::NoSync`]).
    fn ready_on(&self, stream: ConsumerStream) -> PyResult<()> {
        match &self.order {
            Ordering::Complete => Ok(()),
            _ if stream == ConsumerStream::NoSync => Ok(()),
            Ordering::Hook(order) => Ok(order.ready_on(self.device(), stream).py()?),
            Ordering::DefaultStream => match self.hook()? {
                Some(order) => Ok(order.ready_on(self.device(), stream).py()?),
                None => Ok(()),
            },
        }
    }

    /// Makes the data ready on the stream the exchange API's `current_work_stream` names for its
    /// device (NULL: the device's default stream), where the `no_sync` consumer works.
    pub(crate) fn ready_on_work_stream(&self) -> PyResult<()> {
        let work = super::exchange::TENSOR_WORK_STREAM;
        self.ready_on(dlpack_abi::dlpack::work_stream(self.device(), work))
    }

    /// A new export sharing the tensor, ready for use on `stream` (the hook runs first, as for
    /// `__dlpack__`): what an exporter class that holds a `Tensor` returns from
    /// [`DlpackExporter::dlpack_tensor`](super::DlpackExporter::dlpack_tensor).
    ///
    /// # Errors
    /// `BufferError` when the data cannot be made ready on `stream` (no runtime, or a stream
    /// the hook refuses), `RuntimeError` when the device runtime fails.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ConsumerStream, Export};
    /// use dlpack_abi_pyo3::PyTensor;
    ///
    /// let tensor = PyTensor::new(Export::new(vec![1.0f32, 2.0], &[2]).finish()?);
    /// let export = tensor.share(ConsumerStream::Unspecified).expect("CPU data is ready");
    /// assert_eq!(export.view().as_slice::<f32>()?, [1.0, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn share(&self, stream: ConsumerStream) -> PyResult<VersionedTensor> {
        self.ready_on(stream)?;
        self.export(None, false)
    }

    /// The event an Arrow device export of the tensor carries as its `sync_event`, recorded
    /// after the pending work (`None` when nothing is pending): what an exporter class that
    /// holds a `Tensor` returns from
    /// [`DlpackExporter::arrow_event`](super::DlpackExporter::arrow_event).
    ///
    /// # Errors
    /// `BufferError` when no event can be recorded (data on one stream, no runtime),
    /// `RuntimeError` when the device runtime fails.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi_pyo3::PyTensor;
    ///
    /// let tensor = PyTensor::new(Export::new(vec![1u8], &[1]).finish()?);
    /// assert!(tensor.sync_event().expect("CPU data").is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn sync_event(&self) -> PyResult<Option<alloc::boxed::Box<dyn DeviceEvent>>> {
        match self.hook()? {
            Some(order) => Ok(order.record_event(self.device()).py()?),
            None => Ok(None),
        }
    }

    /// The tensor, for reading, unless consumers may write it ([`new_writable`](Self::new_writable)),
    /// or its data is on a device with work the host cannot be ordered after (memory the host
    /// can read on a device, managed or pinned, is waited for first).
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi_pyo3::PyTensor;
    ///
    /// let tensor = PyTensor::new(Export::new(vec![1u16, 2, 3], &[3]).finish()?);
    /// let values = tensor.tensor().expect("read-only exports").view().as_slice::<u16>()?.to_vec();
    /// assert_eq!(values, [1, 2, 3]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn tensor(&self) -> Option<&VersionedTensor> {
        if self.writable {
            return None;
        }
        let device = self.device().device_type;
        // Device memory the host cannot read is never read through the tensor; memory it can
        // read is, so the host waits for the pending work first.
        if device != kDLCPU && device.is_host_accessible() {
            self.ready_on(ConsumerStream::Host).ok()?;
        }
        Some(&self.shared)
    }

    /// Whether exports are `READ_ONLY`.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi_pyo3::PyTensor;
    ///
    /// assert!(PyTensor::new(Export::new(vec![1u8], &[1]).finish()?).is_read_only());
    /// assert!(!PyTensor::new_writable(Export::new(vec![1u8], &[1]).finish()?).is_read_only());
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn is_read_only(&self) -> bool {
        !self.writable
    }

    /// The device the data lives on (what `__dlpack_device__` returns to Python).
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi_pyo3::PyTensor;
    /// use dlpack_abi::raw::{kDLCPU, DLDevice};
    ///
    /// let tensor = PyTensor::new(Export::new(vec![0u8; 4], &[4]).finish()?);
    /// assert_eq!(tensor.device(), DLDevice { device_type: kDLCPU, device_id: 0 });
    /// # Ok::<(), dlpack_abi::dlpack::ExportError>(())
    /// ```
    pub fn device(&self) -> DLDevice {
        self.view().device()
    }

    /// The description (shape, strides, dtype, device, flags), without element access.
    fn view(&self) -> TensorView<'_> {
        self.shared.view()
    }

    /// The flags an export that shares the tensor carries: the tensor's own (unknown bits
    /// included), `READ_ONLY` unless consumers may write, and never `IS_COPIED` (the memory is
    /// shared).
    fn share_flags(&self) -> DLPackFlags {
        let own = (self.view().flags()).difference(DLPackFlags::READ_ONLY | DLPackFlags::IS_COPIED);
        if self.writable {
            own
        } else {
            own | DLPackFlags::READ_ONLY
        }
    }

    /// The bare `DLTensor`, for the exchange API's non-owning export, or why there is none: a
    /// bare `DLTensor` has no flags, so it carries only what a legacy struct can (not read-only,
    /// not padded sub-byte storage, which a consumer would read as packed, no unknown bits), and
    /// it must carry its strides.
    pub(crate) fn dl_tensor(&self) -> Result<dlpack_abi::raw::DLTensor, String> {
        flagless_representable(self.share_flags()).map_err(|error| {
            format!(
                "this Tensor has no bare DLTensor: {error}; use \
                 managed_tensor_from_py_object_no_sync"
            )
        })?;
        let raw = self.shared.as_raw().dl_tensor;
        if raw.ndim != 0 && raw.strides.is_null() {
            return Err(
                "this Tensor has implicit strides, which a bare DLTensor may not have".into(),
            );
        }
        Ok(raw)
    }

    /// A new managed struct sharing the tensor, or a copy of it. `attached` proves the GIL is
    /// held, so that the share is counted without a locked instruction ([`SharedTensor`]).
    pub(crate) fn export<M: DlpackCapsule>(
        &self,
        attached: Option<Python<'_>>,
        copy: bool,
    ) -> PyResult<ManagedTensor<M>> {
        let view = self.view();
        if copy {
            // The copy is the consumer's own: only the storage flag carries over.
            let padded = view.flags() & DLPackFlags::IS_SUBBYTE_TYPE_PADDED;
            let copied = if M::VERSIONED {
                DLPackFlags::IS_COPIED
            } else {
                DLPackFlags::empty()
            };
            // Read under a shared borrow: never while a `ReadwriteTensor` writes the memory.
            return Python::attach(|py| {
                super::borrows::with_read(py, &view, || copy_tensor(&view, padded | copied))
            });
        }
        let flags = self.share_flags();
        if !M::VERSIONED {
            flagless_representable(flags).map_err(|error| {
                PyBufferError::new_err(format!(
                    "{error}: call __dlpack__ with max_version=(1, 0) or newer, or copy=True"
                ))
            })?;
        }
        let owner = Sharing {
            share: match attached {
                Some(py) => self.shared.share_attached(py),
                None => self.shared.share(),
            },
            _live: Live::export(),
        };
        // SAFETY: writes are allowed only for `Tensor`s that gave up Rust access (`writable`, so
        // no Rust reference reads the memory), and `READ_ONLY` is set otherwise.
        unsafe { ManagedTensor::share(owner, flags) }
            .map_err(|error| PyBufferError::new_err(error.to_string()))
    }

    /// The DLPack export of the array API (2023.12): a versioned capsule for `max_version`
    /// 1.x, a legacy one otherwise (`BufferError` for read-only data, which it cannot mark);
    /// `copy=True` copies (64-byte aligned, `IS_COPIED`), `copy=False` never does; `dl_device`
    /// other than ours is a `BufferError` unless it is a copy to the CPU from host-accessible
    /// memory; `stream` is checked per the array API.
    ///
    /// A `#[pyclass]` of your own gets the same protocol from
    /// [`DlpackExporter`](super::DlpackExporter) and
    /// [`#[dlpack_exporter]`](super::dlpack_exporter) (or
    /// [`dlpack_pymethods!`](crate::dlpack_pymethods)).
    ///
    /// # Errors
    /// `BufferError` for what the array API refuses (a `stream` on the CPU, another device, a
    /// legacy capsule of read-only data, `copy=False` when a copy is needed); `ValueError` for
    /// a `stream` no device allows.
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi_pyo3::{PyDlpackResult, PyTensor};
    /// use pyo3::prelude::*;
    ///
    /// Python::attach(|py| {
    ///     let tensor = PyTensor::new_writable(Export::new(vec![1.0f32, 2.0], &[2]).finish()?);
    ///     let capsule = tensor.__dlpack__(py, None, Some((1, 3)), None, None)?;
    ///     assert!(capsule.is_valid_checked(Some(c"dltensor_versioned")));
    ///     PyDlpackResult::Ok(())
    /// });
    /// ```
    pub fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<i64>,
        max_version: Option<(i64, i64)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let (stream, copy) = check_request(self.view().device(), stream, dl_device, copy)?;
        self.ready_on(stream)?;
        self.capsule(py, wants_versioned(max_version), copy)
    }

    /// A capsule of a new export (or copy): versioned or legacy.
    pub(crate) fn capsule<'py>(
        &self,
        py: Python<'py>,
        versioned: bool,
        copy: bool,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        if versioned {
            dlpack_capsule(py, self.export::<DLManagedTensorVersioned>(Some(py), copy)?)
        } else {
            dlpack_capsule(py, self.export::<DLManagedTensor>(Some(py), copy)?)
        }
    }
}

/// `__dlpack__` of `Tensor` (`METH_FASTCALL | METH_KEYWORDS`).
///
/// # Safety
/// Called by CPython through `Tensor`'s method descriptor: attached, `slf` a `Tensor`, vectorcall
/// arguments.
unsafe extern "C" fn tensor_dlpack(
    slf: *mut pyo3::ffi::PyObject,
    args: *const *mut pyo3::ffi::PyObject,
    nargs: pyo3::ffi::Py_ssize_t,
    kwnames: *mut pyo3::ffi::PyObject,
) -> *mut pyo3::ffi::PyObject {
    let export: fastcall::Export<PyTensor> = |tensor, args| {
        let py = tensor.py();
        tensor
            .get()
            .__dlpack__(py, args.stream, args.max_version, args.dl_device, args.copy)
    };
    // SAFETY: as this function's contract.
    unsafe { fastcall::call(export, slf, args, nargs, kwnames) }
}

/// The owner of one export: a share of the tensor, which it re-exports.
struct Sharing {
    share: Share,
    _live: Live,
}

impl core::ops::Deref for Sharing {
    type Target = VersionedTensor;

    fn deref(&self) -> &VersionedTensor {
        &self.share
    }
}

#[pymethods]
impl PyTensor {
    /// `__dlpack__`: a method descriptor whose keywords are parsed by hand (see
    /// [`PyTensor::__dlpack__`] for what it does).
    #[classattr]
    #[pyo3(name = "__dlpack__")]
    fn dlpack_method(py: Python<'_>) -> PyResult<Py<PyAny>> {
        // SAFETY: `tensor_dlpack` takes its `self` for a `Tensor`.
        static DLPACK: MethodDef<PyTensor> = unsafe { MethodDef::dlpack(tensor_dlpack) };
        DLPACK.descriptor(py)
    }

    /// Return ``(device_type, device_id)``, with DLPack's numbering (``(1, 0)`` for the CPU).
    fn __dlpack_device__(&self) -> (i32, i32) {
        let device = self.view().device();
        (device.device_type.0, device.device_id)
    }

    /// The DLPack C exchange API table of this type: a ``"dlpack_exchange_api"`` capsule that
    /// C consumers (tvm-ffi, ...) call without going through Python.
    #[classattr]
    fn __dlpack_c_exchange_api__(py: Python<'_>) -> PyResult<Py<PyCapsule>> {
        super::EXCHANGE_API.capsule(py)
    }

    /// Import any DLPack producer (or an unconsumed ``dltensor`` capsule) without a copy.
    ///
    /// The producer's C exchange API is used when its type has one, then
    /// ``__dlpack__(max_version=(1, 3), ...)``, then the legacy call. The tensor is validated
    /// before use, and a capsule is consumed once.
    ///
    /// Parameters: ``stream``, ``dl_device`` and ``copy`` are passed on as the array API
    /// defines them.
    ///
    /// Raises ``BufferError`` for a malformed tensor or one that cannot be provided as asked,
    /// ``TypeError`` for an object without the protocol, ``ValueError`` for a consumed capsule.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np
    /// >>> a = np.arange(6.0).reshape(2, 3)
    /// >>> t = dlpack_abi.Tensor.from_dlpack(a.T)
    /// >>> t.shape, t.strides
    /// ((3, 2), (1, 3))
    /// >>> np.shares_memory(np.from_dlpack(t), a)
    /// True
    #[staticmethod]
    #[pyo3(name = "from_dlpack", signature = (source, /, *, stream=None, dl_device=None, copy=None))]
    fn py_from_dlpack(
        source: &Bound<'_, PyAny>,
        stream: Option<Bound<'_, PyAny>>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Self> {
        let request = super::DlpackRequest {
            stream: stream.map(Bound::unbind),
            dl_device: dl_device.map(|(device_type, device_id)| DLDevice {
                device_type: DLDeviceType(device_type),
                device_id,
            }),
            copy,
        };
        Self::from_dlpack(source, &request)
    }

    /// Return a CPU tensor holding a copy of ``data`` (any bytes-like object), 64-byte aligned.
    ///
    /// ``dtype`` is DLPack's ``(code, bits, lanes)``, for example ``(2, 32, 1)`` for float32;
    /// ``strides`` are in elements (row-major when omitted). ``readonly=True`` makes every
    /// export read-only.
    ///
    /// Raises ``ValueError`` when the shape and strides reach bytes outside ``data``.
    ///
    /// Examples
    /// --------
    /// >>> import struct
    /// >>> t = dlpack_abi.Tensor.from_bytes(struct.pack("=3f", 1, 2, 3), (2, 32, 1), (3,))
    /// >>> t
    /// Tensor(shape=(3,), dtype=float32, device=cpu:0, readonly=False)
    /// >>> struct.unpack("=3f", t.tobytes())
    /// (1.0, 2.0, 3.0)
    #[staticmethod]
    #[pyo3(signature = (data, dtype, shape, *, strides=None, readonly=false))]
    fn from_bytes(
        data: &[u8],
        dtype: (u8, u8, u16),
        shape: Vec<i64>,
        strides: Option<Vec<i64>>,
        readonly: bool,
    ) -> PyResult<Self> {
        let dtype = DLDataType {
            code: DLDataTypeCode(dtype.0),
            bits: dtype.1,
            lanes: dtype.2,
        };
        let owner = host_copy(data, dtype, shape, strides)?;
        let tensor = VersionedTensor::from_owner(owner)
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        Ok(if readonly {
            Self::new(tensor)
        } else {
            Self::new_writable(tensor)
        })
    }

    /// Import an Arrow array (``__arrow_c_device_array__`` or ``__arrow_c_array__``) without a
    /// copy: primitive arrays, ``arrow.bool8`` and ``arrow.fixed_shape_tensor``.
    ///
    /// Raises ``BufferError`` for arrays a tensor cannot describe (nulls, offsets of bits).
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np, pyarrow as pa
    /// >>> t = dlpack_abi.Tensor.from_arrow(pa.array([1.5, 2.5]))
    /// >>> t.shape, t.readonly
    /// ((2,), True)
    /// >>> np.from_dlpack(t)
    /// array([1.5, 2.5])
    #[staticmethod]
    fn from_arrow(source: &Bound<'_, PyAny>) -> PyResult<Self> {
        // The bridge takes an array only once no `sync_event` is pending (none, or the host
        // waited on it): the data is ready everywhere.
        let mut tensor = Self::imported(arrow::tensor_from_arrow(source)?);
        tensor.order = Ordering::Complete;
        Ok(tensor)
    }

    /// Return ``(arrow_schema, arrow_device_array)`` capsules sharing the memory (Arrow
    /// PyCapsule interface); more than one dimension is an ``arrow.fixed_shape_tensor``.
    #[pyo3(signature = (requested_schema=None, **kwargs))]
    fn __arrow_c_device_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
        kwargs: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        arrow::check_device_kwargs(kwargs.as_ref())?;
        let event = self.sync_event()?;
        let tensor = self.export(Some(py), false)?;
        arrow::tensor_capsules(py, tensor, requested_schema.as_ref(), true, event)
    }

    /// Return ``(arrow_schema, arrow_array)`` capsules sharing the memory of a CPU tensor.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        self.ready_on(ConsumerStream::Host)?;
        arrow::tensor_capsules(
            py,
            self.export(Some(py), false)?,
            requested_schema.as_ref(),
            false,
            None,
        )
    }

    /// The extents, as a tuple of ints.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np
    /// >>> dlpack_abi.Tensor.from_dlpack(np.zeros((2, 3))).shape
    /// (2, 3)
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.view().shape())
    }

    /// The strides, in elements.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np
    /// >>> dlpack_abi.Tensor.from_dlpack(np.zeros((2, 3))[:, 0:3:2]).strides
    /// (3, 2)
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.view().strides().iter())
    }

    /// DLPack's ``(code, bits, lanes)``: ``(2, 32, 1)`` is float32 (``repr`` names it).
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np
    /// >>> dlpack_abi.Tensor.from_dlpack(np.zeros(2, dtype=np.float16)).dtype
    /// (2, 16, 1)
    #[getter]
    fn dtype(&self) -> (u8, u8, u16) {
        let dtype = self.view().dtype();
        (dtype.code.0, dtype.bits, dtype.lanes)
    }

    /// The address of the first element (DLPack's ``data + byte_offset``), as an int.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np
    /// >>> a = np.arange(4.0)
    /// >>> dlpack_abi.Tensor.from_dlpack(a[1:]).data_ptr == a.ctypes.data + 8
    /// True
    #[getter]
    fn data_ptr(&self) -> usize {
        self.view().data_ptr() as usize
    }

    /// Whether consumers receive the memory read-only.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np
    /// >>> a = np.arange(3)
    /// >>> a.flags.writeable = False
    /// >>> dlpack_abi.Tensor.from_dlpack(a).readonly
    /// True
    /// >>> np.from_dlpack(dlpack_abi.Tensor.from_dlpack(a)).flags.writeable
    /// False
    #[getter]
    fn readonly(&self) -> bool {
        !self.writable
    }

    /// DLPack's flag bits of the tensor (1: read-only, 2: copied, 4: padded sub-byte type).
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np
    /// >>> a = np.arange(3)
    /// >>> a.flags.writeable = False
    /// >>> dlpack_abi.Tensor.from_dlpack(a).flags  # NumPy marks it READ_ONLY (1)
    /// 1
    #[getter]
    fn flags(&self) -> u64 {
        self.view().flags().bits()
    }

    /// The size of the elements in bytes, stored compactly.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np
    /// >>> dlpack_abi.Tensor.from_dlpack(np.zeros((2, 3))).nbytes
    /// 48
    #[getter]
    fn nbytes(&self) -> usize {
        self.view().byte_size()
    }

    /// Return the elements in row-major order as bytes (a copy; CPU-accessible memory only).
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np
    /// >>> a = np.array([[1, 2], [3, 4]], dtype=np.uint8)
    /// >>> dlpack_abi.Tensor.from_dlpack(a.T).tobytes()
    /// b'\x01\x03\x02\x04'
    fn tobytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.ready_on(ConsumerStream::Host)?;
        let view = self.view();
        let bytes = super::borrows::with_read(py, &view, || gather(&view))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn __repr__(&self) -> String {
        let view = self.view();
        // Python spellings: a tuple for the shape, `True`/`False`.
        let shape = match view.shape() {
            [extent] => format!("({extent},)"),
            extents => format!(
                "({})",
                extents
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let readonly = if self.writable { "False" } else { "True" };
        format!(
            "Tensor(shape={shape}, dtype={}, device={}, readonly={readonly})",
            view.dtype(),
            view.device(),
        )
    }
}

/// A Rust-owned copy of Python bytes, for `Tensor.from_bytes`. Whether the shape and strides
/// fit in `data` is the export's check (every byte reached must lie in the buffer).
fn host_copy(
    data: &[u8],
    dtype: DLDataType,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
) -> PyResult<HostTensor> {
    let mut owner = HostTensor::zeroed(data.len(), shape, strides, dtype, DLPackFlags::empty())
        .ok_or_else(|| PyMemoryError::new_err("cannot allocate"))?;
    owner.bytes_mut().copy_from_slice(data);
    Ok(owner)
}
