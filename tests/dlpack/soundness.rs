//! Regressions from the soundness review of the DLPack layer: each test failed before its fix.

use std::cell::Cell;
use std::ptr;

use crate::fixture::dlpack::{dtype, Fixture};
use dlpack_abi::dlpack::{AccessError, ImportError, LegacyTensor, TensorError, VersionedTensor};
use dlpack_abi::raw::*;

/// A legacy tensor (NULL strides) whose bytes run past the end of the address space: without
/// strides the reach was not checked at all, so typed access could form a wrapping slice.
#[test]
fn a_compact_tensor_ending_past_the_address_space_is_refused() {
    let mut f = Fixture::f32(&[4]);
    let top = usize::MAX - 8; // 16 bytes from here wrap
    f.dl.data = ptr::null_mut::<u8>().wrapping_add(top).cast();
    f.dl.strides = ptr::null_mut();
    // SAFETY: the fixture's struct, handed over once (data is never read: refused).
    let error = unsafe { LegacyTensor::from_raw(f.legacy()) }.unwrap_err();
    assert_eq!(
        error,
        ImportError::AddressOverflow {
            address: top,
            byte_size: 16
        }
    );
    assert!(error
        .to_string()
        .contains("run past the end of the address space"));
    assert_eq!(f.calls(), 1);

    // The same through `byte_offset`, and a 0-d tensor (no strides to walk) at the very top.
    let mut f = Fixture::f32(&[4]);
    f.dl.data = ptr::null_mut::<u8>().wrapping_add(usize::MAX - 64).cast();
    f.dl.byte_offset = 56;
    f.dl.strides = ptr::null_mut();
    // SAFETY: as above.
    let refused = unsafe { LegacyTensor::from_raw(f.legacy()) };
    assert!(matches!(refused, Err(ImportError::AddressOverflow { .. })));
    let mut f = Fixture::f32(&[]);
    f.dl.data = ptr::null_mut::<u8>().wrapping_add(usize::MAX - 2).cast();
    // SAFETY: as above.
    let refused = unsafe { VersionedTensor::from_raw(f.versioned()) };
    assert!(matches!(refused, Err(ImportError::AddressOverflow { .. })));

    // The last byte may be the last address.
    let mut f = Fixture::new(&[0u8], dtype(kDLUInt, 8), &[4]);
    f.dl.data = ptr::null_mut::<u8>().wrapping_add(usize::MAX - 3).cast();
    f.dl.strides = ptr::null_mut();
    // SAFETY: as above (never read).
    assert!(unsafe { LegacyTensor::from_raw(f.legacy()) }.is_ok());
}

thread_local! {
    /// Bytes this thread's allocations hold (see `Counting` in main.rs).
    pub static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
    /// Allocations this thread has made.
    pub static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// The export block of a refused export was leaked when the owner's `Drop` panicked while it
/// was being dropped (the block's free was skipped by the unwind).
#[cfg(feature = "alloc")]
#[test]
fn a_panicking_owner_of_a_refused_export_does_not_leak_the_block() {
    struct Panics(Vec<f32>);
    impl Drop for Panics {
        fn drop(&mut self) {
            panic!("owner drop panicked");
        }
    }
    // SAFETY: reports the vector's own elements.
    unsafe impl dlpack_abi::dlpack::HostBuffer for Panics {
        type Element = f32;
        fn memory(&mut self) -> dlpack_abi::dlpack::HostMemory<f32> {
            self.0.memory()
        }
    }
    let refused_export = || {
        // Two elements cannot hold a 2 x 2 tensor: refused, and the owner dropped (panicking).
        let buffer = Panics(vec![1.0, 2.0]);
        std::panic::catch_unwind(move || dlpack_abi::dlpack::Export::new(buffer, &[2, 2]).finish())
    };
    // This panic is expected: keep the default hook (which may capture a backtrace, and
    // allocate for it) out of the count. Other panics go to the default hook as before.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&"owner drop panicked") {
                default(info);
            }
        }));
    });
    drop(refused_export()); // warms up what the first panic allocates for good
    let before = LIVE_BYTES.with(Cell::get);
    let outcome = refused_export();
    assert!(outcome.is_err(), "the owner's panic propagates");
    drop(outcome);
    assert_eq!(LIVE_BYTES.with(Cell::get), before, "nothing leaked");
}

