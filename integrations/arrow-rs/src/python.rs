//! arrow-rs values as `#[pyfunction]` arguments and return values (features `pyo3` and
//! `arrow-rs`), over any Arrow PyCapsule producer or consumer, with no capsule code:
//!
//! | type | argument (`FromPyObject`) | returned (`IntoPyObject`) |
//! |---|---|---|
//! | [`PyArray`] (`ArrayRef` and its `FieldRef`) | `__arrow_c_array__`, or `__arrow_c_device_array__` in CPU memory | `dlpack_abi.ArrowArray` |
//! | [`PyRecordBatch`] | as `PyArray`, a struct array without top-level nulls | `dlpack_abi.ArrowArray` (a struct array) |
//! | [`PyField`] | `__arrow_c_schema__` (or an `arrow_schema` capsule) | `dlpack_abi.ArrowSchema` |
//! | [`PySchema`] | as `PyField`, a struct | `dlpack_abi.ArrowSchema` (a struct) |
//! | [`PyRecordBatchReader`] | `__arrow_c_stream__`, or `__arrow_c_device_stream__` in CPU memory | `dlpack_abi.ArrowStream` (a CPU stream) |
//! | [`PyDeviceRecordBatchReader`] | as `PyRecordBatchReader` | `dlpack_abi.ArrowStream` (a `kArrowCPU` device stream) |
//!
//! **Zero-copy and validated.** An argument is imported as [`import_array`] and friends import
//! it (the structs validated, then arrow-rs's full validation of the values, as
//! [`arrow_rs`](crate::arrow_rs) does), sharing the producer's buffers; a return value is
//! exported by [`arrow_rs`](crate::arrow_rs)'s `export_*`, sharing arrow-rs's. A `dlpack_abi.ArrowArray` offers both
//! `__arrow_c_array__` and `__arrow_c_device_array__`, so one array type serves both; streams
//! are one interface each, hence two reader types. Data a device producer keeps in device
//! memory (or behind a pending `sync_event`) is refused: arrow-rs reads host memory only.
//!
//! **`requested_schema`.** An argument is extracted with the producer's own schema; ask for
//! another with the `from_arrow(source, Some(requested))` constructors (pyarrow casts to it).
//! A returned value answers a consumer's `requested_schema` as every export of this crate does:
//! it offers its own schema (the interface makes the request best-effort, and the consumer
//! casts), and refuses with `ValueError` a request with another number of fields.
//!
//! Errors convert with `?` ([`InteropError`] into the exception of its kind). Reading a
//! [`PyRecordBatchReader`] yields `Result<RecordBatch, InteropError>`, so `?` works there too.
//!
//! arrow-rs's own `ArrowError` cannot convert into `PyErr` (neither type is this crate's):
//! wrap it in an [`InteropError`] (`InteropError::from(error)`), or return `InteropError` from
//! a helper function, where `?` converts it.
//!
//! ```no_run
//! use dlpack_abi_pyo3::{PyArray, PyRecordBatch, PyRecordBatchReader};
//! use pyo3::exceptions::PyValueError;
//! use pyo3::prelude::*;
//!
//! /// The first column of any record batch producer, sharing its buffers:
//! /// pyarrow.array(first(pyarrow.record_batch({"a": [1], "b": [2]}))) is [1].
//! #[pyfunction]
//! fn first(batch: PyRecordBatch) -> PyResult<PyArray> {
//!     let schema = batch.schema();
//!     let field = schema.fields().first().ok_or_else(|| PyValueError::new_err("no columns"))?;
//!     Ok(PyArray(batch.column(0).clone(), field.clone()))
//! }
//!
//! /// Rows of any stream (a pyarrow table, a polars frame, a DuckDB result).
//! #[pyfunction]
//! fn rows(reader: PyRecordBatchReader) -> PyResult<usize> {
//!     let mut rows = 0;
//!     for batch in reader {
//!         rows += batch?.num_rows();
//!     }
//!     Ok(rows)
//! }
//! ```

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::ops::{Deref, DerefMut};

