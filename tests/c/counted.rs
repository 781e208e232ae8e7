//! Shared by the Rust halves of the C tests: owners that count their drops in `DROPS`, which C
//! reads with `rust_drops`.

use std::sync::atomic::{AtomicUsize, Ordering};

use dlpack_abi::dlpack::{Element, HostBuffer, HostMemory};

/// How many Rust owners have been dropped so far.
pub static DROPS: AtomicUsize = AtomicUsize::new(0);

/// Counts one dropped owner.
pub fn count_drop() {
    DROPS.fetch_add(1, Ordering::SeqCst);
}

/// A vector that counts its drop in `DROPS`.
pub struct Counted<T>(pub Vec<T>);

impl<T> Drop for Counted<T> {
    fn drop(&mut self) {
        count_drop();
    }
}

// SAFETY: reports the vector's own elements, which only this buffer holds.
unsafe impl<T: Element + Send> HostBuffer for Counted<T> {
    type Element = T;
    fn memory(&mut self) -> HostMemory<T> {
        self.0.memory()
    }
}

/// How many Rust owners have been dropped so far.
#[no_mangle]
pub extern "C" fn rust_drops() -> usize {
    DROPS.load(Ordering::SeqCst)
}
