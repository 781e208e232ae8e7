//! The registry an extension keeps when it is the first in the process to publish one, reached
//! only through the C table's functions: shared borrows in per-thread slots when they fit
//! ([`slots`](super::slots): no locked instruction), the rest by token behind a spin lock.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::ffi::{c_int, c_void};
use core::hash::{BuildHasherDefault, Hasher};
use core::ptr;
use core::sync::atomic::Ordering;
use std::collections::HashMap;

use dlpack_abi::dlpack::MemoryExtent;

use super::slots::{self, MUTABLE_ONE, STATE};
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
    /// Counts a mutable borrow out of [`STATE`], which only the lock's holder writes (a load and
    /// a store). Release: what it did before (its writes) happens before the reads of a shared
    /// borrow that reads the lowered count.
    fn lower_mutable_live(&mut self) {
        STATE.store(
            STATE.load(Ordering::Relaxed) - MUTABLE_ONE,
            Ordering::Release,
        );
    }

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

/// The live borrows, reached only with [`STATE`]'s lock held.
struct Guarded(UnsafeCell<Option<Registry>>);

// SAFETY: the registry is reached only by the thread holding `STATE`'s lock (`lock_then`), and
// what it holds (tokens and extents) may move between threads.
unsafe impl Sync for Guarded {}

static REGISTRY: Guarded = Guarded(UnsafeCell::new(None));

/// Runs `f` on this extension's registry, locked. (The registry stays consistent if `f`
/// unwinds: nothing panics while it is changed.)
fn with_registry<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    lock_then(false, f)
}

/// Takes the registry's lock (bit 0 of [`STATE`], a spin lock: one read-modify-write to take, a
/// plain store to give back) and runs `f`. With `raise_mutable`, the same read-modify-write
/// counts a mutable borrow being registered, `SeqCst`: what orders it with shared borrows
/// published without the GIL ([`slots`]' module docs), with no fence of its own.
fn lock_then<R>(raise_mutable: bool, f: impl FnOnce(&mut Registry) -> R) -> R {
    let (add, taken) = if raise_mutable {
        (1 + MUTABLE_ONE, Ordering::SeqCst)
    } else {
        (1, Ordering::Acquire)
    };
    let mut spins = 0u32;
    let mut state = STATE.load(Ordering::Relaxed);
    loop {
        if state & 1 == 0 {
            match STATE.compare_exchange_weak(state, state + add, taken, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => {
                    state = now;
                    continue;
                }
            }
        }
        spins += 1;
        if spins < 64 {
            core::hint::spin_loop();
        } else {
            std::thread::yield_now(); // a holder that was descheduled
        }
        state = STATE.load(Ordering::Relaxed);
    }
    struct Unlock;
    impl Drop for Unlock {
        fn drop(&mut self) {
            // Only the holder writes `STATE` while bit 0 is set (others' exchanges expect it clear).
            STATE.store(STATE.load(Ordering::Relaxed) & !1, Ordering::Release);
        }
    }
    let _unlock = Unlock;
    // SAFETY: the lock is held until `_unlock` drops: this is the only access.
    f(unsafe { &mut *REGISTRY.0.get() }.get_or_insert_with(Registry::default))
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
    if count == 1 && mutable == 0 {
        // SAFETY: one live extent (caller).
        let extent = MemoryExtent::from(unsafe { *extents });
        if let Some(live) = slots::publish(token, &extent) {
            return decide_published(token, &extent, live);
        }
        // No free slot: the map takes it.
    }
    // Mutable registrations hold the GIL, which orders them with attached shared ones.
    let _gil = (mutable != 0).then(HeldGil::take);
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
    if mutable == 0 {
        return with_registry(|registry| {
            match registry.conflict(token, extents.as_slice(), false) {
                Some(_) => CONFLICTS_MUTABLE,
                None => {
                    registry.shared.insert(token, extents);
                    OK
                }
            }
        });
    }
    // Counted as the lock is taken, before the slots are scanned: a shared borrow published
    // meanwhile either is seen by the scan or sees the count and decides under the lock, after
    // this one is listed. (The caller holds the GIL: `_gil`.)
    lock_then(true, |registry| {
        let refused = match registry.conflict(token, extents.as_slice(), true) {
            Some(true) => CONFLICTS_MUTABLE,
            Some(false) => CONFLICTS_SHARED,
            None if slots::any_overlaps(token, extents.as_slice()) => CONFLICTS_SHARED,
            None => {
                registry.mutable.push((token, extents));
                return OK;
            }
        };
        registry.lower_mutable_live();
        refused
    })
}

