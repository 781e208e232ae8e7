//! The Arrow PyCapsule interface: export of this crate's Arrow values (and of tensors, through
//! the bridge) as `arrow_schema`, `arrow_array`, `arrow_device_array` and stream capsules, and
//! import from any object that offers them.
#![allow(unsafe_code)]

use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ptr;
use std::sync::Mutex;

use pyo3::exceptions::{PyBufferError, PyNotImplementedError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};

use super::capsule::{arrow_capsule, capsule_pointer, consuming, type_name, ArrowCapsule};
use super::errors::IntoPyErr;
use super::gil::{drop_attached, Held};
use super::{Live, PyTensor};
use dlpack_abi::arrow::StreamStruct;
use dlpack_abi::arrow::{
    Array, ArrayParts, ArrayStream, ArrayView, ArrowError, DeviceArray, DeviceArrayStream, Schema,
    SchemaDef, SchemaRef, Stream,
};
use dlpack_abi::dlpack::VersionedTensor;
use dlpack_abi::raw::{
    ArrowArray, ArrowArrayStream, ArrowDeviceArray, ArrowDeviceArrayStream, ArrowSchema,
    ARROW_DEVICE_CPU,
};

/// Arrow data refused by validation (or by the bridge).
pub(crate) fn arrow_error(error: impl Into<ArrowError>) -> PyErr {
    error.into().into_py_err()
}

/// The device methods' `**kwargs` rule: unknown keywords are accepted only with value `None`.
pub(crate) fn check_device_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    for (key, value) in kwargs.into_iter().flat_map(|kwargs| kwargs.iter()) {
        if !value.is_none() {
            return Err(PyNotImplementedError::new_err(format!(
                "keyword {key} is not supported (only None is accepted)"
            )));
        }
    }
    Ok(())
}

/// The capsule of a `requested_schema` argument (a capsule, or an object with
/// `__arrow_c_schema__`).
fn schema_capsule_of<'py>(requested: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if requested.is_instance_of::<PyCapsule>() {
        return Ok(requested.clone());
    }
    let method = intern!(requested.py(), "__arrow_c_schema__");
    if !requested.hasattr(method)? {
        return Err(PyTypeError::new_err(format!(
            "{} is neither an arrow_schema capsule nor has __arrow_c_schema__",
            type_name(requested)
        )));
    }
    requested.call_method0(method)
}

/// Best-effort negotiation: the request is read, never consumed; we return our own schema,
/// but refuse a request that cannot describe our data (a different number of fields).
fn check_requested(ours: SchemaRef<'_>, requested: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let Some(requested) = requested.filter(|requested| !requested.is_none()) else {
        return Ok(());
    };
    let capsule = schema_capsule_of(requested)?;
    let raw = capsule_pointer::<ArrowSchema>(&capsule, c"arrow_schema")?;
    // SAFETY: an `arrow_schema` capsule holds a live `ArrowSchema` its owner keeps until the
    // capsule dies (we hold a reference); only `release` and `n_children` are read.
    let requested = unsafe { raw.as_ref() };
    let (released, n_children) = (requested.release.is_none(), requested.n_children);
    if released {
        return Err(PyValueError::new_err("requested_schema is released"));
    }
    if usize::try_from(n_children).ok() != Some(ours.n_children()) {
        return Err(PyValueError::new_err(format!(
            "requested_schema has {n_children} fields; this data has {}",
            ours.n_children()
        )));
    }
    Ok(())
}

/// `(arrow_schema, arrow_device_array)` or, for CPU data, `(arrow_schema, arrow_array)`.
fn array_capsules<'py>(
    py: Python<'py>,
    schema: Schema,
    array: DeviceArray,
    device: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    if !device && array.device_type() != ARROW_DEVICE_CPU {
        return Err(PyBufferError::new_err(
            "the data is not in CPU memory; use __arrow_c_device_array__",
        ));
    }
    let schema = arrow_capsule::<ArrowSchema>(py, |out| {
        // SAFETY: the capsule's struct is zeroed, writable memory we own.
        unsafe { schema.export_to(out) }
    })?;
    let array = if device {
        arrow_capsule::<ArrowDeviceArray>(py, |out| {
            // SAFETY: as above.
            unsafe { array.export_to(out) }
        })?
    } else {
        arrow_capsule::<ArrowArray>(py, |out| {
            // SAFETY: as above; the CPU array moves out of its device wrapper, unreleased.
            unsafe { ptr::write(out, array.into_raw().array) }
        })?
    };
    PyTuple::new(py, [schema, array])
}

