//! Release hooks: how a borrow registry learns that a tensor it registered is no longer held.
//!
//! A registry of borrows (the Python one of `dlpack-abi-pyo3`, or a framework's own) records
//! which imported tensors hold which bytes, so that it can refuse a mutable borrow that would
//! alias a live one. It needs to hear when a tensor stops being held: dropped, or given away by
//! [`ManagedTensor::into_raw`](super::ManagedTensor::into_raw). This crate owns the tensors and
//! the registry lives above it, so the registry marks the tensors it registered with
//! [`ManagedTensor::track`](super::ManagedTensor::track), and this crate calls its
//! [`ReleaseHook`] once for each of them. Nothing here depends on the layer above.
#![allow(unsafe_code)]

use core::fmt;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

/// What a borrow registry does when a tensor it tracks stops being held. One hook serves the
/// whole process (each linked copy of this crate, to be exact): the first
/// [`ManagedTensor::track`](super::ManagedTensor::track) installs it, and a different hook is
/// refused afterwards, as `log::set_logger` refuses a second logger.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use core::sync::atomic::{AtomicUsize, Ordering};
/// use dlpack_abi::dlpack::{Export, ReleaseHook};
///
/// static RELEASED: AtomicUsize = AtomicUsize::new(0);
/// static HOOK: ReleaseHook = ReleaseHook {
///     released: |_token| {
///         RELEASED.fetch_add(1, Ordering::Relaxed);
///     },
/// };
/// let mut tensor = Export::new(vec![1.0f32], &[1]).finish().unwrap();
/// tensor.track(&HOOK).unwrap();
/// let raw = tensor.into_raw(); // given away: the hook hears of it
/// assert_eq!(RELEASED.load(Ordering::Relaxed), 1);
/// // SAFETY: `raw` came from `into_raw` and is handed back once.
/// drop(unsafe { dlpack_abi::dlpack::VersionedTensor::from_raw(raw) }.unwrap());
/// # }
/// ```
pub struct ReleaseHook {
    /// Called once per tracked tensor with its [`token`](super::ManagedTensor::token), when the
    /// tensor is dropped (before the producer's deleter runs) or given away by `into_raw`. It
    /// runs on whatever thread that happens on, inside `Drop`: it must not panic, and should
    /// not block for long.
    pub released: fn(token: usize),
}

impl fmt::Debug for ReleaseHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReleaseHook").finish_non_exhaustive()
    }
}

/// A tensor was to be tracked by one hook while another is installed; holds the installed one.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::{Export, ReleaseHook};
///
/// static OURS: ReleaseHook = ReleaseHook { released: |_| {} };
/// static THEIRS: ReleaseHook = ReleaseHook { released: |_| {} };
/// let mut a = Export::new(vec![1u8], &[1]).finish().unwrap();
/// let mut b = Export::new(vec![2u8], &[1]).finish().unwrap();
/// a.track(&OURS).unwrap();
/// let refused = b.track(&THEIRS).unwrap_err();
/// assert!(core::ptr::eq(refused.installed(), &OURS));
/// assert!(!b.is_tracked());
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HookInstalled(&'static ReleaseHook);

impl HookInstalled {
    /// The hook that is installed.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{Export, ReleaseHook};
    ///
    /// static FIRST: ReleaseHook = ReleaseHook { released: |_| {} };
    /// static SECOND: ReleaseHook = ReleaseHook { released: |_| {} };
    /// let mut tensor = Export::new(vec![1u8], &[1]).finish().unwrap();
    /// let _ = tensor.track(&FIRST);
    /// let mut other = Export::new(vec![2u8], &[1]).finish().unwrap();
    /// if let Err(refused) = other.track(&SECOND) {
    ///     assert!(core::ptr::eq(refused.installed(), &FIRST));
    /// }
    /// # }
    /// ```
    pub fn installed(&self) -> &'static ReleaseHook {
        self.0
    }
}

impl fmt::Display for HookInstalled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("another release hook is installed in this process")
    }
}

impl core::error::Error for HookInstalled {}

static HOOK: AtomicPtr<ReleaseHook> = AtomicPtr::new(ptr::null_mut());

/// Installs `hook` if none is, and succeeds if `hook` is the one installed.
#[inline]
pub(super) fn install(hook: &'static ReleaseHook) -> Result<(), HookInstalled> {
    let wanted = ptr::from_ref(hook).cast_mut();
    // Installed once per process, checked on every tracked import: a plain load first, so that
    // the usual case pays no locked instruction.
    let mut current = HOOK.load(Ordering::Acquire);
    if current.is_null() {
        current = match HOOK.compare_exchange(current, wanted, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => return Ok(()),
            Err(current) => current,
        };
    }
    if current == wanted {
        return Ok(());
    }
    // SAFETY: non-NULL values of `HOOK` are `&'static ReleaseHook`s stored above.
    Err(HookInstalled(unsafe { &*current }))
}

/// Tells the installed hook that the tensor with `token` is no longer held. Cold: most tensors
/// are not tracked, so that their drop falls through the check.
#[cold]
#[inline(never)]
pub(super) fn released(token: usize) {
    let hook = HOOK.load(Ordering::Acquire);
    // SAFETY: NULL, or a `&'static ReleaseHook` stored by `install`: valid for the program's
    // life.
    if let Some(hook) = unsafe { hook.as_ref() } {
        (hook.released)(token);
    }
}
