//! Export of Rust memory as DLPack tensors: what the managed struct says, zero copy, flags,
//! refusals, and that the owner is dropped exactly once on every path.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use dlpack_abi::dlpack::{
    AccessError, Element, Export, ExportError, HostBuffer, HostMemory, ImportError, LegacyTensor,
    TensorDescription, TensorOwner, VersionedTensor, MAX_NDIM,
};
use dlpack_abi::raw::*;

/// A `Vec` that counts its drops.
struct Counted<T> {
    values: Vec<T>,
    drops: Arc<AtomicUsize>,
}

fn counted<T>(values: Vec<T>) -> (Counted<T>, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    let buffer = Counted {
        values,
        drops: Arc::clone(&drops),
    };
    (buffer, drops)
}

impl<T> Drop for Counted<T> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: reports the vector's own elements, which only this buffer holds.
unsafe impl<T: Element + Send> HostBuffer for Counted<T> {
    type Element = T;
    fn memory(&mut self) -> HostMemory<T> {
        self.values.memory()
    }
}

fn drops(counter: &AtomicUsize) -> usize {
    counter.load(Ordering::SeqCst)
}

/// The `DLTensor`'s shape and strides as slices (both are non-NULL in every export).
fn dims(t: &DLTensor) -> (Vec<i64>, Vec<i64>) {
    let n = t.ndim as usize;
    assert!(!t.shape.is_null() && !t.strides.is_null());
    // SAFETY: an export writes `ndim` values behind both pointers, live while the tensor is.
    unsafe {
        (
            std::slice::from_raw_parts(t.shape, n).to_vec(),
            std::slice::from_raw_parts(t.strides, n).to_vec(),
        )
    }
}

#[test]
fn a_vec_is_exported_without_a_copy_as_a_1_3_tensor() {
    let values: Vec<f32> = (0..6).map(|i| i as f32).collect();
    let address = values.as_ptr() as usize;
    let (buffer, dropped) = counted(values);
    let tensor = Export::new(buffer, &[2, 3]).finish().unwrap();

    let raw = tensor.as_raw();
    assert_eq!(raw.version, DLPackVersion { major: 1, minor: 3 });
    assert_eq!(raw.flags, 0);
    assert!(raw.deleter.is_some());
    let t = &raw.dl_tensor;
    assert_eq!(t.data as usize, address, "the data is not copied");
    assert_eq!(t.byte_offset, 0);
    assert_eq!(t.device.device_type, kDLCPU);
    assert_eq!(t.device.device_id, 0);
    assert_eq!(t.dtype, f32::DTYPE);
    assert_eq!(t.ndim, 2);
    assert_eq!(dims(t), (vec![2, 3], vec![3, 1]));
    assert_eq!(
        tensor.view().as_slice::<f32>().unwrap(),
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );

    assert_eq!(drops(&dropped), 0);
    drop(tensor);
    assert_eq!(drops(&dropped), 1);
}

#[test]
fn writes_through_the_export_reach_the_exported_memory() {
    let mut tensor = Export::new(vec![0u64; 4], &[4]).finish().unwrap();
    tensor.as_mut_slice::<u64>().unwrap()[2] = 42;
    let data = tensor.as_raw().dl_tensor.data.cast::<u64>();
    // SAFETY: the tensor's own data, 4 elements, read while it is alive and not borrowed.
    assert_eq!(unsafe { data.add(2).read() }, 42);
}