/// A tensor bridged to Arrow (zero-copy), as capsules; the device array carries `event` as its
/// `sync_event`.
pub(crate) fn tensor_capsules<'py>(
    py: Python<'py>,
    tensor: VersionedTensor,
    requested: Option<&Bound<'py, PyAny>>,
    device: bool,
    event: Option<alloc::boxed::Box<dyn dlpack_abi::dlpack::DeviceEvent>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (def, array) = DeviceArray::from_tensor(tensor).map_err(arrow_error)?;
    let schema = def.export().map_err(arrow_error)?;
    check_requested(schema.view(), requested)?;
    let array = match event {
        Some(event) => array.with_event(event).map_err(arrow_error)?,
        None => array,
    };
    array_capsules(py, schema, array, device)
}

/// A schema and an array, validated against each other.
type Pair = (Schema, DeviceArray);

/// An Arrow array (schema and data) that any Arrow PyCapsule consumer reads without a copy.
///
/// ``__arrow_c_schema__``, ``__arrow_c_array__`` (CPU data) and ``__arrow_c_device_array__``
/// may be called any number of times: each export is a fresh tree of structs over the same
/// buffers, which stay alive until every export is released. ``pyarrow.array(x)``,
/// ``polars.from_arrow(x)`` and DuckDB take it directly; ``ArrowArray.from_arrow(obj)`` imports
/// any array that offers those methods.
#[cfg_attr(
    not(doc),
    doc = r#"
Examples
--------
>>> import pyarrow as pa
>>> a = dlpack_abi.ArrowArray.from_arrow(pa.array([1, 2, 3]))
>>> pa.array(a).to_pylist()
[1, 2, 3]"#
)]
#[cfg_attr(
    doc,
    doc = r#"
**In Rust** ([`ArrowArrayExport`], the type of `dlpack_abi.ArrowArray`): a consumer may move
children out of one export without touching another.

```no_run
use dlpack_abi::arrow::{Array, DeviceArray, SchemaDef};
use dlpack_abi_pyo3::{ArrowArrayExport, PyDlpackResult};
use pyo3::prelude::*;

#[pyfunction] // errors convert with `?`: no `map_err`
fn squares() -> PyDlpackResult<ArrowArrayExport> {
    let array = Array::from_vec((0..5i64).map(|i| i * i).collect::<Vec<_>>())?;
    let schema = SchemaDef::of::<i64>()?.export()?;
    Ok(ArrowArrayExport::new(schema, DeviceArray::from_cpu(array))?)
    // pyarrow.array(squares()) sees the same buffer
}
```"#
)]
// Immutable where the build allows it (the stable ABI only from 3.14): `from_dlpack` then
// remembers the type's exchange table.
#[cfg_attr(
    not(Py_LIMITED_API),
    pyclass(frozen, immutable_type, module = "dlpack_abi", name = "ArrowArray")
)]
#[cfg_attr(
    Py_LIMITED_API,
    pyclass(frozen, module = "dlpack_abi", name = "ArrowArray")
)]
pub struct ArrowArrayExport {
    shared: Arc<Held<Pair>>,
}

impl ArrowArrayExport {
    /// Wraps an array and its schema (checked against each other).
    ///
    /// # Errors
    /// [`ArrowError`] when `array` does not match `schema`.
    ///
    /// ```no_run
    /// use dlpack_abi::arrow::{Array, DeviceArray, SchemaDef};
    /// use dlpack_abi_pyo3::{ArrowArrayExport, PyDlpackResult};
    /// use pyo3::prelude::*;
    ///
    /// #[pyfunction] // pyarrow.array(squares(4)) is [0, 1, 4, 9], sharing the buffer
    /// fn squares(n: i64) -> PyDlpackResult<ArrowArrayExport> {
    ///     let values: Vec<i64> = (0..n).map(|i| i * i).collect();
    ///     let array = DeviceArray::from_cpu(Array::from_vec(values)?);
    ///     Ok(ArrowArrayExport::new(SchemaDef::new("l")?.export()?, array)?)
    /// }
    /// ```
    pub fn new(schema: Schema, array: DeviceArray) -> Result<Self, ArrowError> {
        array.view(schema.view())?;
        Ok(Self::with(Held::local((schema, array))))
    }

    /// Wraps an array and its schema returned from a `#[pyfunction]` (checked against each other;
    /// dropped attached, as it may hold memory imported from Python).
    pub(crate) fn returned(schema: Schema, array: DeviceArray) -> PyResult<Self> {
        array.view(schema.view()).map_err(arrow_error)?;
        Ok(Self::with(Held::imported((schema, array))))
    }

