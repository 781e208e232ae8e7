//! Shared borrows without a locked instruction: each thread keeps its live shared borrows in
//! slots of its own, which a mutable registration scans. The registry's lock is taken only by
//! mutable borrows, by shared ones while a mutable borrow is live (or being registered), and by
//! what does not fit a slot (Arrow imports' many extents, more than [`SLOTS`] live borrows).
//!
//! **Why no shared borrow and mutable borrow of the same bytes can both be taken.** A shared
//! borrow publishes its slot (a `Release` store of an odd version), then, after a `SeqCst`
//! fence, reads the count of mutable borrows in [`STATE`]; a mutable registration takes the
//! registry's lock and raises that count in one `SeqCst` read-modify-write of `STATE`, then scans
//! every slot with `SeqCst` loads (of the thread list, of `used`, of each version). Either the
//! fence comes first in the single total order of `SeqCst` operations, and the scan, which
//! follows it, reads the published slot (and refuses the mutable borrow); or the
//! read-modify-write comes first, and the shared borrow's read after its fence reads the raised
//! count (and decides under the lock, where the mutable borrow is listed by the time it gets it).
//! (C++20 [atomics.order], the two rules on `seq_cst` fences, which Rust's atomics follow.) A slot
//! read while it changes (its version differs before and after) held a borrow that ended; one
//! claimed since was claimed after the scan's read-modify-write, so its owner reads the count.
//!
//! Slots are claimed only by the thread that owns them and cleared once, by whichever thread
//! drops the borrow (tensors move between threads). A thread's slots outlive it: they are
//! handed to the next new thread, which claims only the free ones.
//!
//! **Attached shared borrows** ([`publish_attached`], builds with a GIL): a caller that holds the
//! GIL claims one of the [`ATTACHED`] slots, which only GIL holders claim, and reads
//! the count with no fence and no thread-local lookup. A mutable registration holds the GIL
//! too (the registry takes it if its caller did not), so the two are never concurrent: the
//! GIL's release and acquire order one after the other, and whichever comes second sees the
//! first (the scan sees the slot, or the shared borrow reads the increment). Borrows registered
//! by a caller that is not attached (an Arrow stream's batch pulled on a consumer's thread)
//! keep the per-thread slots and their fence, which the mutable registration's read-modify-write
//! pairs with.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use core::ptr;
use core::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use dlpack_abi::dlpack::MemoryExtent;

/// Slots per thread: the shared borrows a thread usually holds at once (a call's arguments,
/// the tensors kept in variables), beyond which the registry's map takes them.
pub(super) const SLOTS: usize = 16;

/// The registry's state word: bit 0 is its lock ([`registry`](super::registry) takes and gives
/// it back), the rest counts the mutable borrows live or being registered, in units of
/// [`MUTABLE_ONE`] (raised as the lock is taken for one, lowered under the lock). A shared borrow
/// that reads a count of 0 after publishing its slot needs no lock.
pub(super) static STATE: AtomicUsize = AtomicUsize::new(0);

/// One mutable borrow in [`STATE`]'s count.
pub(super) const MUTABLE_ONE: usize = 2;

/// Whether [`STATE`] counts a mutable borrow (live or being registered).
fn mutable_live() -> bool {
    // Acquire: reading the count a mutable borrow's end lowered orders its writes before our
    // reads.
    STATE.load(Ordering::Acquire) >= MUTABLE_ONE
}

/// One shared borrow's place. Fields are atomics: other threads read them while the owner
/// writes (a version before and after tells whether what was read belongs together).
struct Slot {
    /// Odd while a borrow is held here; incremented when one is claimed and when it is cleared.
    version: AtomicUsize,
    token: AtomicUsize,
    start: AtomicUsize,
    end: AtomicUsize,
    first: AtomicUsize,
    stride_gcd: AtomicUsize,
    element_bytes: AtomicUsize,
}

impl Slot {
    const fn new() -> Self {
        Self {
            version: AtomicUsize::new(0),
            token: AtomicUsize::new(0),
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            first: AtomicUsize::new(0),
            stride_gcd: AtomicUsize::new(0),
            element_bytes: AtomicUsize::new(0),
        }
    }