use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{Field, FieldRef, SchemaRef};
use pyo3::prelude::*;
use pyo3::Borrowed;

use super::{
    import_array, import_schema, AnyArrowStream, ArrowArrayExport, ArrowSchemaExport,
    ArrowStreamExport,
};
use dlpack_abi::arrow::DeviceArray;
use crate::{self, InteropError, StreamReader};

/// An arrow-rs array and its field (name, nullability, metadata) as a `#[pyfunction]` argument
/// (any Arrow array producer, zero-copy) and return value (a `dlpack_abi.ArrowArray`).
/// Dereferences to the `ArrayRef`.
///
/// ```no_run
/// use std::sync::Arc;
/// use arrow_array::cast::AsArray;
/// use arrow_array::types::Int64Type;
/// use arrow_array::Int64Array;
/// use dlpack_abi_pyo3::PyArray;
/// use pyo3::prelude::*;
///
/// /// x + 1 for an int64 array; pyarrow.array(add_one(pyarrow.array([1, None]))) is [2, None].
/// #[pyfunction]
/// fn add_one(x: PyArray) -> PyResult<PyArray> {
///     let values = x.as_primitive_opt::<Int64Type>()
///         .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("expected int64"))?;
///     let plus_one: Int64Array = values.unary(|v| v.wrapping_add(1));
///     Ok(PyArray(Arc::new(plus_one), x.field().clone()))
/// }
/// ```
#[derive(Debug, Clone)]
pub struct PyArray(pub ArrayRef, pub FieldRef);

impl PyArray {
    /// An array with a nullable field of its type and no name (what arrow-rs's `to_ffi`
    /// writes for a bare array).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::Int32Array;
    /// use dlpack_abi_pyo3::PyArray;
    ///
    /// let array = PyArray::new(Arc::new(Int32Array::from(vec![1, 2])));
    /// assert_eq!((array.len(), array.field().name().as_str()), (2, ""));
    /// ```
    pub fn new(array: ArrayRef) -> Self {
        let field = Field::new("", array.data_type().clone(), true);
        Self(array, Arc::new(field))
    }

    /// Imports any Arrow array producer, passing `requested_schema` (a capsule or an object
    /// with `__arrow_c_schema__`) on to it.
    ///
    /// # Errors
    /// As [`import_array`], and the [`InteropError`] of arrow-rs's import.
    ///
    /// ```no_run
    /// use dlpack_abi_pyo3::PyArray;
    /// use pyo3::prelude::*;
    ///
    /// /// The array as int32, cast by its producer: as_int32(pyarrow.array([1, 2])).
    /// #[pyfunction]
    /// fn as_int32(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    ///     let int32 = py.import("pyarrow")?.getattr("int32")?.call0()?;
    ///     PyArray::from_arrow(x, Some(&int32))
    /// }
    /// ```
    pub fn from_arrow(
        source: &Bound<'_, PyAny>,
        requested_schema: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (schema, array) = import_array(source, requested_schema)?;
        let (field, array) = arrow_rs::import_field_array(schema.view(), array)?;
        Ok(Self(array, Arc::new(field)))
    }

    /// The array's field.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::Int32Array;
    /// use dlpack_abi_pyo3::PyArray;
    ///
    /// let array = PyArray::new(Arc::new(Int32Array::from(vec![1])));
    /// assert!(array.field().is_nullable());
    /// ```
    pub fn field(&self) -> &FieldRef {
        &self.1
    }

    /// The array, without its field.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::Int32Array;
    /// use dlpack_abi_pyo3::PyArray;
    ///
    /// let array = PyArray::new(Arc::new(Int32Array::from(vec![7]))).into_inner();
    /// assert_eq!(array.len(), 1);
    /// ```
    pub fn into_inner(self) -> ArrayRef {
        self.0
    }
}

