//! Import of foreign tensors: the malformed-tensor table, the accepted edge cases, and ownership
//! (the deleter runs exactly once on every path).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use crate::fixture::dlpack::{dtype, Fixture};
use dlpack_abi::dlpack::{ImportError, LegacyTensor, VersionedTensor, MAX_NDIM};
use dlpack_abi::raw::*;

/// One malformed tensor: how to break a valid 2 x 3 f32 fixture, the exact error, and a piece of
/// the message (which must name the field and the value).
struct Case {
    name: &'static str,
    legacy: bool,
    setup: fn(&mut Fixture),
    expected: fn(&Fixture) -> ImportError,
    message: &'static str,
}

const fn case(
    name: &'static str,
    setup: fn(&mut Fixture),
    expected: fn(&Fixture) -> ImportError,
    message: &'static str,
) -> Case {
    Case {
        name,
        legacy: false,
        setup,
        expected,
        message,
    }
}

const fn legacy(
    name: &'static str,
    setup: fn(&mut Fixture),
    expected: fn(&Fixture) -> ImportError,
    message: &'static str,
) -> Case {
    Case {
        name,
        legacy: true,
        setup,
        expected,
        message,
    }
}

/// A pointer that must never be read: importing reads it only if a rule is broken.
fn poison<T>() -> *mut T {
    ptr::NonNull::dangling().as_ptr()
}

/// A stride in elements whose f32 byte reach is a quarter of the address space.
fn quarter_space_stride() -> i64 {
    1i64 << (usize::BITS - 4)
}

