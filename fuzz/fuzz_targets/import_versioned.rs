//! Builds arbitrary `DLManagedTensorVersioned` headers (version, flags, ndim, shape, strides,
//! dtype, device, data, byte_offset) over a real buffer and imports them.
//!
//! Checks: no crash and no sanitizer report; the deleter runs exactly once whatever happens;
//! validation's fast paths agree with full validation (and the export's compact fast path with
//! both, and a row-major export with the same export given its strides), typed slices' with
//! their general path, and the typed import (`HostSlice`) with the import and the slice; an
//! accepted tensor satisfies the spec's rules (checked here independently, naively);
//! and when the tensor's reachable bytes lie inside the buffer, every typed read is performed
//! (so the sanitizer sees each address the crate computes).
#![no_main]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arbitrary::Arbitrary;
use dlpack_abi::dlpack::{
    HostSlice, TensorDescription, TensorError, TensorOwner, TensorView, VersionedTensor, MAX_NDIM,
};
use dlpack_abi::raw::*;
use libfuzzer_sys::fuzz_target;

const BUFFER_BYTES: usize = 512;
/// At most this many elements are read per typed read.
const READ_LIMIT: usize = 4096;

#[derive(Arbitrary, Debug)]
struct Header {
    major_is_1: bool,
    version: (u32, u32),
    flags: u64,
    ndim: i8,
    wild_ndim: Option<i32>,
    shape: [i8; 8],
    wild_extent: Option<(u8, i64)>,
    strides: Option<[i8; 8]>,
    wild_stride: Option<(u8, i64)>,
    shape_null: bool,
    device_type: u8,
    code: u8,
    bits: u8,
    lanes: u16,
    data: Option<u16>,
    byte_offset: u16,
    wild_byte_offset: Option<u64>,
}

static DELETED: AtomicUsize = AtomicUsize::new(0);

/// Frees the header (a `Box`), so that a second call is a double free the sanitizer reports.
unsafe extern "C" fn delete(t: *mut DLManagedTensorVersioned) {
    DELETED.fetch_add(1, Ordering::SeqCst);
    // SAFETY: made by `Box::into_raw` below.
    drop(unsafe { Box::from_raw(t) });
}

/// Extents and strides: small values from the input, one of each possibly wild. The arrays have
/// MAX_NDIM entries, the most the importer may read.
fn arrays(h: &Header) -> (Vec<i64>, Option<Vec<i64>>) {
    let mut shape: Vec<i64> = (0..MAX_NDIM)
        .map(|i| i64::from(h.shape[i % 8]) % 5)
        .collect();
    if let Some((dim, extent)) = h.wild_extent {
        shape[usize::from(dim) % MAX_NDIM] = extent;
    }
    let strides = h.strides.map(|s| {
        let mut strides: Vec<i64> = (0..MAX_NDIM).map(|i| i64::from(s[i % 8])).collect();
        if let Some((dim, stride)) = h.wild_stride {
            strides[usize::from(dim) % MAX_NDIM] = stride;
        }
        strides
    });
    (shape, strides)
}