impl Deref for PyArray {
    type Target = ArrayRef;

    fn deref(&self) -> &ArrayRef {
        &self.0
    }
}

impl From<ArrayRef> for PyArray {
    fn from(array: ArrayRef) -> Self {
        Self::new(array)
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for PyArray {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Self::from_arrow(&source, None)
    }
}

/// A `dlpack_abi.ArrowArray` over arrow-rs's buffers.
impl<'py> IntoPyObject<'py> for PyArray {
    type Target = ArrowArrayExport;
    type Output = Bound<'py, ArrowArrayExport>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ArrowArrayExport>> {
        let (schema, array) = arrow_rs::export_field_array(&self.1, self.0.as_ref())?;
        Bound::new(
            py,
            ArrowArrayExport::returned(schema, DeviceArray::from_cpu(array))?,
        )
    }
}

/// An arrow-rs record batch as a `#[pyfunction]` argument (any producer of a struct array:
/// `pyarrow.RecordBatch`, a polars or nanoarrow one, zero-copy) and return value (a
/// `dlpack_abi.ArrowArray` that `pyarrow.record_batch` takes). Dereferences to the batch.
///
/// ```no_run
/// use dlpack_abi_pyo3::PyRecordBatch;
/// use pyo3::prelude::*;
///
/// /// The first n rows, sharing the buffers: head(pyarrow.record_batch({"x": [1, 2, 3]}), 2).
/// #[pyfunction]
/// fn head(batch: PyRecordBatch, n: usize) -> PyRecordBatch {
///     PyRecordBatch(batch.slice(0, n.min(batch.num_rows())))
/// }
/// ```
#[derive(Debug, Clone)]
pub struct PyRecordBatch(pub RecordBatch);

impl PyRecordBatch {
    /// Imports any producer of a struct array, passing `requested_schema` on to it.
    ///
    /// # Errors
    /// As [`import_array`], and the [`InteropError`] of arrow-rs's import (a type that is not a
    /// struct, top-level nulls).
    ///
    /// ```no_run
    /// use dlpack_abi_pyo3::PyRecordBatch;
    /// use pyo3::prelude::*;
    ///
    /// /// The batch in the schema asked for (pyarrow casts its own batches).
    /// #[pyfunction]
    /// fn batch_as(batch: &Bound<'_, PyAny>, schema: &Bound<'_, PyAny>) -> PyResult<PyRecordBatch> {
    ///     PyRecordBatch::from_arrow(batch, Some(schema))
    /// }
    /// ```
    pub fn from_arrow(
        source: &Bound<'_, PyAny>,
        requested_schema: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (schema, array) = import_array(source, requested_schema)?;
        Ok(Self(arrow_rs::import_record_batch(schema.view(), array)?))
    }

    /// The batch.
    ///
    /// ```
    /// use arrow_array::RecordBatch;
    /// use dlpack_abi_pyo3::PyRecordBatch;
    ///
    /// let batch = PyRecordBatch(RecordBatch::new_empty(arrow_schema::Schema::empty().into()));
    /// assert_eq!(batch.into_inner().num_rows(), 0);
    /// ```
    pub fn into_inner(self) -> RecordBatch {
        self.0
    }
}

impl Deref for PyRecordBatch {
    type Target = RecordBatch;

    fn deref(&self) -> &RecordBatch {
        &self.0
    }
}