    /// Wraps a pair already checked against each other.
    fn with(pair: Held<Pair>) -> Self {
        Self {
            shared: Arc::new(pair),
        }
    }

    /// The schema.
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, DataType, DeviceArray, SchemaDef};
    /// use dlpack_abi_pyo3::ArrowArrayExport;
    ///
    /// let export = ArrowArrayExport::new(
    ///     SchemaDef::new("g")?.with_name("x").export()?,
    ///     DeviceArray::from_cpu(Array::from_vec(vec![1.5f64])?),
    /// )?;
    /// assert_eq!(export.schema().view().data_type(), DataType::Float64);
    /// assert_eq!(export.schema().view().name(), Some("x"));
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn schema(&self) -> &Schema {
        &self.shared.0
    }

    /// The array.
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, DeviceArray, SchemaDef};
    /// use dlpack_abi_pyo3::ArrowArrayExport;
    ///
    /// let export = ArrowArrayExport::new(
    ///     SchemaDef::new("g")?.export()?,
    ///     DeviceArray::from_cpu(Array::from_vec(vec![1.5f64, 2.5])?),
    /// )?;
    /// let view = export.array().view(export.schema().view())?;
    /// assert_eq!(view.values::<f64>()?, [1.5, 2.5]);
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn array(&self) -> &DeviceArray {
        &self.shared.1
    }

    /// A new schema and device array sharing the buffers.
    fn share(&self) -> PyResult<(Schema, DeviceArray)> {
        let schema = SchemaDef::copy_of(self.shared.0.view())
            .export()
            .map_err(arrow_error)?;
        let view = self
            .shared
            .1
            .view(self.shared.0.view())
            .map_err(arrow_error)?;
        let root = share_node(view, &self.shared, Some(Live::export()));
        let original = &self.shared.1;
        // SAFETY: the same buffers, on the same device, as the validated original, which the
        // root's owner keeps alive (and with it the sync event, owned by the original).
        let array = unsafe {
            DeviceArray::new(
                root,
                original.device_type(),
                original.device_id(),
                original
                    .sync_event()
                    .map_or(ptr::null_mut(), |event| event.as_ptr()),
            )
        };
        Ok((schema, array))
    }
}

/// A structural copy of `view` (the node, its children and dictionary) over the same buffers,
/// each node holding `shared` alive.
fn share_node(view: ArrayView<'_>, shared: &Arc<Held<Pair>>, live: Option<Live>) -> Array {
    let buffers: Vec<_> = (0..view.n_buffers())
        .map(|index| view.buffer(index).unwrap_or(ptr::null()))
        .collect();
    let mut parts = ArrayParts::new(view.len(), buffers)
        .with_null_count(view.null_count().map_or(-1, |count| count as i64))
        .with_offset(view.offset() as i64);
    for child in view.children() {
        parts = parts.with_child(share_node(child, shared, None));
    }
    if let Some(dictionary) = view.dictionary() {
        parts = parts.with_dictionary(share_node(dictionary, shared, None));
    }
    // SAFETY: the node's fields as validated against the schema the export is built from, over
    // buffers the original owns; the owner keeps the original alive until this node is released.
    unsafe { Array::from_parts(parts, (Arc::clone(shared), live)) }
}

