//! DLPack and the Arrow PyCapsule interface for pyo3 extensions, on
//! [dlpack-abi](https://docs.rs/dlpack-abi): the Python protocols on top of its safe layers,
//! written only against its public API.
//!
//! **Import.** [`from_dlpack`] takes any object with `__dlpack__` and returns an owned
//! [`VersionedTensor`](dlpack_abi::dlpack::VersionedTensor), following the array API rules: the
//! C exchange API of the object's type when it has one (`__dlpack_c_exchange_api__`), otherwise
//! `__dlpack__(max_version=(1, 3), ...)` with a legacy retry on `TypeError`. A capsule is
//! validated before it is consumed, and only then renamed `used_dltensor[_versioned]`; a refused
//! capsule is left untouched, so its own destructor frees it. As a `#[pyfunction]` argument,
//! [`PyVersionedTensor`] does the same.
//!
//! **Export.** [`PyTensor`] (Python name `dlpack_abi.Tensor`) wraps a tensor for Python:
//! `__dlpack__` (versioned or legacy capsules, `copy`, `dl_device`, `stream` per the array API),
//! `__dlpack_device__`, a static `__dlpack_c_exchange_api__` table ([`EXCHANGE_API`]), and the
//! Arrow device-array capsules through the zero-copy bridge. Each export costs one allocation
//! and shares the data; the tensor stays alive until the last consumer's deleter runs. A
//! [`PyVersionedTensor`] returned from a `#[pyfunction]` becomes one.
//!
//! **Classes of your own.** A `#[pyclass]` that implements [`DlpackExporter`] (where its data
//! lives, and one tensor per consumer) gets the whole producer side of both protocols from the
//! [`#[dlpack_exporter]`](dlpack_exporter) attribute, placed directly **above** the class's own
//! `#[pymethods]` block: `__dlpack__`, `__dlpack_device__`, its own `__dlpack_c_exchange_api__`
//! table and the Arrow dunders are added to that block, beside the author's methods. pyo3
//! allows one `#[pymethods]` block per class (without its `multiple-pymethods` feature), so
//! [`dlpack_pymethods!`](crate::dlpack_pymethods), which writes the block itself, cannot sit
//! next to a block of one's own (E0119): it suits a class whose methods are all written inside
//! it. [`exporter`] has the dunders' bodies as functions, for a class that writes them itself.
//!
//! ```no_run
//! use std::sync::Arc;
//! use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
//! use dlpack_abi::raw::{kDLCPU, DLDevice};
//! use dlpack_abi_pyo3::{dlpack_exporter, DlpackExporter, PyDlpackResult};
//! use pyo3::prelude::*;
//!
//! #[pyclass(frozen)] // numpy.from_dlpack(Samples()) reads it zero-copy, read-only (shared)
//! struct Samples { values: Arc<[i16]> }
//!
//! impl DlpackExporter for Samples {
//!     fn dlpack_device(&self) -> DLDevice { DLDevice { device_type: kDLCPU, device_id: 0 } }
//!     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
//!         let len = i64::try_from(self.values.len())?;
//!         Ok(Export::new(Arc::clone(&self.values), &[len]).finish()?)
//!     }
//! }
//!
//! #[dlpack_exporter]
//! #[pymethods]
//! impl Samples {
//!     #[new]
//!     fn new() -> Self { Self { values: Arc::from([1, -2, 3]) } }
//!
//!     #[getter]
//!     fn peak(&self) -> i16 { self.values.iter().map(|v| v.abs()).max().unwrap_or(0) }
//! }
//! ```
//!
//! **Arrow.** [`ArrowArrayExport`] and [`ArrowStreamExport`] export
//! [`arrow`](dlpack_abi::arrow) values as `arrow_schema`, `arrow_array`, `arrow_device_array`
//! and stream capsules (raw `PyCapsule_New` over the bare C struct); [`import_schema`],
//! [`import_array`], [`import_device_array`], [`import_stream`] and [`import_device_stream`]
//! take them from any object that offers them; [`AnyArrowArray`] and [`AnyArrowStream`] are
//! the argument and return types.
//!
//! **The GIL.** Deleters and `release` callbacks may run on any thread. The only ones of ours
//! that can reach Python are those that drop data imported from Python (a NumPy array, a pyarrow
//! buffer): they attach to the interpreter first, and do nothing (leaking the data) when it is
//! not initialized or is finalizing ([`AttachedDrop`]).
//!
//! **Errors.** pyo3 converts a `#[pyfunction]`'s error into an exception through
//! `Into<PyErr>`, and the orphan rule lets neither this crate nor dlpack-abi write
//! `From<ImportError> for PyErr`. So every error of dlpack-abi (and of the integration crates,
//! with their `pyo3` features) implements [`IntoPyErr`], and converts into [`PyDlpackError`], a
//! `PyErr` that `?` reaches from all of them and from pyo3's own `PyErr`: return
//! [`PyDlpackResult`] and `?` works with no `map_err`. Each error becomes the exception the
//! DLPack Python spec, the array API or the Arrow PyCapsule interface names for its kind:
//!
//! | error | exception |
//! |---|---|
//! | [`ImportError`](dlpack_abi::dlpack::ImportError): a producer's tensor is malformed | `BufferError` |
//! | [`AccessError::DtypeMismatch`](dlpack_abi::dlpack::AccessError::DtypeMismatch), `AccessError::UnsupportedDtype` (a converting read or [`dispatch_dtype!`](dlpack_abi::dispatch_dtype)) | `TypeError` |
//! | `AccessError::IndexRank`, `AccessError::IndexOutOfBounds` | `IndexError` |
//! | `AccessError::DimensionMismatch` | `ValueError` |
//! | any other `AccessError` (device, layout, read-only, alignment) | `BufferError` |
//! | [`ExportError::FlagsNotRepresentable`](dlpack_abi::dlpack::ExportError::FlagsNotRepresentable) | `BufferError` |
//! | any other `ExportError` (a description refused) | `ValueError` |
//! | [`ConsumerStreamError::Invalid`](dlpack_abi::dlpack::ConsumerStreamError::Invalid): no device's `stream` | `ValueError` |
//! | any other `ConsumerStreamError` (a `stream` the device's table refuses) | `BufferError` |
//! | [`OrderError::Runtime`](dlpack_abi::dlpack::OrderError::Runtime) | `RuntimeError` |
//! | any other `OrderError` | `BufferError` |
//! | [`ValidationError`](dlpack_abi::arrow::ValidationError), [`ReadError`](dlpack_abi::arrow::ReadError) | `ValueError` |
//! | [`BridgeError`](dlpack_abi::arrow::BridgeError): data one side cannot describe | `BufferError` |
//! | [`StreamError::Producer`](dlpack_abi::arrow::StreamError::Producer), [`ProducerError`](dlpack_abi::arrow::ProducerError) | `OSError(errno, message)` |
//! | `StreamError::Invalid`, [`MetadataError`](dlpack_abi::arrow::MetadataError) | `ValueError` |
//! | [`AsyncStreamError`](dlpack_abi::arrow::AsyncStreamError) | as the error it holds; a broken protocol: `RuntimeError` |
//! | [`IntoLegacyError`](dlpack_abi::dlpack::IntoLegacyError) | as its `ExportError` |
//! | [`BorrowError`]: memory another live import holds (see below) | `BufferError` |
//!
//! `TensorError` and `ArrowError` convert as the error they wrap. The integration crates'
//! errors convert by the tables in their own documentation.
//!
//! **Writing in place.** Every import from Python is registered, in one registry per process
//! shared by every extension built on this crate, as a shared borrow of the bytes it reaches.
//! [`ReadwriteTensor`] (a `#[pyfunction]` argument) makes its borrow mutable, refused while any
//! other live import may share a byte with it, so its `&mut` needs no `unsafe`;
//! [`ReadonlyTensor`] is the typed, read-only argument. Both check the dtype first
//! (`TypeError`). The registry hears of dropped tensors through dlpack-abi's public release hook
//! ([`ManagedTensor::track`](dlpack_abi::dlpack::ManagedTensor::track)).
//!
//! Register the classes with [`add_to_module`].
//!
//! ```no_run
//! use dlpack_abi::dlpack::Export;
//! use dlpack_abi_pyo3::{PyDlpackResult, PyVersionedTensor};
//! use pyo3::prelude::*;
//!
//! /// numpy.asarray(doubled(numpy.arange(3.0))) is [0., 2., 4.]
//! #[pyfunction]
//! fn doubled(x: PyVersionedTensor) -> PyDlpackResult<PyVersionedTensor> {
//!     let values: Vec<f64> = x.view().iter::<f64>()?.map(|v| 2.0 * v).collect();
//!     Ok(Export::new(values, x.view().shape()).finish()?.into())
//! }
//!
//! #[pymodule]
//! fn my_tensors(m: &Bound<'_, PyModule>) -> PyResult<()> {
//!     dlpack_abi_pyo3::add_to_module(m)?; // Tensor, ArrowArray, ArrowStream, ArrowSchema
//!     m.add_function(wrap_pyfunction!(doubled, m)?)
//! }
//! ```
//!
//! # Where `unsafe` lives
//!
//! The crate denies `unsafe_code`; the files that call CPython's C API directly (capsules, the
//! exchange table, vectorcall, the borrow registry's shared table) allow it at their top. Every
//! block has a `// SAFETY:` line.
#![deny(unsafe_op_in_unsafe_fn, missing_docs, unsafe_code)]
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block,
    clippy::missing_safety_doc,
    clippy::missing_errors_doc,
    clippy::missing_panics_doc
)]
// docs.rs (`--cfg docsrs`): every item says which features it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;

