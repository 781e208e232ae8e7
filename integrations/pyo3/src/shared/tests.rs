//! The shared tensor's counts without Python, with a lock in the GIL's place: the memory goes
//! exactly once, with the last of the handles and the exports, in every order of their drops,
//! made holding the GIL or not, and across threads.
use super::*;
use alloc::sync::Arc;
use alloc::vec::Vec;
use dlpack_abi::dlpack::{ManagedTensor, TensorDescription, TensorOwner};
use std::sync::atomic::AtomicUsize;
use std::sync::Barrier;

/// A lock in the GIL's place: exports counted without a read-modify-write are made holding it.
mod model_gil {
    use core::cell::Cell;
    use std::sync::{Mutex, PoisonError};

    static GIL: Mutex<()> = Mutex::new(());

    std::thread_local! {
        static HELD: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `f` holding the model GIL (re-entered when this thread holds it).
    pub(super) fn with_gil<R>(f: impl FnOnce() -> R) -> Option<R> {
        if HELD.with(Cell::get) {
            return Some(f());
        }
        let _held = GIL.lock().unwrap_or_else(PoisonError::into_inner);
        HELD.with(|held| held.set(true));
        let result = f();
        HELD.with(|held| held.set(false));
        Some(result)
    }
}

use model_gil::with_gil;

/// Memory whose owner counts its drops.
struct Counted(Vec<u8>, [i64; 1], Arc<AtomicUsize>);

// SAFETY: the vector is the owner's own allocation.
unsafe impl TensorOwner for Counted {
    fn describe(&mut self) -> TensorDescription<'_> {
        TensorDescription::cpu(&mut self.0, &self.1)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.2.fetch_add(1, Ordering::SeqCst);
    }
}

fn counted() -> (SharedTensor, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    let owner = Counted(vec![7; 4], [4], Arc::clone(&drops));
    let tensor = ManagedTensor::from_owner(owner).expect("a valid tensor");
    (SharedTensor::new(Held::local(tensor)), drops)
}

/// An export made holding the (model) GIL.
fn attached(tensor: &SharedTensor) -> Share {
    // SAFETY: made holding the model GIL, as every such export.
    with_gil(|| unsafe { tensor.share_holding_gil() }).expect("the model attaches")
}

/// A handle, or an export (counted as a handle or as attached), held for its drop.
enum Part {
    Handle(#[allow(dead_code)] SharedTensor),
    Share(Share),
}

#[test]
fn the_memory_goes_with_the_last_of_the_handles_and_the_exports_in_every_order() {
    // Two handles, two attached exports and one counted as a handle: every order of their drops.
    let mut orders = 0;
    for order in permutations(5) {
        let (first, drops) = counted();
        let data = first.view().data_ptr();
        let mut parts: Vec<Option<Part>> = vec![Some(Part::Handle(first.clone()))];
        parts.push(Some(Part::Share(first.share())));
        parts.push(Some(Part::Share(attached(&first))));
        parts.push(Some(Part::Share(attached(&first))));
        parts.push(Some(Part::Handle(first)));
        for (step, &index) in order.iter().enumerate() {
            if let Some(Part::Share(share)) = &parts[index] {
                assert_eq!(share.view().data_ptr(), data, "an export reads the tensor");
            }
            drop(parts[index].take());
            let expected = usize::from(step == order.len() - 1);
            assert_eq!(
                drops.load(Ordering::SeqCst),
                expected,
                "order {order:?}, step {step}"
            );
        }
        orders += 1;
    }
    assert_eq!(orders, 120);
}

#[test]
fn a_tensor_without_attached_exports_goes_with_its_last_handle() {
    let (tensor, drops) = counted();
    let again = tensor.clone();
    let share = again.share();
    drop(tensor);
    drop(again);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(share);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn exports_released_on_other_threads_while_the_last_handle_goes() {
    // Threads make exports (holding the GIL for attached ones), releasing some at once, then read
    // the tensor through the rest and release them while the last handles go: the main thread's
    // in even rounds, the threads' own (after their releases) in odd ones. The memory goes once,
    // after all of them, and never under a reader (Miri checks the reads against the free).
    let rounds = if cfg!(miri) { 4 } else { 400 };
    let per_thread = if cfg!(miri) { 3 } else { 30 };
    for round in 0..rounds {
        let (tensor, drops) = counted();
        let start = Arc::new(Barrier::new(4));
        let threads: Vec<_> = (0..3)
            .map(|thread| {
                let (mine, start) = (tensor.clone(), Arc::clone(&start));
                std::thread::spawn(move || {
                    let mut held = Vec::new();
                    for export in 0..per_thread {
                        held.push(if (export + thread) % 4 == 0 {
                            mine.share()
                        } else {
                            attached(&mine)
                        });
                        if export % 3 == 0 {
                            drop(held.pop());
                        }
                    }
                    // Even rounds: the threads' handles go first, so the main thread's is last.
                    let mine = if round % 2 == 0 {
                        drop(mine);
                        None
                    } else {
                        Some(mine)
                    };
                    start.wait();
                    for share in held {
                        let sum: u32 = share.view().iter::<u8>().expect("u8").map(u32::from).sum();
                        assert_eq!(sum, 28);
                        drop(share);
                    }
                    drop(mine);
                })
            })
            .collect();
        if round % 2 == 0 {
            start.wait();
            drop(tensor);
        } else {
            drop(tensor);
            start.wait();
        }
        for thread in threads {
            thread.join().expect("no panic");
        }
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }
}

/// Every order of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for rest in permutations(n - 1) {
        for place in 0..=rest.len() {
            let mut order = rest.clone();
            order.insert(place, n - 1);
            all.push(order);
        }
    }
    all
}
