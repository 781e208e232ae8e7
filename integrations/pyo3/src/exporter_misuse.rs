//! Doctests only (`cfg(doctest)`): how `#[dlpack_exporter]` and `dlpack_pymethods!` are used
//! and misused. Each refused block differs from the accepted one by its misuse alone, so that it
//! fails for that reason.

/// Accepted: the attribute above the class's own `#[pymethods]` block, with a constructor, a
/// method and a getter of the author's.
///
/// ```no_run
/// use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
/// use dlpack_abi_pyo3::{DlpackExporter, PyDlpackResult, dlpack_exporter};
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
/// use pyo3::prelude::*;
///
/// #[pyclass(frozen)]
/// struct One;
/// impl DlpackExporter for One {
///     fn dlpack_device(&self) -> DLDevice { DLDevice { device_type: kDLCPU, device_id: 0 } }
///     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
///         Ok(Export::new(vec![1.0f32], &[1]).finish()?)
///     }
/// }
///
/// #[dlpack_exporter]
/// #[pymethods]
/// impl One {
///     #[new]
///     fn new() -> Self { One }
///     fn value(&self) -> f32 { 1.0 }
///     #[getter]
///     fn size(&self) -> usize { 1 }
/// }
/// ```
///
/// Refused: `dlpack_pymethods!` next to a `#[pymethods]` block of the author's (pyo3 allows one
/// per class without its `multiple-pymethods` feature): what the attribute is for.
///
/// ```compile_fail,E0119
/// use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
/// use dlpack_abi_pyo3::DlpackExporter;
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
/// use pyo3::prelude::*;
///
/// #[pyclass(frozen)]
/// struct One;
/// impl DlpackExporter for One {
///     fn dlpack_device(&self) -> DLDevice { DLDevice { device_type: kDLCPU, device_id: 0 } }
///     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
///         Ok(Export::new(vec![1.0f32], &[1]).finish()?)
///     }
/// }
///
/// dlpack_abi_pyo3::dlpack_pymethods! { impl One {} }
/// #[pymethods]
/// impl One {
///     #[new]
///     fn new() -> Self { One }
///     fn value(&self) -> f32 { 1.0 }
///     #[getter]
///     fn size(&self) -> usize { 1 }
/// }
/// ```
///
/// Refused: the attribute below `#[pymethods]` (pyo3 would read the block first).
///
/// ```compile_fail
/// use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
/// use dlpack_abi_pyo3::{dlpack_exporter, DlpackExporter};
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
/// use pyo3::prelude::*;
///
/// #[pyclass(frozen)]
/// struct One;
/// impl DlpackExporter for One {
///     fn dlpack_device(&self) -> DLDevice { DLDevice { device_type: kDLCPU, device_id: 0 } }
///     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
///         Ok(Export::new(vec![1.0f32], &[1]).finish()?)
///     }
/// }
///
/// #[pymethods]
/// #[dlpack_exporter]
/// impl One {
///     #[new]
///     fn new() -> Self { One }
///     fn value(&self) -> f32 { 1.0 }
///     #[getter]
///     fn size(&self) -> usize { 1 }
/// }
/// ```
///
/// Refused: a method of the author's named as one the attribute adds (here by its Python name).
///
/// ```compile_fail
/// use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
/// use dlpack_abi_pyo3::{dlpack_exporter, DlpackExporter};
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
/// use pyo3::prelude::*;
///
/// #[pyclass(frozen)]
/// struct One;
/// impl DlpackExporter for One {
///     fn dlpack_device(&self) -> DLDevice { DLDevice { device_type: kDLCPU, device_id: 0 } }
///     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
///         Ok(Export::new(vec![1.0f32], &[1]).finish()?)
///     }
/// }
///
/// #[dlpack_exporter]
/// #[pymethods]
/// impl One {
///     #[new]
///     fn new() -> Self { One }
///     #[pyo3(name = "__dlpack_device__")]
///     fn value(&self) -> f32 { 1.0 }
///     #[getter]
///     fn size(&self) -> usize { 1 }
/// }
/// ```
///
/// Refused: the attribute on anything but an impl block.
///
/// ```compile_fail
/// use dlpack_abi_pyo3::dlpack_exporter;
/// use pyo3::prelude::*;
///
/// #[dlpack_exporter]
/// #[pyclass(frozen)]
/// struct One;
/// ```
pub struct ExporterMisuse;