fuzz_target!(|h: Header| {
    let mut buffer = vec![0u128; BUFFER_BYTES / 16];
    for (i, byte) in bytemuck::cast_slice_mut::<u128, u8>(&mut buffer)
        .iter_mut()
        .enumerate()
    {
        *byte = i as u8;
    }
    let base = buffer.as_mut_ptr().cast::<u8>();
    let (mut shape, mut strides) = arrays(&h);
    let ndim = h.wild_ndim.unwrap_or(i32::from(h.ndim) % 6);
    let version = if h.major_is_1 {
        DLPackVersion {
            major: 1,
            minor: h.version.1 % 5,
        }
    } else {
        DLPackVersion {
            major: h.version.0,
            minor: h.version.1,
        }
    };
    let data = h.data.map_or(std::ptr::null_mut(), |d| {
        base.wrapping_add(usize::from(d) % 64)
    });
    let header = Box::into_raw(Box::new(DLManagedTensorVersioned {
        version,
        manager_ctx: std::ptr::null_mut(),
        deleter: Some(delete),
        flags: h.flags % 16,
        dl_tensor: DLTensor {
            data: data.cast(),
            device: DLDevice {
                device_type: DLDeviceType(i32::from(h.device_type % 20)),
                device_id: 0,
            },
            ndim,
            dtype: DLDataType {
                code: DLDataTypeCode(h.code % 20),
                bits: h.bits,
                lanes: h.lanes % 3,
            },
            shape: if h.shape_null {
                std::ptr::null_mut()
            } else {
                shape.as_mut_ptr()
            },
            strides: strides
                .as_mut()
                .map_or(std::ptr::null_mut(), |s| s.as_mut_ptr()),
            byte_offset: h.wild_byte_offset.unwrap_or(u64::from(h.byte_offset % 64)),
        },
    }));

    if version.major == 1 {
        let flags = dlpack_abi::raw::DLPackFlags::from_bits_retain(h.flags % 16);
        // SAFETY: a live header; shape and strides hold MAX_NDIM values.
        unsafe {
            dlpack_abi::dlpack::fuzzing::check_fast_paths(
                &(*header).dl_tensor,
                Some(version),
                flags,
            )
        };
    }
    check_export_paths(
        &shape[..usize::from(h.ndim.unsigned_abs()) % 6],
        usize::from(h.byte_offset % 40),
        h.wild_byte_offset
            .map_or(usize::from(h.byte_offset % 8), |o| o as usize),
    );
    // The typed import (`HostSlice`) of a twin header: its slice (start and length) or error,
    // compared below with the import's `as_slice`. Its deleter runs once, here.
    let before = DELETED.load(Ordering::SeqCst);
    // SAFETY: `header` is live; the twin is a new box with the same fields.
    let twin = Box::into_raw(Box::new(unsafe { header.read() }));
    // SAFETY: the twin, handed over once; shape and strides hold MAX_NDIM values.
    let typed = unsafe { HostSlice::<f32>::from_raw(twin) }
        .map(|values| (values.as_ptr() as usize, values.len()));
    assert_eq!(
        DELETED.load(Ordering::SeqCst),
        before + 1,
        "the twin's deleter runs once"
    );

    let before = DELETED.load(Ordering::SeqCst);
    // SAFETY: a live header handed over once; shape and strides hold MAX_NDIM values.
    match unsafe { VersionedTensor::from_raw(header) } {
        Ok(tensor) => {
            assert_eq!(DELETED.load(Ordering::SeqCst), before);
            let sliced = tensor
                .view()
                .as_slice::<f32>()
                .map(|values| (values.as_ptr() as usize, values.len()));
            assert_eq!(
                typed,
                sliced.map_err(TensorError::from),
                "HostSlice disagrees"
            );
            check_accepted(&tensor.view(), version, &shape, base as usize);
            check_share(tensor, DLPackFlags::from_bits_retain(h.flags % 16));
        }
        Err(error) => {
            assert_eq!(typed, Err(TensorError::from(error)), "HostSlice disagrees");
            let _ = error.to_string();
        }
    }
    assert_eq!(
        DELETED.load(Ordering::SeqCst),
        before + 1,
        "deleter must run exactly once"
    );
});

