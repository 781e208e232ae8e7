//! pyo3 argument and return types over arrow-rs values (feature `pyo3`), over any Arrow
//! PyCapsule producer or consumer, with no capsule code; and [`ArrowRsError`] as a Python
//! exception:
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
//! **Zero-copy and validated.** An argument is imported by dlpack-abi-pyo3
//! ([`dlpack_abi_pyo3::import_array`] and friends: the structs validated), then handed to arrow-rs
//! as [`import_array`](crate::import_array) hands it (arrow-rs's full validation of the values),
//! sharing the producer's buffers; a return value is exported by this crate's `export_*`,
//! sharing arrow-rs's. A `dlpack_abi.ArrowArray` offers both `__arrow_c_array__` and
//! `__arrow_c_device_array__`, so one array type serves both; streams are one interface each,
//! hence two reader types. Data a device producer keeps in device memory (or behind a pending
//! `sync_event`) is refused: arrow-rs reads host memory only.
//!
//! **`requested_schema`.** An argument is extracted with the producer's own schema; ask for
//! another with the `from_arrow(source, Some(requested))` constructors (pyarrow casts to it).
//! A returned value answers a consumer's `requested_schema` as every export of dlpack-abi-pyo3
//! does: it offers its own schema (the interface makes the request best-effort, and the
//! consumer casts), and refuses with `ValueError` a request with another number of fields.
//!
//! **Errors** convert with `?`: [`ArrowRsError`] into the exception of its kind (`From` for
//! `PyErr`, and [`IntoPyErr`] for
//! [`PyDlpackResult`](dlpack_abi_pyo3::PyDlpackResult)). Reading a [`PyRecordBatchReader`]
//! yields `Result<RecordBatch, ArrowRsError>`, so `?` works there too. arrow-rs's own
//! `ArrowError` cannot convert into `PyErr` (neither type is this crate's): wrap it in an
//! [`ArrowRsError`] (`ArrowRsError::from(error)`), or return `ArrowRsError` from a helper
//! function, where `?` converts it.
//!
//! ```no_run
//! use dlpack_abi_arrow_rs::python::{PyArray, PyRecordBatch, PyRecordBatchReader};
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

mod readers;
mod values;

use dlpack_abi_pyo3::IntoPyErr;
use pyo3::PyErr;

use crate::ArrowRsError;

pub use readers::{PyDeviceRecordBatchReader, PyRecordBatchReader};
pub use values::{PyArray, PyField, PyRecordBatch, PySchema};

/// arrow-rs's errors as the exceptions pyarrow raises for the same kind (`ArrowInvalid` is a
/// `ValueError`, `ArrowNotImplementedError` a `NotImplementedError`, ...); dlpack-abi's errors
/// as dlpack-abi-pyo3 raises them; a stream producer's error as `OSError(errno, message)`.
///
/// ```
/// use dlpack_abi_arrow_rs::ArrowRsError;
/// use pyo3::exceptions::{PyNotImplementedError, PyValueError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let invalid = arrow_schema::ArrowError::InvalidArgumentError("bad".into());
///     let error: PyErr = ArrowRsError::from(invalid).into();
///     assert!(error.is_instance_of::<PyValueError>(py));
///     assert_eq!(error.value(py).to_string(), "arrow-rs: Invalid argument error: bad");
///     let missing = arrow_schema::ArrowError::NotYetImplemented("that".into());
///     let error: PyErr = ArrowRsError::from(missing).into();
///     assert!(error.is_instance_of::<PyNotImplementedError>(py));
/// });
/// ```
impl From<ArrowRsError> for PyErr {
    fn from(error: ArrowRsError) -> Self {
        let code = error.code();
        dlpack_abi_pyo3::with_code(exception(error), code)
    }
}

/// The exception of `error`, by kind (its code is added by the `From` impl).
fn exception(error: ArrowRsError) -> PyErr {
    match error {
        ArrowRsError::ArrowRs(error) => arrow_rs_exception(error),
        ArrowRsError::Arrow(error) => error.into_py_err(),
        ArrowRsError::Stream(error) => error.into_py_err(),
    }
}

/// As `From<ArrowRsError> for PyErr`, so that `?` reaches a
/// [`PyDlpackResult`](dlpack_abi_pyo3::PyDlpackResult) from an [`ArrowRsError`].
///
/// ```
/// use dlpack_abi::arrow::SchemaDef;
/// use dlpack_abi_pyo3::PyDlpackResult;
///
/// /// The arrow-rs schema of record batches of one format.
/// fn schema_of(format: &str) -> PyDlpackResult<arrow_schema::Schema> {
///     let schema = SchemaDef::new(format)?.export()?; // dlpack-abi's errors
///     Ok(dlpack_abi_arrow_rs::import_schema(schema.view())?) // an ArrowRsError
/// }
///
/// pyo3::Python::initialize();
/// assert!(schema_of("+s").unwrap().fields().is_empty());
/// // Record batches are structs: arrow-rs's InvalidArgumentError, a ValueError in Python.
/// let error = schema_of("l").unwrap_err().into_inner();
/// pyo3::Python::attach(|py| assert!(error.is_instance_of::<pyo3::exceptions::PyValueError>(py)));
/// ```
impl IntoPyErr for ArrowRsError {
    fn into_py_err(self) -> PyErr {
        self.into()
    }
}

/// One of arrow-rs's errors, by kind, with its message.
fn arrow_rs_exception(error: arrow_schema::ArrowError) -> PyErr {
    use arrow_schema::ArrowError as E;
    use pyo3::exceptions::{
        PyMemoryError, PyNotImplementedError, PyOverflowError, PyRuntimeError, PyValueError,
        PyZeroDivisionError,
    };
    let message = alloc::format!("arrow-rs: {error}");
    match error {
        // dlpack-abi's own errors, passed through an arrow-rs reader (`StreamReader`): as they
        // were.
        E::ExternalError(inner) => match inner.downcast::<ArrowRsError>() {
            Ok(ours) => (*ours).into(),
            Err(inner) => match inner.downcast::<std::io::Error>() {
                Ok(io) => (*io).into(),
                // The async consumer's errors, passed through `AsyncBatchStream`.
                Err(inner) => match inner.downcast::<dlpack_abi::arrow::AsyncStreamError>() {
                    Ok(ours) => (*ours).into_py_err(),
                    Err(_) => PyRuntimeError::new_err(message),
                },
            },
        },
        E::IoError(_, io) => io.into(),
        E::NotYetImplemented(_) => PyNotImplementedError::new_err(message),
        E::MemoryError(_) => PyMemoryError::new_err(message),
        E::DivideByZero => PyZeroDivisionError::new_err(message),
        E::ArithmeticOverflow(_)
        | E::DictionaryKeyOverflowError
        | E::RunEndIndexOverflowError
        | E::OffsetOverflowError(_) => PyOverflowError::new_err(message),
        E::CastError(_)
        | E::ParseError(_)
        | E::SchemaError(_)
        | E::ComputeError(_)
        | E::CsvError(_)
        | E::JsonError(_)
        | E::AvroError(_)
        | E::IpcError(_)
        | E::InvalidArgumentError(_)
        | E::ParquetError(_)
        | E::CDataInterface(_) => PyValueError::new_err(message),
    }
}