impl From<RecordBatch> for PyRecordBatch {
    fn from(batch: RecordBatch) -> Self {
        Self(batch)
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for PyRecordBatch {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Self::from_arrow(&source, None)
    }
}

/// A `dlpack_abi.ArrowArray` (a struct array, the batch schema's metadata on its root) over
/// arrow-rs's buffers.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
/// use dlpack_abi_pyo3::PyRecordBatch;
/// use pyo3::prelude::*;
///
/// let column: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]));
/// let batch = RecordBatch::try_from_iter([("n", column)])?;
/// Python::initialize();
/// Python::attach(|py| -> PyResult<()> {
///     // Returned from a #[pyfunction]: a dlpack_abi.ArrowArray (pyarrow.record_batch reads it).
///     let exported = PyRecordBatch(batch.clone()).into_pyobject(py)?;
///     // Taken as an argument: any `__arrow_c_array__` producer, validated, zero-copy.
///     let back: PyRecordBatch = exported.as_any().extract()?;
///     assert_eq!(*back, batch);
///     let values = |batch: &RecordBatch| batch.column(0).to_data().buffers()[0].as_ptr();
///     assert_eq!(values(&back), values(&batch));
///     Ok(())
/// })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<'py> IntoPyObject<'py> for PyRecordBatch {
    type Target = ArrowArrayExport;
    type Output = Bound<'py, ArrowArrayExport>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ArrowArrayExport>> {
        let (schema, array) = arrow_rs::export_record_batch(&self.0)?;
        Bound::new(
            py,
            ArrowArrayExport::returned(schema, DeviceArray::from_cpu(array))?,
        )
    }
}

/// An arrow-rs field as a `#[pyfunction]` argument (`pyarrow.field(...)`, a type, anything with
/// `__arrow_c_schema__`) and return value (a `dlpack_abi.ArrowSchema`). Dereferences to the
/// `FieldRef`.
///
/// ```no_run
/// use dlpack_abi_pyo3::PyField;
/// use pyo3::prelude::*;
///
/// /// pyarrow.field(nullable(pyarrow.field("x", pyarrow.int8(), nullable=False))).nullable
/// #[pyfunction]
/// fn nullable(field: PyField) -> PyField {
///     PyField(field.as_ref().clone().with_nullable(true).into())
/// }
/// ```
#[derive(Debug, Clone)]
pub struct PyField(pub FieldRef);

impl PyField {
    /// The field.
    ///
    /// ```
    /// use arrow_schema::{DataType, Field};
    /// use dlpack_abi_pyo3::PyField;
    ///
    /// let field = PyField(Field::new("x", DataType::Int8, false).into());
    /// assert_eq!(field.into_inner().name(), "x");
    /// ```
    pub fn into_inner(self) -> FieldRef {
        self.0
    }
}

impl Deref for PyField {
    type Target = FieldRef;

    fn deref(&self) -> &FieldRef {
        &self.0
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for PyField {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let schema = import_schema(&source)?;
        Ok(Self(Arc::new(arrow_rs::import_field(schema.view())?)))
    }
}

/// A `dlpack_abi.ArrowSchema` of the field.
impl<'py> IntoPyObject<'py> for PyField {
    type Target = ArrowSchemaExport;
    type Output = Bound<'py, ArrowSchemaExport>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ArrowSchemaExport>> {
        Bound::new(py, ArrowSchemaExport::new(arrow_rs::export_field(&self.0)?))
    }
}

/// An arrow-rs schema as a `#[pyfunction]` argument (`pyarrow.schema(...)`: anything with
/// `__arrow_c_schema__` whose type is a struct; pyarrow's tables and batches do not offer it)
/// and return value (a `dlpack_abi.ArrowSchema` that `pyarrow.schema` takes). Dereferences to
/// the `SchemaRef`.
///
/// ```no_run
/// use dlpack_abi_pyo3::PySchema;
/// use pyo3::prelude::*;
///
/// /// names(pyarrow.schema([("a", pyarrow.int8())])) == ["a"]
/// #[pyfunction]
/// fn names(schema: PySchema) -> Vec<String> {
///     schema.fields().iter().map(|field| field.name().clone()).collect()
/// }
/// ```
#[derive(Debug, Clone)]
pub struct PySchema(pub SchemaRef);

impl PySchema {
    /// The schema.
    ///
    /// ```
    /// use dlpack_abi_pyo3::PySchema;
    ///
    /// let schema = PySchema(arrow_schema::Schema::empty().into());
    /// assert!(schema.into_inner().fields().is_empty());
    /// ```
    pub fn into_inner(self) -> SchemaRef {
        self.0
    }
}