mod arrow;
mod borrows;
mod capsule;
mod convert;
mod copy;
mod errors;
mod exchange;
pub mod exporter;
#[cfg(doctest)]
mod exporter_misuse;
mod fastcall;
mod gil;
mod import;
mod readwrite;
mod schema_export;
mod streams;
mod tensor;

#[cfg(feature = "counters")]
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use pyo3::prelude::*;

pub use arrow::{
    import_array, import_device_array, import_device_stream, import_schema, import_stream,
    ArrowArrayExport, ArrowStreamExport,
};
pub use borrows::BorrowError;
pub use convert::{AnyArrowArray, AnyArrowStream, PyVersionedTensor};
pub use errors::{export_exception, IntoPyErr, PyDlpackError, PyDlpackResult};
pub use exchange::{ExchangeApi, EXCHANGE_API};
pub use exporter::DlpackExporter;

// The attribute of crate `dlpack-abi-pyo3-macros`, documented there (shown here inline).
#[doc(inline)]
pub use dlpack_abi_pyo3_macros::dlpack_exporter;
pub use gil::AttachedDrop;
pub use import::{from_dlpack, DlpackRequest};
pub use readwrite::{ReadonlyTensor, ReadwriteTensor};
pub use schema_export::ArrowSchemaExport;
pub use streams::{install_stream_runtime, remove_stream_runtime, stream_runtime};
pub use tensor::PyTensor;

