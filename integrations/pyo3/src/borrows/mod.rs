//! The process-wide registry of memory imported from Python, shared by every extension built on
//! this crate: what makes [`ReadwriteTensor`](super::ReadwriteTensor)'s `&mut` safe.
//!
//! Every tensor that [`from_dlpack`](super::from_dlpack) imports, and every DLPack tensor made
//! of an Arrow import (`Tensor.from_arrow`, `ArrowArray.to_tensor`), is registered as a *shared*
//! borrow of the bytes it reaches ([`MemoryExtent`]) until it is dropped (or given away with
//! `into_raw`), when the host can read it (Rust can only reach such memory). A
//! [`ReadwriteTensor`](super::ReadwriteTensor) registers its import as *mutable*: refused while
//! any other registered tensor may share a byte with it; and while it lives, importing memory
//! that may share a byte with it is refused. Two tensors conflict when
//! [`MemoryExtent::may_overlap`] says they may share a byte: `a[::2]` and `a[1::2]` do not.
//!
//! Rust's own reads of memory it cannot prove unshared (a `dlpack_abi.Tensor`'s bytes copied by
//! `tobytes` or `__dlpack__(copy=True)`) take a shared borrow for the length of the read
//! ([`with_read`]), and Arrow imports register every host buffer they reach ([`Borrow`]).
//!
//! **Across extensions.** The first extension that needs the registry publishes it; every
//! other extension built on this crate finds it and calls it through a C table whose major
//! version is part of its name ([`table`]), so that two extensions built separately refuse
//! each other's overlapping borrows, and two builds of different majors refuse to run
//! together. The first extension's code decides for the whole process.
//!
//! **Cost.** A shared import (the GIL held) takes a slot only the GIL's holder claims and, when
//! no mutable borrow is live, no lock and no fence ([`slots`]); dropping it clears the slot. A
//! mutable one takes the GIL and the registry's spin lock and checks every live import. No
//! Python call; the table is looked up once per extension.
#![allow(unsafe_code)]

mod arrow_imports;
mod registry;
mod slots;
mod table;

use alloc::boxed::Box;
use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::ffi::c_int;
use core::fmt;

use pyo3::exceptions::{PyBufferError, PyRuntimeError};
use pyo3::prelude::*;

pub(crate) use arrow_imports::{
    register_array, register_device_array, register_stream, RegisteredStream,
};
use dlpack_abi::dlpack::{MemoryExtent, ReleaseHook, TensorView, VersionedTensor};
/// The process's registry table (found or published), for registering borrows where Python is
/// attached but no import is at hand (rust-numpy's table over this registry).
pub(crate) use table::api as process_table;
use table::{api, loaded, SharedExtent, CONFLICTS_MUTABLE, OK};
pub(crate) use table::{interpreter_dict, SharedApi};

/// A borrow that cannot be taken: another live tensor may share a byte with it.
///
/// Converts into `BufferError`.
///
/// ```
/// use dlpack_abi_pyo3::BorrowError;
///
/// let message = BorrowError::BorrowedMutably.to_string();
/// assert!(message.contains("ReadwriteTensor"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BorrowError {
    /// The memory is being written through a live `ReadwriteTensor` (of this extension or
    /// another built on this crate): it cannot be imported or borrowed until that one is gone.
    BorrowedMutably,
    /// A `ReadwriteTensor` was asked for memory that another live import (an argument, a
    /// `dlpack_abi.Tensor`, another extension's tensor) may also read.
    Shared,
    /// A `ReadwriteTensor` was given a copy (the producer set `IS_COPIED`): writes would not
    /// reach the caller's array.
    Copied,
}

impl fmt::Display for BorrowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::BorrowedMutably => {
                "the array's memory is being written through a live ReadwriteTensor (in this or \
                 another extension built on dlpack-abi) or a rust-numpy PyReadwriteArray; it \
                 cannot be borrowed again until that borrow ends"
            }
            Self::Shared => {
                "the array's memory is also held by another live import (another argument, a \
                 dlpack_abi.Tensor, another extension's tensor, a rust-numpy PyReadonlyArray), \
                 so it cannot be written through a ReadwriteTensor; drop (del) the other import \
                 first"
            }
            Self::Copied => {
                "the producer handed over a copy (IS_COPIED), so writes through a \
                 ReadwriteTensor would not reach the array"
            }
        })
    }
}

impl std::error::Error for BorrowError {}

impl From<BorrowError> for PyErr {
    fn from(error: BorrowError) -> Self {
        crate::with_code(PyBufferError::new_err(error.to_string()), error.code())
    }
}

impl crate::IntoPyErr for BorrowError {
    fn into_py_err(self) -> PyErr {
        self.into()
    }
}

/// Unregisters through the table in use: the core's hook, called when a tracked tensor stops
/// being held (on any thread, attached or not).
fn untrack_hook(token: usize) {
    if let Some(api) = loaded() {
        api.untrack(token);
    }
}

/// The release hook this crate's tensors are tracked with (dlpack-abi calls it when one is
/// dropped or given away).
static RELEASE_HOOK: ReleaseHook = ReleaseHook {
    released: untrack_hook,
};

/// The table's answer to `track` as a result.
fn tracked(result: c_int) -> Result<(), BorrowError> {
    match result {
        OK => Ok(()),
        CONFLICTS_MUTABLE => Err(BorrowError::BorrowedMutably),
        _ => Err(BorrowError::Shared),
    }
}