/// A shared borrow published in a slot, which read `mutable_live`: registered, or, when a
/// mutable borrow may be live, decided under the lock where that one is listed.
#[inline(never)]
fn decide_published(token: usize, extent: &MemoryExtent, mutable_live: bool) -> c_int {
    if !mutable_live {
        return OK;
    }
    let conflict =
        with_registry(|registry| registry.conflict(token, core::slice::from_ref(extent), false));
    if conflict.is_none() {
        return OK;
    }
    slots::clear(token);
    CONFLICTS_MUTABLE
}

/// The table's `track_attached`: `track` of one shared extent by a caller attached to Python
/// (on builds with a GIL, holding it), in an attached slot with no fence when one is free.
///
/// # Safety
/// `extent` points to a live `SharedExtent`; the caller is attached to Python (holds the GIL on
/// builds with one).
pub(super) unsafe extern "C" fn own_track_attached(
    _: *const c_void,
    token: usize,
    extent: *const SharedExtent,
) -> c_int {
    // SAFETY: a live extent (caller).
    let extent = MemoryExtent::from(unsafe { *extent });
    // SAFETY: attached (caller).
    unsafe { track_attached(token, &extent) }
}

/// [`own_track_attached`] for this extension's own callers: the extent by reference, inlined.
///
/// # Safety
/// The caller is attached to Python (holds the GIL on builds with one).
#[inline]
pub(super) unsafe fn track_attached(token: usize, extent: &MemoryExtent) -> c_int {
    #[cfg(not(Py_GIL_DISABLED))]
    {
        // SAFETY: the caller holds the GIL, and mutable registrations take it (`own_track`).
        if let Some(live) = unsafe { slots::publish_attached(token, extent) } {
            if !live {
                return OK;
            }
            return decide_published(token, extent, live);
        }
    }
    let shared = SharedExtent::from(*extent);
    // SAFETY: one live extent.
    unsafe { own_track(ptr::null(), token, &shared, 1, 0) }
}

/// The table's `untrack` for this extension's own callers, inlined: the borrow's slot is
/// cleared here when it has one.
#[inline]
pub(super) fn untrack(token: usize) {
    if !slots::clear(token) {
        untrack_listed(token);
    }
}

/// The GIL, held for a mutable registration on builds with one: attached shared borrows are
/// published with no fence, and the GIL orders them with it ([`slots`]). Taken only when the
/// caller (attached by every caller this crate has) does not hold it already.
struct HeldGil {
    #[cfg(not(Py_GIL_DISABLED))]
    taken: Option<pyo3::ffi::PyGILState_STATE>,
}

impl HeldGil {
    fn take() -> Self {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            let held = gil_held();
            Self {
                taken: (!held).then(|| {
                    // SAFETY: this thread does not hold the GIL; the state is given back in
                    // `drop`, on this thread.
                    let state = unsafe { pyo3::ffi::PyGILState_Ensure() };
                    // Counted when it was not held (the stable ABI's build asks every time).
                    if state == pyo3::ffi::PyGILState_STATE::PyGILState_UNLOCKED {
                        crate::REGISTRY_GIL_TAKES.add();
                    }
                    state
                }),
            }
        }
        #[cfg(Py_GIL_DISABLED)]
        Self {}
    }
}

/// Whether this thread may skip `PyGILState_Ensure`: it holds the GIL (or no interpreter runs,
/// as in this crate's unit tests, where there is no GIL to take).
///
/// Not `PyGILState_Check`: through CPython 3.11 it answers 1 on every thread once any
/// subinterpreter has been created in the process (it turns its own check off), which would let a
/// mutable registration from a thread without the GIL run beside attached shared ones.
/// Instead: this thread's own thread state is the one running (`test_borrow_registry.py`).
#[cfg(not(any(Py_LIMITED_API, Py_GIL_DISABLED)))]
fn gil_held() -> bool {
    // SAFETY: may be called on any thread, at any time.
    if unsafe { pyo3::ffi::Py_IsInitialized() } == 0 {
        return true;
    }
    // SAFETY: may be called on any thread of an initialized interpreter (NULL for a thread that
    // never had a thread state).
    let mine = unsafe { pyo3::ffi::PyGILState_GetThisThreadState() };
    // SAFETY: may be called on any thread: the thread state holding the GIL (3.11: the
    // interpreter's; 3.12 on: this thread's attached one), or NULL.
    let running = unsafe { pyo3::ffi::compat::PyThreadState_GetUnchecked() };
    !mine.is_null() && mine == running
}

