//! Legacy ↔ versioned adapters: the data is untouched, the flags are right, refusals give the
//! tensor back, and every deleter in the chain runs exactly once.

use crate::fixture::dlpack::Fixture;
use dlpack_abi::dlpack::{AccessError, ExportError, LegacyTensor, VersionedTensor};
use dlpack_abi::raw::*;

#[test]
fn a_legacy_tensor_upgrades_to_a_read_only_1_3_tensor_with_explicit_strides() {
    let mut f = Fixture::f32(&[2, 3]);
    f.dl.strides = std::ptr::null_mut(); // legacy producers may omit strides
                                         // SAFETY: the fixture's struct, handed over once.
    let legacy = unsafe { LegacyTensor::from_raw(f.legacy()) }.unwrap();
    let versioned = legacy.into_versioned();
    let raw = versioned.as_raw();
    assert_eq!(raw.version, DLPackVersion::CURRENT);
    assert_eq!(raw.flags, DLPackFlags::READ_ONLY.bits());
    assert_eq!(raw.dl_tensor.data as usize, f.data_address());
    assert!(!raw.dl_tensor.strides.is_null());
    assert_eq!(versioned.view().strides(), [3, 1]);
    assert!(!versioned.view().strides().is_synthesised());
    assert_eq!(
        versioned.view().as_slice::<f32>().unwrap(),
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert_eq!(f.calls(), 0);
    drop(versioned);
    assert_eq!(f.calls(), 1, "the legacy deleter ran once");
}

#[test]
fn the_upgrade_keeps_byte_offset_device_dtype_and_strides() {
    let mut f = Fixture::new(
        &[0u8, 1, 2, 3, 4, 5, 6, 7],
        crate::fixture::dlpack::dtype(kDLUInt, 8),
        &[3],
    );
    f.set_strides(&[-2]);
    f.dl.byte_offset = 6;
    f.dl.device = DLDevice {
        device_type: kDLCUDAManaged,
        device_id: 0,
    };
    // SAFETY: the fixture's struct, handed over once.
    let legacy = unsafe { LegacyTensor::from_raw(f.legacy()) }.unwrap();
    let versioned = legacy.into_versioned();
    let t = &versioned.as_raw().dl_tensor;
    assert_eq!(t.byte_offset, 6);
    assert_eq!(t.device.device_type, kDLCUDAManaged);
    assert_eq!(t.dtype, crate::fixture::dlpack::dtype(kDLUInt, 8));
    assert_eq!(
        versioned.view().iter::<u8>().unwrap().collect::<Vec<_>>(),
        [6, 4, 2]
    );
    drop(versioned);
    assert_eq!(f.calls(), 1);
}

#[test]
fn a_writable_upgrade_allows_writes() {
    let mut f = Fixture::f32(&[2]);
    // SAFETY: the fixture's struct, handed over once.
    let legacy = unsafe { LegacyTensor::from_raw(f.legacy()) }.unwrap();
    // SAFETY: the fixture's data is writable.
    let mut versioned = unsafe { legacy.into_versioned_writable() };
    assert_eq!(versioned.view().flags(), DLPackFlags::empty());
    // Writable, but not proven exclusive (a legacy producer may share it): unsafe access only.
    assert_eq!(
        versioned.as_mut_slice::<f32>(),
        Err(AccessError::NotExclusive)
    );
    // SAFETY: the fixture's data is writable and nothing else holds it.
    unsafe { versioned.as_mut_slice_unchecked::<f32>() }.unwrap()[1] = 8.0;
    assert_eq!(versioned.view().as_slice::<f32>().unwrap(), [0.0, 8.0]);
    drop(versioned);
    assert_eq!(f.calls(), 1);
}

#[test]
fn a_versioned_tensor_is_exposed_as_legacy_unless_a_flag_would_be_lost() {
    let mut f = Fixture::f32(&[4]);
    f.flags = DLPackFlags::IS_COPIED.bits(); // dropped: legacy consumers assume less
                                             // SAFETY: the fixture's struct, handed over once.
    let tensor = unsafe { VersionedTensor::from_raw(f.versioned()) }.unwrap();
    let legacy = tensor.into_legacy().unwrap();
    assert_eq!(legacy.as_raw().dl_tensor.data as usize, f.data_address());
    assert_eq!(
        legacy.view().as_slice::<f32>().unwrap(),
        [0.0, 1.0, 2.0, 3.0]
    );
    drop(legacy);
    assert_eq!(f.calls(), 1);

    let refused = [
        DLPackFlags::READ_ONLY,
        DLPackFlags::IS_SUBBYTE_TYPE_PADDED,
        DLPackFlags::from_bits_retain(1 << 40),
        DLPackFlags::READ_ONLY | DLPackFlags::IS_COPIED,
    ];
    for flags in refused {
        let mut f = Fixture::f32(&[4]);
        f.flags = flags.bits();
        // SAFETY: as above.
        let tensor = unsafe { VersionedTensor::from_raw(f.versioned()) }.unwrap();
        let error = tensor.into_legacy().unwrap_err();
        assert_eq!(
            error.error(),
            ExportError::FlagsNotRepresentable {
                flags: flags.difference(DLPackFlags::IS_COPIED)
            }
        );
        assert_eq!(f.calls(), 0, "{flags:?}: refused, not deleted");
        let back = error.into_tensor();
        assert_eq!(back.view().flags(), flags);
        drop(back);
        assert_eq!(f.calls(), 1, "{flags:?}");
    }
}

#[test]
fn chains_of_adapters_call_each_deleter_once() {
    let mut f = Fixture::f32(&[3]);
    // SAFETY: the fixture's struct, handed over once.
    let legacy = unsafe { LegacyTensor::from_raw(f.legacy()) }.unwrap();
    // SAFETY: the fixture's data is writable.
    let versioned = unsafe { legacy.into_versioned_writable() };
    let legacy_again = versioned.into_legacy().unwrap();
    let read_only = legacy_again.into_versioned();
    assert!(read_only.into_legacy().is_err_and(|refused| {
        // The refused tensor is dropped with the error: the whole chain unwinds once.
        refused.error()
            == ExportError::FlagsNotRepresentable {
                flags: DLPackFlags::READ_ONLY,
            }
    }));
    assert_eq!(f.calls(), 1);

    // Through raw pointers, as between libraries.
    let mut f = Fixture::f32(&[2]);
    // SAFETY: as above.
    let legacy = unsafe { LegacyTensor::from_raw(f.legacy()) }.unwrap();
    let raw = legacy.into_versioned().into_raw();
    // SAFETY: a struct this crate built, handed over once.
    let versioned = unsafe { VersionedTensor::from_raw(raw) }.unwrap();
    assert_eq!(versioned.view().as_slice::<f32>().unwrap(), [0.0, 1.0]);
    drop(versioned);
    assert_eq!(f.calls(), 1);
}