impl Deref for PySchema {
    type Target = SchemaRef;

    fn deref(&self) -> &SchemaRef {
        &self.0
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for PySchema {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let schema = import_schema(&source)?;
        Ok(Self(Arc::new(arrow_rs::import_schema(schema.view())?)))
    }
}

/// A `dlpack_abi.ArrowSchema` of the schema: a struct of its fields, with its metadata.
impl<'py> IntoPyObject<'py> for PySchema {
    type Target = ArrowSchemaExport;
    type Output = Bound<'py, ArrowSchemaExport>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ArrowSchemaExport>> {
        Bound::new(
            py,
            ArrowSchemaExport::new(arrow_rs::export_schema(&self.0)?),
        )
    }
}

/// An arrow-rs reader as a `#[pyfunction]` argument (any Arrow stream: a pyarrow table or
/// reader, a polars frame, a DuckDB result; each batch validated and shared as it is read) and
/// return value (a `dlpack_abi.ArrowStream` over `__arrow_c_stream__`, one consumer). Iterating
/// yields `Result<RecordBatch, InteropError>`; a producer's error keeps its errno (`OSError`).
///
/// ```no_run
/// use arrow_array::RecordBatchReader;
/// use dlpack_abi_pyo3::PyRecordBatchReader;
/// use pyo3::prelude::*;
///
/// /// The stream unchanged, read by whoever consumes the result:
/// /// pyarrow.RecordBatchReader.from_stream(passthrough(pyarrow.table({"x": [1]})))
/// #[pyfunction]
/// fn passthrough(reader: PyRecordBatchReader) -> PyRecordBatchReader {
///     println!("{} columns", reader.schema().fields().len());
///     reader
/// }
/// ```
pub struct PyRecordBatchReader(pub Box<dyn RecordBatchReader + Send>);

impl PyRecordBatchReader {
    /// Imports any Arrow stream, passing `requested_schema` on to its producer (a CPU stream;
    /// without a request, a device stream in CPU memory is taken too).
    ///
    /// # Errors
    /// As [`import_stream`](super::import_stream), and the [`InteropError`] of a stream
    /// whose schema is not a struct.
    ///
    /// ```no_run
    /// use dlpack_abi_pyo3::PyRecordBatchReader;
    /// use pyo3::prelude::*;
    ///
    /// #[pyfunction] // rows_as(pyarrow.table({"x": [1]}), pyarrow.schema([("x", pyarrow.int8())]))
    /// fn rows_as(table: &Bound<'_, PyAny>, schema: &Bound<'_, PyAny>) -> PyResult<usize> {
    ///     let mut rows = 0;
    ///     for batch in PyRecordBatchReader::from_arrow(table, Some(schema))? {
    ///         rows += batch?.num_rows();
    ///     }
    ///     Ok(rows)
    /// }
    /// ```
    pub fn from_arrow(
        source: &Bound<'_, PyAny>,
        requested_schema: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let reader = match requested_schema {
            Some(_) => arrow_rs::import_stream(super::import_stream(source, requested_schema)?)?,
            None => reader_of(source.extract::<AnyArrowStream>()?)?,
        };
        Ok(Self(Box::new(reader)))
    }

    /// The reader.
    ///
    /// ```
    /// use arrow_array::{RecordBatchIterator, RecordBatchReader};
    /// use dlpack_abi_pyo3::PyRecordBatchReader;
    ///
    /// let schema = std::sync::Arc::new(arrow_schema::Schema::empty());
    /// let reader = PyRecordBatchReader(Box::new(RecordBatchIterator::new([], schema.clone())));
    /// assert_eq!(reader.into_inner().schema(), schema);
    /// ```
    pub fn into_inner(self) -> Box<dyn RecordBatchReader + Send> {
        self.0
    }
}

