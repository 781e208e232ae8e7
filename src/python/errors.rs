//! The safe layers' errors as Python exceptions, so that `?` works in a `#[pyfunction]` with no
//! `map_err`: each maps to the exception the DLPack Python spec, the array API or the Arrow
//! PyCapsule interface names for that kind of failure, with the error's message. One home: every
//! path of the Python glue raises through these.
//!
//! The table is in the `python` module's documentation.
//!
//! ```
//! use dlpack_abi::dlpack::{AccessError, ImportError};
//! use pyo3::exceptions::{PyBufferError, PyTypeError};
//! use pyo3::PyErr;
//!
//! pyo3::Python::initialize();
//! pyo3::Python::attach(|py| {
//!     let error: PyErr = ImportError::NegativeNdim { ndim: -1 }.into();
//!     assert!(error.is_instance_of::<PyBufferError>(py));
//!     let error: PyErr = AccessError::DtypeMismatch {
//!         requested: <f64 as dlpack_abi::dlpack::Element>::DTYPE,
//!         found: <f32 as dlpack_abi::dlpack::Element>::DTYPE,
//!     }
//!     .into();
//!     assert!(error.is_instance_of::<PyTypeError>(py));
//!     assert_eq!(error.value(py).to_string(), "DLTensor.dtype is float32, but the requested type is float64");
//! });
//! ```

use alloc::format;
use alloc::string::{String, ToString};

use pyo3::exceptions::{
    PyBufferError, PyIndexError, PyOSError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::{PyErr, PyResult};

use crate::arrow::{
    ArrowError, BridgeError, MetadataError, ProducerError, ReadError, StreamError, ValidationError,
};
use crate::dlpack::{
    AccessError, ConsumerStreamError, ExportError, ImportError, IntoLegacyError, OrderError,
    TensorError,
};

impl From<ImportError> for PyErr {
    fn from(error: ImportError) -> Self {
        PyBufferError::new_err(format!("invalid DLPack tensor: {error}"))
    }
}

impl From<AccessError> for PyErr {
    fn from(error: AccessError) -> Self {
        let message = format!("{error}");
        match error {
            AccessError::DtypeMismatch { .. } | AccessError::UnsupportedDtype { .. } => {
                PyTypeError::new_err(message)
            }
            AccessError::IndexRank { .. } | AccessError::IndexOutOfBounds { .. } => {
                PyIndexError::new_err(message)
            }
            AccessError::DimensionMismatch { .. } => PyValueError::new_err(message),
            _ => PyBufferError::new_err(message),
        }
    }
}

impl From<ExportError> for PyErr {
    fn from(error: ExportError) -> Self {
        export_exception(&error, format!("{error}"))
    }
}

/// The exception of an [`ExportError`], with `message` (the error's, or that of an error that
/// wraps it): one home for the rule.
pub(crate) fn export_exception(error: &ExportError, message: String) -> PyErr {
    match error {
        ExportError::FlagsNotRepresentable { .. } => PyBufferError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// As the [`ExportError`] it carries (the tensor is dropped).
impl From<IntoLegacyError> for PyErr {
    fn from(error: IntoLegacyError) -> Self {
        export_exception(&error.error(), format!("{error}"))
    }
}

impl From<TensorError> for PyErr {
    fn from(error: TensorError) -> Self {
        match error {
            TensorError::Import(error) => error.into(),
            TensorError::Access(error) => error.into(),
            TensorError::Export(error) => error.into(),
        }
    }
}

impl From<ConsumerStreamError> for PyErr {
    fn from(error: ConsumerStreamError) -> Self {
        let message = format!("{error}");
        match error {
            ConsumerStreamError::Invalid { .. } => PyValueError::new_err(message),
            _ => PyBufferError::new_err(message),
        }
    }
}

/// A stream the producer cannot order on is a `BufferError` (the array API's convention); a
/// device runtime's failure a `RuntimeError`.
impl From<OrderError> for PyErr {
    fn from(error: OrderError) -> Self {
        let message = format!("{error}");
        match error {
            OrderError::Runtime { .. } => PyRuntimeError::new_err(message),
            _ => PyBufferError::new_err(message),
        }
    }
}

impl From<ValidationError> for PyErr {
    fn from(error: ValidationError) -> Self {
        PyValueError::new_err(format!("invalid Arrow data: {error}"))
    }
}

impl From<ReadError> for PyErr {
    fn from(error: ReadError) -> Self {
        PyValueError::new_err(format!("{error}"))
    }
}

impl From<BridgeError> for PyErr {
    fn from(error: BridgeError) -> Self {
        PyBufferError::new_err(format!("{error}"))
    }
}

impl From<ArrowError> for PyErr {
    fn from(error: ArrowError) -> Self {
        match error {
            ArrowError::Validation(error) => error.into(),
            ArrowError::Read(error) => error.into(),
            ArrowError::Bridge(error) => error.into(),
        }
    }
}

impl From<StreamError> for PyErr {
    fn from(error: StreamError) -> Self {
        match error {
            StreamError::Producer(error) => error.into(),
            StreamError::Invalid(error) => error.into(),
        }
    }
}

/// `OSError(errno, message)`.
impl From<ProducerError> for PyErr {
    fn from(error: ProducerError) -> Self {
        let message = error
            .message()
            .unwrap_or("the Arrow stream's producer failed");
        PyOSError::new_err((error.code(), message.to_string()))
    }
}

/// `ValueError`: invalid Arrow data.
impl From<MetadataError> for PyErr {
    fn from(error: MetadataError) -> Self {
        PyValueError::new_err(format!("invalid Arrow metadata: {error}"))
    }
}

/// Runs `body`, turning a panic into a `PanicException` (with the panic's message) instead of
/// letting it unwind into C, which would abort the process: the guard of every function this
/// crate hands to C that runs code it does not control (an exporter's `dlpack_tensor`, say).
pub(crate) fn catching_panics<R>(what: &str, body: impl FnOnce() -> PyResult<R>) -> PyResult<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| {
                payload
                    .downcast_ref::<alloc::string::String>()
                    .map(|s| s.as_str())
            })
            .unwrap_or("a panic without a message");
        Err(pyo3::panic::PanicException::new_err(format!(
            "{what} panicked: {message}"
        )))
    })
}