#[test]
fn boxed_slices_and_unique_arcs_are_writable_shared_arcs_read_only() {
    let boxed: Box<[i16]> = vec![1, 2, 3].into_boxed_slice();
    let address = boxed.as_ptr() as usize;
    let tensor = Export::new(boxed, &[3]).finish().unwrap();
    assert_eq!(tensor.as_raw().dl_tensor.data as usize, address);
    assert_eq!(tensor.view().flags(), DLPackFlags::empty());

    let unique: Arc<[i16]> = Arc::from(vec![4, 5]);
    let mut tensor = Export::new(unique, &[2]).finish().unwrap();
    assert_eq!(tensor.view().flags(), DLPackFlags::empty());
    tensor.as_mut_slice::<i16>().unwrap()[0] = 9;
    assert_eq!(tensor.view().as_slice::<i16>().unwrap(), [9, 5]);

    let shared: Arc<[i16]> = Arc::from(vec![6, 7]);
    let mut tensor = Export::new(Arc::clone(&shared), &[2]).finish().unwrap();
    assert_eq!(
        tensor.as_raw().dl_tensor.data as usize,
        shared.as_ptr() as usize
    );
    assert_eq!(tensor.view().flags(), DLPackFlags::READ_ONLY);
    assert_eq!(tensor.as_mut_slice::<i16>(), Err(AccessError::ReadOnly));
    assert_eq!(Arc::strong_count(&shared), 2);
    drop(tensor);
    assert_eq!(Arc::strong_count(&shared), 1, "the deleter dropped its Arc");
    assert_eq!(*shared, [6, 7]);

    // A weak holder also makes the Arc shared.
    let weakly_held: Arc<[i16]> = Arc::from(vec![8]);
    let weak = Arc::downgrade(&weakly_held);
    let tensor = Export::new(weakly_held, &[1]).finish().unwrap();
    assert_eq!(tensor.view().flags(), DLPackFlags::READ_ONLY);
    drop(tensor);
    assert!(weak.upgrade().is_none());
}

#[test]
fn flags_read_only_on_request_and_is_copied_only_for_copies() {
    let tensor = Export::new(vec![1u8], &[1]).read_only().finish().unwrap();
    assert_eq!(tensor.as_raw().flags, DLPackFlags::READ_ONLY.bits());

    let source = [1.0f64, 2.0, 3.0];
    let copy = Export::copy_of(&source, &[3]).finish().unwrap();
    assert_eq!(copy.view().flags(), DLPackFlags::IS_COPIED);
    assert_ne!(
        copy.as_raw().dl_tensor.data as usize,
        source.as_ptr() as usize
    );
    assert_eq!(copy.view().as_slice::<f64>().unwrap(), source);

    let both = Export::copy_of(&source, &[3]).read_only().finish().unwrap();
    assert_eq!(
        both.view().flags(),
        DLPackFlags::IS_COPIED | DLPackFlags::READ_ONLY
    );
}

#[test]
fn empty_and_zero_d_tensors() {
    // Empty: data NULL, byte_offset 0, strides still sent (NumPy's compact strides: zero
    // extents count as one).
    let (buffer, dropped) = counted(Vec::<f32>::with_capacity(8));
    let tensor = Export::new(buffer, &[2, 0, 3]).finish().unwrap();
    let t = &tensor.as_raw().dl_tensor;
    assert!(t.data.is_null());
    assert_eq!(t.byte_offset, 0);
    assert_eq!(dims(t), (vec![2, 0, 3], vec![3, 3, 1]));
    assert_eq!(tensor.view().as_slice::<f32>().unwrap(), [0f32; 0]);
    drop(tensor);
    assert_eq!(drops(&dropped), 1);

    // An offset into an empty tensor is not sent either.
    let tensor = Export::new(vec![1u8, 2], &[0])
        .first_element(1)
        .finish()
        .unwrap();
    assert_eq!(tensor.as_raw().dl_tensor.byte_offset, 0);
    assert!(tensor.as_raw().dl_tensor.data.is_null());

    // 0-d: one element, shape and strides non-NULL (zero-length arrays).
    let tensor = Export::new(vec![7i32], &[]).finish().unwrap();
    let t = &tensor.as_raw().dl_tensor;
    assert_eq!(t.ndim, 0);
    assert_eq!(dims(t), (vec![], vec![]));
    assert_eq!(tensor.view().as_slice::<i32>().unwrap(), [7]);
}