/// Safe mutable access: exports of uniquely owned buffers are exclusive, unless read-only.
#[cfg(feature = "alloc")]
#[test]
fn exports_of_unique_buffers_are_exclusive_and_others_are_not() {
    use dlpack_abi::dlpack::{Export, TensorDescription, TensorOwner};
    use std::sync::Arc;

    let mut unique = Export::new(vec![1u8, 2], &[2]).finish().unwrap();
    unique.as_mut_slice::<u8>().unwrap()[0] = 9;
    assert_eq!(unique.view().as_slice::<u8>().unwrap(), [9, 2]);
    let mut strided = Export::new(vec![1u8, 2, 3], &[3])
        .strides(&[1])
        .finish()
        .unwrap();
    assert!(strided.as_mut_slice::<u8>().is_ok());

    let mut frozen = Export::new(vec![1u8], &[1]).read_only().finish().unwrap();
    assert_eq!(frozen.as_mut_slice::<u8>(), Err(AccessError::ReadOnly));
    let shared: Arc<[u8]> = Arc::from(vec![1u8]);
    let mut shared_export = Export::new(Arc::clone(&shared), &[1]).finish().unwrap();
    assert_eq!(
        shared_export.as_mut_slice::<u8>(),
        Err(AccessError::ReadOnly)
    );

    // A custom owner promises no exclusivity: the unsafe accessor is its way to write.
    struct Owned(Vec<u8>);
    // SAFETY: the vector is the owner's own allocation.
    unsafe impl TensorOwner for Owned {
        fn describe(&mut self) -> TensorDescription<'_> {
            TensorDescription::cpu(&mut self.0, &[1])
        }
    }
    let mut custom = VersionedTensor::from_owner(Owned(vec![4])).unwrap();
    assert_eq!(custom.as_mut_slice::<u8>(), Err(AccessError::NotExclusive));

    // Two owners sharing one IS_COPIED tensor, each describing it again: neither export may
    // give a safe `&mut` (`TensorDescription::of` drops IS_COPIED, and an owner's flags never
    // make an export exclusive).
    struct Shared(Arc<VersionedTensor>);
    // SAFETY: the memory the shared tensor reaches, kept alive by the `Arc`; the exports are
    // not writable through Rust references here.
    unsafe impl TensorOwner for Shared {
        fn describe(&mut self) -> TensorDescription<'_> {
            TensorDescription::of(&self.0.view())
        }
    }
    let copy = Arc::new(Export::copy_of(&[1u32, 2, 3], &[3]).finish().unwrap());
    let mut first = VersionedTensor::from_owner(Shared(Arc::clone(&copy))).unwrap();
    let mut second = VersionedTensor::from_owner(Shared(Arc::clone(&copy))).unwrap();
    assert!(!first.view().flags().contains(DLPackFlags::IS_COPIED));
    assert_eq!(first.as_mut_slice::<u32>(), Err(AccessError::NotExclusive));
    assert_eq!(second.as_mut_slice::<u32>(), Err(AccessError::NotExclusive));

    // An exclusive export that comes back through the adapters read-only is read-only.
    let unique = Export::new(vec![1u8, 2], &[2]).finish().unwrap();
    let mut back = unique.into_legacy().unwrap().into_versioned();
    assert_eq!(back.view().flags(), DLPackFlags::READ_ONLY);
    assert_eq!(back.as_mut_slice::<u8>(), Err(AccessError::ReadOnly));
}

/// Errors are small, so that a `Result` stays cheap (the old error held `i128`s: 48 bytes,
/// 16-byte aligned, on every target).
#[test]
fn errors_are_small() {
    use dlpack_abi::dlpack::ExportError;
    use std::mem::size_of;
    let sizes = [
        size_of::<ImportError>(),
        size_of::<AccessError>(),
        size_of::<ExportError>(),
        size_of::<TensorError>(),
        size_of::<Result<&[f32], AccessError>>(),
        size_of::<Result<VersionedTensor, ImportError>>(),
    ];
    // Budgets, not snapshots: what they are today, which a change may lower but not raise.
    #[cfg(target_pointer_width = "64")]
    let budget = [24, 32, 32, 40, 32, 32];
    #[cfg(target_pointer_width = "32")] // i686 (`u64` aligned to 4)
    let budget = [16, 20, 24, 24, 20, 20];
    for (size, budget) in sizes.iter().zip(budget) {
        assert!(*size <= budget, "{sizes:?} within {budget:?}");
    }
}
