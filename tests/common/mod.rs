//! A test producer: tensors whose memory the test owns, with deleters that only count calls (so a
//! second call is counted, not a double free).
#![allow(dead_code)]

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use dlpack_abi::raw::*;

/// One tensor's worth of producer memory: data, shape, strides, the managed structs and the
/// deleter-call counter. Edit `dl`, `version` and `flags` (or call the setters) before handing
/// out `versioned()` or `legacy()`.
pub struct Fixture {
    /// u128 words: aligned for every Element.
    data: Vec<u128>,
    shape: Vec<i64>,
    strides: Vec<i64>,
    /// The `DLTensor` both managed structs are built from.
    pub dl: DLTensor,
    pub version: DLPackVersion,
    pub flags: u64,
    calls: Box<AtomicUsize>,
    versioned: *mut DLManagedTensorVersioned,
    legacy: *mut DLManagedTensor,
}

unsafe extern "C" fn count_versioned(t: *mut DLManagedTensorVersioned) {
    // SAFETY: the fixture sets `manager_ctx` to its live counter and keeps `t` alive.
    unsafe { (*(*t).manager_ctx.cast::<AtomicUsize>()).fetch_add(1, Ordering::SeqCst) };
}

unsafe extern "C" fn count_legacy(t: *mut DLManagedTensor) {
    // SAFETY: as above.
    unsafe { (*(*t).manager_ctx.cast::<AtomicUsize>()).fetch_add(1, Ordering::SeqCst) };
}

pub fn dtype(code: DLDataTypeCode, bits: u8) -> DLDataType {
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

/// Compact row-major strides.
pub fn compact(shape: &[i64]) -> Vec<i64> {
    (0..shape.len())
        .map(|i| shape[i + 1..].iter().product())
        .collect()
}

impl Fixture {
    /// A 1.3 CPU tensor over a copy of `values`, with the given shape and compact strides.
    pub fn new<T: bytemuck::Pod>(values: &[T], dtype: DLDataType, shape: &[i64]) -> Self {
        let bytes: &[u8] = bytemuck::cast_slice(values);
        let mut data = vec![0u128; bytes.len().div_ceil(16).max(1)];
        bytemuck::cast_slice_mut::<u128, u8>(&mut data)[..bytes.len()].copy_from_slice(bytes);
        let mut f = Fixture {
            data,
            shape: Vec::new(),
            strides: Vec::new(),
            dl: DLTensor {
                data: ptr::null_mut(),
                device: DLDevice {
                    device_type: kDLCPU,
                    device_id: 0,
                },
                ndim: 0,
                dtype,
                shape: ptr::null_mut(),
                strides: ptr::null_mut(),
                byte_offset: 0,
            },
            version: DLPackVersion::CURRENT,
            flags: 0,
            calls: Box::new(AtomicUsize::new(0)),
            versioned: ptr::null_mut(),
            legacy: ptr::null_mut(),
        };
        f.dl.data = f.data.as_mut_ptr().cast();
        f.set_shape(shape);
        f.set_strides(&compact(shape));
        f
    }

    /// f32 values 0, 1, 2, ... for `shape` (at least one value).
    pub fn f32(shape: &[i64]) -> Self {
        let n: i64 = shape.iter().product::<i64>().max(1);
        let values: Vec<f32> = (0..n).map(|i| i as f32).collect();
        Self::new(&values, dtype(kDLFloat, 32), shape)
    }

    /// Sets `shape` and `ndim`.
    pub fn set_shape(&mut self, shape: &[i64]) {
        self.shape = shape.to_vec();
        self.dl.shape = if shape.is_empty() {
            ptr::null_mut()
        } else {
            self.shape.as_mut_ptr()
        };
        self.dl.ndim = shape.len() as i32;
    }

    /// Sets `strides` (non-NULL even when empty, like a careful producer).
    pub fn set_strides(&mut self, strides: &[i64]) {
        self.strides = strides.to_vec();
        self.strides.push(0); // keeps the pointer non-NULL for ndim == 0
        self.dl.strides = self.strides.as_mut_ptr();
    }

    /// The address of the data buffer.
    pub fn data_address(&self) -> usize {
        self.data.as_ptr() as usize
    }

    /// The versioned struct, built once from the current fields and owned by the fixture.
    pub fn versioned(&mut self) -> *mut DLManagedTensorVersioned {
        if self.versioned.is_null() {
            self.versioned = Box::into_raw(Box::new(DLManagedTensorVersioned {
                version: self.version,
                manager_ctx: self.counter(),
                deleter: Some(count_versioned),
                flags: self.flags,
                dl_tensor: self.dl,
            }));
        }
        self.versioned
    }

    /// The legacy struct, built once from the current fields and owned by the fixture.
    pub fn legacy(&mut self) -> *mut DLManagedTensor {
        if self.legacy.is_null() {
            self.legacy = Box::into_raw(Box::new(DLManagedTensor {
                dl_tensor: self.dl,
                manager_ctx: self.counter(),
                deleter: Some(count_legacy),
            }));
        }
        self.legacy
    }

    fn counter(&self) -> *mut c_void {
        ptr::from_ref::<AtomicUsize>(&self.calls).cast_mut().cast()
    }

    /// How many times a deleter ran.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if !self.versioned.is_null() {
            // SAFETY: created by `Box::into_raw` in `versioned`; the deleter never frees it.
            drop(unsafe { Box::from_raw(self.versioned) });
        }
        if !self.legacy.is_null() {
            // SAFETY: as above.
            drop(unsafe { Box::from_raw(self.legacy) });
        }
    }
}
