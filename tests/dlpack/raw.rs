//! Behaviour of the raw layer that the C headers do not show: open enums accept and print any
//! value, flags keep unknown bits, and the bytemuck impls give the spec's byte layout.

use bytemuck::Zeroable;
use dlpack_abi::raw::*;

#[test]
fn device_types_have_the_spec_values_and_accept_unknown_ones() {
    let expected = [
        (kDLCPU, 1),
        (kDLCUDA, 2),
        (kDLCUDAHost, 3),
        (kDLOpenCL, 4),
        (kDLVulkan, 7),
        (kDLMetal, 8),
        (kDLVPI, 9),
        (kDLROCM, 10),
        (kDLROCMHost, 11),
        (kDLExtDev, 12),
        (kDLCUDAManaged, 13),
        (kDLOneAPI, 14),
        (kDLWebGPU, 15),
        (kDLHexagon, 16),
        (kDLMAIA, 17),
        (kDLTrn, 18),
        // On DLPack `main`, in no release yet.
        (kDLTPU, 19),
        (kDLTPUHost, 20),
        (kDLAscend, 21),
    ];
    assert_eq!(DLDeviceType::KNOWN.len(), expected.len());
    for (device, value) in expected {
        assert_eq!(device.0, value);
        assert!(DLDeviceType::KNOWN.contains(&device));
    }
    assert_eq!(DLDeviceType::UNRELEASED, [kDLTPU, kDLTPUHost, kDLAscend]);
    assert_eq!(format!("{kDLTPUHost:?}"), "kDLTPUHost");
    assert_eq!(
        DLDevice {
            device_type: kDLTPUHost,
            device_id: 1
        }
        .to_string(),
        "tpu_host:1"
    );
    // Values from producers newer still: representable, unnamed.
    for value in [22, 42, -1, i32::MAX] {
        let device = DLDevice {
            device_type: DLDeviceType(value),
            device_id: 0,
        };
        assert_eq!(device.device_type.name(), None);
        assert_eq!(
            format!("{:?}", device.device_type),
            format!("DLDeviceType({value})")
        );
    }
    assert_eq!(format!("{kDLCUDAManaged:?}"), "kDLCUDAManaged");
}

#[test]
fn data_type_codes_have_the_spec_values_and_accept_unknown_ones() {
    let names: Vec<&str> = DLDataTypeCode::KNOWN
        .iter()
        .map(|c| c.name().unwrap())
        .collect();
    assert_eq!(
        names.len(),
        19,
        "codes 0..=18 (18, kDLBcomplex, in no release yet)"
    );
    assert_eq!(DLDataTypeCode::UNRELEASED, [kDLBcomplex]);
    for (value, code) in DLDataTypeCode::KNOWN.iter().enumerate() {
        assert_eq!(usize::from(code.0), value, "{code:?}");
    }
    assert_eq!(
        (
            kDLBool.0,
            kDLFloat8_e4m3fn.0,
            kDLFloat6_e3m2fn.0,
            kDLFloat4_e2m1fn.0
        ),
        (6, 10, 16, 17)
    );
    // kDLBcomplex (18) from DLPack `main`: named; 19 and above unnamed.
    assert_eq!(format!("{:?}", DLDataTypeCode(18)), "kDLBcomplex");
    let dtype = DLDataType {
        code: DLDataTypeCode(19),
        bits: 32,
        lanes: 1,
    };
    assert_eq!(
        format!("{dtype:?}"),
        "DLDataType { code: DLDataTypeCode(19), bits: 32, lanes: 1 }"
    );
}

