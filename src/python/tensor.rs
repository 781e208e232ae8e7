//! `dlpack_abi.Tensor`: a tensor handed to Python, exported through `__dlpack__`, the C exchange
//! API and the Arrow device-array capsules, sharing its memory with every consumer.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;

use pyo3::exceptions::{PyBufferError, PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict, PyTuple};

use super::capsule::{dlpack_capsule, DlpackCapsule};
use super::copy::{copy_tensor, gather, HostTensor};
use super::gil::Held;
use super::{arrow, Live};
use crate::dlpack::{flagless_representable, ManagedTensor, TensorView, VersionedTensor};
use crate::raw::{
    kDLCPU, kDLCUDA, DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensor,
    DLManagedTensorVersioned, DLPackFlags,
};

/// A tensor for Python (`dlpack_abi.Tensor`): `__dlpack__`, `__dlpack_device__`,
/// `__dlpack_c_exchange_api__`, and `__arrow_c_device_array__`/`__arrow_c_array__` through the
/// zero-copy bridge.
///
/// Every export shares the tensor (one allocation per export, no copy unless asked for); the
/// tensor's own deleter runs when the `Tensor` and every export are gone.
///
/// Made with [`new`](Self::new), the exports are `READ_ONLY` and Rust keeps shared access
/// ([`tensor`](Self::tensor)). Made with [`new_writable`](Self::new_writable), consumers may
/// write (unless the tensor itself is `READ_ONLY`), so Rust gives up access to the elements.
///
/// ```no_run
/// use dlpack_abi::dlpack::{Export, VersionedTensor};
/// use dlpack_abi::python::PyTensor;
/// use pyo3::prelude::*;
///
/// #[pyfunction]
/// fn ramp(n: usize) -> PyResult<PyTensor> {
///     let values: Vec<f32> = (0..n).map(|i| i as f32).collect();
///     let n = values.len() as i64;
///     let tensor: VersionedTensor = Export::new(values, &[n]).finish()
///         .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
///     Ok(PyTensor::new(tensor)) // numpy.from_dlpack(ramp(4)) is a read-only view
/// }
/// ```
#[pyclass(frozen, module = "dlpack_abi", name = "Tensor")]
pub struct PyTensor {
    shared: Arc<Held<VersionedTensor>>,
    writable: bool,
}

impl PyTensor {
    /// Wraps `tensor`; its exports are `READ_ONLY`, and Rust keeps shared access.
    pub fn new(tensor: VersionedTensor) -> Self {
        Self::with(Held::local(tensor), false)
    }

    /// Wraps `tensor` with writable exports (unless it is `READ_ONLY`): consumers may write the
    /// elements, so [`tensor`](Self::tensor) is `None` from then on.
    pub fn new_writable(tensor: VersionedTensor) -> Self {
        Self::with(Held::local(tensor), true)
    }

    /// A tensor imported from Python: writable exports unless `READ_ONLY`, dropped attached.
    pub(crate) fn imported(tensor: VersionedTensor) -> Self {
        Self::with(Held::imported(tensor), true)
    }

    fn with(tensor: Held<VersionedTensor>, writable: bool) -> Self {
        let writable = writable && !tensor.view().flags().contains(DLPackFlags::READ_ONLY);
        Self {
            shared: Arc::new(tensor),
            writable,
        }
    }

    /// The tensor, for reading, unless consumers may write it ([`new_writable`](Self::new_writable)).
    pub fn tensor(&self) -> Option<&VersionedTensor> {
        (!self.writable).then_some(&self.shared)
    }