#[test]
fn strides_and_offset_use_byte_offset_from_the_buffer_start() {
    // Column 1 of a 3 x 4 row-major i32 matrix: elements 1, 5, 9.
    let values: Vec<i32> = (0..12).collect();
    let start = values.as_ptr() as usize;
    let tensor = Export::new(values, &[3])
        .strides(&[4])
        .first_element(1)
        .finish()
        .unwrap();
    let t = &tensor.as_raw().dl_tensor;
    assert_eq!(t.data as usize, start, "data is the allocation start");
    assert_eq!(t.byte_offset, 4);
    assert_eq!(
        tensor.view().iter::<i32>().unwrap().collect::<Vec<_>>(),
        [1, 5, 9]
    );
    assert!(!tensor.view().is_c_contiguous());

    // Reversed rows with a negative stride, starting at the last row.
    let values: Vec<i32> = (0..6).collect();
    let tensor = Export::new(values, &[3, 2])
        .strides(&[-2, 1])
        .first_element(4)
        .finish()
        .unwrap();
    assert_eq!(
        tensor.view().iter::<i32>().unwrap().collect::<Vec<_>>(),
        [4, 5, 2, 3, 0, 1]
    );

    // Broadcast with a zero stride.
    let tensor = Export::new(vec![3u8, 4], &[3, 2])
        .strides(&[0, 1])
        .finish()
        .unwrap();
    assert_eq!(
        tensor.view().iter::<u8>().unwrap().collect::<Vec<_>>(),
        [3, 4, 3, 4, 3, 4]
    );
}

#[test]
fn bad_exports_are_refused_and_the_buffer_is_dropped_once() {
    type Build = fn(Counted<f32>) -> Result<VersionedTensor, ExportError>;
    let too_many: Vec<i64> = vec![1; MAX_NDIM + 1];
    // Six f32s: a 24-byte buffer. Reaches are in bytes from its start.
    let outside = |first, end| ExportError::OutsideBuffer {
        first,
        end,
        len: 24,
    };
    let cases: Vec<(&str, Build, ExportError)> = vec![
        (
            "more elements than the buffer",
            |b| Export::new(b, &[2, 4]).finish(),
            outside(0, 32),
        ),
        (
            "offset past the end",
            |b| Export::new(b, &[1]).first_element(6).finish(),
            outside(24, 28),
        ),
        (
            "negative stride before the start",
            |b| {
                Export::new(b, &[3])
                    .strides(&[-1])
                    .first_element(1)
                    .finish()
            },
            outside(-4, 8),
        ),
        (
            "stride past the end",
            |b| Export::new(b, &[2]).strides(&[6]).finish(),
            outside(0, 28),
        ),
        (
            "strides of the wrong length",
            |b| Export::new(b, &[2, 3]).strides(&[3]).finish(),
            ExportError::StridesLength {
                ndim: 2,
                strides: 1,
            },
        ),
        (
            "negative extent",
            |b| Export::new(b, &[-2]).finish(),
            ExportError::Invalid(ImportError::NegativeExtent { dim: 0, extent: -2 }),
        ),
        (
            "huge stride",
            |b| Export::new(b, &[2]).strides(&[i64::MAX]).finish(),
            ExportError::Invalid(ImportError::StridesOverflow {
                dim: 0,
                stride: i64::MAX,
            }),
        ),
        (
            "huge offset",
            |b| Export::new(b, &[1]).first_element(usize::MAX).finish(),
            // The byte offset saturates on 64-bit targets (and the error's fields at i64::MAX).
            {
                let first = (usize::MAX as u64).saturating_mul(4).min(i64::MAX as u64) as i64;
                outside(first, first.saturating_add(4))
            },
        ),
        (
            "huge offset with strides",
            |b| {
                Export::new(b, &[1])
                    .strides(&[1])
                    .first_element(usize::MAX)
                    .finish()
            },
            ExportError::Invalid(ImportError::ByteOffsetOverflow {
                // Saturates on 64-bit targets; on 32-bit ones it exceeds the address space.
                byte_offset: (usize::MAX as u64).saturating_mul(4),
            }),
        ),
        (
            "read-only as legacy",
            |b| {
                Export::new(b, &[6])
                    .read_only()
                    .finish_legacy()
                    .map(|_| unreachable!())
            },
            ExportError::FlagsNotRepresentable {
                flags: DLPackFlags::READ_ONLY,
            },
        ),
    ];
    for (name, build, expected) in cases {
        let (buffer, dropped) = counted(vec![0f32; 6]);
        assert_eq!(build(buffer).unwrap_err(), expected, "{name}");
        assert_eq!(drops(&dropped), 1, "{name}: buffer dropped once");
    }

    let (buffer, dropped) = counted(vec![0f32; 6]);
    let error = Export::new(buffer, &too_many).finish().unwrap_err();
    assert_eq!(
        error,
        ExportError::Invalid(ImportError::TooManyDims { ndim: 65 })
    );
    assert_eq!(drops(&dropped), 1);
    assert_eq!(
        outside(-4, 8).to_string(),
        "the shape, strides and offset reach bytes -4..8, outside the buffer's 24 bytes"
    );
}

