//! arrow-rs arrays, record batches, fields and schemas as `#[pyfunction]` arguments and return
//! values.

use alloc::sync::Arc;
use core::ops::Deref;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, FieldRef, SchemaRef};
use pyo3::prelude::*;
use pyo3::Borrowed;

use dlpack_abi::arrow::DeviceArray;
use dlpack_abi_pyo3::{AnyArrowArray, ArrowArrayExport, ArrowSchemaExport};

/// An arrow-rs array and its field (name, nullability, metadata) as a `#[pyfunction]` argument
/// (any Arrow array producer, zero-copy) and return value (a `dlpack_abi.ArrowArray`).
/// Dereferences to the `ArrayRef`.
///
/// ```no_run
/// use std::sync::Arc;
/// use arrow_array::cast::AsArray;
/// use arrow_array::types::Int64Type;
/// use arrow_array::Int64Array;
/// use dlpack_abi_arrow_rs::python::PyArray;
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
    /// use dlpack_abi_arrow_rs::python::PyArray;
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
    /// As [`dlpack_abi_pyo3::import_array`], and the [`ArrowRsError`](crate::ArrowRsError) of arrow-rs's import.
    ///
    /// ```no_run
    /// use dlpack_abi_arrow_rs::python::PyArray;
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
        let (schema, array) = dlpack_abi_pyo3::import_array(source, requested_schema)?;
        let (field, array) = crate::import_field_array(schema.view(), array)?;
        Ok(Self(array, Arc::new(field)))
    }

    /// The array's field.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::Int32Array;
    /// use dlpack_abi_arrow_rs::python::PyArray;
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
    /// use dlpack_abi_arrow_rs::python::PyArray;
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
        let (schema, array) = crate::export_field_array(&self.1, self.0.as_ref())?;
        AnyArrowArray::new(schema, DeviceArray::from_cpu(array)).into_pyobject(py)
    }
}

/// An arrow-rs record batch as a `#[pyfunction]` argument (any producer of a struct array:
/// `pyarrow.RecordBatch`, a polars or nanoarrow one, zero-copy) and return value (a
/// `dlpack_abi.ArrowArray` that `pyarrow.record_batch` takes). Dereferences to the batch.
///
/// ```no_run
/// use dlpack_abi_arrow_rs::python::PyRecordBatch;
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
    /// As [`dlpack_abi_pyo3::import_array`], and the [`ArrowRsError`](crate::ArrowRsError) of arrow-rs's import (a type that is not a
    /// struct, top-level nulls).
    ///
    /// ```no_run
    /// use dlpack_abi_arrow_rs::python::PyRecordBatch;
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
        let (schema, array) = dlpack_abi_pyo3::import_array(source, requested_schema)?;
        Ok(Self(crate::import_record_batch(schema.view(), array)?))
    }

    /// The batch.
    ///
    /// ```
    /// use arrow_array::RecordBatch;
    /// use dlpack_abi_arrow_rs::python::PyRecordBatch;
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
/// use dlpack_abi_arrow_rs::python::PyRecordBatch;
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
        let (schema, array) = crate::export_record_batch(&self.0)?;
        AnyArrowArray::new(schema, DeviceArray::from_cpu(array)).into_pyobject(py)
    }
}

/// An arrow-rs field as a `#[pyfunction]` argument (`pyarrow.field(...)`, a type, anything with
/// `__arrow_c_schema__`) and return value (a `dlpack_abi.ArrowSchema`). Dereferences to the
/// `FieldRef`.
///
/// ```no_run
/// use dlpack_abi_arrow_rs::python::PyField;
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
    /// use dlpack_abi_arrow_rs::python::PyField;
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
        let schema = dlpack_abi_pyo3::import_schema(&source)?;
        Ok(Self(Arc::new(crate::import_field(schema.view())?)))
    }
}

/// A `dlpack_abi.ArrowSchema` of the field.
impl<'py> IntoPyObject<'py> for PyField {
    type Target = ArrowSchemaExport;
    type Output = Bound<'py, ArrowSchemaExport>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ArrowSchemaExport>> {
        Bound::new(py, ArrowSchemaExport::new(crate::export_field(&self.0)?))
    }
}

/// An arrow-rs schema as a `#[pyfunction]` argument (`pyarrow.schema(...)`: anything with
/// `__arrow_c_schema__` whose type is a struct; pyarrow's tables and batches do not offer it)
/// and return value (a `dlpack_abi.ArrowSchema` that `pyarrow.schema` takes). Dereferences to
/// the `SchemaRef`.
///
/// ```no_run
/// use dlpack_abi_arrow_rs::python::PySchema;
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
    /// use dlpack_abi_arrow_rs::python::PySchema;
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
        let schema = dlpack_abi_pyo3::import_schema(&source)?;
        Ok(Self(Arc::new(crate::import_schema(schema.view())?)))
    }
}

/// A `dlpack_abi.ArrowSchema` of the schema: a struct of its fields, with its metadata.
impl<'py> IntoPyObject<'py> for PySchema {
    type Target = ArrowSchemaExport;
    type Output = Bound<'py, ArrowSchemaExport>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ArrowSchemaExport>> {
        Bound::new(py, ArrowSchemaExport::new(crate::export_schema(&self.0)?))
    }
}