fn cases() -> Vec<Case> {
    vec![
        // ---- version rule ----
        case(
            "major 0: nothing but version and deleter is read",
            |f| {
                f.version = DLPackVersion { major: 0, minor: 8 };
                f.dl.ndim = 3;
                f.dl.shape = poison();
                f.dl.strides = poison();
            },
            |_| ImportError::UnsupportedVersion {
                found: DLPackVersion { major: 0, minor: 8 },
            },
            "version is 0.8",
        ),
        case(
            "major 2 with a garbage tensor",
            |f| {
                f.version = DLPackVersion { major: 2, minor: 0 };
                f.dl.ndim = -7;
                f.dl.shape = poison();
                f.dl.dtype.lanes = 0;
            },
            |_| ImportError::UnsupportedVersion {
                found: DLPackVersion { major: 2, minor: 0 },
            },
            "version is 2.0",
        ),
        case(
            "major u32::MAX",
            |f| {
                f.version = DLPackVersion {
                    major: u32::MAX,
                    minor: 3,
                }
            },
            |_| ImportError::UnsupportedVersion {
                found: DLPackVersion {
                    major: u32::MAX,
                    minor: 3,
                },
            },
            "4294967295.3",
        ),
        // ---- ndim ----
        case(
            "ndim -1",
            |f| f.dl.ndim = -1,
            |_| ImportError::NegativeNdim { ndim: -1 },
            "ndim is -1",
        ),
        case(
            "ndim i32::MIN",
            |f| f.dl.ndim = i32::MIN,
            |_| ImportError::NegativeNdim { ndim: i32::MIN },
            "ndim is -2147483648",
        ),
        case(
            "ndim MAX_NDIM + 1",
            |f| f.set_shape(&[1; MAX_NDIM + 1]),
            |_| ImportError::TooManyDims { ndim: 65 },
            "ndim is 65, above the maximum of 64",
        ),
        case(
            "ndim i32::MAX (shape not read)",
            |f| {
                f.dl.ndim = i32::MAX;
                f.dl.shape = poison();
            },
            |_| ImportError::TooManyDims { ndim: i32::MAX },
            "ndim is 2147483647",
        ),
        // ---- shape ----
        case(
            "shape NULL with ndim 2",
            |f| f.dl.shape = ptr::null_mut(),
            |_| ImportError::NullShape { ndim: 2 },
            "shape is NULL but DLTensor.ndim is 2",
        ),
        case(
            "negative extent",
            |f| f.set_shape(&[2, -3]),
            |_| ImportError::NegativeExtent { dim: 1, extent: -3 },
            "shape[1] is -3",
        ),
        case(
            "extent i64::MIN",
            |f| f.set_shape(&[i64::MIN]),
            |_| ImportError::NegativeExtent {
                dim: 0,
                extent: i64::MIN,
            },
            "shape[0] is -9223372036854775808",
        ),
        // The size is counted from the last dimension: the error names the first one (from the
        // end) at which elements or bytes no longer fit; on 32-bit targets that comes sooner.
        case(
            "element count overflows usize",
            |f| f.set_shape(&[1 << 32, 1 << 32]),
            |_| ImportError::SizeOverflow {
                dim: if cfg!(target_pointer_width = "64") {
                    0
                } else {
                    1
                },
                extent: 1 << 32,
            },
            "] is 4294967296: the extents from there to the last",
        ),
        case(
            "byte size overflows isize",
            |f| f.set_shape(&[1 << 61]),
            |_| ImportError::SizeOverflow {
                dim: 0,
                extent: 1 << 61,
            },
            "shape[0] is 2305843009213693952",
        ),
        case(
            "empty tensor whose other extents overflow",
            |f| f.set_shape(&[0, 1 << 40, 1 << 40]),
            |_| ImportError::SizeOverflow {
                dim: if cfg!(target_pointer_width = "64") {
                    1
                } else {
                    2
                },
                extent: 1 << 40,
            },
            "more elements or bytes than fit in isize",
        ),
        // ---- strides ----
        case(
            "strides NULL from a 1.3 producer",
            |f| f.dl.strides = ptr::null_mut(),
            |_| ImportError::NullStrides {
                ndim: 2,
                version: DLPackVersion::CURRENT,
            },
            "strides is NULL with DLTensor.ndim 2; producers of version 1.3",
        ),
        case(
            "strides NULL from a 1.2 producer",
            |f| {
                f.version = DLPackVersion { major: 1, minor: 2 };
                f.dl.strides = ptr::null_mut();
            },
            |_| ImportError::NullStrides {
                ndim: 2,
                version: DLPackVersion { major: 1, minor: 2 },
            },
            "version 1.2",
        ),
        case(
            "stride i64::MAX",
            |f| f.set_strides(&[i64::MAX, 1]),
            |_| ImportError::StridesOverflow {
                dim: 0,
                stride: i64::MAX,
            },
            "strides[0] is 9223372036854775807",
        ),
        case(
            "negative stride reaching below address 0",
            |f| f.set_strides(&[-(1 << 60), 1]),
            |_| ImportError::StridesOverflow {
                dim: 0,
                stride: -(1 << 60),
            },
            "strides[0] is -1152921504606846976",
        ),
        case(
            "strides fine alone, too far together",
            |f| {
                // A fixed address (never read), so that only the span decides.
                f.dl.data = ptr::NonNull::<f32>::dangling().as_ptr().cast();
                let s = quarter_space_stride();
                f.set_shape(&[2, 2]);
                f.set_strides(&[s, s]);
            },
            |_| ImportError::StridesOverflow {
                dim: 1,
                stride: quarter_space_stride(),
            },
            "strides[1]",
        ),
        // ---- data and byte_offset ----
        case(
            "byte_offset u64::MAX",
            |f| f.dl.byte_offset = u64::MAX,
            |_| ImportError::ByteOffsetOverflow {
                byte_offset: u64::MAX,
            },
            "byte_offset is 18446744073709551615",
        ),
        case(
            "data + byte_offset wraps to 0",
            |f| f.dl.byte_offset = (usize::MAX - f.data_address()) as u64 + 1,
            |f| ImportError::ByteOffsetOverflow {
                byte_offset: f.dl.byte_offset,
            },
            "data + byte_offset overflows",
        ),
        case(
            "data NULL with 6 elements",
            |f| f.dl.data = ptr::null_mut(),
            |_| ImportError::NullData { elements: 6 },
            "data is NULL but the tensor has 6 elements",
        ),
        case(
            "data NULL for a 0-d tensor (one element)",
            |f| {
                f.set_shape(&[]);
                f.dl.data = ptr::null_mut();
            },
            |_| ImportError::NullData { elements: 1 },
            "1 elements",
        ),
        // ---- dtype ----
        case(
            "lanes 0",
            |f| f.dl.dtype.lanes = 0,
            |f| ImportError::ZeroLanes { dtype: f.dl.dtype },
            "lanes is 0",
        ),
        case(
            "bits 0",
            |f| f.dl.dtype.bits = 0,
            |f| ImportError::ZeroBits { dtype: f.dl.dtype },
            "dtype is float0: bits is 0",
        ),
        case(
            "fp4 with 8 bits",
            |f| f.dl.dtype = dtype(kDLFloat4_e2m1fn, 8),
            |f| ImportError::SubByteBits {
                dtype: f.dl.dtype,
                expected: 4,
            },
            "dtype is float4_e2m1fn (bits 8): this code requires bits = 4",
        ),
        case(
            "fp6 e2m3 with 8 bits",
            |f| f.dl.dtype = dtype(kDLFloat6_e2m3fn, 8),
            |f| ImportError::SubByteBits {
                dtype: f.dl.dtype,
                expected: 6,
            },
            "requires bits = 6",
        ),
        case(
            "fp6 e3m2 with 4 bits, padded flag set",
            |f| {
                f.dl.dtype = dtype(kDLFloat6_e3m2fn, 4);
                f.flags = DLPackFlags::IS_SUBBYTE_TYPE_PADDED.bits();
            },
            |f| ImportError::SubByteBits {
                dtype: f.dl.dtype,
                expected: 6,
            },
            "float6_e3m2fn (bits 4)",
        ),
        // ---- combinations: the first rule in validation order wins ----
        case(
            "negative ndim and NULL shape",
            |f| {
                f.dl.ndim = -2;
                f.dl.shape = ptr::null_mut();
            },
            |_| ImportError::NegativeNdim { ndim: -2 },
            "ndim is -2",
        ),
        case(
            "zero lanes and zero bits",
            |f| {
                f.dl.dtype = DLDataType {
                    code: kDLInt,
                    bits: 0,
                    lanes: 0,
                }
            },
            |f| ImportError::ZeroLanes { dtype: f.dl.dtype },
            "lanes is 0",
        ),
        case(
            "negative extent, NULL data and NULL strides",
            |f| {
                f.set_shape(&[4, -1]);
                f.dl.data = ptr::null_mut();
                f.dl.strides = ptr::null_mut();
            },
            |_| ImportError::NegativeExtent { dim: 1, extent: -1 },
            "shape[1] is -1",
        ),
        case(
            "NULL data and NULL strides from a 1.3 producer",
            |f| {
                f.dl.data = ptr::null_mut();
                f.dl.strides = ptr::null_mut();
            },
            |_| ImportError::NullStrides {
                ndim: 2,
                version: DLPackVersion::CURRENT,
            },
            "strides is NULL",
        ),
        // ---- legacy tensors ----
        legacy(
            "legacy: ndim -3",
            |f| f.dl.ndim = -3,
            |_| ImportError::NegativeNdim { ndim: -3 },
            "ndim is -3",
        ),
        legacy(
            "legacy: NULL shape",
            |f| f.dl.shape = ptr::null_mut(),
            |_| ImportError::NullShape { ndim: 2 },
            "shape is NULL",
        ),
        legacy(
            "legacy: NULL strides accepted, NULL data not",
            |f| {
                f.dl.strides = ptr::null_mut();
                f.dl.data = ptr::null_mut();
            },
            |_| ImportError::NullData { elements: 6 },
            "data is NULL",
        ),
    ]
}

