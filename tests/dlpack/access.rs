//! Typed access to imported tensors: slices, strided reads, and every refusal.

use crate::fixture::dlpack::{dtype, Fixture};
use dlpack_abi::dlpack::{AccessError, Element, LegacyTensor, VersionedTensor};
use dlpack_abi::raw::*;

/// Imports the fixture's versioned struct.
fn import(f: &mut Fixture) -> VersionedTensor {
    // SAFETY: the fixture's struct is live, owned by the test and handed over once.
    unsafe { VersionedTensor::from_raw(f.versioned()) }.unwrap()
}

/// Every scalar `Element` reads back the values the producer wrote, at the right dtype.
fn round_trip<T: Element + PartialEq + std::fmt::Debug>(values: [T; 4], code: DLDataTypeCode) {
    let bits = (std::mem::size_of::<T>() * 8) as u8;
    assert_eq!(T::DTYPE, dtype(code, bits));
    let mut f = Fixture::new(&values, T::DTYPE, &[2, 2]);
    let tensor = import(&mut f);
    let view = tensor.view();
    assert_eq!(view.as_slice::<T>().unwrap(), values);
    assert_eq!(view.get::<T>(&[1, 0]).unwrap(), values[2]);
    assert!(view.iter::<T>().unwrap().eq(values));
    drop(tensor);
    assert_eq!(f.calls(), 1);
}

#[test]
fn every_integer_and_float_width() {
    round_trip([1i8, -2, 3, i8::MIN], kDLInt);
    round_trip([1i16, -2, 3, i16::MIN], kDLInt);
    round_trip([1i32, -2, 3, i32::MIN], kDLInt);
    round_trip([1i64, -2, 3, i64::MIN], kDLInt);
    round_trip([1i128, -2, 3, i128::MIN], kDLInt);
    round_trip([1u8, 2, 3, u8::MAX], kDLUInt);
    round_trip([1u16, 2, 3, u16::MAX], kDLUInt);
    round_trip([1u32, 2, 3, u32::MAX], kDLUInt);
    round_trip([1u64, 2, 3, u64::MAX], kDLUInt);
    round_trip([1u128, 2, 3, u128::MAX], kDLUInt);
    round_trip([1.5f32, -2.0, f32::MAX, f32::MIN_POSITIVE], kDLFloat);
    round_trip([1.5f64, -2.0, f64::MAX, f64::MIN_POSITIVE], kDLFloat);
}

#[cfg(feature = "half")]
#[test]
fn half_types() {
    use half::{bf16, f16};
    round_trip([f16::ONE, f16::MAX, f16::MIN, f16::from_f32(0.5)], kDLFloat);
    round_trip(
        [bf16::ONE, bf16::MAX, bf16::MIN, bf16::from_f32(0.5)],
        kDLBfloat,
    );
}

#[cfg(feature = "num-complex")]
#[test]
fn complex_types() {
    use num_complex::Complex;
    let c32 = |re, im| Complex::<f32>::new(re, im);
    round_trip(
        [c32(1.0, 2.0), c32(-1.0, 0.5), c32(0.0, 0.0), c32(3.0, -4.0)],
        kDLComplex,
    );
    let c64 = |re, im| Complex::<f64>::new(re, im);
    round_trip(
        [c64(1.0, 2.0), c64(-1.0, 0.5), c64(0.0, 0.0), c64(3.0, -4.0)],
        kDLComplex,
    );
    assert_eq!(Complex::<f32>::DTYPE.bits, 64);
}