/// [`gil_held`] where the stable ABI has no `PyGILState_Check`: `PyGILState_Ensure` is asked
/// whenever an interpreter runs (it only counts when the GIL is held already).
#[cfg(all(Py_LIMITED_API, not(Py_GIL_DISABLED)))]
fn gil_held() -> bool {
    // SAFETY: `Py_IsInitialized` may be called on any thread, at any time.
    unsafe { pyo3::ffi::Py_IsInitialized() == 0 }
}

impl Drop for HeldGil {
    fn drop(&mut self) {
        #[cfg(not(Py_GIL_DISABLED))]
        if let Some(state) = self.taken.take() {
            // SAFETY: the state `PyGILState_Ensure` gave on this thread.
            unsafe { pyo3::ffi::PyGILState_Release(state) };
        }
    }
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
        registry.lower_mutable_live();
        OK
    })
}

/// The table's `untrack`.
///
/// # Safety
/// None beyond the table's contract (a token).
pub(super) unsafe extern "C" fn own_untrack(_: *const c_void, token: usize) {
    untrack(token);
}

/// Removes a borrow kept in the map or the mutable list (none held in a slot).
#[inline(never)]
fn untrack_listed(token: usize) {
    // The removed extents are freed after the lock is given back.
    let _removed = with_registry(|registry| match registry.shared.remove(&token) {
        Some(extents) => Some(extents),
        None => {
            let index = registry.mutable.iter().position(|(t, _)| *t == token)?;
            registry.lower_mutable_live();
            Some(registry.mutable.swap_remove(index).1)
        }
    });
}

#[cfg(test)]
mod tests {
    //! The registry's exclusion under threads, without Python: shared borrows (in slots, or the
    //! map once a thread's slots are full) and mutable ones of the same bytes are never held at
    //! once, and borrows of other bytes never conflict.
    use super::*;
    use core::ptr;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    fn shared(extent: MemoryExtent) -> SharedExtent {
        extent.into()
    }

    fn track(token: usize, extent: MemoryExtent, mutable: bool) -> c_int {
        // SAFETY: one live extent.
        unsafe {
            own_track(
                core::ptr::null(),
                token,
                &shared(extent),
                1,
                c_int::from(mutable),
            )
        }
    }

    fn untrack(token: usize) {
        // SAFETY: a token.
        unsafe { own_untrack(core::ptr::null(), token) }
    }

    fn bytes(start: usize, len: usize) -> MemoryExtent {
        MemoryExtent {
            start,
            end: start + len,
            first: start,
            stride_gcd: 8,
            element_bytes: 8,
        }
    }

    #[test]
    fn shared_and_mutable_borrows_of_the_same_bytes_are_never_held_together() {
        let (readers, writers) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (reads, writes) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let threads: Vec<_> = (0..4)
            .map(|thread| {
                let (readers, writers) = (Arc::clone(&readers), Arc::clone(&writers));
                let (reads, writes) = (Arc::clone(&reads), Arc::clone(&writes));
                std::thread::spawn(move || {
                    // Tokens: addresses of boxes held while registered (a few more than the
                    // slots, so that the map is used too).
                    let held: Vec<Box<u8>> = (0..slots::SLOTS + 4).map(|_| Box::new(0)).collect();
                    let extent = bytes(0x10_0000, 64);
                    for round in 0..20_000usize {
                        let writer = (round + thread) % 5 == 0;
                        let count = if writer { 1 } else { 1 + round % held.len() };
                        let tokens: Vec<usize> = held[..count]
                            .iter()
                            .map(|b| ptr::from_ref::<u8>(b) as usize)
                            .collect();
                        let taken: Vec<usize> = tokens
                            .iter()
                            .copied()
                            .take_while(|&token| track(token, extent, writer) == OK)
                            .collect();
                        if taken.len() == tokens.len() {
                            let (mine, theirs) = if writer {
                                (&writers, &readers)
                            } else {
                                (&readers, &writers)
                            };
                            mine.fetch_add(1, Ordering::SeqCst);
                            assert_eq!(theirs.load(Ordering::SeqCst), 0, "both held");
                            if writer {
                                assert_eq!(mine.load(Ordering::SeqCst), 1, "two writers");
                                writes.fetch_add(1, Ordering::Relaxed);
                            } else {
                                reads.fetch_add(1, Ordering::Relaxed);
                            }
                            mine.fetch_sub(1, Ordering::SeqCst);
                        }
                        taken.iter().for_each(|&token| untrack(token));
                    }
                })
            })
            .collect();
        threads
            .into_iter()
            .for_each(|thread| thread.join().unwrap());
        // Both kinds got through: the test exercised the exclusion, not a starved side.
        assert!(reads.load(Ordering::Relaxed) > 0 && writes.load(Ordering::Relaxed) > 0);
        // Every borrow ended: the bytes can be borrowed for writing again.
        let token = ptr::from_ref::<u8>(&Box::new(0u8)) as usize;
        assert_eq!(track(token, bytes(0x10_0000, 64), true), OK);
        untrack(token);
    }