#[test]
fn malformed_tensors_are_refused_with_the_exact_error_and_deleted_once() {
    let cases = cases();
    assert!(cases.len() >= 25, "the table must keep at least 25 cases");
    for case in cases {
        let mut f = Fixture::f32(&[2, 3]);
        (case.setup)(&mut f);
        let expected = (case.expected)(&f);
        let result = if case.legacy {
            // SAFETY: the fixture's struct is live, owned by the test and handed over once.
            unsafe { LegacyTensor::from_raw(f.legacy()) }.map(drop)
        } else {
            // SAFETY: as above.
            unsafe { VersionedTensor::from_raw(f.versioned()) }.map(drop)
        };
        assert_eq!(result, Err(expected), "{}", case.name);
        assert_eq!(f.calls(), 1, "{}: deleter calls", case.name);
        let message = expected.to_string();
        assert!(
            message.contains(case.message),
            "{}: message {message:?}",
            case.name
        );
    }
}

#[test]
fn null_pointer_is_refused_without_a_deleter_call() {
    // SAFETY: NULL is allowed by the contract.
    let result = unsafe { VersionedTensor::from_raw(ptr::null_mut()) };
    assert_eq!(result.unwrap_err(), ImportError::NullTensor);
    // SAFETY: as above.
    let result = unsafe { LegacyTensor::from_raw(ptr::null_mut()) };
    assert_eq!(result.unwrap_err(), ImportError::NullTensor);
}