/// Complex numbers of 16-bit parts: `kDLComplex` 32 (two `f16`s) and `kDLBcomplex` 32 (two
/// `bf16`s, not in a DLPack release yet), 4 bytes an element like any 32-bit code.
#[cfg(all(feature = "alloc", feature = "half", feature = "num-complex"))]
#[test]
fn complex_types_of_16_bit_parts() {
    use half::{bf16, f16};
    use num_complex::Complex;
    let h = |re: f32, im: f32| Complex::new(f16::from_f32(re), f16::from_f32(im));
    round_trip(
        [h(1.0, 2.0), h(-1.0, 0.5), h(0.0, 0.0), h(3.0, -4.0)],
        kDLComplex,
    );
    let b = |re: f32, im: f32| Complex::new(bf16::from_f32(re), bf16::from_f32(im));
    round_trip(
        [b(1.0, 2.0), b(-1.0, 0.5), b(0.0, 0.0), b(3.0, -4.0)],
        kDLBcomplex,
    );
    let dtype = Complex::<bf16>::DTYPE;
    assert_eq!((dtype.code, dtype.bits, dtype.lanes), (kDLBcomplex, 32, 1));
    assert_eq!(dtype.to_string(), "bcomplex32");
    // Sized by the one element rule: 4 tensor elements are 16 bytes.
    let tensor = dlpack_abi::dlpack::Export::new(vec![b(1.0, 0.0); 4], &[4])
        .finish()
        .unwrap();
    assert_eq!(tensor.view().byte_size(), 16);
    assert_eq!(
        tensor.view().get::<Complex<bf16>>(&[3]).unwrap(),
        b(1.0, 0.0)
    );
}

#[test]
fn host_accessible_devices_only() {
    for device_type in [kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged, kDLTPUHost] {
        let mut f = Fixture::f32(&[3]);
        f.dl.device.device_type = device_type;
        let tensor = import(&mut f);
        assert_eq!(
            tensor.view().as_slice::<f32>().unwrap(),
            [0.0, 1.0, 2.0],
            "{device_type:?}"
        );
    }
    for device_type in [
        kDLCUDA,
        kDLOpenCL,
        kDLROCM,
        kDLMetal,
        kDLVulkan,
        kDLTPU,
        kDLAscend,
        DLDeviceType(42),
    ] {
        let mut f = Fixture::f32(&[3]);
        f.dl.device = DLDevice {
            device_type,
            device_id: 2,
        };
        let tensor = import(&mut f);
        let expected = AccessError::NotHostAccessible {
            device: f.dl.device,
        };
        assert_eq!(
            tensor.view().as_slice::<f32>(),
            Err(expected),
            "{device_type:?}"
        );
        assert_eq!(tensor.view().get::<f32>(&[0]), Err(expected));
        assert_eq!(tensor.view().iter::<f32>().err(), Some(expected));
        // The description stays available.
        assert_eq!(tensor.view().shape(), [3]);
    }
    let mut f = Fixture::f32(&[3]);
    f.dl.device.device_type = DLDeviceType(42);
    let error = import(&mut f).view().as_slice::<f32>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "DLTensor.device is DLDeviceType(42):0, whose memory the host cannot read"
    );
    // A TPU tensor (a value not in a release yet) is known, and not host-readable.
    let mut f = Fixture::f32(&[3]);
    f.dl.device.device_type = kDLTPU;
    let error = import(&mut f).view().as_slice::<f32>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "DLTensor.device is tpu:0, whose memory the host cannot read"
    );
}

#[test]
fn unknown_flags_are_reported_and_refuse_typed_access() {
    let mut f = Fixture::f32(&[3]);
    f.flags = 1 << 5 | 1;
    let tensor = import(&mut f);
    assert_eq!(tensor.view().flags().bits(), 1 << 5 | 1);
    let expected = AccessError::UnknownFlags {
        flags: DLPackFlags::from_bits_retain(1 << 5 | 1),
    };
    assert_eq!(tensor.view().as_slice::<f32>(), Err(expected));
    assert_eq!(tensor.view().get::<f32>(&[0]), Err(expected));
    assert!(expected.to_string().contains("flags is 0x21"));
}