    /// Whether exports are `READ_ONLY`.
    pub fn is_read_only(&self) -> bool {
        !self.writable
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
    pub(crate) fn dl_tensor(&self) -> Result<crate::raw::DLTensor, String> {
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

    /// A new managed struct sharing the tensor, or a copy of it.
    pub(crate) fn export<M: DlpackCapsule>(&self, copy: bool) -> PyResult<ManagedTensor<M>> {
        let view = self.view();
        if copy {
            // The copy is the consumer's own: only the storage flag carries over.
            let padded = view.flags() & DLPackFlags::IS_SUBBYTE_TYPE_PADDED;
            let copied = if M::VERSIONED {
                DLPackFlags::IS_COPIED
            } else {
                DLPackFlags::empty()
            };
            return copy_tensor(&view, padded | copied);
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
            shared: Arc::clone(&self.shared),
            _live: Live::export(),
        };
        // SAFETY: writes are allowed only for `Tensor`s that gave up Rust access (`writable`, so
        // no Rust reference reads the memory), and `READ_ONLY` is set otherwise.
        unsafe { ManagedTensor::share(owner, flags) }
            .map_err(|error| PyBufferError::new_err(error.to_string()))
    }
}

/// The owner of one export: a reference to the shared tensor, which it re-exports.
struct Sharing {
    shared: Arc<Held<VersionedTensor>>,
    _live: Live,
}

impl core::ops::Deref for Sharing {
    type Target = VersionedTensor;

    fn deref(&self) -> &VersionedTensor {
        &self.shared
    }
}

/// The `stream` rules of the array API for the device a tensor lives on.
fn check_stream(device: DLDevice, stream: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let Some(stream) = stream else { return Ok(()) };
    let value: i64 = stream
        .extract()
        .map_err(|_| PyTypeError::new_err("stream must be an int or None"))?;
    if device.device_type == kDLCPU {
        return Err(PyBufferError::new_err(
            "stream must be None for CPU tensors",
        ));
    }
    if device.device_type == kDLCUDA && value == 0 {
        return Err(PyBufferError::new_err(
            "stream 0 is ambiguous on CUDA; use 1 (legacy default) or 2 (per-thread default)",
        ));
    }
    // This tensor has no pending work of ours on any stream: nothing to order.
    Ok(())
}

#[pymethods]
impl PyTensor {
    /// The DLPack export of the array API (2023.12): a versioned capsule for `max_version`
    /// 1.x, a legacy one otherwise (`BufferError` for read-only data, which it cannot mark);
    /// `copy=True` copies (64-byte aligned, `IS_COPIED`), `copy=False` never does; `dl_device`
    /// other than ours is a `BufferError` unless it is a copy to the CPU from host-accessible
    /// memory; `stream` is checked per the array API.
    ///
    /// Public, so that a `#[pyclass]` of your own exports itself by delegating: make (or keep)
    /// a `VersionedTensor` over its memory and call this.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi::python::PyTensor;
    /// use pyo3::prelude::*;
    /// use pyo3::types::PyCapsule;
    ///
    /// /// An 8-bit grayscale image; NumPy reads it with `np.from_dlpack(image)`, zero-copy.
    /// #[pyclass(frozen)]
    /// struct Image { pixels: Arc<[u8]>, height: i64, width: i64 }
    ///
    /// #[pymethods]
    /// impl Image {
    ///     #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    ///     fn __dlpack__<'py>(&self, py: Python<'py>, stream: Option<Bound<'py, PyAny>>,
    ///         max_version: Option<(i64, i64)>, dl_device: Option<(i32, i32)>, copy: Option<bool>,
    ///     ) -> PyResult<Bound<'py, PyCapsule>> {
    ///         // Shares the pixels (an Arc clone; READ_ONLY, as the Arc is shared).
    ///         let tensor = Export::new(Arc::clone(&self.pixels), &[self.height, self.width]).finish()?;
    ///         PyTensor::new(tensor).__dlpack__(py, stream, max_version, dl_device, copy)
    ///     }
    ///     fn __dlpack_device__(&self) -> (i32, i32) {
    ///         (1, 0) // kDLCPU, device 0
    ///     }
    /// }
    /// ```
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    pub fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<(i64, i64)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let device = self.view().device();
        check_stream(device, stream.as_ref())?;
        let needs_copy = match dl_device {
            None => false,
            Some((device_type, device_id)) => {
                let target = DLDevice {
                    device_type: DLDeviceType(device_type),
                    device_id,
                };
                if target == device {
                    false
                } else if target.device_type == kDLCPU && device.device_type.is_host_accessible() {
                    if copy == Some(false) {
                        return Err(PyBufferError::new_err(
                            "dl_device asks for a copy to the CPU but copy=False",
                        ));
                    }
                    true
                } else {
                    return Err(PyBufferError::new_err(format!(
                        "cannot export a tensor on {device} to {target}"
                    )));
                }
            }
        };
        let copy = needs_copy || copy == Some(true);
        if matches!(max_version, Some((major, _)) if major >= 1) {
            dlpack_capsule(py, self.export::<DLManagedTensorVersioned>(copy)?)
        } else {
            dlpack_capsule(py, self.export::<DLManagedTensor>(copy)?)
        }
    }

    /// `(device_type, device_id)` with DLPack numbering.
    pub fn __dlpack_device__(&self) -> (i32, i32) {
        let device = self.view().device();
        (device.device_type.0, device.device_id)
    }

    /// The static C exchange API table (a `"dlpack_exchange_api"` capsule without destructor).
    #[classattr]
    fn __dlpack_c_exchange_api__(py: Python<'_>) -> PyResult<Py<PyCapsule>> {
        super::exchange::table_capsule(py)
    }

    /// Imports any object with `__dlpack__` (see `dlpack_abi::python::from_dlpack`).
    #[staticmethod]
    #[pyo3(signature = (source, /, *, stream=None, dl_device=None, copy=None))]
    fn from_dlpack(
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
        // Our own tensor: share it, as an export would, without making one.
        if request.is_plain() {
            if let Ok(ours) = source.cast::<PyTensor>() {
                let ours = ours.get();
                return Ok(Self {
                    shared: Arc::clone(&ours.shared),
                    writable: ours.writable,
                });
            }
        }
        Ok(Self::imported(super::from_dlpack(source, &request)?))
    }

    /// A Rust-owned CPU tensor holding a copy of `data` (any bytes-like object), with dtype
    /// `(code, bits, lanes)`, `shape`, and optional element `strides`; every byte the shape and
    /// strides reach must lie in `data` (`ValueError` otherwise).
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

    /// Imports an Arrow array (`__arrow_c_device_array__` or `__arrow_c_array__`) through the
    /// zero-copy bridge: primitive, `arrow.bool8` and `arrow.fixed_shape_tensor` arrays.
    #[staticmethod]
    fn from_arrow(source: &Bound<'_, PyAny>) -> PyResult<Self> {
        arrow::tensor_from_arrow(source).map(Self::imported)
    }

    /// Arrow export through the bridge: `(arrow_schema, arrow_device_array)` capsules.
    #[pyo3(signature = (requested_schema=None, **kwargs))]
    fn __arrow_c_device_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
        kwargs: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        arrow::check_device_kwargs(kwargs.as_ref())?;
        arrow::tensor_capsules(py, self.export(false)?, requested_schema.as_ref(), true)
    }

    /// Arrow export through the bridge for CPU tensors: `(arrow_schema, arrow_array)` capsules.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        arrow::tensor_capsules(py, self.export(false)?, requested_schema.as_ref(), false)
    }

    /// The extents.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.view().shape())
    }

    /// The strides, in elements.
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.view().strides().iter())
    }

    /// `(code, bits, lanes)`.
    #[getter]
    fn dtype(&self) -> (u8, u8, u16) {
        let dtype = self.view().dtype();
        (dtype.code.0, dtype.bits, dtype.lanes)
    }

    /// The address of the first element (`data + byte_offset`).
    #[getter]
    fn data_ptr(&self) -> usize {
        self.view().data_ptr() as usize
    }

    /// Whether exports are read-only.
    #[getter]
    fn readonly(&self) -> bool {
        !self.writable
    }

    /// The tensor's DLPack flags.
    #[getter]
    fn flags(&self) -> u64 {
        self.view().flags().bits()
    }

    /// Bytes of the elements stored compactly.
    #[getter]
    fn nbytes(&self) -> usize {
        self.view().byte_size()
    }

    /// The elements in row-major order, as bytes (a copy; host-accessible memory only).
    fn tobytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &gather(&self.view())?))
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