/// Adds `Tensor`, `ArrowArray`, `ArrowStream` and `ArrowSchema` to a Python module.
///
/// # Errors
/// Python's, when a class cannot be added.
///
/// ```no_run
/// use pyo3::prelude::*;
///
/// #[pymodule]
/// fn my_tensors(m: &Bound<'_, PyModule>) -> PyResult<()> {
///     dlpack_abi_pyo3::add_to_module(m)
/// }
/// ```
pub fn add_to_module(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyTensor>()?;
    module.add_class::<ArrowArrayExport>()?;
    module.add_class::<ArrowStreamExport>()?;
    module.add_class::<ArrowSchemaExport>()?;
    Ok(())
}

/// Process-wide counters of this module's exports and imports, for leak checks (feature
/// `counters`, which the test builds enable: each live count costs two atomic operations per
/// exchange, so release builds leave it out).
///
/// ```no_run
/// let counts = dlpack_abi_pyo3::counts();
/// assert_eq!(counts.live_exports, 0, "an export was never released");
/// ```
#[cfg(feature = "counters")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Counts {
    /// DLPack tensors and Arrow arrays exported to Python whose deleter or `release` has not run.
    pub live_exports: usize,
    /// Tensors and Arrow data imported from Python that are still held.
    pub live_imports: usize,
    /// Calls of the exchange API's `managed_tensor_from_py_object_no_sync` (ours).
    pub exchange_exports: usize,
    /// Calls of the exchange API's `managed_tensor_to_py_object_no_sync` (ours).
    pub exchange_imports: usize,
    /// Imports through another type's exchange API (in [`from_dlpack`]).
    pub foreign_exchange_imports: usize,
    /// Tensors allocated by the exchange API's `managed_tensor_allocator` (ours).
    pub allocations: usize,
}