/// Edge cases the rules allow: each imports, reports what the producer sent, and is deleted once.
#[test]
fn accepted_edge_cases() {
    type Check = fn(&dlpack_abi::dlpack::TensorView<'_>);
    type Accepted = (&'static str, fn(&mut Fixture), Check);
    let accepted: Vec<Accepted> = vec![
        (
            "newer minor version",
            |f| {
                f.version = DLPackVersion {
                    major: 1,
                    minor: 99,
                }
            },
            |v| {
                assert_eq!(
                    v.version(),
                    Some(DLPackVersion {
                        major: 1,
                        minor: 99
                    })
                )
            },
        ),
        (
            "NULL strides from a 1.1 producer are compact row-major",
            |f| {
                f.version = DLPackVersion { major: 1, minor: 1 };
                f.dl.strides = ptr::null_mut();
            },
            |v| {
                assert!(v.strides().is_synthesised());
                assert_eq!(v.strides(), [3, 1]);
                assert!(v.is_c_contiguous());
            },
        ),
        (
            "0-d tensor with NULL shape and strides",
            |f| {
                f.set_shape(&[]);
                f.dl.strides = ptr::null_mut();
            },
            |v| {
                assert_eq!((v.ndim(), v.element_count(), v.shape()), (0, 1, &[][..]));
                assert!(v.is_c_contiguous() && v.is_f_contiguous());
            },
        ),
        (
            "empty tensor with NULL data",
            |f| {
                f.set_shape(&[3, 0]);
                f.dl.data = ptr::null_mut();
            },
            |v| {
                assert_eq!((v.element_count(), v.byte_size()), (0, 0));
                assert!(v.is_c_contiguous() && v.is_f_contiguous());
            },
        ),
        (
            "empty tensor with garbage strides",
            |f| {
                f.set_shape(&[0, 5]);
                f.set_strides(&[i64::MAX, i64::MIN]);
            },
            |v| assert!(v.is_c_contiguous() && v.is_f_contiguous()),
        ),
        (
            "unknown device type is kept",
            |f| {
                f.dl.device = DLDevice {
                    device_type: DLDeviceType(42),
                    device_id: 3,
                }
            },
            |v| assert_eq!(format!("{:?}", v.device().device_type), "DLDeviceType(42)"),
        ),
        (
            "unknown dtype code is kept",
            |f| f.dl.dtype = dtype(DLDataTypeCode(18), 32),
            |v| assert_eq!(v.dtype().code, DLDataTypeCode(18)),
        ),
        (
            "unknown flag bits are kept",
            |f| f.flags = 1 << 63 | 1,
            |v| assert_eq!(v.flags().bits(), 1 << 63 | 1),
        ),
        (
            "MAX_NDIM dimensions",
            |f| {
                f.set_shape(&[1; MAX_NDIM]);
                f.set_strides(&[1; MAX_NDIM]);
            },
            |v| assert_eq!((v.ndim(), v.element_count()), (MAX_NDIM, 1)),
        ),
        (
            "extent-1 dimension with a huge stride",
            |f| {
                f.set_shape(&[1, 6]);
                f.set_strides(&[i64::MAX, 1]);
            },
            |v| assert!(v.is_c_contiguous() && v.is_f_contiguous()),
        ),
        (
            "negative strides with byte_offset at the last element",
            |f| {
                f.set_shape(&[2, 3]);
                f.set_strides(&[-3, -1]);
                f.dl.byte_offset = 20;
            },
            |v| {
                assert!(!v.is_c_contiguous());
                assert_eq!(v.data_ptr() as usize, v.raw().data as usize + 20);
            },
        ),
        (
            "zero strides (broadcast)",
            |f| f.set_strides(&[0, 1]),
            |v| assert!(!v.is_c_contiguous() && !v.is_f_contiguous()),
        ),
        (
            "packed fp4: ceil(6 * 4 / 8) bytes",
            |f| f.dl.dtype = dtype(kDLFloat4_e2m1fn, 4),
            |v| assert_eq!((v.byte_size(), v.is_packed()), (3, true)),
        ),
        (
            "packed fp6 with an odd count: ceil(5 * 6 / 8) bytes",
            |f| {
                f.set_shape(&[5]);
                f.set_strides(&[1]);
                f.dl.dtype = dtype(kDLFloat6_e2m3fn, 6);
            },
            |v| assert_eq!(v.byte_size(), 4),
        ),
        (
            "padded fp4: one byte per element",
            |f| {
                f.dl.dtype = dtype(kDLFloat4_e2m1fn, 4);
                f.flags = DLPackFlags::IS_SUBBYTE_TYPE_PADDED.bits();
            },
            |v| assert_eq!((v.byte_size(), v.is_packed()), (6, false)),
        ),
        (
            "vector dtype: f32 x 4 lanes",
            |f| {
                f.dl.dtype = DLDataType {
                    code: kDLFloat,
                    bits: 32,
                    lanes: 4,
                }
            },
            |v| assert_eq!(v.byte_size(), 6 * 16),
        ),
        (
            "non-addressable device with a byte_offset",
            |f| {
                f.dl.device = DLDevice {
                    device_type: kDLOpenCL,
                    device_id: 1,
                };
                f.dl.byte_offset = 256;
            },
            |v| assert_eq!(v.raw().byte_offset, 256),
        ),
    ];
    for (name, setup, check) in accepted {
        let mut f = Fixture::f32(&[2, 3]);
        setup(&mut f);
        {
            // SAFETY: the fixture's struct is live, owned by the test and handed over once.
            let tensor = unsafe { VersionedTensor::from_raw(f.versioned()) }
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            check(&tensor.view());
            assert_eq!(f.calls(), 0, "{name}: deleter ran early");
        }
        assert_eq!(f.calls(), 1, "{name}: deleter calls");
    }
}

#[test]
fn legacy_null_strides_are_compact_row_major() {
    let mut f = Fixture::f32(&[2, 3]);
    f.dl.strides = ptr::null_mut();
    // SAFETY: the fixture's struct is live, owned by the test and handed over once.
    let tensor = unsafe { LegacyTensor::from_raw(f.legacy()) }.unwrap();
    let view = tensor.view();
    assert_eq!(view.strides(), [3, 1]);
    assert_eq!(view.version(), None);
    assert!(view.flags().is_empty());
    assert_eq!(
        view.as_slice::<f32>().unwrap(),
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    drop(tensor);
    assert_eq!(f.calls(), 1);
}

// ---- ownership ----

#[test]
fn drop_calls_the_deleter_once() {
    let mut f = Fixture::f32(&[4]);
    // SAFETY: handed over once.
    let tensor = unsafe { VersionedTensor::from_raw(f.versioned()) }.unwrap();
    assert_eq!(f.calls(), 0);
    drop(tensor);
    assert_eq!(f.calls(), 1);
}

#[test]
fn into_raw_gives_ownership_back_and_reimport_deletes_once() {
    let mut f = Fixture::f32(&[4]);
    // SAFETY: handed over once.
    let tensor = unsafe { VersionedTensor::from_raw(f.versioned()) }.unwrap();
    let raw = tensor.into_raw();
    assert_eq!(raw, f.versioned());
    assert_eq!(f.calls(), 0);
    // SAFETY: `into_raw` gave ownership back; handed over again, once.
    let again = unsafe { VersionedTensor::from_raw(raw) }.unwrap();
    assert_eq!(again.view().element_count(), 4);
    drop(again);
    assert_eq!(f.calls(), 1);

    let mut legacy = Fixture::f32(&[4]);
    // SAFETY: handed over once.
    let raw = unsafe { LegacyTensor::from_raw(legacy.legacy()) }
        .unwrap()
        .into_raw();
    assert_eq!(legacy.calls(), 0);
    // SAFETY: given back by `into_raw`.
    drop(unsafe { LegacyTensor::from_raw(raw) }.unwrap());
    assert_eq!(legacy.calls(), 1);
}

#[test]
fn version_mismatch_calls_only_the_deleter() {
    let mut f = Fixture::f32(&[2, 3]);
    f.version = DLPackVersion { major: 2, minor: 0 };
    let raw = f.versioned();
    // Everything after `flags` is unreadable garbage under another major.
    // SAFETY: the fixture owns this struct; nothing else uses it now.
    unsafe {
        (*raw).dl_tensor.ndim = 5;
        (*raw).dl_tensor.shape = poison();
        (*raw).dl_tensor.strides = poison();
        (*raw).dl_tensor.data = poison();
    }
    // SAFETY: handed over once; under major 2 only the prefix may be read.
    let error = unsafe { VersionedTensor::from_raw(raw) }.unwrap_err();
    assert_eq!(
        error,
        ImportError::UnsupportedVersion {
            found: DLPackVersion { major: 2, minor: 0 }
        }
    );
    assert_eq!(f.calls(), 1);
}

#[test]
fn a_panic_while_the_wrapper_is_alive_still_deletes_once() {
    let mut f = Fixture::f32(&[4]);
    let raw = f.versioned();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: handed over once.
        let tensor = unsafe { VersionedTensor::from_raw(raw) }.unwrap();
        let sum: f32 = tensor.view().as_slice::<f32>().unwrap().iter().sum();
        assert_eq!(sum, 6.0);
        panic!("user code fails while holding the tensor");
    }));
    assert!(outcome.is_err());
    assert_eq!(f.calls(), 1);

    let mut legacy = Fixture::f32(&[4]);
    let raw = legacy.legacy();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: handed over once.
        let _tensor = unsafe { LegacyTensor::from_raw(raw) }.unwrap();
        panic!("user code fails while holding the tensor");
    }));
    assert!(outcome.is_err());
    assert_eq!(legacy.calls(), 1);
}