    /// Attached shared borrows (no fence: ordered with mutable ones by the GIL, played here by
    /// a mutex that both take), unattached ones (per-thread slots, fenced) and mutable ones of
    /// the same bytes are never held at once.
    #[test]
    fn attached_borrows_are_ordered_with_mutable_ones_by_the_gil() {
        static GIL: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let (readers, writers) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let kinds = Arc::new([const { AtomicUsize::new(0) }; 3]);
        let threads: Vec<_> = (0..4)
            .map(|thread| {
                let (readers, writers, kinds) = (
                    Arc::clone(&readers),
                    Arc::clone(&writers),
                    Arc::clone(&kinds),
                );
                std::thread::spawn(move || {
                    let held = Box::new(0u8);
                    let token = ptr::from_ref::<u8>(&held) as usize;
                    let extent = shared(bytes(0x30_0000 + 8 * (thread % 2), 64));
                    for round in 0..20_000usize {
                        // 0: attached shared, 1: unattached shared, 2: mutable.
                        let kind = (round + thread) % 3;
                        let result = match kind {
                            0 => {
                                let _gil = GIL.lock().unwrap();
                                // SAFETY: the "GIL" is held; a live extent.
                                unsafe { own_track_attached(ptr::null(), token, &extent) }
                            }
                            // SAFETY: one live extent.
                            1 => unsafe { own_track(ptr::null(), token, &extent, 1, 0) },
                            _ => {
                                let _gil = GIL.lock().unwrap();
                                // SAFETY: one live extent.
                                unsafe { own_track(ptr::null(), token, &extent, 1, 1) }
                            }
                        };
                        if result != OK {
                            continue;
                        }
                        let (mine, theirs) = if kind == 2 {
                            (&writers, &readers)
                        } else {
                            (&readers, &writers)
                        };
                        mine.fetch_add(1, Ordering::SeqCst);
                        assert_eq!(theirs.load(Ordering::SeqCst), 0, "both held");
                        if kind == 2 {
                            assert_eq!(mine.load(Ordering::SeqCst), 1, "two writers");
                        }
                        kinds[kind].fetch_add(1, Ordering::Relaxed);
                        mine.fetch_sub(1, Ordering::SeqCst);
                        untrack(token);
                    }
                })
            })
            .collect();
        threads
            .into_iter()
            .for_each(|thread| thread.join().unwrap());
        // Every kind got through: the test exercised the exclusion, not a starved side.
        assert!(kinds.iter().all(|taken| taken.load(Ordering::Relaxed) > 0));
    }

    #[test]
    fn borrows_of_other_bytes_and_moves_between_threads() {
        let (a, b) = (Box::new(0u8), Box::new(0u8));
        let (ta, tb) = (
            ptr::from_ref::<u8>(&a) as usize,
            ptr::from_ref::<u8>(&b) as usize,
        );
        assert_eq!(track(ta, bytes(0x20_0000, 64), false), OK);
        assert_eq!(
            track(tb, bytes(0x20_0040, 64), true),
            OK,
            "the next bytes are free"
        );
        assert_eq!(track(tb + 1, bytes(0x20_0000, 8), true), CONFLICTS_SHARED);
        // A shared borrow dropped on another thread than the one that took it ends there.
        std::thread::spawn(move || untrack(ta)).join().unwrap();
        assert_eq!(track(tb + 1, bytes(0x20_0000, 8), true), OK);
        assert_eq!(track(ta, bytes(0x20_0040, 8), false), CONFLICTS_MUTABLE);
        untrack(tb);
        untrack(tb + 1);
        assert_eq!(track(ta, bytes(0x20_0040, 8), false), OK);
        untrack(ta);
    }
}