/// The row-major export's one pass (the shape checked while the dims are written, then the
/// buffer) agrees with the same export given its row-major strides (validated as an import, then
/// its reach checked): the same struct, or the same refusal (where the tensor would reach past
/// the end of the address space, the first names the buffer and the second, which validates
/// first, the overflow: both refuse).
fn check_export_paths(shape: &[i64], len: usize, first: usize) {
    use dlpack_abi::dlpack::{Export, ExportError, ImportError};
    let mut strides = vec![1i64; shape.len()];
    for dim in (0..shape.len().saturating_sub(1)).rev() {
        strides[dim] = strides[dim + 1].wrapping_mul(shape[dim + 1].max(1));
    }
    let (values, copy) = (vec![0.5f32; len], vec![0.5f32; len]);
    let (base, copy_base) = (values.as_ptr() as usize, copy.as_ptr() as usize);
    let fast = Export::new(values, shape).first_element(first).finish();
    let general = Export::new(copy, shape)
        .strides(&strides)
        .first_element(first)
        .finish();
    match (&fast, &general) {
        (Ok(a), Ok(b)) => {
            let (a, b) = (a.view(), b.view());
            let from = |view: &TensorView<'_>, base: usize| {
                (!view.raw().data.is_null()).then(|| view.raw().data as usize - base)
            };
            assert_eq!(from(&a, base), from(&b, copy_base));
            assert_eq!(a.raw().byte_offset, b.raw().byte_offset);
            assert_eq!((a.shape(), a.strides()), (b.shape(), b.strides()));
            assert_eq!(
                (a.flags(), a.element_count()),
                (b.flags(), b.element_count())
            );
        }
        (
            Err(ExportError::OutsideBuffer { .. }),
            Err(ExportError::Invalid(
                ImportError::ByteOffsetOverflow { .. }
                | ImportError::StridesOverflow { .. }
                | ImportError::AddressOverflow { .. },
            )),
        ) => {}
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("the row-major export disagrees: {fast:?} against {general:?}"),
    }
}

/// Independent checks on an accepted tensor, then every typed read when it fits the buffer.
fn check_accepted(view: &TensorView<'_>, version: DLPackVersion, shape: &[i64], base: usize) {
    assert_eq!(version.major, 1);
    let n = view.ndim();
    assert!(n <= MAX_NDIM);
    assert_eq!(view.shape(), &shape[..n]);
    assert!(view.shape().iter().all(|&e| e >= 0));
    let count: i128 = view.shape().iter().map(|&e| i128::from(e)).product();
    assert_eq!(view.element_count() as i128, count);
    let dtype = view.dtype();
    assert!(dtype.lanes >= 1 && dtype.bits >= 1);
    if count > 0 {
        assert!(!view.raw().data.is_null());
    }
    if view.strides().is_synthesised() {
        assert!(n == 0 || version.minor < 2);
    }
    let _ = format!("{view:?}");
    // The typed slices' fast path against their general path (pointers and lengths only).
    dlpack_abi::dlpack::fuzzing::check_slice_paths(view);

    // Byte reach, naively, for whole-byte dtypes.
    let bits = i128::from(dtype.bits) * i128::from(dtype.lanes);
    if count == 0 || bits % 8 != 0 {
        return;
    }
    let size = bits / 8;
    let (mut low, mut high) = (0i128, 0i128);
    for (extent, stride) in view.shape().iter().zip(view.strides().iter()) {
        let reach = i128::from(stride) * (i128::from(*extent) - 1);
        if reach < 0 {
            low += reach
        } else {
            high += reach
        }
    }
    let start = view.data_ptr() as usize as i128 - base as i128;
    let (first, end) = (start + low * size, start + (high + 1) * size);
    if first < 0 || end > BUFFER_BYTES as i128 {
        return;
    }
    read_all::<u8>(view);
    read_all::<i16>(view);
    read_all::<f32>(view);
    read_all::<u64>(view);
    read_all::<i128>(view);
}

