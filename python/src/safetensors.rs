//! `dlpack_abi.SafeTensors` (and `dlpack_abi.safetensors.open`): a safetensors file, memory-mapped,
//! whose tensors are handed to NumPy, PyTorch, JAX and any DLPack consumer without a copy.

use std::collections::BTreeMap;
use std::path::PathBuf;

use dlpack_abi_pyo3::PyTensor;
use dlpack_abi_safetensors::SafeTensorsFile;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A safetensors file, memory-mapped: each tensor is a read-only ``Tensor`` over the mapping,
/// shared by every consumer without a copy.
///
/// The header is checked when the file is opened (``ValueError`` for an invalid file,
/// ``OSError`` when it cannot be read). A tensor whose dtype has no DLPack equivalent
/// (``TypeError``) or whose data is misaligned for its dtype (``ValueError``) is refused alone.
/// Every tensor keeps the mapping alive after this object is gone; the file is unmapped when the
/// last of them is. The file must not be modified while mapped (as with ``safetensors`` and
/// ``torch.load(mmap=True)``); pages are private, so a consumer that writes a tensor despite
/// ``READ_ONLY`` (PyTorch does not enforce it) changes this process's copy (seen by every tensor
/// taken from the same file), never the file.
///
/// Examples
/// --------
/// >>> import numpy as np, safetensors.numpy, tempfile, os
/// >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
/// >>> safetensors.numpy.save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, path)
/// >>> weights = dlpack_abi.SafeTensors(path)
/// >>> weights.keys()
/// ['w']
/// >>> w = np.from_dlpack(weights["w"])     # zero-copy, read-only
/// >>> w, w.flags.writeable
/// (array([[0., 1., 2.],
///        [3., 4., 5.]], dtype=float32), False)
#[pyclass(frozen, module = "dlpack_abi", name = "SafeTensors")]
pub(crate) struct PySafeTensors {
    file: SafeTensorsFile,
    path: PathBuf,
}

#[pymethods]
impl PySafeTensors {
    /// Map the safetensors file at ``path`` and check its header.
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        // The mapping is lazy: only the header is read. No Python object is touched meanwhile.
        // SAFETY: the Python API documents that the file must not be modified while mapped (the
        // contract of `SafeTensorsFile::open`, as of every mmap loader).
        let file = py.detach(|| unsafe { SafeTensorsFile::open(&path) })?;
        Ok(Self { file, path })
    }

    /// The tensors' names, in the order of their data in the file.
    ///
    /// >>> import numpy as np, safetensors.numpy, tempfile, os
    /// >>> path = os.path.join(tempfile.mkdtemp(), "keys.safetensors")
    /// >>> safetensors.numpy.save_file({"z": np.zeros(1), "a": np.zeros(2)}, path)
    /// >>> dlpack_abi.SafeTensors(path).keys()
    /// ['a', 'z']
    fn keys(&self) -> Vec<String> {
        self.file.names().map(str::to_string).collect()
    }

    /// The header's ``__metadata__`` strings (empty when it has none).
    ///
    /// >>> import numpy as np, safetensors.numpy, tempfile, os
    /// >>> path = os.path.join(tempfile.mkdtemp(), "meta.safetensors")
    /// >>> safetensors.numpy.save_file({"x": np.zeros(1)}, path, metadata={"format": "np"})
    /// >>> dlpack_abi.SafeTensors(path).metadata
    /// {'format': 'np'}
    #[getter]
    fn metadata(&self) -> BTreeMap<String, String> {
        self.file.metadata().clone()
    }

    /// ``(dtype, shape)`` of tensor ``name`` without taking it; ``dtype`` is DLPack's
    /// ``(code, bits, lanes)``.
    ///
    /// >>> import numpy as np, safetensors.numpy, tempfile, os
    /// >>> path = os.path.join(tempfile.mkdtemp(), "describe.safetensors")
    /// >>> safetensors.numpy.save_file({"x": np.zeros((2, 3), np.float16)}, path)
    /// >>> dlpack_abi.SafeTensors(path).describe("x")
    /// ((2, 16, 1), (2, 3))
    ///
    /// The shape is a tuple, as ``Tensor.shape`` is.
    fn describe<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<((u8, u8, u16), Bound<'py, PyTuple>)> {
        let (dtype, shape) = self.file.describe(name)?;
        Ok((
            (dtype.code.0, dtype.bits, dtype.lanes),
            PyTuple::new(py, shape)?,
        ))
    }

    fn __getitem__(&self, name: &str) -> PyResult<PyTensor> {
        Ok(PyTensor::new(self.file.tensor(name)?))
    }

    fn __contains__(&self, name: &str) -> bool {
        self.file.names().any(|n| n == name)
    }

    fn __len__(&self) -> usize {
        self.file.len()
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self
            .keys()
            .into_pyobject(py)?
            .try_iter()?
            .into_any()
            .unbind())
    }

    fn __repr__(&self) -> String {
        format!(
            "SafeTensors({:?}, tensors={})",
            self.path.display().to_string(),
            self.file.len()
        )
    }
}