#[test]
fn the_deleter_is_the_c_contract_once_from_any_thread_null_ignored() {
    let (buffer, dropped) = counted(vec![1u32, 2]);
    let raw = Export::new(buffer, &[2]).finish().unwrap().into_raw();
    // SAFETY: `raw` is a live export that nobody else owns.
    let deleter = unsafe { (*raw).deleter }.unwrap();
    // SAFETY: a NULL argument is ignored (defensive; C callers never pass it).
    unsafe { deleter(std::ptr::null_mut()) };
    assert_eq!(drops(&dropped), 0);
    /// A raw pointer handed to another thread, as C code would.
    struct Handed(*mut DLManagedTensorVersioned);
    // SAFETY: the export's deleter may run on any thread (its owner is `Send`).
    unsafe impl Send for Handed {}
    let handed = Handed(raw);
    std::thread::spawn(move || {
        let handed = handed;
        // SAFETY: the one call, as a C consumer makes it, from another thread.
        unsafe { deleter(handed.0) };
    })
    .join()
    .unwrap();
    assert_eq!(drops(&dropped), 1);
}

#[test]
fn export_import_round_trip_through_the_raw_pointer() {
    let (buffer, dropped) = counted((0..1000).map(|i| i as f32).collect());
    let raw = Export::new(buffer, &[10, 100]).finish().unwrap().into_raw();
    // SAFETY: a fresh export handed over exactly once.
    let imported = unsafe { VersionedTensor::from_raw(raw) }.unwrap();
    let values = imported.view().as_slice::<f32>().unwrap();
    assert_eq!((values[0], values[999]), (0.0, 999.0));
    assert_eq!(imported.view().get::<f32>(&[3, 7]).unwrap(), 307.0);
    drop(imported);
    assert_eq!(drops(&dropped), 1);

    // And as legacy.
    let (buffer, dropped) = counted(vec![1u8, 2, 3]);
    let raw = Export::new(buffer, &[3])
        .finish_legacy()
        .unwrap()
        .into_raw();
    // SAFETY: as above.
    let imported = unsafe { LegacyTensor::from_raw(raw) }.unwrap();
    assert_eq!(imported.view().as_slice::<u8>().unwrap(), [1, 2, 3]);
    assert_eq!(imported.view().strides().as_slice(), Some(&[1][..]));
    drop(imported);
    assert_eq!(drops(&dropped), 1);
}

/// A custom owner whose description is whatever the test sets.
struct Custom {
    values: Vec<u16>,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
    announced: Option<usize>,
    device: DLDevice,
    null_data: bool,
    /// The buffer length the owner states, when not the whole vector's.
    len: Option<usize>,
    flags: DLPackFlags,
    drops: Arc<AtomicUsize>,
}

impl Custom {
    fn new(shape: &[i64]) -> (Self, Arc<AtomicUsize>) {
        let drops = Arc::new(AtomicUsize::new(0));
        let owner = Custom {
            values: (0..24).collect(),
            shape: shape.to_vec(),
            strides: None,
            announced: None,
            device: DLDevice {
                device_type: kDLCPU,
                device_id: 0,
            },
            null_data: false,
            len: None,
            flags: DLPackFlags::empty(),
            drops: Arc::clone(&drops),
        };
        (owner, drops)
    }
}

impl Drop for Custom {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: `values` is the owner's own allocation, which nothing else references, and the length
// stated is at most its size; the export checks everything else.
unsafe impl TensorOwner for Custom {
    fn describe(&mut self) -> TensorDescription<'_> {
        let data = if self.null_data {
            std::ptr::null_mut()
        } else {
            self.values.as_mut_ptr().cast()
        };
        let len = self.len.unwrap_or(2 * self.values.len());
        let mut d = TensorDescription::new(data, len, self.device, u16::DTYPE, &self.shape)
            .with_flags(self.flags);
        if let Some(strides) = &self.strides {
            d = d.with_strides(strides);
        }
        d
    }
    fn ndim(&mut self) -> usize {
        self.announced.unwrap_or(self.shape.len())
    }
}