#[pymethods]
impl ArrowArrayExport {
    /// Import any object with ``__arrow_c_device_array__`` or ``__arrow_c_array__``, validated
    /// against its schema, without a copy.
    ///
    /// Examples
    /// --------
    /// >>> import pyarrow as pa
    /// >>> a = dlpack_abi.ArrowArray.from_arrow(pa.array(["x", None]))
    /// >>> a.format, len(a)
    /// ('u', 2)
    /// >>> pa.array(a).to_pylist()
    /// ['x', None]
    #[staticmethod]
    fn from_arrow(source: &Bound<'_, PyAny>) -> PyResult<Self> {
        // `import_device_array` validated the array against the schema.
        Ok(Self::with(Held::imported(import_device_array(
            source, None,
        )?)))
    }

    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, SchemaDef::copy_of(self.shared.0.view()))
    }

    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        check_requested(self.shared.0.view(), requested_schema.as_ref())?;
        let (schema, array) = self.share()?;
        array_capsules(py, schema, array, false)
    }

    #[pyo3(signature = (requested_schema=None, **kwargs))]
    fn __arrow_c_device_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
        kwargs: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        check_device_kwargs(kwargs.as_ref())?;
        check_requested(self.shared.0.view(), requested_schema.as_ref())?;
        let (schema, array) = self.share()?;
        array_capsules(py, schema, array, true)
    }

    /// Return the array as a ``Tensor`` sharing its memory (primitive arrays without nulls,
    /// ``arrow.bool8`` and ``arrow.fixed_shape_tensor``).
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np, pyarrow as pa
    /// >>> t = dlpack_abi.ArrowArray.from_arrow(pa.array([1.0, 2.0])).to_tensor()
    /// >>> np.from_dlpack(t)
    /// array([1., 2.])
    fn to_tensor(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let (schema, array) = self.share()?;
        let mut tensor = array.into_tensor(schema.view()).map_err(arrow_error)?;
        super::borrows::track(py, &mut tensor, false)?;
        Ok(PyTensor::new_writable(tensor))
    }

    fn __len__(&self) -> usize {
        self.shared.1.len()
    }

    /// Arrow's ``(device_type, device_id)``: ``(1, 0)`` for the CPU.
    ///
    /// Examples
    /// --------
    /// >>> import pyarrow as pa
    /// >>> dlpack_abi.ArrowArray.from_arrow(pa.array([1])).device
    /// (1, -1)
    #[getter]
    fn device(&self) -> (i32, i64) {
        (self.shared.1.device_type().0, self.shared.1.device_id())
    }

    /// The Arrow format string of the root (``"l"`` is int64).
    ///
    /// Examples
    /// --------
    /// >>> import pyarrow as pa
    /// >>> dlpack_abi.ArrowArray.from_arrow(pa.array([1.5])).format
    /// 'g'
    #[getter]
    fn format(&self) -> String {
        String::from_utf8_lossy(self.shared.0.view().format()).into_owned()
    }
}

/// A stream this crate produces or imported.
enum AnyStream {
    Cpu(ArrayStream),
    Device(DeviceArrayStream),
}

/// An Arrow stream of record batches that one Arrow PyCapsule consumer reads.
///
/// ``__arrow_c_stream__`` exports a CPU stream, ``__arrow_c_device_stream__`` a device stream,
/// and ``__arrow_c_schema__`` the schema without consuming the stream (DuckDB reads it first).
/// A stream has one consumer: the first export moves it out, and later calls raise
/// ``ValueError``; a refused call (a ``requested_schema`` that differs) leaves it in place.
/// ``ArrowStream.from_arrow(obj)`` imports any stream that offers ``__arrow_c_stream__``.
#[cfg_attr(
    not(doc),
    doc = r#"
Examples
--------
>>> import pyarrow as pa
>>> s = dlpack_abi.ArrowStream.from_arrow(pa.table({"x": [1, 2, 3]}))
>>> pa.RecordBatchReader.from_stream(s).read_all().num_rows
3"#
)]
#[cfg_attr(
    doc,
    doc = r#"
**In Rust** ([`ArrowStreamExport`], the type of `dlpack_abi.ArrowStream`): while one call
checks a `requested_schema`, a concurrent one finds the stream taken.

```no_run
use dlpack_abi::arrow::{errno, Array, ArrayStream, ProducerError, SchemaDef};
use dlpack_abi_pyo3::{ArrowStreamExport, PyDlpackResult};
use pyo3::prelude::*;

#[pyfunction]
fn batches() -> PyDlpackResult<ArrowStreamExport> {
    let arrays = (0..3i64).map(|i| {
        Array::from_vec(vec![i, i + 1]).map_err(|_| ProducerError::code_only(errno::EINVAL))
    });
    let stream = ArrayStream::from_iter(SchemaDef::of::<i64>()?, arrays)?;
    Ok(ArrowStreamExport::new(stream)) // pyarrow.RecordBatchReader.from_stream(batches())
}
```"#
)]
// Immutable where the build allows it (the stable ABI only from 3.14): `from_dlpack` then
// remembers the type's exchange table.
#[cfg_attr(
    not(Py_LIMITED_API),
    pyclass(frozen, immutable_type, module = "dlpack_abi", name = "ArrowStream")
)]
#[cfg_attr(
    Py_LIMITED_API,
    pyclass(frozen, module = "dlpack_abi", name = "ArrowStream")
)]
pub struct ArrowStreamExport {
    stream: Mutex<Option<AnyStream>>,
    /// Set for streams imported from Python, dropped attached to the interpreter.
    imported: Option<Live>,
}

