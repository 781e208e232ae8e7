//! The integrations' errors as Python exceptions (each with the feature `pyo3` and its own), so
//! that `?` works in a `#[pyfunction]` on every public error of every feature. An error that
//! wraps one of the safe layers' raises as that error does (`errors.rs`); the others by kind:
//! a device the call cannot use is a `BufferError`, a dtype with no counterpart a `TypeError`,
//! an extent that does not fit an `OverflowError`, a value or file refused a `ValueError`, a
//! failed read an `OSError`, another library's failure a `RuntimeError`. The table is in the
//! `python` module's documentation; `cudarc::CudaError` converts in its own module.

#[cfg(any(
    feature = "arrow-rs",
    feature = "safetensors",
    feature = "candle",
    feature = "burn",
    feature = "image"
))]
use alloc::format;

#[allow(unused_imports)]
use pyo3::exceptions::{
    PyBufferError, PyKeyError, PyMemoryError, PyNotImplementedError, PyOSError, PyOverflowError,
    PyRuntimeError, PyTypeError, PyValueError, PyZeroDivisionError,
};
#[allow(unused_imports)]
use pyo3::PyErr;

/// arrow-rs's errors as the exceptions pyarrow raises for the same kind (`ArrowInvalid` is a
/// `ValueError`, `ArrowNotImplementedError` a `NotImplementedError`, ...); this crate's errors
/// as they always do; a stream producer's error as `OSError(errno, message)`.
///
/// ```
/// use dlpack_abi::arrow_rs::InteropError;
/// use pyo3::exceptions::{PyNotImplementedError, PyValueError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let invalid = arrow_schema::ArrowError::InvalidArgumentError("bad".into());
///     let error: PyErr = InteropError::from(invalid).into();
///     assert!(error.is_instance_of::<PyValueError>(py));
///     assert_eq!(error.value(py).to_string(), "arrow-rs: Invalid argument error: bad");
///     let missing = arrow_schema::ArrowError::NotYetImplemented("that".into());
///     let error: PyErr = InteropError::from(missing).into();
///     assert!(error.is_instance_of::<PyNotImplementedError>(py));
/// });
/// ```
#[cfg(feature = "arrow-rs")]
impl From<crate::arrow_rs::InteropError> for PyErr {
    fn from(error: crate::arrow_rs::InteropError) -> Self {
        use crate::arrow_rs::InteropError;
        match error {
            InteropError::ArrowRs(error) => arrow_rs_exception(error),
            InteropError::Arrow(error) => error.into(),
            InteropError::Stream(error) => error.into(),
        }
    }
}

