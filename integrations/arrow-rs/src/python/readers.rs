//! arrow-rs readers as `#[pyfunction]` arguments and return values, over the Arrow C Stream
//! and C Device Stream interfaces.

use alloc::boxed::Box;
use core::ops::{Deref, DerefMut};

use arrow_array::{RecordBatch, RecordBatchReader};
use pyo3::prelude::*;
use pyo3::Borrowed;

use dlpack_abi_pyo3::{AnyArrowStream, ArrowStreamExport};

use crate::{ArrowRsError, StreamReader};

/// An arrow-rs reader as a `#[pyfunction]` argument (any Arrow stream: a pyarrow table or
/// reader, a polars frame, a DuckDB result; each batch validated and shared as it is read) and
/// return value (a `dlpack_abi.ArrowStream` over `__arrow_c_stream__`, one consumer). Iterating
/// yields `Result<RecordBatch, ArrowRsError>`; a producer's error keeps its errno (`OSError`).
///
/// ```no_run
/// use arrow_array::RecordBatchReader;
/// use dlpack_abi_arrow_rs::python::PyRecordBatchReader;
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
    /// As [`dlpack_abi_pyo3::import_stream`], and the [`ArrowRsError`] of a stream
    /// whose schema is not a struct.
    ///
    /// ```no_run
    /// use dlpack_abi_arrow_rs::python::PyRecordBatchReader;
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
            Some(_) => {
                crate::import_stream(dlpack_abi_pyo3::import_stream(source, requested_schema)?)?
            }
            None => reader_of(source.extract::<AnyArrowStream>()?)?,
        };
        Ok(Self(Box::new(reader)))
    }

    /// The reader.
    ///
    /// ```
    /// use arrow_array::{RecordBatchIterator, RecordBatchReader};
    /// use dlpack_abi_arrow_rs::python::PyRecordBatchReader;
    ///
    /// let schema = std::sync::Arc::new(arrow_schema::Schema::empty());
    /// let reader = PyRecordBatchReader(Box::new(RecordBatchIterator::new([], schema.clone())));
    /// assert_eq!(reader.into_inner().schema(), schema);
    /// ```
    pub fn into_inner(self) -> Box<dyn RecordBatchReader + Send> {
        self.0
    }
}

/// dlpack-abi's stream as an arrow-rs reader.
fn reader_of(stream: AnyArrowStream) -> Result<StreamReader, ArrowRsError> {
    match stream {
        AnyArrowStream::Cpu(stream) => crate::import_stream(stream),
        AnyArrowStream::Device(stream) => crate::import_device_stream(stream),
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
    type Item = Result<RecordBatch, ArrowRsError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|batch| batch.map_err(ArrowRsError::from))
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
        let stream = crate::export_reader(self.0)?;
        AnyArrowStream::Cpu(stream).into_pyobject(py)
    }
}

/// [`PyRecordBatchReader`] returned as a C Device stream (`__arrow_c_device_stream__`,
/// `kArrowCPU`, each batch exported zero-copy), for consumers of the device interface; taken
/// as an argument, it is the same as `PyRecordBatchReader`.
///
/// ```no_run
/// use dlpack_abi_arrow_rs::python::{PyDeviceRecordBatchReader, PyRecordBatchReader};
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
    /// use dlpack_abi_arrow_rs::python::PyDeviceRecordBatchReader;
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
        let stream = crate::export_device_reader(self.0)?;
        AnyArrowStream::Device(stream).into_pyobject(py)
    }
}