/// Registers an import as a borrow of what it reaches, shared or `mutable`, for as long as it
/// is held. Tensors the host cannot read (device memory, handles, unknown flags) are not
/// registered: no Rust reference can reach them. Nor are empty ones, which reach nothing.
///
/// Taken by reference, not moved: the struct is not copied through memory on the way in and out.
///
/// # Errors
/// [`BorrowError`] (the caller drops the tensor, which runs its deleter) when another live
/// import may share a byte with it: a mutable one, or, for a `mutable` borrow, any.
pub(crate) fn track(py: Python<'_>, tensor: &mut VersionedTensor, mutable: bool) -> PyResult<()> {
    if tensor.is_tracked() || !tensor.view().is_host_readable() {
        return Ok(());
    }
    let extent = tensor.view().memory_extent();
    if extent.is_empty() {
        return Ok(());
    }
    let api = api(py)?;
    // The token: the managed struct's address, held by `tensor`, unique while registered.
    let result = if mutable {
        let shared = SharedExtent::from(extent);
        // SAFETY: the table's contract: a token unique while registered, one live extent.
        unsafe { (api.track)(api.state, tensor.token(), &shared, 1, 1) }
    } else {
        api.track_shared_attached(py, tensor.token(), &extent)
    };
    tracked(result).map_err(PyErr::from)?;
    tensor.track(&RELEASE_HOOK).map_err(|other| {
        // Another registry's hook is installed in this copy of dlpack-abi: it would never tell
        // ours that the tensor is gone, so the borrow is not kept.
        api.untrack(tensor.token());
        PyRuntimeError::new_err(format!(
            "cannot register the import with the borrow registry: {other}"
        ))
    })
}

/// Makes a registered tensor's mutable borrow shared (nothing for one never registered).
pub(crate) fn make_shared(tensor: &VersionedTensor) {
    if let Some(api) = loaded().filter(|_| tensor.is_tracked()) {
        // SAFETY: the table's contract: any token. Making a borrow shared cannot conflict.
        let _ = unsafe { (api.make_shared)(api.state, tensor.token()) };
    }
}

/// A registered borrow of some extents, removed when it is dropped (on any thread). Its token
/// is the address of a byte it owns, unique while it lives.
pub(crate) struct Borrow {
    token: Box<u8>,
}

impl Borrow {
    /// Registers `extents` (host memory Rust may read; empty ones are left out) as one borrow,
    /// shared or `mutable`; `None` when nothing is reached.
    ///
    /// # Errors
    /// [`BorrowError`] when another live borrow may share a byte with them: a mutable one, or,
    /// for a `mutable` borrow, any.
    pub(crate) fn new(
        py: Python<'_>,
        extents: impl IntoIterator<Item = MemoryExtent>,
        mutable: bool,
    ) -> PyResult<Option<Self>> {
        let api = api(py)?;
        let mut extents = extents.into_iter().filter(|extent| !extent.is_empty());
        let Some(first) = extents.next() else {
            return Ok(None);
        };
        match extents.next() {
            None if !mutable => {
                // One shared extent, attached: the table's cheapest registration.
                let token = Box::new(0u8);
                let result = api.track_shared_attached(py, token_of(&token), &first);
                Ok(tracked(result).map(|()| Some(Self { token }))?)
            }
            second => Ok(Self::in_table(
                api,
                [first].into_iter().chain(second).chain(extents),
                mutable,
            )?),
        }
    }

    /// [`new`](Self::new) through a table found before (where Python may not be attached).
    pub(crate) fn in_table(
        api: &'static SharedApi,
        extents: impl IntoIterator<Item = MemoryExtent>,
        mutable: bool,
    ) -> Result<Option<Self>, BorrowError> {
        let extents: Vec<SharedExtent> = extents
            .into_iter()
            .filter(|extent| !extent.is_empty())
            .map(SharedExtent::from)
            .collect();
        if extents.is_empty() {
            return Ok(None);
        }
        let token = Box::new(0u8);
        // SAFETY: the table's contract: a token unique while registered (the address of the
        // byte `token` owns until the borrow is dropped), `extents.len()` live extents.
        let result = unsafe {
            (api.track)(
                api.state,
                token_of(&token),
                extents.as_ptr(),
                extents.len(),
                c_int::from(mutable),
            )
        };
        tracked(result).map(|()| Some(Self { token }))
    }
}

fn token_of(token: &u8) -> usize {
    core::ptr::from_ref::<u8>(token) as usize
}

impl Drop for Borrow {
    fn drop(&mut self) {
        untrack_hook(token_of(&self.token));
    }
}

/// Runs `read` with a shared borrow of the memory `view` reaches held (when the host can read
/// it): what every Rust read of a `dlpack_abi.Tensor`'s memory goes through, so that it never
/// runs while a `ReadwriteTensor` writes it.
///
/// # Errors
/// [`BorrowError::BorrowedMutably`] while a `ReadwriteTensor` (of any extension) may write a
/// byte of it; `read`'s own errors.
pub(crate) fn with_read<R>(
    py: Python<'_>,
    view: &TensorView<'_>,
    read: impl FnOnce() -> PyResult<R>,
) -> PyResult<R> {
    let _borrow = if view.is_host_readable() {
        Borrow::new(py, [view.memory_extent()], false)?
    } else {
        None
    };
    read()
}