/// One of arrow-rs's errors, by kind, with its message.
#[cfg(feature = "arrow-rs")]
fn arrow_rs_exception(error: arrow_schema::ArrowError) -> PyErr {
    use arrow_schema::ArrowError as E;
    let message = format!("arrow-rs: {error}");
    match error {
        // Our own errors, passed through an arrow-rs reader (`StreamReader`): as they were.
        E::ExternalError(inner) => match inner.downcast::<crate::arrow_rs::InteropError>() {
            Ok(ours) => (*ours).into(),
            Err(inner) => match inner.downcast::<std::io::Error>() {
                Ok(io) => (*io).into(),
                // The async consumer's errors, passed through `AsyncBatchStream`.
                #[cfg(feature = "std")]
                Err(inner) => match inner.downcast::<crate::arrow::AsyncStreamError>() {
                    Ok(ours) => (*ours).into(),
                    Err(_) => PyRuntimeError::new_err(message),
                },
                #[cfg(not(feature = "std"))]
                Err(_) => PyRuntimeError::new_err(message),
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

/// `Io` as the `io::Error`'s `OSError` subclass (`FileNotFoundError`, ...), `Format` and
/// `Misaligned` as `ValueError`, `NoTensor` as `KeyError`, `UnsupportedDtype` as `TypeError`,
/// `ExtentTooLarge` as `OverflowError`, `Export` as its [`ExportError`](crate::dlpack::ExportError).
///
/// ```
/// use dlpack_abi::safetensors::SafetensorsError;
/// use pyo3::exceptions::{PyFileNotFoundError, PyKeyError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error: PyErr = SafetensorsError::NoTensor { name: "w".into() }.into();
///     assert!(error.is_instance_of::<PyKeyError>(py));
///     let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
///     let error: PyErr = SafetensorsError::Io(missing).into();
///     assert!(error.is_instance_of::<PyFileNotFoundError>(py));
/// });
/// ```
#[cfg(feature = "safetensors")]
impl From<crate::safetensors::SafetensorsError> for PyErr {
    fn from(error: crate::safetensors::SafetensorsError) -> Self {
        use crate::safetensors::SafetensorsError as E;
        let message = format!("{error}");
        match error {
            E::Io(error) => error.into(),
            E::NoTensor { .. } => PyKeyError::new_err(message),
            E::UnsupportedDtype { .. } => PyTypeError::new_err(message),
            E::ExtentTooLarge { .. } => PyOverflowError::new_err(message),
            E::Export { error, .. } => super::errors::export_exception(&error, message),
            // `Format`, `Misaligned`: a file refused.
            _ => PyValueError::new_err(message),
        }
    }
}

/// A device candle or this crate cannot use as `BufferError`, a dtype without a counterpart as
/// `TypeError`, `DimsOverflow` as `OverflowError`, candle's own error as `RuntimeError`, and the
/// wrapped `ExportError`/`AccessError` as they convert.
///
/// ```
/// use dlpack_abi::candle::CandleError;
/// use pyo3::exceptions::{PyOverflowError, PyTypeError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error: PyErr = CandleError::UnsupportedCandleDtype(candle_core::DType::F4).into();
///     assert!(error.is_instance_of::<PyTypeError>(py));
///     let error: PyErr = CandleError::DimsOverflow.into();
///     assert!(error.is_instance_of::<PyOverflowError>(py));
/// });
/// ```
#[cfg(feature = "candle")]
impl From<crate::candle::CandleError> for PyErr {
    fn from(error: crate::candle::CandleError) -> Self {
        use crate::candle::CandleError as E;
        let message = format!("{error}");
        match error {
            E::Export(error) => error.into(),
            E::Access(error) => error.into(),
            E::UnsupportedCandleDevice(_) | E::UnsupportedDevice(_) => {
                PyBufferError::new_err(message)
            }
            E::UnsupportedCandleDtype(_) | E::UnsupportedDtype(_) | E::VectorDtype(_) => {
                PyTypeError::new_err(message)
            }
            E::DimsOverflow => PyOverflowError::new_err(message),
            // `Candle`: candle's own failure.
            _ => PyRuntimeError::new_err(message),
        }
    }
}

/// A dtype without a counterpart as `TypeError`, misaligned bytes as `BufferError` (as
/// `AccessError` refuses them), an extent that does not fit as `OverflowError`, a failed read
/// of burn's bytes as `OSError`, data burn refuses as `ValueError`, and the wrapped
/// `ExportError`/`AccessError` as they convert.
///
/// ```
/// use dlpack_abi::burn::BurnError;
/// use dlpack_abi::raw::{kDLComplex, DLDataType};
/// use pyo3::exceptions::{PyBufferError, PyTypeError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let dtype = DLDataType { code: kDLComplex, bits: 64, lanes: 1 };
///     let error: PyErr = BurnError::NoBurnDtype { dtype }.into();
///     assert!(error.is_instance_of::<PyTypeError>(py));
///     let error: PyErr = BurnError::Misaligned { address: 3, align: 4 }.into();
///     assert!(error.is_instance_of::<PyBufferError>(py));
/// });
/// ```
#[cfg(feature = "burn")]
impl From<crate::burn::BurnError> for PyErr {
    fn from(error: crate::burn::BurnError) -> Self {
        use crate::burn::BurnError as E;
        let message = format!("{error}");
        match error {
            E::Export(error) => error.into(),
            E::Access(error) => error.into(),
            E::Quantized { .. } | E::NoDlpackDtype { .. } | E::NoBurnDtype { .. } => {
                PyTypeError::new_err(message)
            }
            E::Misaligned { .. } => PyBufferError::new_err(message),
            E::ShapeTooLarge { .. } => PyOverflowError::new_err(message),
            E::HostAccess(_) => PyOSError::new_err(message),
            // `Data`: burn refused the data.
            _ => PyValueError::new_err(message),
        }
    }
}

/// Memory the host cannot read and a layout that is not one slice as `BufferError`, a dtype
/// that is not the pixel's as `TypeError`, a shape that is not an image of the pixel as
/// `ValueError` (`OverflowError` when it does not fit `u32`), and the wrapped `AccessError` as
/// it converts.
///
/// ```
/// use dlpack_abi::image::TensorImageError;
/// use pyo3::exceptions::{PyBufferError, PyValueError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error: PyErr = TensorImageError::Channels { found: 1, expected: 3 }.into();
///     assert!(error.is_instance_of::<PyValueError>(py));
///     let error: PyErr = TensorImageError::NotContiguous.into();
///     assert!(error.is_instance_of::<PyBufferError>(py));
/// });
/// ```
#[cfg(feature = "image")]
impl From<crate::image::TensorImageError> for PyErr {
    fn from(error: crate::image::TensorImageError) -> Self {
        use crate::image::TensorImageError as E;
        let message = format!("{error}");
        match error {
            E::Access(error) => error.into(),
            E::Lanes { .. } | E::DtypeMismatch { .. } => PyTypeError::new_err(message),
            E::Ndim { .. } | E::Channels { .. } => PyValueError::new_err(message),
            E::TooLarge { .. } => PyOverflowError::new_err(message),
            // `NotHostAccessible`, `NotContiguous`.
            _ => PyBufferError::new_err(message),
        }
    }
}

/// The async device stream consumer's errors: the producer's as `OSError(errno, message)`, a
/// refused schema or array as the [`ValidationError`](crate::arrow::ValidationError) it is
/// (`ValueError`), a broken protocol as `RuntimeError`.
///
/// ```
/// use dlpack_abi::arrow::{AsyncStreamError, ProducerError};
/// use pyo3::exceptions::{PyOSError, PyRuntimeError};
/// use pyo3::PyErr;
///
/// pyo3::Python::initialize();
/// pyo3::Python::attach(|py| {
///     let error: PyErr = AsyncStreamError::Protocol("a task before the schema").into();
///     assert!(error.is_instance_of::<PyRuntimeError>(py));
///     let error: PyErr = AsyncStreamError::Producer(ProducerError::code_only(5)).into();
///     assert!(error.is_instance_of::<PyOSError>(py));
/// });
/// ```
#[cfg(feature = "std")]
impl From<crate::arrow::AsyncStreamError> for PyErr {
    fn from(error: crate::arrow::AsyncStreamError) -> Self {
        use crate::arrow::AsyncStreamError as E;
        match error {
            E::Producer(error) => error.into(),
            E::Invalid(error) => error.into(),
            other => PyRuntimeError::new_err(alloc::string::ToString::to_string(&other)),
        }
    }
}