impl ArrowStreamExport {
    /// A CPU stream.
    ///
    /// ```no_run
    /// use dlpack_abi::arrow::{errno, Array, ArrayParts, ArrayStream, ProducerError, SchemaDef};
    /// use dlpack_abi_pyo3::{ArrowStreamExport, PyDlpackResult};
    /// use pyo3::prelude::*;
    ///
    /// /// One record batch: a struct array whose one column is `values`.
    /// fn batch(values: Vec<i32>) -> Result<Array, ProducerError> {
    ///     let rows = values.len();
    ///     let column = Array::from_vec(values).map_err(|_| ProducerError::code_only(errno::ENOMEM))?;
    ///     let parts = ArrayParts::new(rows, vec![core::ptr::null()]).with_child(column);
    ///     // SAFETY: a struct array of `rows` rows without a validity bitmap; its child owns the data.
    ///     Ok(unsafe { Array::from_parts(parts, ()) })
    /// }
    ///
    /// #[pyfunction] // pyarrow.RecordBatchReader.from_stream(batches()) reads 2 batches, 3 rows
    /// fn batches() -> PyDlpackResult<ArrowStreamExport> {
    ///     let schema = SchemaDef::new("+s")?.with_child(SchemaDef::new("i")?.with_name("n"));
    ///     let items = [batch(vec![1, 2]), batch(vec![3])];
    ///     Ok(ArrowStreamExport::new(ArrayStream::from_iter(schema, items)?))
    /// }
    /// ```
    pub fn new(stream: ArrayStream) -> Self {
        Self::with(AnyStream::Cpu(stream), None)
    }

    /// A device stream.
    ///
    /// ```no_run
    /// use dlpack_abi::arrow::{Array, DeviceArray, DeviceArrayStream, ProducerError, SchemaDef};
    /// use dlpack_abi_pyo3::{ArrowStreamExport, PyDlpackResult};
    /// use dlpack_abi::raw::ARROW_DEVICE_CPU;
    /// use pyo3::prelude::*;
    ///
    /// #[pyfunction] // offers `__arrow_c_device_stream__` (and `__arrow_c_stream__`, it being CPU)
    /// fn device_batches() -> PyDlpackResult<ArrowStreamExport> {
    ///     let items: Vec<Result<DeviceArray, ProducerError>> =
    ///         vec![Ok(DeviceArray::from_cpu(Array::from_vec(vec![1.0f32, 2.0])?))];
    ///     let stream = DeviceArrayStream::from_iter(SchemaDef::new("f")?, ARROW_DEVICE_CPU, items)?;
    ///     Ok(ArrowStreamExport::new_device(stream))
    /// }
    /// ```
    pub fn new_device(stream: DeviceArrayStream) -> Self {
        Self::with(AnyStream::Device(stream), None)
    }

    /// A CPU stream returned from a `#[pyfunction]` (dropped attached).
    pub(crate) fn returned_cpu(stream: ArrayStream) -> Self {
        Self::with(AnyStream::Cpu(stream), Some(Live::import()))
    }

    /// A device stream returned from a `#[pyfunction]` (dropped attached).
    pub(crate) fn returned_device(stream: DeviceArrayStream) -> Self {
        Self::with(AnyStream::Device(stream), Some(Live::import()))
    }

    fn with(stream: AnyStream, imported: Option<Live>) -> Self {
        Self {
            stream: Mutex::new(Some(stream)),
            imported,
        }
    }

    /// The stream's slot, locked only to take or put back the stream: no Python code and no
    /// producer callback runs under the lock (another thread waiting on it would hold the GIL
    /// that the first needs).
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<AnyStream>> {
        self.stream
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Moves the stream into a capsule, if it is of the kind `device` asks for and fits
    /// `requested`; a refused call (or a capsule that cannot be made) puts it back.
    fn export<'py>(
        &self,
        py: Python<'py>,
        device: bool,
        requested: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let taken = self.slot().take();
        let mut stream =
            taken.ok_or_else(|| PyValueError::new_err("the stream was already exported"))?;
        if let Err(error) = check_stream(&mut stream, device, requested) {
            *self.slot() = Some(stream);
            return Err(error);
        }
        // The stream goes into the capsule only once the capsule exists.
        let mut unsent = Some(stream);
        let capsule = if device {
            arrow_capsule::<ArrowDeviceArrayStream>(py, |out| {
                if let Some(AnyStream::Device(stream)) = unsent.take() {
                    // SAFETY: the capsule's struct is zeroed, writable memory we own.
                    unsafe { stream.export_to(out) }
                }
            })
        } else {
            arrow_capsule::<ArrowArrayStream>(py, |out| {
                if let Some(AnyStream::Cpu(stream)) = unsent.take() {
                    // SAFETY: as above.
                    unsafe { stream.export_to(out) }
                }
            })
        };
        if unsent.is_some() {
            *self.slot() = unsent;
        }
        capsule
    }
}

