//! `HostSlice::from_raw`, the typed import, against what it stands for: `from_raw` followed by
//! `as_slice`, on producers' tensors that leave the common case one way each, with the deleter
//! counted on every path.

use dlpack_abi::dlpack::{
    AccessError, Element, HostSlice, ImportError, LegacyTensor, TensorError, VersionedTensor,
};
use dlpack_abi::raw::*;

use crate::fixture::dlpack::{dtype, Fixture};

/// One way to leave the common case (a compact 2 x 3 f32 CPU tensor), or none.
#[derive(Clone, Copy, Debug)]
enum Change {
    None,
    Dtype(DLDataType),
    Device(DLDeviceType),
    Flags(u64),
    Strides(&'static [i64]),
    NullStrides(DLPackVersion),
    Shape(&'static [i64]),
    ByteOffset(u64),
    Version(DLPackVersion),
}

fn fixture(change: Change) -> Fixture {
    let mut f = Fixture::f32(&[2, 3]);
    match change {
        Change::None => {}
        Change::Dtype(dtype) => f.dl.dtype = dtype,
        Change::Device(device_type) => f.dl.device.device_type = device_type,
        Change::Flags(flags) => f.flags = flags,
        Change::Strides(strides) => f.set_strides(strides),
        Change::NullStrides(version) => {
            f.version = version;
            f.dl.strides = std::ptr::null_mut();
        }
        Change::Shape(shape) => {
            f.set_shape(shape);
            f.set_strides(&dlpack_abi_compact(shape));
        }
        Change::ByteOffset(offset) => {
            f.dl.byte_offset = offset;
            f.set_shape(&[3]);
            f.set_strides(&[1]);
        }
        Change::Version(version) => f.version = version,
    }
    f
}

/// Compact row-major strides (extent-0 dimensions counted as one).
fn dlpack_abi_compact(shape: &[i64]) -> Vec<i64> {
    (0..shape.len())
        .map(|i| shape[i + 1..].iter().map(|&e| e.max(1)).product())
        .collect()
}

const CHANGES: &[Change] = &[
    Change::None,
    Change::Dtype(DLDataType {
        code: kDLInt,
        bits: 32,
        lanes: 1,
    }),
    Change::Dtype(DLDataType {
        code: kDLFloat,
        bits: 32,
        lanes: 2,
    }),
    Change::Dtype(DLDataType {
        code: kDLFloat,
        bits: 0,
        lanes: 1,
    }),
    Change::Device(kDLCUDA),
    Change::Device(kDLCUDAHost),
    Change::Device(DLDeviceType(99)),
    Change::Flags(1),
    Change::Flags(2),
    Change::Flags(4),
    Change::Flags(1 << 10),
    Change::Strides(&[1, 2]),
    Change::Strides(&[6, 2]),
    Change::Strides(&[3, 0]),
    Change::Strides(&[3, -1]),
    Change::NullStrides(DLPackVersion { major: 1, minor: 1 }),
    Change::NullStrides(DLPackVersion { major: 1, minor: 3 }),
    Change::Shape(&[0]),
    Change::Shape(&[2, 0]),
    Change::Shape(&[1, 6, 1]),
    Change::Shape(&[-1, 3]),
    Change::Shape(&[i64::MAX, 2]),
    Change::ByteOffset(4),
    Change::ByteOffset(2),
    Change::ByteOffset(u64::MAX),
    Change::Version(DLPackVersion { major: 2, minor: 0 }),
];

/// A slice as where it starts in its fixture's buffer (0 when empty: it starts at a dangling
/// pointer), how long it is, and its values.
fn parts(f: &Fixture, values: &[f32]) -> (isize, usize, Vec<f32>) {
    let start = if values.is_empty() {
        0
    } else {
        values.as_ptr() as isize - f.data_address() as isize
    };
    (start, values.len(), values.to_vec())
}

/// An error with a misaligned address given from its fixture's buffer.
fn relative(f: &Fixture, error: &TensorError) -> TensorError {
    match *error {
        TensorError::Access(AccessError::Misaligned { address, align }) => {
            TensorError::Access(AccessError::Misaligned {
                address: address.wrapping_sub(f.data_address()),
                align,
            })
        }
        other => other,
    }
}

#[test]
fn a_host_slice_is_the_import_then_the_slice() {
    let mut accepted = 0;
    for &change in CHANGES {
        let (mut typed, mut general) = (fixture(change), fixture(change));
        // SAFETY: live structs, handed over once; shape and strides hold `ndim` values.
        let slice = unsafe { HostSlice::<f32>::from_raw(typed.versioned()) };
        let tensor = unsafe { VersionedTensor::from_raw(general.versioned()) };
        let expected = tensor.map_err(TensorError::from).and_then(|tensor| {
            let values = tensor
                .view()
                .as_slice::<f32>()
                .map(|v| parts(&general, v))?;
            Ok((values, tensor))
        });
        match (&slice, &expected) {
            (Ok(slice), Ok((values, tensor))) => {
                assert_eq!(&parts(&typed, slice), values, "{change:?}");
                assert_eq!(
                    slice.tensor().view().flags(),
                    tensor.view().flags(),
                    "{change:?}"
                );
                accepted += 1;
            }
            (Err(a), Err(b)) => {
                assert_eq!(relative(&typed, a), relative(&general, b), "{change:?}")
            }
            _ => panic!("{change:?}: {slice:?} against {expected:?}"),
        }
        // Refused: the deleter has run. Accepted: it runs once the slice is dropped.
        let refused = slice.is_err();
        assert_eq!(typed.calls(), usize::from(refused), "{change:?}");
        drop((slice, expected));
        assert_eq!((typed.calls(), general.calls()), (1, 1), "{change:?}");
    }
    // The common case, NULL strides before 1.2, an extent-1 layout, an aligned offset, the
    // copied, read-only and padded flags, pinned host memory, and the empty tensors.
    assert_eq!(accepted, 10);
}

#[test]
fn a_legacy_tensor_is_a_host_slice_too() {
    for &change in CHANGES {
        let (mut typed, mut general) = (fixture(change), fixture(change));
        // SAFETY: live structs, handed over once.
        let slice = unsafe { HostSlice::<f32, DLManagedTensor>::from_raw(typed.legacy()) };
        let tensor = unsafe { LegacyTensor::from_raw(general.legacy()) };
        let expected = tensor
            .map_err(TensorError::from)
            .and_then(|t| Ok(parts(&general, t.view().as_slice::<f32>()?)));
        assert_eq!(
            slice
                .as_ref()
                .map(|s| parts(&typed, s))
                .map_err(|e| relative(&typed, e)),
            expected.map_err(|e| relative(&general, &e)),
            "{change:?}"
        );
        drop(slice);
        assert_eq!((typed.calls(), general.calls()), (1, 1), "{change:?}");
    }
}

#[test]
fn a_null_pointer_is_refused_and_nothing_is_called() {
    // SAFETY: NULL is allowed.
    let error = unsafe { HostSlice::<u8>::from_raw(std::ptr::null_mut()) }.unwrap_err();
    assert_eq!(error, TensorError::Import(ImportError::NullTensor));
}

#[test]
fn a_tensor_given_back_keeps_its_one_deleter_call() {
    let mut f = Fixture::f32(&[4]);
    // SAFETY: a live struct, handed over once.
    let slice = unsafe { HostSlice::<f32>::from_raw(f.versioned()) }.unwrap();
    assert_eq!(*slice, [0.0, 1.0, 2.0, 3.0]);
    let tensor = slice.into_tensor();
    assert_eq!(f.calls(), 0);
    // From the tensor, refused for another type: the tensor comes back, still undeleted.
    let (tensor, error) = HostSlice::<i32>::from_tensor(tensor).unwrap_err();
    assert!(matches!(error, AccessError::DtypeMismatch { .. }));
    assert_eq!(f.calls(), 0);
    let slice = HostSlice::<f32>::from_tensor(tensor).unwrap();
    assert_eq!(slice.as_slice(), [0.0, 1.0, 2.0, 3.0]);
    drop(slice);
    assert_eq!(f.calls(), 1);
}

#[test]
fn an_empty_tensor_is_an_empty_slice_whatever_its_data() {
    let mut f = Fixture::new(&[0u8; 4], dtype(kDLUInt, 8), &[0, 3]);
    f.dl.data = std::ptr::null_mut();
    // SAFETY: a live struct, handed over once.
    let slice = unsafe { HostSlice::<u8>::from_raw(f.versioned()) }.unwrap();
    assert!(slice.is_empty());
    drop(slice);
    assert_eq!(f.calls(), 1);
}

/// A user's element of 16 `f32` lanes: 64 bytes, wider than any one-lane dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(transparent)]
struct Lanes16([f32; 16]);
// SAFETY: an array of `f32`s: no padding, every bit pattern valid.
unsafe impl bytemuck::Zeroable for Lanes16 {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for Lanes16 {}
impl Element for Lanes16 {
    const DTYPE: DLDataType = DLDataType {
        code: kDLFloat,
        bits: 32,
        lanes: 16,
    };
}

/// A user's element whose dtype is not valid: an FP6 code with 8 bits.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(transparent)]
struct Fp6In8(u8);
// SAFETY: a byte.
unsafe impl bytemuck::Zeroable for Fp6In8 {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for Fp6In8 {}
impl Element for Fp6In8 {
    const DTYPE: DLDataType = DLDataType {
        code: kDLFloat6_e2m3fn,
        bits: 8,
        lanes: 1,
    };
}

/// `HostSlice::<T>::from_raw` against `from_raw` then `as_slice::<T>` on twin fixtures: the same
/// slice or the same error, and one deleter call each.
fn agrees<T: Element + PartialEq + core::fmt::Debug>(make: impl Fn() -> Fixture) -> bool {
    let (mut typed, mut general) = (make(), make());
    // SAFETY: live structs, handed over once; shape and strides hold `ndim` values.
    let slice = unsafe { HostSlice::<T>::from_raw(typed.versioned()) };
    let tensor = unsafe { VersionedTensor::from_raw(general.versioned()) };
    let expected = tensor
        .map_err(TensorError::from)
        .and_then(|t| Ok(t.view().as_slice::<T>()?.to_vec()));
    assert_eq!(slice.as_ref().map(|s| s.to_vec()).map_err(|e| *e), expected);
    let accepted = slice.is_ok();
    drop(slice);
    assert_eq!((typed.calls(), general.calls()), (1, 1));
    accepted
}

#[test]
fn a_wide_user_element_is_sized_as_the_general_path_sizes_it() {
    // Elements whose 64 bytes each overflow `isize` together: refused alike.
    let most = isize::MAX as i64 / 32;
    for extent in [most, isize::MAX as i64 / 64 + 1] {
        let wide = || {
            let mut f = Fixture::f32(&[32]);
            f.dl.dtype = Lanes16::DTYPE;
            f.set_shape(&[extent]);
            f.set_strides(&[1]);
            f
        };
        assert!(!agrees::<Lanes16>(wide), "{extent}");
    }
    // Two of them, which fit: accepted alike.
    let two = || {
        let mut f = Fixture::f32(&[32]);
        f.dl.dtype = Lanes16::DTYPE;
        f.set_shape(&[2]);
        f.set_strides(&[1]);
        f
    };
    assert!(agrees::<Lanes16>(two));
}

#[test]
fn a_user_element_of_an_invalid_dtype_is_refused_as_the_general_path_refuses_it() {
    let fp6 = || {
        let mut f = Fixture::new(&[1u8, 2, 3], Fp6In8::DTYPE, &[3]);
        f.dl.dtype = Fp6In8::DTYPE;
        f
    };
    assert!(!agrees::<Fp6In8>(fp6));
}

#[test]
fn the_same_memory_handed_out_twice_is_two_shared_slices_each_deleted_once() {
    // A producer may export the same memory twice: two headers over one buffer, both held at
    // once. `HostSlice` lends only `&[T]`, so both may read; each header's deleter runs once.
    let mut f = Fixture::f32(&[2, 3]);
    let mut twin = Fixture::f32(&[2, 3]);
    twin.dl.data = f.dl.data;
    // SAFETY: live structs, each handed over once; the memory is only read.
    let a = unsafe { HostSlice::<f32>::from_raw(f.versioned()) }.unwrap();
    let b = unsafe { HostSlice::<f32>::from_raw(twin.versioned()) }.unwrap();
    assert_eq!(a.as_ptr(), b.as_ptr());
    assert_eq!(*a, *b);
    drop(a);
    assert_eq!((f.calls(), twin.calls()), (1, 0));
    assert_eq!(b.iter().sum::<f32>(), 15.0);
    drop(b);
    assert_eq!((f.calls(), twin.calls()), (1, 1));
}