#[test]
fn custom_owners_are_exported_and_checked_like_imports() {
    let (mut owner, dropped) = Custom::new(&[2, 3, 4]);
    owner.strides = Some(vec![1, 2, 6]);
    owner.device = DLDevice {
        device_type: kDLCUDAHost,
        device_id: 0,
    };
    let tensor = VersionedTensor::from_owner(owner).unwrap();
    assert!(tensor.view().is_f_contiguous());
    assert_eq!(tensor.view().device().device_type, kDLCUDAHost);
    assert_eq!(tensor.view().get::<u16>(&[1, 2, 3]).unwrap(), 1 + 4 + 18);
    drop(tensor);
    assert_eq!(drops(&dropped), 1);

    // A device the host cannot read is exported as described; typed access refuses it.
    let (mut owner, dropped) = Custom::new(&[4]);
    owner.device = DLDevice {
        device_type: kDLCUDA,
        device_id: 3,
    };
    let tensor = LegacyTensor::from_owner(owner).unwrap();
    assert_eq!(tensor.view().device().device_id, 3);
    assert!(matches!(
        tensor.view().as_slice::<u16>(),
        Err(AccessError::NotHostAccessible { .. })
    ));
    drop(tensor);
    assert_eq!(drops(&dropped), 1);

    type Edit = fn(&mut Custom);
    let refusals: Vec<(&str, Edit, ExportError)> = vec![
        (
            "ndim() disagrees with describe()",
            |o| o.announced = Some(2),
            ExportError::NdimChanged {
                announced: 2,
                described: 1,
            },
        ),
        (
            "NULL data with elements",
            |o| o.null_data = true,
            ExportError::Invalid(ImportError::NullData { elements: 4 }),
        ),
        (
            "strides of the wrong length",
            |o| o.strides = Some(vec![1, 1]),
            ExportError::StridesLength {
                ndim: 1,
                strides: 2,
            },
        ),
        (
            "too many dimensions",
            |o| o.shape = vec![1; 70],
            ExportError::Invalid(ImportError::TooManyDims { ndim: 70 }),
        ),
        // The buffer an owner states bounds what its description may reach: an owner that
        // allocated fewer bytes than it describes (the exchange allocator's old bug) is refused.
        (
            "a buffer smaller than the tensor",
            |o| o.len = Some(6),
            ExportError::OutsideBuffer {
                first: 0,
                end: 8,
                len: 6,
            },
        ),
        (
            "strides reaching past the buffer",
            |o| o.strides = Some(vec![8]),
            ExportError::OutsideBuffer {
                first: 0,
                end: 50,
                len: 48,
            },
        ),
    ];
    for (name, edit, expected) in refusals {
        let (mut owner, dropped) = Custom::new(&[4]);
        edit(&mut owner);
        let error = VersionedTensor::from_owner(owner).unwrap_err();
        assert_eq!(error, expected, "{name}");
        assert_eq!(drops(&dropped), 1, "{name}: owner dropped once");
    }

    let (mut owner, dropped) = Custom::new(&[4]);
    owner.flags = DLPackFlags::IS_SUBBYTE_TYPE_PADDED;
    let error = LegacyTensor::from_owner(owner).unwrap_err();
    assert_eq!(
        error,
        ExportError::FlagsNotRepresentable {
            flags: DLPackFlags::IS_SUBBYTE_TYPE_PADDED
        }
    );
    assert_eq!(drops(&dropped), 1);
}