#[test]
fn dtype_must_match_exactly() {
    let mut f = Fixture::f32(&[3]);
    let tensor = import(&mut f);
    let mismatch = |requested| AccessError::DtypeMismatch {
        requested,
        found: f32::DTYPE,
    };
    assert_eq!(tensor.view().as_slice::<u32>(), Err(mismatch(u32::DTYPE)));
    assert_eq!(tensor.view().as_slice::<i32>(), Err(mismatch(i32::DTYPE)));
    assert_eq!(tensor.view().get::<f64>(&[0]), Err(mismatch(f64::DTYPE)));

    // Vector lanes and unknown codes have no Element.
    let mut lanes = Fixture::f32(&[4]);
    lanes.dl.dtype.lanes = 2;
    lanes.set_shape(&[2]);
    lanes.set_strides(&[1]);
    let tensor = import(&mut lanes);
    assert!(matches!(
        tensor.view().as_slice::<f32>(),
        Err(AccessError::DtypeMismatch { .. })
    ));
    let mut unknown = Fixture::f32(&[4]);
    unknown.dl.dtype.code = DLDataTypeCode(42);
    let tensor = import(&mut unknown);
    let error = tensor.view().as_slice::<f32>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "DLTensor.dtype is DLDataTypeCode(42) (bits 32, lanes 1), but the requested type is \
         float32"
    );
}

#[test]
fn alignment_is_checked_at_the_real_start() {
    // byte_offset 4 starts at element 1 of an f32 buffer: aligned for f32, not for f64.
    let mut f = Fixture::f32(&[4]);
    f.set_shape(&[3]);
    f.dl.byte_offset = 4;
    let tensor = import(&mut f);
    assert_eq!(tensor.view().as_slice::<f32>().unwrap(), [1.0, 2.0, 3.0]);
    assert_eq!(tensor.view().data_ptr() as usize, f.data_address() + 4);

    let mut f = Fixture::f32(&[3]);
    f.dl.byte_offset = 2;
    let tensor = import(&mut f);
    let expected = AccessError::Misaligned {
        address: f.data_address() + 2,
        align: 4,
    };
    assert_eq!(tensor.view().as_slice::<f32>(), Err(expected));
    assert_eq!(tensor.view().get::<f32>(&[0]), Err(expected));

    // An empty tensor needs no alignment.
    let mut f = Fixture::f32(&[0]);
    f.dl.byte_offset = 1;
    assert_eq!(
        import(&mut f).view().as_slice::<f32>().unwrap(),
        [0.0f32; 0]
    );
}

