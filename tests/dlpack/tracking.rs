//! The release hook a borrow registry installs (`ManagedTensor::track`): it hears of every
//! tracked tensor exactly once, when the tensor is dropped or given away, and never of one that
//! was not tracked, through the moves DLPack allows (a hand-over to C and back, the legacy and
//! versioned adapters). One hook serves the process, so every test here uses the same one and
//! counts only its own thread's tokens.

use std::cell::RefCell;

use dlpack_abi::dlpack::{Export, ReleaseHook, VersionedTensor};

thread_local! {
    /// The tokens the hook heard of on this thread, in order.
    static HEARD: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

static HOOK: ReleaseHook = ReleaseHook {
    released: |token| HEARD.with(|heard| heard.borrow_mut().push(token)),
};

fn heard() -> Vec<usize> {
    HEARD.with(|heard| heard.take())
}

fn tensor() -> VersionedTensor {
    Export::new(vec![1.0f32, 2.0, 3.0], &[3]).finish().unwrap()
}

#[test]
fn a_tracked_tensor_is_reported_once_when_dropped() {
    let mut tensor = tensor();
    let token = tensor.token();
    tensor.track(&HOOK).unwrap();
    tensor.track(&HOOK).unwrap(); // again: still one registration
    assert!(tensor.is_tracked());
    assert_eq!(heard(), []);
    drop(tensor);
    assert_eq!(heard(), [token]);
}

#[test]
fn an_untracked_tensor_is_never_reported() {
    drop(tensor());
    let raw = tensor().into_raw();
    // SAFETY: from `into_raw`, handed back once.
    drop(unsafe { VersionedTensor::from_raw(raw) }.unwrap());
    assert_eq!(heard(), []);
}

#[test]
fn given_away_it_is_reported_then_and_not_again_when_taken_back() {
    let mut tensor = tensor();
    let token = tensor.token();
    tensor.track(&HOOK).unwrap();
    let raw = tensor.into_raw(); // to C: the registry no longer knows where it goes
    assert_eq!(heard(), [token]);
    // SAFETY: from `into_raw`, handed back once; the re-import is a new, untracked holder.
    let again = unsafe { VersionedTensor::from_raw(raw) }.unwrap();
    assert!(!again.is_tracked());
    drop(again);
    assert_eq!(heard(), []);
}

#[test]
fn wrapped_by_the_legacy_adapter_it_is_reported_once_when_the_wrapper_is_freed() {
    let mut tensor = tensor();
    let token = tensor.token();
    tensor.track(&HOOK).unwrap();
    let legacy = tensor.into_legacy().unwrap();
    // The wrapper is a new struct the registry does not know; the inner tensor stays registered
    // while the wrapper holds it.
    assert!(!legacy.is_tracked());
    assert_eq!(heard(), []);
    let versioned = legacy.into_versioned();
    assert!(!versioned.is_tracked());
    assert_eq!(heard(), []);
    drop(versioned);
    assert_eq!(heard(), [token]);
}

#[test]
fn another_hook_is_refused_and_leaves_the_tensor_untracked() {
    static OTHER: ReleaseHook = ReleaseHook { released: |_| {} };
    let mut first = tensor();
    first.track(&HOOK).unwrap(); // installs HOOK if no other test did
    let mut second = tensor();
    let refused = second.track(&OTHER).unwrap_err();
    assert!(std::ptr::eq(refused.installed(), &HOOK));
    assert!(!second.is_tracked());
    let token = first.token();
    drop((first, second));
    assert_eq!(heard(), [token]);
}

#[test]
fn a_tracked_tensor_read_as_a_host_slice_is_reported_once_when_the_slice_is_dropped() {
    use dlpack_abi::dlpack::HostSlice;
    let mut tracked = tensor();
    let token = tracked.token();
    tracked.track(&HOOK).unwrap();
    let values = HostSlice::<f32>::from_tensor(tracked)
        .map_err(|(_, e)| e)
        .unwrap();
    assert_eq!(*values, [1.0, 2.0, 3.0]);
    assert_eq!(heard(), []);
    drop(values);
    assert_eq!(heard(), [token]);
    // Refused: the tensor comes back still tracked, and is reported when it is dropped.
    let mut tracked = tensor();
    let token = tracked.token();
    tracked.track(&HOOK).unwrap();
    let (back, _) = HostSlice::<u8>::from_tensor(tracked).unwrap_err();
    assert!(back.is_tracked());
    assert_eq!(heard(), []);
    drop(back);
    assert_eq!(heard(), [token]);
}