#[test]
fn a_null_deleter_is_legal() {
    let mut f = Fixture::f32(&[4]);
    let raw = f.versioned();
    // SAFETY: the fixture owns the struct; nothing else uses it now.
    unsafe { (*raw).deleter = None };
    // SAFETY: handed over once.
    let tensor = unsafe { VersionedTensor::from_raw(raw) }.unwrap();
    assert_eq!(tensor.view().element_count(), 4);
    drop(tensor);
    assert_eq!(f.calls(), 0);
    // A refused tensor with a NULL deleter is refused just the same.
    let mut bad = Fixture::f32(&[4]);
    bad.dl.ndim = -1;
    let raw = bad.versioned();
    // SAFETY: as above.
    unsafe { (*raw).deleter = None };
    // SAFETY: handed over once.
    let error = unsafe { VersionedTensor::from_raw(raw) }.unwrap_err();
    assert_eq!(error, ImportError::NegativeNdim { ndim: -1 });
}

#[test]
fn the_wrapper_is_send_and_its_deleter_may_run_on_another_thread() {
    let mut f = Fixture::f32(&[4]);
    // SAFETY: handed over once.
    let tensor = unsafe { VersionedTensor::from_raw(f.versioned()) }.unwrap();
    std::thread::spawn(move || {
        assert_eq!(tensor.view().as_slice::<f32>().unwrap()[3], 3.0);
        drop(tensor);
    })
    .join()
    .unwrap();
    assert_eq!(f.calls(), 1);
}

