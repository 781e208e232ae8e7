//! The safe DLPack layer and the raw layer: import (the malformed-tensor table, ownership),
//! typed access, export, the legacy/versioned adapters, and the raw types' behaviour.

#[path = "../fixture/mod.rs"]
mod fixture;

mod access;
#[cfg(feature = "alloc")]
mod adapt;
mod borrowed;
#[cfg(feature = "alloc")]
mod convert;
#[cfg(feature = "alloc")]
mod export;
#[cfg(feature = "alloc")]
mod export_paths;
mod extent;
mod host_slice;
mod import;
mod raw;
mod soundness;
#[cfg(feature = "alloc")]
mod streams;
#[cfg(feature = "alloc")]
mod tracking;

/// Counts the bytes each thread's allocations hold (`soundness::LIVE_BYTES`) and the allocations
/// it makes (`soundness::ALLOCATIONS`), so that a test can see a leak, or an allocation, on its
/// own thread.
struct Counting;

// SAFETY: forwards every call to the system allocator unchanged; the counter is a `const`
// thread-local `Cell` (no allocation, no destructor).
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ =
            soundness::LIVE_BYTES.try_with(|live| live.set(live.get() + layout.size() as isize));
        let _ = soundness::ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
        // SAFETY: the caller's contract, forwarded.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        let _ =
            soundness::LIVE_BYTES.try_with(|live| live.set(live.get() - layout.size() as isize));
        // SAFETY: the caller's contract, forwarded.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;
