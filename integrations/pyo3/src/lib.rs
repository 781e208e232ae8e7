#![doc = include_str!("../README.md")]
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
mod numpy_borrow;
mod readwrite;
mod schema_export;
mod shared;
mod spin;
mod streams;
mod tensor;

/// The guide, docs/python.md: its Rust examples compiled as this crate's doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/python.md")]
struct Guide;

#[cfg(feature = "counters")]
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use pyo3::prelude::*;

pub use arrow::{
    import_array, import_device_array, import_device_stream, import_schema, import_stream,
    ArrowArrayExport, ArrowStreamExport,
};
pub use borrows::BorrowError;
pub use convert::{AnyArrowArray, AnyArrowStream, PyVersionedTensor};
pub use errors::{codes, export_exception, with_code, IntoPyErr, PyDlpackError, PyDlpackResult};
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
    /// NumPy arrays imported by reading the array, without calling its `__dlpack__` (in
    /// [`from_dlpack`] and the argument types).
    pub numpy_direct_imports: usize,
    /// Mutable registrations with the borrow registry (the one this module published) that took
    /// the GIL themselves: their caller, through the registry's C table, did not hold it.
    pub registry_gil_takes: usize,
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
pub(crate) static NUMPY_DIRECT_IMPORTS: Counter = Counter::new();
pub(crate) static REGISTRY_GIL_TAKES: Counter = Counter::new();
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
        numpy_direct_imports: NUMPY_DIRECT_IMPORTS.get(),
        registry_gil_takes: REGISTRY_GIL_TAKES.get(),
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