/// A producer whose deleter frees the struct and its context, as real ones do: under Miri this
/// proves there is no leak, double free or use after free.
#[test]
fn a_freeing_deleter_frees_everything() {
    struct Ctx {
        _data: Vec<i32>,
        shape: [i64; 1],
    }
    unsafe extern "C" fn free(t: *mut DLManagedTensorVersioned) {
        // SAFETY: `t` and its context were made by `Box::into_raw` below, and this runs once.
        unsafe {
            let t = Box::from_raw(t);
            drop(Box::from_raw(t.manager_ctx.cast::<Ctx>()));
        }
    }
    // The first tensor is imported and dropped, the second refused (zero lanes).
    for lanes in [1, 0] {
        // Pointers into the context are taken after `Box::into_raw`, so they stay valid.
        let ctx = Box::into_raw(Box::new(Ctx {
            _data: vec![1, 2, 3],
            shape: [3],
        }));
        // SAFETY: `ctx` is live and only reached through this pointer.
        let (data, shape) = unsafe { ((*ctx)._data.as_mut_ptr(), ptr::addr_of_mut!((*ctx).shape)) };
        let dl_tensor = DLTensor {
            data: data.cast(),
            device: DLDevice {
                device_type: kDLCPU,
                device_id: 0,
            },
            ndim: 1,
            dtype: DLDataType {
                code: kDLInt,
                bits: 32,
                lanes,
            },
            shape: shape.cast(),
            strides: ptr::null_mut(),
            byte_offset: 0,
        };
        let raw = Box::into_raw(Box::new(DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 0 },
            manager_ctx: ctx.cast(),
            deleter: Some(free),
            flags: 0,
            dl_tensor,
        }));
        // SAFETY: handed over once; the deleter frees it.
        match unsafe { VersionedTensor::from_raw(raw) } {
            Ok(tensor) => assert_eq!(tensor.view().as_slice::<i32>().unwrap(), [1, 2, 3]),
            Err(error) => assert!(matches!(error, ImportError::ZeroLanes { .. })),
        }
    }
}