/// Whether `stream` is of the kind `device` asks for, and fits `requested` (fetching its schema,
/// which a consumer then gets again from the stream).
fn check_stream(
    stream: &mut AnyStream,
    device: bool,
    requested: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let schema = match (stream, device) {
        (AnyStream::Cpu(_), true) => {
            return Err(PyBufferError::new_err(
                "a CPU stream: use __arrow_c_stream__",
            ))
        }
        (AnyStream::Device(_), false) => {
            return Err(PyBufferError::new_err(
                "a device stream: use __arrow_c_device_stream__",
            ))
        }
        _ if requested.is_none() => return Ok(()),
        (AnyStream::Cpu(stream), _) => stream.schema(),
        (AnyStream::Device(stream), _) => stream.schema(),
    };
    let schema = schema.map_err(|error| PyValueError::new_err(error.to_string()))?;
    check_requested(schema, requested)
}

impl Drop for ArrowStreamExport {
    fn drop(&mut self) {
        let stream = self
            .stream
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if self.imported.is_some() {
            drop_attached(stream);
        }
    }
}

#[pymethods]
impl ArrowStreamExport {
    /// Import any object with ``__arrow_c_stream__`` (a CPU stream; nothing is read yet).
    ///
    /// Examples
    /// --------
    /// >>> import pyarrow as pa
    /// >>> s = dlpack_abi.ArrowStream.from_arrow(pa.table({"n": [1, 2]}))
    /// >>> pa.table(s).column("n").to_pylist()
    /// [1, 2]
    #[staticmethod]
    fn from_arrow(source: &Bound<'_, PyAny>) -> PyResult<Self> {
        let stream = import_stream(source, None)?;
        Ok(Self::with(AnyStream::Cpu(stream), Some(Live::import())))
    }

    /// Return the stream's schema capsule without consuming the stream, as the PyCapsule
    /// interface asks streams to (DuckDB reads the schema first, then the stream).
    ///
    /// Raises ``ValueError`` once the stream has been exported.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let taken = self.slot().take();
        let mut stream =
            taken.ok_or_else(|| PyValueError::new_err("the stream was already exported"))?;
        // The producer's `get_schema` runs with the stream out of its slot (not under the lock).
        let copied = match &mut stream {
            AnyStream::Cpu(stream) => stream.schema().map(|schema| SchemaDef::copy_of(schema)),
            AnyStream::Device(stream) => stream.schema().map(|schema| SchemaDef::copy_of(schema)),
        };
        *self.slot() = Some(stream);
        let copied = copied.map_err(|error| PyValueError::new_err(error.to_string()))?;
        schema_capsule(py, copied)
    }

    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        self.export(py, false, requested_schema.as_ref())
    }

    #[pyo3(signature = (requested_schema=None, **kwargs))]
    fn __arrow_c_device_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
        kwargs: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        check_device_kwargs(kwargs.as_ref())?;
        self.export(py, true, requested_schema.as_ref())
    }
}

/// Calls `source.method(requested_schema)` (without the argument when it is `None`).
fn call_export<'py>(
    source: &Bound<'py, PyAny>,
    method: &Bound<'py, pyo3::types::PyString>,
    requested: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    match requested {
        Some(requested) => source.call_method1(method, (schema_capsule_of(requested)?,)),
        None => source.call_method0(method),
    }
}

/// The two capsules of an array export.
fn pair<'py>(result: Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    result
        .extract()
        .map_err(|_| PyTypeError::new_err("expected a (schema, array) tuple of capsules"))
}

/// Imports a schema from a capsule or an object with `__arrow_c_schema__`.
///
/// The struct is moved out of the capsule (its `release` nulled), as the interface says; the
/// capsule's destructor then frees only the struct's memory.
///
/// # Errors
/// `TypeError` when `source` is neither a capsule nor an object with `__arrow_c_schema__`,
/// `ValueError` for a capsule of another name or a schema that fails validation.
///
/// ```no_run
/// use dlpack_abi_pyo3::import_schema;
/// use pyo3::prelude::*;
///
/// #[pyfunction] // type_of(pyarrow.int64()) is "Int64"; also a pyarrow.Field, Schema or capsule
/// fn type_of(source: &Bound<'_, PyAny>) -> PyResult<String> {
///     Ok(format!("{:?}", import_schema(source)?.view().data_type()))
/// }
/// ```
pub fn import_schema(source: &Bound<'_, PyAny>) -> PyResult<Schema> {
    let capsule = schema_capsule_of(source)?;
    consuming(&capsule, || {
        let raw = capsule_pointer::<ArrowSchema>(&capsule, c"arrow_schema")?;
        // SAFETY: a live `ArrowSchema` owned by the capsule, which gives it to its consumer.
        unsafe { Schema::from_raw(raw.as_ptr()) }.map_err(arrow_error)
    })
}