/// One process-wide counter: an atomic with the `counters` feature, nothing without it.
pub(crate) struct Counter(#[cfg(feature = "counters")] AtomicUsize);

impl Counter {
    const fn new() -> Self {
        Self(
            #[cfg(feature = "counters")]
            AtomicUsize::new(0),
        )
    }

    /// Counts one.
    #[inline]
    pub(crate) fn add(&self) {
        #[cfg(feature = "counters")]
        self.0.fetch_add(1, Relaxed);
    }

    #[inline]
    fn sub(&self) {
        #[cfg(feature = "counters")]
        self.0.fetch_sub(1, Relaxed);
    }

    #[cfg(feature = "counters")]
    fn get(&self) -> usize {
        self.0.load(Relaxed)
    }
}

static LIVE_EXPORTS: Counter = Counter::new();
static LIVE_IMPORTS: Counter = Counter::new();
pub(crate) static EXCHANGE_EXPORTS: Counter = Counter::new();
pub(crate) static EXCHANGE_IMPORTS: Counter = Counter::new();
pub(crate) static FOREIGN_EXCHANGE_IMPORTS: Counter = Counter::new();
pub(crate) static ALLOCATIONS: Counter = Counter::new();

/// The counters now.
///
/// ```no_run
/// let before = dlpack_abi_pyo3::counts().allocations;
/// // ... a consumer allocates through `Tensor.__dlpack_c_exchange_api__` ...
/// assert!(dlpack_abi_pyo3::counts().allocations >= before);
/// ```
#[cfg(feature = "counters")]
pub fn counts() -> Counts {
    Counts {
        live_exports: LIVE_EXPORTS.get(),
        live_imports: LIVE_IMPORTS.get(),
        exchange_exports: EXCHANGE_EXPORTS.get(),
        exchange_imports: EXCHANGE_IMPORTS.get(),
        foreign_exchange_imports: FOREIGN_EXCHANGE_IMPORTS.get(),
        allocations: ALLOCATIONS.get(),
    }
}

/// Counts one live item while it exists (with the `counters` feature; nothing without it).
pub(crate) struct Live(&'static Counter);

impl Live {
    #[inline]
    fn export() -> Self {
        LIVE_EXPORTS.add();
        Self(&LIVE_EXPORTS)
    }

    #[inline]
    fn import() -> Self {
        LIVE_IMPORTS.add();
        Self(&LIVE_IMPORTS)
    }
}

impl Drop for Live {
    #[inline]
    fn drop(&mut self) {
        self.0.sub();
    }
}