/// This crate's stream as an arrow-rs reader.
fn reader_of(stream: AnyArrowStream) -> Result<StreamReader, InteropError> {
    match stream {
        AnyArrowStream::Cpu(stream) => arrow_rs::import_stream(stream),
        AnyArrowStream::Device(stream) => arrow_rs::import_device_stream(stream),
    }
}

impl Deref for PyRecordBatchReader {
    type Target = dyn RecordBatchReader + Send;

    fn deref(&self) -> &(dyn RecordBatchReader + Send + 'static) {
        &*self.0
    }
}

impl DerefMut for PyRecordBatchReader {
    fn deref_mut(&mut self) -> &mut (dyn RecordBatchReader + Send + 'static) {
        &mut *self.0
    }
}

impl Iterator for PyRecordBatchReader {
    type Item = Result<RecordBatch, InteropError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|batch| batch.map_err(InteropError::from))
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for PyRecordBatchReader {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Self::from_arrow(&source, None)
    }
}

/// A `dlpack_abi.ArrowStream` offering `__arrow_c_stream__` (arrow-rs's own C stream).
impl<'py> IntoPyObject<'py> for PyRecordBatchReader {
    type Target = ArrowStreamExport;
    type Output = Bound<'py, ArrowStreamExport>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ArrowStreamExport>> {
        let stream = arrow_rs::export_reader(self.0)?;
        Bound::new(py, ArrowStreamExport::returned_cpu(stream))
    }
}

/// [`PyRecordBatchReader`] returned as a C Device stream (`__arrow_c_device_stream__`,
/// `kArrowCPU`, each batch exported zero-copy), for consumers of the device interface; taken
/// as an argument, it is the same as `PyRecordBatchReader`.
///
/// ```no_run
/// use dlpack_abi_pyo3::{PyDeviceRecordBatchReader, PyRecordBatchReader};
/// use pyo3::prelude::*;
///
/// #[pyfunction] // the stream again, as __arrow_c_device_stream__
/// fn to_device_stream(reader: PyRecordBatchReader) -> PyDeviceRecordBatchReader {
///     PyDeviceRecordBatchReader(reader.into_inner())
/// }
/// ```
pub struct PyDeviceRecordBatchReader(pub Box<dyn RecordBatchReader + Send>);

impl PyDeviceRecordBatchReader {
    /// The reader.
    ///
    /// ```
    /// use arrow_array::{RecordBatchIterator, RecordBatchReader};
    /// use dlpack_abi_pyo3::PyDeviceRecordBatchReader;
    ///
    /// let schema = std::sync::Arc::new(arrow_schema::Schema::empty());
    /// let reader = PyDeviceRecordBatchReader(Box::new(RecordBatchIterator::new([], schema.clone())));
    /// assert_eq!(reader.into_inner().schema(), schema);
    /// ```
    pub fn into_inner(self) -> Box<dyn RecordBatchReader + Send> {
        self.0
    }
}

impl Deref for PyDeviceRecordBatchReader {
    type Target = dyn RecordBatchReader + Send;

    fn deref(&self) -> &(dyn RecordBatchReader + Send + 'static) {
        &*self.0
    }
}

impl DerefMut for PyDeviceRecordBatchReader {
    fn deref_mut(&mut self) -> &mut (dyn RecordBatchReader + Send + 'static) {
        &mut *self.0
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for PyDeviceRecordBatchReader {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Self(PyRecordBatchReader::extract(source)?.0))
    }
}

/// A `dlpack_abi.ArrowStream` offering `__arrow_c_device_stream__` (`kArrowCPU`).
impl<'py> IntoPyObject<'py> for PyDeviceRecordBatchReader {
    type Target = ArrowStreamExport;
    type Output = Bound<'py, ArrowStreamExport>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ArrowStreamExport>> {
        let stream = arrow_rs::export_device_reader(self.0)?;
        Bound::new(py, ArrowStreamExport::returned_device(stream))
    }
}