/// Imports a CPU array from `__arrow_c_array__`, or from `__arrow_c_device_array__` when the
/// data is in CPU memory. `requested_schema` (a capsule or an object with
/// `__arrow_c_schema__`) is passed on.
///
/// # Errors
/// `TypeError` when `source` offers neither dunder, `BufferError` for data not in CPU memory or
/// with a pending event, `ValueError` for a schema or array that fails validation; the
/// producer's own exceptions pass through.
///
/// ```no_run
/// use dlpack_abi_pyo3::{PyDlpackResult, import_array};
/// use pyo3::prelude::*;
///
/// #[pyfunction] // total(pyarrow.array([1.0, 2.5])) == 3.5, read in place
/// fn total(source: &Bound<'_, PyAny>) -> PyDlpackResult<f64> {
///     let (schema, array) = import_array(source, None)?;
///     let view = array.view(schema.view())?;
///     Ok(view.values::<f64>()?.iter().sum())
/// }
/// ```
pub fn import_array(
    source: &Bound<'_, PyAny>,
    requested_schema: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Schema, Array)> {
    let py = source.py();
    let method = intern!(py, "__arrow_c_array__");
    if !source.hasattr(method)? {
        let (schema, array) = import_device_array(source, requested_schema)?;
        if array.device_type() != ARROW_DEVICE_CPU {
            return Err(PyBufferError::new_err("the array is not in CPU memory"));
        }
        // A plain array has no event: nothing would be readable before the wait. Refused (and
        // released) instead of dropping the event.
        if array.sync_event().is_some() {
            return Err(PyBufferError::new_err(
                "the device array has a pending sync_event, which a plain ArrowArray cannot \
                 carry; use import_device_array and wait on the event",
            ));
        }
        let mut raw = array.into_raw();
        // SAFETY: a live CPU array we own, moved into the new wrapper.
        let array =
            unsafe { Array::from_raw(&mut raw.array, schema.view()) }.map_err(arrow_error)?;
        return Ok((schema, array));
    }
    let (schema, array) = pair(call_export(source, method, requested_schema)?)?;
    let schema = import_schema(&schema)?;
    let array = consuming(&array, || {
        let raw = capsule_pointer::<ArrowArray>(&array, c"arrow_array")?;
        // SAFETY: a live `ArrowArray` owned by the capsule, which gives it to its consumer.
        unsafe { Array::from_raw(raw.as_ptr(), schema.view()) }.map_err(arrow_error)
    })?;
    let array = super::borrows::register_array(py, schema.view(), array)?;
    Ok((schema, array))
}

/// Imports a device array from `__arrow_c_device_array__`, or a CPU one from
/// `__arrow_c_array__`.
///
/// # Errors
/// `TypeError` when `source` offers neither dunder, `ValueError` for a schema or array that fails
/// validation; the producer's own exceptions pass through.
///
/// ```no_run
/// use dlpack_abi_pyo3::import_device_array;
/// use pyo3::prelude::*;
///
/// #[pyfunction] // where(pyarrow.array([1])) is (1, -1): CPU memory
/// fn where_is(source: &Bound<'_, PyAny>) -> PyResult<(i32, i64)> {
///     let (_schema, array) = import_device_array(source, None)?;
///     Ok((array.device_type().0, array.device_id()))
/// }
/// ```
pub fn import_device_array(
    source: &Bound<'_, PyAny>,
    requested_schema: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Schema, DeviceArray)> {
    let py = source.py();
    let method = intern!(py, "__arrow_c_device_array__");
    if !source.hasattr(method)? {
        if !source.hasattr(intern!(py, "__arrow_c_array__"))? {
            return Err(PyTypeError::new_err(format!(
                "{} has neither __arrow_c_device_array__ nor __arrow_c_array__",
                type_name(source)
            )));
        }
        let (schema, array) = import_array(source, requested_schema)?;
        return Ok((schema, DeviceArray::from_cpu(array)));
    }
    let (schema, array) = pair(call_export(source, method, requested_schema)?)?;
    let schema = import_schema(&schema)?;
    let array = consuming(&array, || {
        let raw = capsule_pointer::<ArrowDeviceArray>(&array, c"arrow_device_array")?;
        // SAFETY: a live `ArrowDeviceArray` owned by the capsule, which gives it to its consumer.
        unsafe { DeviceArray::from_raw(raw.as_ptr(), schema.view()) }.map_err(arrow_error)
    })?;
    let array = super::borrows::register_device_array(source.py(), schema.view(), array)?;
    Ok((schema, array))
}

