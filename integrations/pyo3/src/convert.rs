//! `#[pyfunction]` argument and return types: [`PyVersionedTensor`] (any DLPack producer in, a
//! `dlpack_abi.Tensor` out), [`AnyArrowArray`] and [`AnyArrowStream`] (any Arrow PyCapsule
//! producer in, a `dlpack_abi.ArrowArray` / `ArrowStream` out).

use core::ops::{Deref, DerefMut};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::Borrowed;

use super::arrow::{import_device_array, import_device_stream, import_stream};
use super::{from_dlpack, ArrowArrayExport, ArrowStreamExport, DlpackRequest, PyTensor};
use dlpack_abi::arrow::{ArrayStream, DeviceArray, DeviceArrayStream, Schema};
use dlpack_abi::dlpack::VersionedTensor;

/// A [`VersionedTensor`] that crosses into Python and back: as a `#[pyfunction]` argument, any
/// DLPack producer (a capsule, consumed once, or an object with `__dlpack__`), imported by
/// [`from_dlpack`]'s rules (the C exchange API of its type first, then
/// `__dlpack__(max_version=(1, 3))`, then the legacy call) on the CPU, without a copy; returned,
/// a `dlpack_abi.Tensor` ([`PyTensor`]) that any consumer reads, writable unless the tensor is
/// `READ_ONLY`. It dereferences to the tensor.
///
/// A newtype because of the orphan rule: pyo3's `FromPyObject` and `IntoPyObject` and
/// dlpack-abi's `VersionedTensor` are both foreign here (arrow-rs's `PyArrowType` is the same
/// device).
///
/// ```no_run
/// use dlpack_abi::dlpack::Export;
/// use dlpack_abi_pyo3::{PyDlpackResult, PyVersionedTensor};
/// use pyo3::prelude::*;
///
/// /// `k * x` for any float64 array; NumPy reads the result: `np.from_dlpack(scale(x, 2.0))`.
/// #[pyfunction]
/// fn scale(x: PyVersionedTensor, k: f64) -> PyDlpackResult<PyVersionedTensor> {
///     let values: Vec<f64> = x.view().iter::<f64>()?.map(|v| k * v).collect();
///     Ok(Export::new(values, x.view().shape()).finish()?.into())
/// }
/// ```
#[derive(Debug)]
pub struct PyVersionedTensor(pub VersionedTensor);

impl PyVersionedTensor {
    /// The tensor.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi_pyo3::PyVersionedTensor;
    ///
    /// let tensor = PyVersionedTensor::from(Export::new(vec![1u8, 2], &[2]).finish().unwrap());
    /// assert_eq!(tensor.into_inner().view().shape(), [2]);
    /// ```
    pub fn into_inner(self) -> VersionedTensor {
        self.0
    }
}

impl From<VersionedTensor> for PyVersionedTensor {
    fn from(tensor: VersionedTensor) -> Self {
        Self(tensor)
    }
}

impl From<PyVersionedTensor> for VersionedTensor {
    fn from(tensor: PyVersionedTensor) -> Self {
        tensor.0
    }
}

impl Deref for PyVersionedTensor {
    type Target = VersionedTensor;

    fn deref(&self) -> &VersionedTensor {
        &self.0
    }
}

impl DerefMut for PyVersionedTensor {
    fn deref_mut(&mut self) -> &mut VersionedTensor {
        &mut self.0
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for PyVersionedTensor {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        from_dlpack(&source, &DlpackRequest::default()).map(Self)
    }
}

/// A `dlpack_abi.Tensor` ([`PyTensor`]) whose exports are writable unless the tensor is
/// `READ_ONLY`, and whose drop attaches to the interpreter first (the tensor may hold memory
/// imported from Python).
impl<'py> IntoPyObject<'py> for PyVersionedTensor {
    type Target = PyTensor;
    type Output = Bound<'py, PyTensor>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyTensor>> {
        Bound::new(py, PyTensor::imported(self.0))
    }
}

/// Any Arrow array as a `#[pyfunction]` argument: an object with `__arrow_c_device_array__` or
/// `__arrow_c_array__` (a CPU array then comes as a `kArrowCPU` device array), validated against
/// its schema; and, returned, a `dlpack_abi.ArrowArray` that pyarrow, polars or DuckDB read.
///
/// ```no_run
/// use dlpack_abi_pyo3::{AnyArrowArray, PyDlpackResult};
/// use pyo3::prelude::*;
///
/// /// The number of nulls of any Arrow array (pyarrow, polars, nanoarrow, ...).
/// #[pyfunction]
/// fn null_count(x: AnyArrowArray) -> PyDlpackResult<usize> {
///     let view = x.array.view(x.schema.view())?;
///     Ok(view.null_count().unwrap_or(0))
/// }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct AnyArrowArray {
    /// The array's type.
    pub schema: Schema,
    /// The array, with its device (and sync event).
    pub array: DeviceArray,
}