#[test]
fn slices_need_contiguity_strided_access_does_not() {
    // Column-major 2 x 3 over 0..6.
    let mut f = Fixture::f32(&[2, 3]);
    f.set_strides(&[1, 2]);
    let tensor = import(&mut f);
    let view = tensor.view();
    assert_eq!(view.as_slice::<f32>(), Err(AccessError::NotContiguous));
    assert_eq!(
        view.as_slice_memory_order::<f32>().unwrap(),
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert!(view
        .iter::<f32>()
        .unwrap()
        .eq([0.0, 2.0, 4.0, 1.0, 3.0, 5.0]));
    assert_eq!(view.get::<f32>(&[1, 2]).unwrap(), 5.0);

    // Every other element: neither order.
    let mut f = Fixture::f32(&[6]);
    f.set_shape(&[3]);
    f.set_strides(&[2]);
    let tensor = import(&mut f);
    assert_eq!(
        tensor.view().as_slice_memory_order::<f32>(),
        Err(AccessError::NotContiguous)
    );
    assert!(tensor.view().iter::<f32>().unwrap().eq([0.0, 2.0, 4.0]));
}

#[test]
fn negative_and_zero_strides() {
    // Reversed 2 x 3: start at the last element, walk backwards.
    let mut f = Fixture::f32(&[2, 3]);
    f.set_strides(&[-3, -1]);
    f.dl.byte_offset = 5 * 4;
    let tensor = import(&mut f);
    let view = tensor.view();
    assert!(view
        .iter::<f32>()
        .unwrap()
        .eq([5.0, 4.0, 3.0, 2.0, 1.0, 0.0]));
    assert_eq!(view.get::<f32>(&[0, 0]).unwrap(), 5.0);
    assert_eq!(view.get::<f32>(&[1, 2]).unwrap(), 0.0);
    assert!(!view.is_c_contiguous() && !view.is_f_contiguous());

    // Broadcast a row of 3 to 4 rows.
    let mut f = Fixture::f32(&[3]);
    f.set_shape(&[4, 3]);
    f.set_strides(&[0, 1]);
    let tensor = import(&mut f);
    let all: Vec<f32> = tensor.view().iter::<f32>().unwrap().collect();
    assert_eq!(all, [0.0, 1.0, 2.0].repeat(4));
}

#[test]
fn contiguity_follows_numpy() {
    let layouts: [(&[i64], &[i64], bool, bool); 8] = [
        (&[2, 3], &[3, 1], true, false),
        (&[2, 3], &[1, 2], false, true),
        (&[1, 3], &[7, 1], true, true),  // extent-1 stride ignored
        (&[3, 1], &[1, -5], true, true), // extent-1 stride ignored
        (&[1, 1], &[9, 9], true, true),
        (&[6], &[1], true, true),
        (&[6], &[-1], false, false),
        (&[2, 2], &[2, 2], false, false),
    ];
    for (shape, strides, c, fortran) in layouts {
        let mut f = Fixture::f32(&[6]);
        f.set_shape(shape);
        f.set_strides(strides);
        if strides.iter().any(|&s| s < 0) {
            f.dl.byte_offset = 5 * 4;
        }
        let tensor = import(&mut f);
        let view = tensor.view();
        assert_eq!(
            (view.is_c_contiguous(), view.is_f_contiguous()),
            (c, fortran),
            "{shape:?} {strides:?}"
        );
    }
}

#[test]
fn zero_d_and_empty_tensors() {
    let mut f = Fixture::new(&[42i32], i32::DTYPE, &[]);
    let tensor = import(&mut f);
    let view = tensor.view();
    assert_eq!(view.as_slice::<i32>().unwrap(), [42]);
    assert_eq!(view.get::<i32>(&[]).unwrap(), 42);
    assert!(view.iter::<i32>().unwrap().eq([42]));
    assert_eq!(
        view.get::<i32>(&[0]),
        Err(AccessError::IndexRank { ndim: 0, given: 1 })
    );

    let mut f = Fixture::f32(&[2, 0, 3]);
    f.dl.data = std::ptr::null_mut();
    let tensor = import(&mut f);
    let view = tensor.view();
    assert_eq!(view.as_slice::<f32>().unwrap(), [0.0f32; 0]);
    assert_eq!(view.iter::<f32>().unwrap().len(), 0);
    assert_eq!(
        view.get::<f32>(&[0, 0, 0]),
        Err(AccessError::IndexOutOfBounds {
            dim: 1,
            index: 0,
            extent: 0
        })
    );
}

#[test]
fn get_checks_rank_and_bounds() {
    let mut f = Fixture::f32(&[2, 3]);
    let tensor = import(&mut f);
    let view = tensor.view();
    assert_eq!(
        view.get::<f32>(&[1]),
        Err(AccessError::IndexRank { ndim: 2, given: 1 })
    );
    assert_eq!(
        view.get::<f32>(&[2, 0]),
        Err(AccessError::IndexOutOfBounds {
            dim: 0,
            index: 2,
            extent: 2
        })
    );
    assert_eq!(
        view.get::<f32>(&[0, usize::MAX]),
        Err(AccessError::IndexOutOfBounds {
            dim: 1,
            index: usize::MAX,
            extent: 3
        })
    );
    assert_eq!(view.get::<f32>(&[1, 1]).unwrap(), 4.0);
}

#[test]
fn safe_mutable_access_needs_a_tensor_the_consumer_holds_alone() {
    // IS_COPIED: the spec makes the memory the consumer's alone.
    let mut f = Fixture::f32(&[3]);
    f.flags = DLPackFlags::IS_COPIED.bits();
    let mut tensor = import(&mut f);
    tensor
        .as_mut_slice::<f32>()
        .unwrap()
        .copy_from_slice(&[7.0, 8.0, 9.0]);
    assert_eq!(tensor.view().as_slice::<f32>().unwrap(), [7.0, 8.0, 9.0]);

    // Writable but not IS_COPIED: the producer may have handed the memory to others too.
    let mut f = Fixture::f32(&[3]);
    let mut tensor = import(&mut f);
    assert_eq!(tensor.as_mut_slice::<f32>(), Err(AccessError::NotExclusive));

    for flags in [
        DLPackFlags::READ_ONLY,
        DLPackFlags::READ_ONLY | DLPackFlags::IS_COPIED,
    ] {
        let mut f = Fixture::f32(&[3]);
        f.flags = flags.bits();
        let mut tensor = import(&mut f);
        assert_eq!(tensor.as_mut_slice::<f32>(), Err(AccessError::ReadOnly));
        // SAFETY: refused before any slice exists.
        let unchecked = unsafe { tensor.as_mut_slice_unchecked::<f32>() };
        assert_eq!(unchecked, Err(AccessError::ReadOnly));
        assert_eq!(tensor.view().as_slice::<f32>().unwrap(), [0.0, 1.0, 2.0]);
    }

    // Other refusals apply as for reading.
    let mut f = Fixture::f32(&[2, 3]);
    f.flags = DLPackFlags::IS_COPIED.bits();
    f.set_strides(&[1, 2]);
    let mut tensor = import(&mut f);
    assert_eq!(
        tensor.as_mut_slice::<f32>(),
        Err(AccessError::NotContiguous)
    );
    assert!(matches!(
        tensor.as_mut_slice::<u8>(),
        Err(AccessError::NotContiguous)
    ));

    let mut f = Fixture::f32(&[3]);
    f.flags = DLPackFlags::IS_COPIED.bits();
    f.dl.device.device_type = kDLCUDA;
    let mut tensor = import(&mut f);
    assert!(matches!(
        tensor.as_mut_slice::<f32>(),
        Err(AccessError::NotHostAccessible { .. })
    ));
}

/// Regression (two live `&mut [T]` over the same memory from safe code): a producer that hands
/// the same writable memory out twice (NumPy does, for one array imported twice) gives two
/// tensors; neither may hand out a safe mutable slice.
#[test]
fn the_same_memory_imported_twice_gives_no_safe_mutable_slice() {
    let mut first = Fixture::f32(&[3]);
    let mut second = Fixture::f32(&[3]);
    second.dl.data = first.dl.data; // the same memory, handed out again
    let mut a = import(&mut first);
    let mut b = import(&mut second);
    assert_eq!(a.view().data_ptr(), b.view().data_ptr());
    assert_eq!(a.as_mut_slice::<f32>(), Err(AccessError::NotExclusive));
    assert_eq!(b.as_mut_slice::<f32>(), Err(AccessError::NotExclusive));
    // Reads are shared and fine.
    assert_eq!(
        a.view().as_slice::<f32>().unwrap(),
        b.view().as_slice::<f32>().unwrap()
    );
}

#[test]
fn unchecked_mutable_access_is_unsafe_but_checked() {
    let mut f = Fixture::f32(&[3]);
    // SAFETY: handed over once.
    let mut tensor = unsafe { LegacyTensor::from_raw(f.legacy()) }.unwrap();
    // SAFETY: this test's producer allows writes and nothing else holds the memory.
    unsafe { tensor.as_mut_slice_unchecked::<f32>() }.unwrap()[0] = -1.0;
    assert_eq!(tensor.view().as_slice::<f32>().unwrap(), [-1.0, 1.0, 2.0]);
    // SAFETY: as above; the dtype check still applies.
    let wrong = unsafe { tensor.as_mut_slice_unchecked::<i32>() };
    assert!(matches!(wrong, Err(AccessError::DtypeMismatch { .. })));
    drop(tensor);
    assert_eq!(f.calls(), 1);

    // A versioned tensor that is not IS_COPIED, written under the caller's promise.
    let mut f = Fixture::f32(&[2]);
    let mut tensor = import(&mut f);
    // SAFETY: as above.
    unsafe { tensor.as_mut_slice_unchecked::<f32>() }.unwrap()[1] = 5.0;
    assert_eq!(tensor.view().as_slice::<f32>().unwrap(), [0.0, 5.0]);
}

#[test]
fn debug_output_names_known_values_and_numbers_unknown_ones() {
    let mut f = Fixture::f32(&[2]);
    f.dl.device.device_type = DLDeviceType(42);
    let tensor = import(&mut f);
    let debug = format!("{tensor:?}");
    assert!(debug.contains("device_type: DLDeviceType(42)"), "{debug}");
    assert!(debug.contains("code: kDLFloat"), "{debug}");
    assert!(debug.contains("shape: [2]"), "{debug}");
}

#[test]
fn device_addresses_have_every_check_but_host_access() {
    // Addressable devices: the first element, wherever the memory is.
    for device_type in [kDLCPU, kDLCUDA, kDLCUDAManaged, kDLROCM, kDLOneAPI] {
        let mut f = Fixture::f32(&[4]);
        f.set_shape(&[3]);
        f.dl.byte_offset = 4;
        f.dl.device.device_type = device_type;
        let tensor = import(&mut f);
        let view = tensor.view();
        let address = view.device_ptr::<f32>().unwrap();
        assert_eq!(address as usize, f.data_address() + 4, "{device_type:?}");
        // Where the host may read, the host's pointer is the same one.
        if device_type.is_host_accessible() {
            assert_eq!(view.typed_ptr::<f32>().unwrap(), address);
        }
        assert_eq!(
            view.device_ptr::<i32>(),
            Err(AccessError::DtypeMismatch {
                requested: i32::DTYPE,
                found: f32::DTYPE
            })
        );
    }
    // Handles are not addresses.
    for device_type in [kDLOpenCL, kDLVulkan, kDLMetal, kDLTPU, DLDeviceType(42)] {
        let mut f = Fixture::f32(&[3]);
        f.dl.device.device_type = device_type;
        let tensor = import(&mut f);
        assert_eq!(
            tensor.view().device_ptr::<f32>(),
            Err(AccessError::NotAddressable {
                device: f.dl.device
            })
        );
    }
    // Unknown flags and misalignment, as for the host.
    let mut f = Fixture::f32(&[3]);
    f.dl.device.device_type = kDLCUDA;
    f.flags = 1 << 5;
    let tensor = import(&mut f);
    assert!(matches!(
        tensor.view().device_ptr::<f32>(),
        Err(AccessError::UnknownFlags { .. })
    ));
    let mut f = Fixture::f32(&[3]);
    f.dl.device.device_type = kDLCUDA;
    f.dl.byte_offset = 2;
    let tensor = import(&mut f);
    assert_eq!(
        tensor.view().device_ptr::<f32>(),
        Err(AccessError::Misaligned {
            address: f.data_address() + 2,
            align: 4
        })
    );
}

#[test]
fn writable_device_addresses_need_a_tensor_held_alone() {
    let cases = [
        (DLPackFlags::IS_COPIED.bits(), Ok(())),
        (0, Err(AccessError::NotExclusive)),
        (DLPackFlags::READ_ONLY.bits(), Err(AccessError::ReadOnly)),
    ];
    for (flags, expected) in cases {
        let mut f = Fixture::f32(&[3]);
        f.dl.device.device_type = kDLCUDA;
        f.flags = flags;
        let mut tensor = import(&mut f);
        let address = tensor.device_mut_ptr::<f32>().map(|ptr| ptr as usize);
        assert_eq!(
            address,
            expected.map(|()| f.data_address()),
            "flags {flags}"
        );
    }
}