/// Imports a stream from `__arrow_c_stream__` (or an `arrow_array_stream` capsule).
///
/// # Errors
/// `TypeError` when `source` has no `__arrow_c_stream__` and is not a stream capsule,
/// `ValueError` for a capsule of another name or a stream that fails validation; the producer's
/// own exceptions pass through.
///
/// ```no_run
/// use dlpack_abi_pyo3::{PyDlpackResult, import_stream};
/// use pyo3::prelude::*;
///
/// #[pyfunction] // rows(pyarrow.table({"x": [1, 2, 3]})) == 3; DuckDB and polars results work too
/// fn rows(source: &Bound<'_, PyAny>) -> PyDlpackResult<usize> {
///     let mut rows = 0;
///     for batch in import_stream(source, None)? {
///         rows += batch?.len();
///     }
///     Ok(rows)
/// }
/// ```
pub fn import_stream(
    source: &Bound<'_, PyAny>,
    requested_schema: Option<&Bound<'_, PyAny>>,
) -> PyResult<ArrayStream> {
    let method = intern!(source.py(), "__arrow_c_stream__");
    import_any_stream(source, method, requested_schema)
}

/// Imports a device stream from `__arrow_c_device_stream__` (or an
/// `arrow_device_array_stream` capsule).
///
/// # Errors
/// `TypeError` when `source` has no `__arrow_c_device_stream__` and is not a device stream
/// capsule, `ValueError` for a capsule of another name or a stream that fails validation; the
/// producer's own exceptions pass through.
///
/// ```no_run
/// use dlpack_abi_pyo3::import_device_stream;
/// use pyo3::prelude::*;
///
/// #[pyfunction]
/// fn device_of_stream(source: &Bound<'_, PyAny>) -> PyResult<i32> {
///     Ok(import_device_stream(source, None)?.device_type().0)
/// }
/// ```
pub fn import_device_stream(
    source: &Bound<'_, PyAny>,
    requested_schema: Option<&Bound<'_, PyAny>>,
) -> PyResult<DeviceArrayStream> {
    let method = intern!(source.py(), "__arrow_c_device_stream__");
    import_any_stream(source, method, requested_schema)
}

/// Imports a stream of kind `S` from a capsule, or from what `method` returns.
fn import_any_stream<S: StreamStruct + ArrowCapsule + super::borrows::RegisteredStream>(
    source: &Bound<'_, PyAny>,
    method: &Bound<'_, pyo3::types::PyString>,
    requested_schema: Option<&Bound<'_, PyAny>>,
) -> PyResult<Stream<S>> {
    let capsule = if source.is_instance_of::<PyCapsule>() {
        source.clone()
    } else {
        call_export(source, method, requested_schema)?
    };
    let stream = consuming(&capsule, || {
        let raw = capsule_pointer::<S>(&capsule, S::NAME)?;
        // SAFETY: a live stream owned by the capsule, which gives it to its consumer.
        unsafe { Stream::from_raw(raw.as_ptr()) }.map_err(arrow_error)
    })?;
    super::borrows::register_stream(source.py(), stream)
}

/// An Arrow array from Python bridged to DLPack (zero-copy).
pub(crate) fn tensor_from_arrow(source: &Bound<'_, PyAny>) -> PyResult<VersionedTensor> {
    let (schema, array) = import_device_array(source, None)?;
    let mut tensor = array.into_tensor(schema.view()).map_err(arrow_error)?;
    super::borrows::track(source.py(), &mut tensor, false)?;
    Ok(tensor)
}

/// An `arrow_schema` capsule of a copy of a schema (what every `__arrow_c_schema__` hands out:
/// the consumer owns the copy, whoever keeps the original).
pub(super) fn schema_capsule<'py>(
    py: Python<'py>,
    copy: SchemaDef,
) -> PyResult<Bound<'py, PyCapsule>> {
    let schema = copy.export().map_err(arrow_error)?;
    // SAFETY: the capsule's struct is zeroed, writable memory we own.
    arrow_capsule::<ArrowSchema>(py, |out| unsafe { schema.export_to(out) })
}