/// `validate` never takes ownership: a refused tensor's deleter has not run (its holder still
/// owns it), a dropped `Validated` runs nothing, and `take` makes the one owner whose drop runs
/// the deleter once. `call_deleter` runs it once, for a holder that never imports.
#[test]
fn validate_leaves_ownership_until_take() {
    use core::ptr::NonNull;

    let mut refused = Fixture::f32(&[2]);
    refused.dl.ndim = -1;
    let raw = NonNull::new(refused.versioned()).unwrap();
    // SAFETY: the fixture's struct is live and unwritten while it is validated.
    let error = unsafe { VersionedTensor::validate(raw) }.unwrap_err();
    assert_eq!(error, ImportError::NegativeNdim { ndim: -1 });
    assert_eq!(
        refused.calls(),
        0,
        "a refusal leaves the tensor to its holder"
    );
    // SAFETY: still the holder's, its deleter not run: the holder frees it, once.
    unsafe { dlpack_abi::dlpack::call_deleter(raw) };
    assert_eq!(refused.calls(), 1);

    let mut good = Fixture::f32(&[2]);
    let raw = NonNull::new(good.versioned()).unwrap();
    {
        // SAFETY: as above.
        let _checked = unsafe { VersionedTensor::validate(raw) }.unwrap();
    } // dropped here
    assert_eq!(good.calls(), 0, "a dropped Validated owns nothing");
    // SAFETY: as above; ownership passes here, once.
    let tensor = unsafe { VersionedTensor::validate(raw).unwrap().take() };
    assert_eq!(tensor.view().shape(), [2]);
    assert_eq!(good.calls(), 0);
    drop(tensor);
    assert_eq!(good.calls(), 1);
}