    /// Claims this free slot (seen even by its only claimer) for `token`'s borrow of `extent`.
    fn fill(&self, token: usize, extent: &MemoryExtent) {
        // The seqlock writer's fence: a scan that reads any field written below reads, after
        // its acquire fence, a version at least the clear's, and so never takes old and new
        // together.
        fence(Ordering::Release);
        self.token.store(token, Ordering::Relaxed);
        self.start.store(extent.start, Ordering::Relaxed);
        self.end.store(extent.end, Ordering::Relaxed);
        self.first.store(extent.first, Ordering::Relaxed);
        self.stride_gcd.store(extent.stride_gcd, Ordering::Relaxed);
        self.element_bytes
            .store(extent.element_bytes, Ordering::Relaxed);
        let version = self.version.load(Ordering::Relaxed);
        self.version.store(version + 1, Ordering::Release);
    }

    /// Ends `token`'s borrow if this slot holds it.
    fn clear_if(&self, token: usize) -> bool {
        let version = self.version.load(Ordering::Acquire);
        let held = version % 2 == 1 && self.token.load(Ordering::Relaxed) == token;
        if held {
            // Only the borrow's one dropper clears it; its claimer waits for an even version.
            self.version.store(version + 1, Ordering::Release);
        }
        held
    }

    /// The borrow held here and its token, read whole, when there is one.
    fn read(&self) -> Option<(usize, MemoryExtent)> {
        // SeqCst: a scan's read of a slot published before the publisher's fence (module docs).
        let before = self.version.load(Ordering::SeqCst);
        if before % 2 == 0 {
            return None;
        }
        let token = self.token.load(Ordering::Relaxed);
        let extent = MemoryExtent {
            start: self.start.load(Ordering::Relaxed),
            end: self.end.load(Ordering::Relaxed),
            first: self.first.load(Ordering::Relaxed),
            stride_gcd: self.stride_gcd.load(Ordering::Relaxed),
            element_bytes: self.element_bytes.load(Ordering::Relaxed),
        };
        fence(Ordering::Acquire);
        // Acquire: when the borrow ended meanwhile, what its holder did before (its reads of the
        // memory) happens before what the scanning mutable borrow does next.
        (self.version.load(Ordering::Acquire) == before).then_some((token, extent))
    }
}

/// Slots claimed by one claimer at a time (a thread, or the GIL's holder), of which only the
/// first `used` have ever held a borrow: scans stop there (a program that holds a few borrows at
/// once looks at a few slots).
struct SlotGroup<const N: usize> {
    /// How many slots (from the first) have been claimed at least once; only grows. Raised
    /// before the slot is filled, so a scan ordered after the claim sees the slot.
    used: AtomicUsize,
    slots: [Slot; N],
}

impl<const N: usize> SlotGroup<N> {
    const fn new() -> Self {
        Self {
            used: AtomicUsize::new(0),
            slots: [const { Slot::new() }; N],
        }
    }

    /// The slots that may hold a borrow.
    fn live(&self) -> &[Slot] {
        // SeqCst: as a slot's version, for scans (module docs).
        let used = self.used.load(Ordering::SeqCst).min(N);
        &self.slots[..used]
    }

    /// A free slot for the group's one claimer: a used one, else the next unused one (`None`
    /// when all are taken).
    fn claim(&self) -> Option<&Slot> {
        // Only the claimer makes a slot odd: one seen even stays free until it claims it.
        // Acquire: the clear (maybe another thread's) happens before this claim, so a scan that
        // sees the claim is ordered after the previous holder too.
        if let Some(free) = self
            .live()
            .iter()
            .find(|slot| slot.version.load(Ordering::Acquire) % 2 == 0)
        {
            return Some(free);
        }
        let used = self.used.load(Ordering::Relaxed);
        let next = self.slots.get(used)?;
        self.used.store(used + 1, Ordering::Release);
        Some(next)
    }

    /// Ends `token`'s borrow if one of these slots holds it.
    fn clear(&self, token: usize) -> bool {
        self.live().iter().any(|slot| slot.clear_if(token))
    }
}

/// A thread's slots, in a list that only grows (slots are never freed).
struct ThreadSlots {
    slots: SlotGroup<SLOTS>,
    /// Whether a live thread owns these slots (only it claims them).
    owned: AtomicBool,
    /// The next thread's, set before this one is published.
    next: *const ThreadSlots,
}

// SAFETY: every field shared between threads is an atomic; `next` is written once, before the
// slots are published, and only read after.
unsafe impl Sync for ThreadSlots {}

static THREADS: AtomicPtr<ThreadSlots> = AtomicPtr::new(ptr::null_mut());

/// Every thread's slots, owned or not.
fn all() -> impl Iterator<Item = &'static ThreadSlots> {
    // SeqCst: as a slot's version, for scans (module docs).
    let mut next = THREADS.load(Ordering::SeqCst).cast_const();
    core::iter::from_fn(move || {
        // SAFETY: NULL or published slots, which live for the process.
        let slots = unsafe { next.as_ref() }?;
        next = slots.next;
        Some(slots)
    })
}

