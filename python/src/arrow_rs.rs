//! Test helpers for the arrow-rs argument and return types (`dlpack_abi_arrow_rs::python::PyArray`
//! and friends) and for the integrations' error conversions: in the module as `_arrow_rs_*` and
//! `_raise_error`, not in its `__all__` (python/tests/test_arrow_rs.rs).

use std::sync::Arc;

use abi::arrow::{errno, MetadataError, ProducerError, StreamError, ValidationError};
use abi::dlpack::{Export, ExportError};
use abi::raw::DLPackFlags;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Int64Array;
use arrow_schema::ArrowError;
use dlpack_abi_arrow_rs::python::{
    PyArray, PyDeviceRecordBatchReader, PyField, PyRecordBatch, PyRecordBatchReader, PySchema,
};
use dlpack_abi_arrow_rs::ArrowRsError;
use dlpack_abi_pyo3::PyDlpackResult;
use dlpack_abi_safetensors::{SafeTensorsFile, SafetensorsError};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// The batch through arrow-rs and back, sharing its buffers.
#[pyfunction]
fn batch_roundtrip(batch: PyRecordBatch) -> PyRecordBatch {
    batch
}

/// The batch in `schema`, asked of its producer as `requested_schema`.
#[pyfunction]
fn batch_as(batch: &Bound<'_, PyAny>, schema: &Bound<'_, PyAny>) -> PyResult<PyRecordBatch> {
    PyRecordBatch::from_arrow(batch, Some(schema))
}

/// The array through arrow-rs and back, with its field.
#[pyfunction]
fn array_roundtrip(array: PyArray) -> PyArray {
    array
}

/// `x + 1` for an int64 array (nulls kept), with x's field.
#[pyfunction]
fn add_one(x: PyArray) -> PyResult<PyArray> {
    let values = x
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| PyTypeError::new_err(format!("expected int64, not {}", x.data_type())))?;
    let plus_one: Int64Array = values.unary(|v| v.wrapping_add(1));
    Ok(PyArray(Arc::new(plus_one), x.field().clone()))
}

/// The schema's field names.
#[pyfunction]
fn schema_names(schema: PySchema) -> Vec<String> {
    schema
        .fields()
        .iter()
        .map(|field| field.name().clone())
        .collect()
}

/// The schema through arrow-rs and back.
#[pyfunction]
fn schema_roundtrip(schema: PySchema) -> PySchema {
    schema
}

/// The field through arrow-rs and back.
#[pyfunction]
fn field_roundtrip(field: PyField) -> PyField {
    field
}

/// The rows of any stream, read through arrow-rs.
#[pyfunction]
fn reader_rows(reader: PyRecordBatchReader) -> PyResult<usize> {
    let mut rows = 0;
    for batch in reader {
        rows += batch?.num_rows();
    }
    Ok(rows)
}

/// The stream through arrow-rs, returned as a CPU stream.
#[pyfunction]
fn reader_roundtrip(reader: PyRecordBatchReader) -> PyRecordBatchReader {
    reader
}

/// The stream through arrow-rs, returned as a device stream (`kArrowCPU`).
#[pyfunction]
fn device_reader_roundtrip(reader: PyRecordBatchReader) -> PyDeviceRecordBatchReader {
    PyDeviceRecordBatchReader(reader.into_inner())
}

/// Raises the exception that error `kind` converts to, through `?`.
#[pyfunction]
fn raise_error(kind: &str) -> PyDlpackResult<()> {
    let arrow = |error: ArrowError| -> PyDlpackResult<()> { Err(ArrowRsError::from(error))? };
    let tensors = |error: SafetensorsError| -> PyDlpackResult<()> { Err(error)? };
    let producer = || ProducerError::new(errno::EIO, Some("disk on fire"));
    match kind {
        "arrow_rs.invalid" => arrow(ArrowError::InvalidArgumentError("bad".into())),
        "arrow_rs.not_implemented" => arrow(ArrowError::NotYetImplemented("that".into())),
        "arrow_rs.overflow" => arrow(ArrowError::OffsetOverflowError(1)),
        "arrow_rs.divide" => arrow(ArrowError::DivideByZero),
        "arrow_rs.memory" => arrow(ArrowError::MemoryError("none left".into())),
        "arrow_rs.io" => arrow(ArrowError::IoError(
            "open".into(),
            std::io::ErrorKind::NotFound.into(),
        )),
        // What a `StreamReader` yields for its producer's error.
        "arrow_rs.external_stream" => arrow(ArrowError::ExternalError(Box::new(
            ArrowRsError::from(StreamError::Producer(producer())),
        ))),
        "arrow_rs.external_other" => arrow(ArrowError::ExternalError("other".into())),
        "arrow_rs.ours" => Err(ArrowRsError::from(ValidationError::SchemaMismatch))?,
        "safetensors.io" => tensors(SafetensorsError::Io(
            std::io::ErrorKind::PermissionDenied.into(),
        )),
        "safetensors.format" => {
            SafeTensorsFile::from_bytes(&[200, 0, 0, 0, 0, 0, 0, 0, b'{', b'}'])?;
            Ok(())
        }
        "safetensors.no_tensor" => tensors(SafetensorsError::NoTensor { name: "w".into() }),
        "safetensors.dtype" => tensors(SafetensorsError::UnsupportedDtype {
            name: "w".into(),
            dtype: "F3".into(),
        }),
        "safetensors.misaligned" => tensors(SafetensorsError::Misaligned {
            name: "w".into(),
            offset: 3,
            align: 4,
        }),
        "safetensors.extent" => tensors(SafetensorsError::ExtentTooLarge {
            name: "w".into(),
            dim: 0,
            extent: usize::MAX,
        }),
        "safetensors.export_flags" => tensors(SafetensorsError::Export {
            name: "w".into(),
            error: ExportError::FlagsNotRepresentable {
                flags: DLPackFlags::IS_SUBBYTE_TYPE_PADDED,
            },
        }),
        "metadata" => Err(MetadataError::TooLarge)?,
        "producer" => Err(producer())?,
        "into_legacy" => {
            Export::new(vec![0.0f32], &[1])
                .read_only()
                .finish()?
                .into_legacy()?;
            Ok(())
        }
        #[cfg(feature = "cuda-runtime")]
        "cudarc.not_cuda" => Err(dlpack_abi_cudarc::CudaError::NotCuda {
            device_type: abi::raw::kDLROCM,
            device_id: 0,
        })?,
        _ => Err(pyo3::exceptions::PyLookupError::new_err(kind.to_string()).into()),
    }
}

/// Adds the helpers to the module, outside its `__all__`.
pub fn add(module: &Bound<'_, PyModule>) -> PyResult<()> {
    macro_rules! private {
        ($($name:ident),*) => {$(
            module.setattr(
                concat!("_", stringify!($name)),
                wrap_pyfunction!($name, module)?,
            )?;
        )*};
    }
    private!(
        batch_roundtrip,
        batch_as,
        array_roundtrip,
        add_one,
        schema_names,
        schema_roundtrip,
        field_roundtrip,
        reader_rows,
        reader_roundtrip,
        device_reader_roundtrip,
        raise_error
    );
    Ok(())
}