/// Child of `a_panicking_owner_aborts_instead_of_unwinding_into_c`: run only as a subprocess.
#[test]
#[ignore = "aborts the process; run by a_panicking_owner_aborts_instead_of_unwinding_into_c"]
fn panicking_owner_child() {
    struct Panics(Vec<u8>);
    impl Drop for Panics {
        fn drop(&mut self) {
            panic!("owner drop panicked");
        }
    }
    // SAFETY: reports the vector's own elements.
    unsafe impl HostBuffer for Panics {
        type Element = u8;
        fn memory(&mut self) -> HostMemory<u8> {
            self.0.memory()
        }
    }
    let raw = Export::new(Panics(vec![1]), &[1])
        .finish()
        .unwrap()
        .into_raw();
    // SAFETY: the one call, as a C consumer makes it.
    unsafe { ((*raw).deleter.unwrap())(raw) };
    eprintln!("the deleter returned");
}

#[test]
#[cfg_attr(miri, ignore = "spawns a process")]
fn a_panicking_owner_aborts_instead_of_unwinding_into_c() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "export::panicking_owner_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            output.status.signal(),
            Some(6),
            "SIGABRT expected: {stderr}"
        );
    }
    assert!(stderr.contains("owner drop panicked"), "{stderr}");
    assert!(
        stderr.contains("panic in a function that cannot unwind"),
        "{stderr}"
    );
    assert!(!stderr.contains("the deleter returned"), "{stderr}");
}

#[test]
#[cfg(target_pointer_width = "64")]
fn an_owner_whose_extents_do_not_fit_i64_is_refused() {
    use dlpack_abi::dlpack::{ImportError, TensorDescription, TensorOwner};
    /// Describes an empty tensor with an extent above `i64::MAX`.
    struct Huge(Vec<u8>, [usize; 2], [isize; 2]);
    // SAFETY: the vector is the owner's own allocation.
    unsafe impl TensorOwner for Huge {
        fn describe(&mut self) -> TensorDescription<'_> {
            TensorDescription::cpu(&mut self.0, &[]).with_native_dims(&self.1, &self.2)
        }
    }
    let error = VersionedTensor::from_owner(Huge(vec![0; 4], [0, usize::MAX], [1, 1])).unwrap_err();
    assert_eq!(
        error,
        ExportError::Invalid(ImportError::SizeOverflow {
            dim: 1,
            extent: i64::MAX
        })
    );
}

#[test]
fn share_reexports_a_validated_tensor_and_drops_its_owner_once() {
    let (buffer, dropped) = counted(vec![0u16, 1, 2, 3, 4, 5]);
    // Rows backwards from element 3: reaches before the first element.
    let tensor = Export::new(buffer, &[2, 3])
        .strides(&[-3, 1])
        .first_element(3)
        .finish()
        .unwrap();
    let shared = Arc::new(tensor);
    // SAFETY: READ_ONLY: consumers only read.
    let again =
        // SAFETY: READ_ONLY: consumers only read.
        unsafe { VersionedTensor::share(Arc::clone(&shared), DLPackFlags::READ_ONLY) }.unwrap();
    assert_eq!(again.view().data_ptr(), shared.view().data_ptr());
    assert_eq!(again.view().strides(), [-3, 1]);
    assert!(again.view().iter::<u16>().unwrap().eq([3, 4, 5, 0, 1, 2]));
    assert_eq!(again.view().flags(), DLPackFlags::READ_ONLY);
    // Handed over to C and back, it validates as what `share` said it was.
    // SAFETY: the export handed back once, as C would.
    let reimported = unsafe { VersionedTensor::from_raw(again.into_raw()) }.unwrap();
    assert_eq!(reimported.view().element_offsets(), (-3, 2));
    drop(shared);
    assert_eq!(drops(&dropped), 0, "the re-export holds the tensor");
    drop(reimported);
    assert_eq!(drops(&dropped), 1, "dropped once, by the last holder");
}

#[test]
fn share_keeps_the_storage_flag_drops_is_copied_and_refuses_what_cannot_be_carried() {
    let copied = Arc::new(Export::copy_of(&[1u8, 2], &[2]).finish().unwrap());
    let flags = DLPackFlags::IS_COPIED | DLPackFlags::IS_SUBBYTE_TYPE_PADDED;
    // SAFETY: nothing writes; the flags are what is checked.
    let again = unsafe { VersionedTensor::share(Arc::clone(&copied), flags) }.unwrap();
    assert_eq!(
        again.view().flags(),
        DLPackFlags::empty(),
        "the memory is shared: not a copy"
    );
    let mut again = again;
    assert_eq!(again.as_mut_slice::<u8>(), Err(AccessError::NotExclusive));
    // SAFETY: as above.
    let legacy = unsafe { LegacyTensor::share(Arc::clone(&copied), DLPackFlags::READ_ONLY) };
    assert_eq!(
        legacy.unwrap_err(),
        ExportError::FlagsNotRepresentable {
            flags: DLPackFlags::READ_ONLY
        }
    );
}