/// Every typed read; a refusal is fine, a read is checked (bit for bit: floats may be NaN):
/// slices against the iterator, the iterator against `get` at each index.
fn read_all<T: dlpack_abi::dlpack::Element>(view: &TensorView<'_>) {
    let bytes = |values: &[T]| bytemuck::cast_slice::<T, u8>(values).to_vec();
    if let Ok(values) = view.iter::<T>() {
        // Zero strides can make a huge tensor out of a few bytes: read a bounded prefix.
        let values: Vec<T> = values.take(READ_LIMIT).collect();
        assert_eq!(values.len(), view.element_count().min(READ_LIMIT));
        if let Ok(slice) = view.as_slice::<T>() {
            assert_eq!(bytes(&slice[..values.len()]), bytes(&values));
        }
        if let Ok(slice) = view.as_slice_memory_order::<T>() {
            assert_eq!(slice.len(), values.len());
        }
        // The iterator (in memory order for C-contiguous tensors, an odometer over the strides
        // otherwise) agrees with `get` at every row-major index of the prefix: the slow path.
        let shape: Vec<usize> = view.shape().iter().map(|&e| e as usize).collect();
        let mut index = vec![0usize; view.ndim()];
        for value in &values {
            let got = view
                .get::<T>(&index)
                .expect("an in-bounds index of a readable tensor");
            assert_eq!(
                bytes(&[got]),
                bytes(&[*value]),
                "iter and get disagree at {index:?}"
            );
            for dim in (0..index.len()).rev() {
                index[dim] += 1;
                if index[dim] < shape[dim] {
                    break;
                }
                index[dim] = 0;
            }
        }
    }
}

/// Re-exports the tensor the way a shared owner does through `from_owner` (the slow path: the
/// description of `TensorDescription::of`, validated again), and through `share` (the fast path:
/// not validated again), and requires the two to agree on every field and on what validation
/// found.
fn check_share(tensor: VersionedTensor, flags: DLPackFlags) {
    struct Described(Arc<VersionedTensor>, DLPackFlags);
    // SAFETY: describes the validated tensor the `Arc` keeps alive; fuzzing only reads.
    unsafe impl TensorOwner for Described {
        fn describe(&mut self) -> TensorDescription<'_> {
            let padded = self.0.view().flags() & DLPackFlags::IS_SUBBYTE_TYPE_PADDED;
            let flags = self
                .1
                .difference(DLPackFlags::IS_COPIED | DLPackFlags::IS_SUBBYTE_TYPE_PADDED);
            TensorDescription::of(&self.0.view()).with_flags(flags | padded)
        }
    }
    let shared = Arc::new(tensor);
    let slow = VersionedTensor::from_owner(Described(Arc::clone(&shared), flags));
    // SAFETY: fuzzing only reads the memory.
    let fast = unsafe { VersionedTensor::share(Arc::clone(&shared), flags) };
    let (slow, fast) = match (slow, fast) {
        (Ok(slow), Ok(fast)) => (slow, fast),
        (Err(slow), Err(fast)) => {
            return assert_eq!(slow, fast, "share and from_owner refuse alike")
        }
        (slow, fast) => panic!("share and from_owner disagree: {slow:?} / {fast:?}"),
    };
    let (a, b) = (slow.view(), fast.view());
    assert_eq!(a.raw().data, b.raw().data);
    assert_eq!(a.raw().byte_offset, b.raw().byte_offset);
    assert_eq!(
        (a.ndim(), a.dtype(), a.device(), a.flags()),
        (b.ndim(), b.dtype(), b.device(), b.flags())
    );
    assert_eq!(a.shape(), b.shape());
    assert_eq!(a.strides(), b.strides());
    assert_eq!(
        (a.element_count(), a.byte_size(), a.is_packed()),
        (b.element_count(), b.byte_size(), b.is_packed())
    );
    assert_eq!(
        (a.is_c_contiguous(), a.is_f_contiguous()),
        (b.is_c_contiguous(), b.is_f_contiguous())
    );
    assert_eq!(a.element_offsets(), b.element_offsets());
    assert_eq!(a.typed_ptr::<u8>().is_ok(), b.typed_ptr::<u8>().is_ok());
    assert_eq!(a.typed_ptr::<f32>().is_ok(), b.typed_ptr::<f32>().is_ok());
}
