//! The registry an extension keeps when it is the first in the process to publish one: the
//! live borrows by token, behind a spin lock, reached only through the C table's functions.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::ffi::{c_int, c_void};
use core::hash::{BuildHasherDefault, Hasher};
use std::collections::HashMap;

use dlpack_abi::dlpack::MemoryExtent;

use crate::spin::SpinLock;

use super::table::{SharedExtent, CONFLICTS_MUTABLE, CONFLICTS_SHARED, OK, UNKNOWN_TOKEN};

/// The bytes one borrow reaches: one extent for a DLPack tensor, one per buffer for an Arrow
/// import.
enum Extents {
    One(MemoryExtent),
    Many(Box<[MemoryExtent]>),
}

impl Extents {
    fn as_slice(&self) -> &[MemoryExtent] {
        match self {
            Self::One(extent) => core::slice::from_ref(extent),
            Self::Many(extents) => extents,
        }
    }

    fn may_overlap(&self, others: &[MemoryExtent]) -> bool {
        self.as_slice()
            .iter()
            .any(|ours| others.iter().any(|theirs| ours.may_overlap(theirs)))
    }
}

/// The live borrows.
#[derive(Default)]
struct Registry {
    /// Borrows that only read, by token (every import from Python while it is held).
    shared: HashMap<usize, Extents, BuildHasherDefault<TokenHasher>>,
    /// Borrows that write (live `ReadwriteTensor`s: usually none or a few).
    mutable: Vec<(usize, Extents)>,
}

impl Registry {
    /// Whether a borrow other than `token`'s may share a byte with `extents`: `Some(true)` for a
    /// mutable one, `Some(false)` for a shared one (only asked when `shared_too`).
    fn conflict(&self, token: usize, extents: &[MemoryExtent], shared_too: bool) -> Option<bool> {
        let overlaps =
            |other: usize, theirs: &Extents| other != token && theirs.may_overlap(extents);
        if self
            .mutable
            .iter()
            .any(|(other, theirs)| overlaps(*other, theirs))
        {
            return Some(true);
        }
        (shared_too
            && self
                .shared
                .iter()
                .any(|(other, theirs)| overlaps(*other, theirs)))
        .then_some(false)
    }
}

/// Tokens are addresses of distinct live objects: one multiplication spreads them.
#[derive(Default)]
struct TokenHasher(u64);

impl Hasher for TokenHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, token: usize) {
        self.0 = (token as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

static REGISTRY: SpinLock<Option<Registry>> = SpinLock::new(None);

/// Runs `f` on this extension's registry, locked. (The registry stays consistent if `f`
/// unwinds: nothing panics while it is changed.)
fn with_registry<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    REGISTRY.with(|registry| f(registry.get_or_insert_with(Registry::default)))
}

/// The table's `track`.
///
/// # Safety
/// `extents` points to `count` live `SharedExtent`s (none read when `count` is 0).
pub(super) unsafe extern "C" fn own_track(
    _: *const c_void,
    token: usize,
    extents: *const SharedExtent,
    count: usize,
    mutable: c_int,
) -> c_int {
    let extents = match count {
        0 => return OK, // reaches nothing: conflicts with nothing, nothing to remember
        // SAFETY: one live extent (caller).
        1 => Extents::One(unsafe { *extents }.into()),
        // SAFETY: `count` live extents (caller).
        _ => Extents::Many(
            unsafe { core::slice::from_raw_parts(extents, count) }
                .iter()
                .map(|&extent| extent.into())
                .collect(),
        ),
    };
    with_registry(
        |registry| match registry.conflict(token, extents.as_slice(), mutable != 0) {
            Some(true) => CONFLICTS_MUTABLE,
            Some(false) => CONFLICTS_SHARED,
            None if mutable != 0 => {
                registry.mutable.push((token, extents));
                OK
            }
            None => {
                registry.shared.insert(token, extents);
                OK
            }
        },
    )
}

/// The table's `make_shared`.
///
/// # Safety
/// None beyond the table's contract (a token).
pub(super) unsafe extern "C" fn own_make_shared(_: *const c_void, token: usize) -> c_int {
    with_registry(|registry| {
        let Some(index) = registry.mutable.iter().position(|(t, _)| *t == token) else {
            return UNKNOWN_TOKEN;
        };
        let (token, extents) = registry.mutable.swap_remove(index);
        registry.shared.insert(token, extents);
        OK
    })
}

/// The table's `untrack`.
///
/// # Safety
/// None beyond the table's contract (a token).
pub(super) unsafe extern "C" fn own_untrack(_: *const c_void, token: usize) {
    // The removed extents are freed after the lock is given back.
    let _removed = with_registry(|registry| match registry.shared.remove(&token) {
        Some(extents) => Some(extents),
        None => registry
            .mutable
            .iter()
            .position(|(t, _)| *t == token)
            .map(|index| registry.mutable.swap_remove(index).1),
    });
}