#[test]
fn share_refuses_a_handle_tensor_that_reaches_before_its_data_as_from_owner_does() {
    // An OpenCL tensor whose negative stride reaches before `data`: import accepts it (`data` is
    // a handle, nothing is read), but no buffer can be described for it.
    let mut f = crate::fixture::dlpack::Fixture::f32(&[4]);
    f.dl.device.device_type = kDLOpenCL;
    f.dl.byte_offset = 0;
    f.set_strides(&[-1]);
    // SAFETY: the fixture's struct, handed over once.
    let foreign = Arc::new(unsafe { VersionedTensor::from_raw(f.versioned()) }.unwrap());
    // SAFETY: nothing reads or writes the handle.
    let shared = unsafe { VersionedTensor::share(Arc::clone(&foreign), DLPackFlags::empty()) };
    assert!(matches!(
        shared,
        Err(ExportError::OutsideBuffer {
            first: -12,
            end: 4,
            len: 4
        })
    ));
    let described = TensorDescription::of(&foreign.view());
    assert_eq!((described.byte_offset, described.len), (0, 4));
}

/// `share` takes a row-major tensor's reach from its validated size (no walk over the strides):
/// the re-export agrees with what `from_owner` makes of the tensor's description, for row-major
/// tensors with an offset, empty ones, 0-d ones, packed sub-byte ones, extent-1 dimensions with
/// any stride, NULL strides, and the strided ones beside them.
#[test]
fn share_of_row_major_tensors_agrees_with_from_owner() {
    use crate::fixture::dlpack::{dtype, Fixture};
    use dlpack_abi::dlpack::{TensorDescription, TensorOwner};

    struct Described(Arc<VersionedTensor>);
    // SAFETY: describes the validated tensor the `Arc` keeps alive; the test only reads.
    unsafe impl TensorOwner for Described {
        fn describe(&mut self) -> TensorDescription<'_> {
            let padded = self.0.view().flags() & DLPackFlags::IS_SUBBYTE_TYPE_PADDED;
            TensorDescription::of(&self.0.view()).with_flags(DLPackFlags::READ_ONLY | padded)
        }
    }
    let cases: Vec<(&str, Fixture)> = vec![
        ("offset", {
            let mut f = Fixture::f32(&[2, 3]);
            f.dl.byte_offset = 8;
            f.set_shape(&[1, 3]);
            f
        }),
        ("empty", {
            let mut f = Fixture::f32(&[2, 0, 3]);
            f.dl.byte_offset = 4;
            f
        }),
        ("0-d", Fixture::f32(&[])),
        (
            "int4, packed",
            Fixture::new(&[0x21u8, 0x43], dtype(kDLInt, 4), &[3]),
        ),
        ("extent-1 dimensions", {
            let mut f = Fixture::f32(&[1, 4, 1]);
            f.set_strides(&[-7, 1, i64::MAX]);
            f
        }),
        ("NULL strides (1.0)", {
            let mut f = Fixture::f32(&[2, 2]);
            f.dl.strides = std::ptr::null_mut();
            f.version.minor = 0;
            f
        }),
        ("reversed", {
            let mut f = Fixture::f32(&[4]);
            f.dl.byte_offset = 12;
            f.set_strides(&[-1]);
            f
        }),
        ("transposed", {
            let mut f = Fixture::f32(&[2, 3]);
            f.set_shape(&[3, 2]);
            f.set_strides(&[1, 3]);
            f
        }),
    ];
    for (name, mut fixture) in cases {
        // SAFETY: the fixture's struct, handed over once; the fixture outlives the tensor.
        let tensor = unsafe { VersionedTensor::from_raw(fixture.versioned()) }.unwrap();
        let row_major = tensor.view().is_c_contiguous();
        let shared = Arc::new(tensor);
        let slow = VersionedTensor::from_owner(Described(Arc::clone(&shared))).unwrap();
        // SAFETY: READ_ONLY: the test only reads.
        let fast =
            unsafe { VersionedTensor::share(Arc::clone(&shared), DLPackFlags::READ_ONLY) }.unwrap();
        let (a, b) = (slow.view(), fast.view());
        assert_eq!(
            (a.raw().data, a.raw().byte_offset, a.device(), a.dtype()),
            (b.raw().data, b.raw().byte_offset, b.device(), b.dtype()),
            "{name}"
        );
        assert_eq!((a.shape(), a.strides()), (b.shape(), b.strides()), "{name}");
        assert_eq!(
            (a.flags(), a.byte_size()),
            (b.flags(), b.byte_size()),
            "{name}"
        );
        assert_eq!(a.element_offsets(), b.element_offsets(), "{name}");
        assert_eq!(b.is_c_contiguous(), row_major, "{name}");
        drop((slow, fast, shared));
        assert_eq!(
            fixture.calls(),
            1,
            "{name}: the producer's deleter ran once"
        );
    }
}