/// Slots for a new thread: a dead thread's, or new ones.
fn adopt() -> &'static ThreadSlots {
    if let Some(free) = all().find(|slots| {
        slots
            .owned
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }) {
        return free;
    }
    let slots: &'static mut ThreadSlots = Box::leak(Box::new(ThreadSlots {
        slots: SlotGroup::new(),
        owned: AtomicBool::new(true),
        next: ptr::null(),
    }));
    let mut head = THREADS.load(Ordering::Relaxed);
    loop {
        slots.next = head;
        match THREADS.compare_exchange_weak(head, slots, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return slots,
            Err(current) => head = current,
        }
    }
}

/// The calling thread's slots, given up when it exits.
struct Owner(&'static ThreadSlots);

impl Drop for Owner {
    fn drop(&mut self) {
        self.0.owned.store(false, Ordering::Release);
    }
}

std::thread_local! {
    static MINE: Owner = Owner(adopt());
}

/// Publishes a shared borrow in a free slot of the calling thread; `None` when there is none
/// (or the thread is exiting): the caller registers it under the lock. Then tells whether a
/// mutable borrow may be live: if so the caller decides under the lock, and calls
/// [`clear`] with the slot's token if it refuses.
pub(super) fn publish(token: usize, extent: &MemoryExtent) -> Option<bool> {
    let slots = MINE.try_with(|mine| mine.0).ok()?;
    // This thread is its slots' one claimer.
    let slot = slots.slots.claim()?;
    slot.fill(token, extent);
    // Pairs with the mutable registration's read-modify-write: one of the two sees the other's
    // writes (the slot, and `used` raised before it; or the count).
    fence(Ordering::SeqCst);
    Some(mutable_live())
}

/// Slots for attached callers on builds with a GIL: a call's arguments and the tensors a
/// program keeps in variables, beyond which [`publish`]'s per-thread slots take them.
#[cfg(not(Py_GIL_DISABLED))]
const ATTACHED_SLOTS: usize = 32;

/// Shared borrows of callers holding the GIL, claimed only by the GIL's holder.
#[cfg(not(Py_GIL_DISABLED))]
static ATTACHED: SlotGroup<ATTACHED_SLOTS> = SlotGroup::new();

/// [`publish`] for a caller holding the GIL (builds with one): in an [`ATTACHED`] slot, with no
/// fence; `None` when every such slot is taken.
///
/// # Safety
/// The caller holds the GIL, and so do mutable registrations ([`STATE`]'s count is raised and
/// the slots scanned only by a GIL holder): no other thread claims an attached slot, and no
/// mutable registration runs, until this returns.
#[cfg(not(Py_GIL_DISABLED))]
pub(super) unsafe fn publish_attached(token: usize, extent: &MemoryExtent) -> Option<bool> {
    // The GIL's holder is these slots' one claimer (the caller's contract).
    let slot = ATTACHED.claim()?;
    slot.fill(token, extent);
    // No fence: a mutable registration is ordered before or after this call by the GIL (the
    // caller's contract), so this load sees its increment or its scan sees the slot.
    Some(mutable_live())
}

/// Ends the shared borrow of `token` held in a slot; `false` when no slot holds it. Every
/// thread's slots are walked (a borrow is often dropped on another thread than the one that took
/// it), without the thread-local lookup: a program that never registers a borrow without the GIL
/// has no thread slots, and a walk of none.
pub(super) fn clear(token: usize) -> bool {
    #[cfg(not(Py_GIL_DISABLED))]
    if ATTACHED.clear(token) {
        return true;
    }
    all().any(|slots| slots.slots.clear(token))
}

/// Whether a shared borrow in a slot, of a token other than `token`, may share a byte with one
/// of `extents`. Called under the registry's lock, taken with [`STATE`]'s count raised, with the
/// GIL held (builds with one).
pub(super) fn any_overlaps(token: usize, extents: &[MemoryExtent]) -> bool {
    let overlaps = |slot: &Slot| {
        slot.read().is_some_and(|(other, theirs)| {
            other != token && extents.iter().any(|ours| ours.may_overlap(&theirs))
        })
    };
    #[cfg(not(Py_GIL_DISABLED))]
    if ATTACHED.live().iter().any(overlaps) {
        return true;
    }
    all().any(|slots| slots.slots.live().iter().any(overlaps))
}