impl AnyArrowArray {
    /// An array and its schema, to return to Python (checked against each other on return).
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, DeviceArray, SchemaDef};
    /// use dlpack_abi_pyo3::AnyArrowArray;
    ///
    /// let array = DeviceArray::from_cpu(Array::from_vec(vec![1i64, 2, 3])?);
    /// let value = AnyArrowArray::new(SchemaDef::of::<i64>()?.export()?, array);
    /// assert_eq!(value.array.len(), 3);
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn new(schema: Schema, array: DeviceArray) -> Self {
        Self { schema, array }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for AnyArrowArray {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let (schema, array) = import_device_array(&source, None)?;
        Ok(Self { schema, array })
    }
}

/// A `dlpack_abi.ArrowArray`, dropped attached to the interpreter (the array may hold memory
/// imported from Python). `ValueError` if the array does not fit its schema.
impl<'py> IntoPyObject<'py> for AnyArrowArray {
    type Target = ArrowArrayExport;
    type Output = Bound<'py, ArrowArrayExport>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ArrowArrayExport>> {
        Bound::new(py, ArrowArrayExport::returned(self.schema, self.array)?)
    }
}

/// Any Arrow stream as a `#[pyfunction]` argument: an object with `__arrow_c_stream__` (a CPU
/// stream, tried first) or `__arrow_c_device_stream__` (asked for when there is no CPU method,
/// or when the CPU method refuses, as an object that offers both does for a device stream);
/// nothing is read until it is iterated. Returned, a `dlpack_abi.ArrowStream`.
///
/// ```no_run
/// use dlpack_abi_pyo3::{AnyArrowStream, PyDlpackResult};
/// use pyo3::prelude::*;
///
/// /// The number of rows of any Arrow stream; a producer's error is raised as `OSError`.
/// #[pyfunction]
/// fn count_rows(stream: AnyArrowStream) -> PyDlpackResult<usize> {
///     let mut rows = 0;
///     match stream {
///         AnyArrowStream::Cpu(stream) => for batch in stream { rows += batch?.len() },
///         AnyArrowStream::Device(stream) => for batch in stream { rows += batch?.len() },
///     }
///     Ok(rows)
/// }
/// ```
#[derive(Debug)]
pub enum AnyArrowStream {
    /// From `__arrow_c_stream__`.
    Cpu(ArrayStream),
    /// From `__arrow_c_device_stream__`.
    Device(DeviceArrayStream),
}

impl<'a, 'py> FromPyObject<'a, 'py> for AnyArrowStream {
    type Error = PyErr;

    fn extract(source: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = source.py();
        let device = source.hasattr(pyo3::intern!(py, "__arrow_c_device_stream__"))?;
        let mut refused = None;
        if source.hasattr(pyo3::intern!(py, "__arrow_c_stream__"))? {
            match import_stream(&source, None) {
                Ok(stream) => return Ok(Self::Cpu(stream)),
                // An object with both methods whose stream is on a device refuses the CPU one
                // (and keeps its stream): ask for the device stream.
                Err(error) if !device => return Err(error),
                Err(error) => refused = Some(error),
            }
        }
        if device {
            return import_device_stream(&source, None)
                .map(Self::Device)
                // Both refused: the device error, caused by the CPU one.
                .inspect_err(|error| error.set_cause(py, refused));
        }
        Err(PyTypeError::new_err(
            "expected an Arrow stream: an object with __arrow_c_stream__ or \
             __arrow_c_device_stream__",
        ))
    }
}

/// A `dlpack_abi.ArrowStream` (one consumer), dropped attached to the interpreter.
impl<'py> IntoPyObject<'py> for AnyArrowStream {
    type Target = ArrowStreamExport;
    type Output = Bound<'py, ArrowStreamExport>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, ArrowStreamExport>> {
        let export = match self {
            Self::Cpu(stream) => ArrowStreamExport::returned_cpu(stream),
            Self::Device(stream) => ArrowStreamExport::returned_device(stream),
        };
        Bound::new(py, export)
    }
}