/// `AlignedVec`: every element type starts on a 64-byte boundary, through growth across blocks,
/// and exports as written, writable.
#[test]
fn aligned_vectors_stay_aligned_through_growth_and_export() {
    use dlpack_abi::dlpack::{AlignedVec, HOST_ALIGNMENT};

    fn check<T: dlpack_abi::dlpack::Element + Send + PartialEq + core::fmt::Debug>(values: &[T]) {
        let mut grown = AlignedVec::<T>::new();
        for &value in values {
            grown.push(value);
            assert_eq!(grown.as_ptr() as usize % HOST_ALIGNMENT, 0);
        }
        assert_eq!(grown.as_slice(), values);
        let collected: AlignedVec<T> = values.iter().copied().collect();
        assert_eq!(collected.as_slice(), values);
        let n = i64::try_from(values.len()).unwrap();
        let tensor = dlpack_abi::dlpack::Export::new(collected, &[n])
            .finish()
            .unwrap();
        assert_eq!(tensor.view().as_slice::<T>().unwrap(), values);
        assert_eq!(tensor.view().data_ptr() as usize % HOST_ALIGNMENT, 0);
        assert!(!tensor.view().flags().contains(DLPackFlags::READ_ONLY));
    }
    check::<u8>(&(0..=200).collect::<Vec<u8>>());
    check::<i16>(&(-40..40).collect::<Vec<i16>>());
    check::<f64>(&(0..33).map(f64::from).collect::<Vec<f64>>());
    check::<u32>(&[]);
    let zeroed = AlignedVec::<u64>::try_zeroed(9).unwrap();
    assert_eq!(zeroed.as_slice(), [0; 9]);
    assert!(
        AlignedVec::<u64>::try_zeroed(usize::MAX).is_none(),
        "size overflow is refused"
    );
}

/// `Arc<AlignedVec<T>>`: a unique one exports writable, a shared one read-only (the other
/// holder may read), as `Arc<[T]>` does.
#[test]
fn shared_aligned_vectors_export_read_only_and_unique_ones_writable() {
    use dlpack_abi::dlpack::AlignedVec;

    let values: Arc<AlignedVec<u16>> = Arc::new((1..=4).collect());
    let other = Arc::clone(&values);
    let shared = dlpack_abi::dlpack::Export::new(values, &[4])
        .finish()
        .unwrap();
    assert!(shared.view().flags().contains(DLPackFlags::READ_ONLY));
    assert_eq!(shared.view().as_slice::<u16>().unwrap(), other.as_slice());
    drop(shared);
    assert_eq!(
        Arc::strong_count(&other),
        1,
        "the export gave its holder back"
    );
    let mut unique = dlpack_abi::dlpack::Export::new(other, &[2, 2])
        .finish()
        .unwrap();
    assert!(!unique.view().flags().contains(DLPackFlags::READ_ONLY));
    unique.as_mut_slice::<u16>().unwrap()[3] = 40;
    assert_eq!(unique.view().get::<u16>(&[1, 1]).unwrap(), 40);
}