#[test]
fn arrow_device_types_share_dlpack_numbers() {
    assert_eq!(ArrowDeviceType::KNOWN.len(), 14);
    for arrow in ArrowDeviceType::KNOWN {
        let dlpack = DLDeviceType(arrow.0);
        let arrow_name = arrow.name().unwrap();
        let dlpack_name = dlpack
            .name()
            .expect("every Arrow device type exists in DLPack");
        // ARROW_DEVICE_CUDA_HOST <-> kDLCUDAHost, ARROW_DEVICE_ONEAPI <-> kDLOneAPI, ...
        let squash = |s: &str| s.replace('_', "").to_ascii_lowercase();
        assert_eq!(
            squash(&arrow_name["ARROW_DEVICE_".len()..]),
            squash(&dlpack_name["kDL".len()..])
        );
    }
    // MAIA and Trainium have no Arrow macro yet.
    assert_eq!(ArrowDeviceType(kDLMAIA.0).name(), None);
    assert_eq!(
        format!("{:?}", ArrowDeviceType(kDLTrn.0)),
        "ArrowDeviceType(18)"
    );
}

#[test]
fn flags_keep_unknown_bits_through_every_operation() {
    // The C macros (`unsigned long`) have the spec's values.
    assert_eq!(
        (
            DLPACK_FLAG_BITMASK_READ_ONLY,
            DLPACK_FLAG_BITMASK_IS_COPIED,
            DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
        ),
        (1, 2, 4)
    );
    let raw = DLPackFlags::READ_ONLY.bits() | (1 << 3) | (1 << 63);
    let flags = DLPackFlags::from_bits_retain(raw);
    assert!(flags.contains(DLPackFlags::READ_ONLY));
    assert!(!flags.contains(DLPackFlags::IS_COPIED));
    assert_eq!(flags.bits(), raw);
    assert_eq!((flags | DLPackFlags::IS_COPIED).bits(), raw | 2);
    assert_eq!((flags - DLPackFlags::READ_ONLY).bits(), raw & !1);
    assert_eq!(
        (!flags).bits(),
        !raw,
        "complement must not drop undefined bits"
    );
    assert_eq!(
        DLPackFlags::from_bits(raw),
        Some(flags),
        "no bit is rejected"
    );
    assert_eq!(
        (
            DLPackFlags::READ_ONLY.bits(),
            DLPackFlags::IS_COPIED.bits(),
            DLPackFlags::IS_SUBBYTE_TYPE_PADDED.bits()
        ),
        (1, 2, 4)
    );

    let mut tensor = DLManagedTensorVersioned::zeroed();
    tensor.flags = raw;
    assert_eq!(tensor.flag_set(), flags);
    assert_eq!(
        format!("{:?}", DLPackFlags::from_bits_retain(1 | 8)),
        "DLPackFlags(READ_ONLY | 0x8)"
    );
}

#[test]
fn value_types_are_plain_bytes_in_field_order() {
    let dtype: DLDataType = bytemuck::cast([2u8, 32, 7, 0]);
    assert_eq!(
        (dtype.code, dtype.bits, dtype.lanes),
        (kDLFloat, 32, u16::from_ne_bytes([7, 0]))
    );
    let device: DLDevice = bytemuck::cast([2i32, 3]);
    assert_eq!(
        device,
        DLDevice {
            device_type: kDLCUDA,
            device_id: 3
        }
    );
    let version: DLPackVersion = bytemuck::cast([1u32, 3]);
    assert_eq!(version, DLPackVersion::CURRENT);
    assert_eq!(
        DLPackVersion::CURRENT,
        DLPackVersion {
            major: DLPACK_MAJOR_VERSION,
            minor: DLPACK_MINOR_VERSION
        }
    );
}

#[test]
fn zeroed_structs_are_empty_and_released() {
    let schema = ArrowSchema::zeroed();
    assert!(schema.release.is_none() && schema.format.is_null() && schema.children.is_null());
    let array = ArrowDeviceArray::zeroed();
    assert!(
        array.array.release.is_none(),
        "a zeroed device array is released"
    );
    assert_eq!(array.reserved, [0; 3]);
    let stream = ArrowDeviceArrayStream::zeroed();
    assert!(stream.release.is_none() && stream.get_next.is_none());
    let tensor = DLManagedTensor::zeroed();
    assert!(
        tensor.deleter.is_none()
            && tensor.dl_tensor.data.is_null()
            && tensor.dl_tensor.shape.is_null()
    );
    let api = DLPackExchangeAPI::zeroed();
    assert!(api.header.prev_api.is_null() && api.dltensor_from_py_object_no_sync.is_none());
}
