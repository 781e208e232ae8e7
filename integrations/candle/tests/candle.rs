//! The candle bridge against the real candle-core 0.11: round trips of every dtype candle and
//! DLPack share, strided, transposed, narrowed and broadcast tensors element by element, the
//! zero-copy export on candle's own buffer (pointers compared), the storage kept alive by the
//! export and freed once after it (watched through the global allocator), flags, and refusals.
//!
//! Not run under Miri: candle is foreign code with SIMD kernels, threads (rayon) and inline
//! assembly paths that Miri cannot execute.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use candle_core::cpu_backend::CpuStorage;
use candle_core::op::BackpropOp;
use candle_core::{DType, Device, IndexOp, Storage, Tensor};
use dlpack_abi::dlpack::{
    AccessError, Element, Export, HostBuffer, HostMemory, TensorDescription, TensorOwner,
    VersionedTensor,
};
use dlpack_abi::raw::{
    kDLBfloat, kDLCPU, kDLCUDA, kDLCUDAHost, kDLFloat, kDLFloat8_e4m3fn, kDLFloat8_e8m0fnu, kDLInt,
    kDLUInt, DLDataType, DLDevice, DLPackFlags,
};
use dlpack_abi_candle::{
    candle_dtype, copy_tensor, dlpack_dtype, export_tensor, export_tensor_copy, CandleError,
};

/// The global allocator, which counts the frees of one watched address.
struct Watching;

/// The watched address (0: none); reset once it is freed.
static WATCHED: AtomicUsize = AtomicUsize::new(0);
/// How often the watched address was freed.
static FREED: AtomicUsize = AtomicUsize::new(0);
/// One watching test at a time.
static WATCH: Mutex<()> = Mutex::new(());

/// Counts a free of `address` if it is the watched one.
fn note_free(address: *mut u8) {
    let watched = address as usize;
    if WATCHED
        .compare_exchange(watched, 0, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        FREED.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: forwards every call to `System` unchanged; only reads and writes two atomics besides.
unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, address: *mut u8, layout: Layout) {
        note_free(address);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(address, layout) }
    }
    unsafe fn realloc(&self, address: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        note_free(address);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(address, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: Watching = Watching;

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The start of a CPU tensor's storage (the vector candle holds).
fn storage_address(tensor: &Tensor) -> usize {
    let (storage, _) = tensor.storage_and_layout();
    let Storage::Cpu(cpu) = &*storage else {
        panic!("not a CPU tensor")
    };
    match cpu {
        CpuStorage::U8(v) => v.as_ptr() as usize,
        CpuStorage::U32(v) => v.as_ptr() as usize,
        CpuStorage::I16(v) => v.as_ptr() as usize,
        CpuStorage::I32(v) => v.as_ptr() as usize,
        CpuStorage::I64(v) => v.as_ptr() as usize,
        CpuStorage::BF16(v) => v.as_ptr() as usize,
        CpuStorage::F16(v) => v.as_ptr() as usize,
        CpuStorage::F32(v) => v.as_ptr() as usize,
        CpuStorage::F64(v) => v.as_ptr() as usize,
        CpuStorage::F8E4M3(v) => v.as_ptr() as usize,
        CpuStorage::F8E8M0(v)
        | CpuStorage::F6E2M3(v)
        | CpuStorage::F6E3M2(v)
        | CpuStorage::F4(v) => v.as_ptr() as usize,
    }
}

/// A tensor's elements in row-major order, as bytes (every dtype, F8E8M0 included, which
/// candle cannot convert).
fn element_bytes(tensor: &Tensor) -> Vec<u8> {
    let compact = tensor.contiguous().unwrap();
    let (storage, layout) = compact.storage_and_layout();
    let Storage::Cpu(cpu) = &*storage else {
        panic!("not a CPU tensor")
    };
    let size = compact.dtype().size_in_bytes();
    let start = layout.start_offset() * size;
    let end = start + layout.shape().elem_count() * size;
    let bytes: &[u8] = match cpu {
        CpuStorage::U8(v) | CpuStorage::F8E8M0(v) => v,
        CpuStorage::U32(v) => bytemuck::cast_slice(v),
        CpuStorage::I16(v) => bytemuck::cast_slice(v),
        CpuStorage::I32(v) => bytemuck::cast_slice(v),
        CpuStorage::I64(v) => bytemuck::cast_slice(v),
        CpuStorage::BF16(v) => bytemuck::cast_slice(v),
        CpuStorage::F16(v) => bytemuck::cast_slice(v),
        CpuStorage::F32(v) => bytemuck::cast_slice(v),
        CpuStorage::F64(v) => bytemuck::cast_slice(v),
        CpuStorage::F8E4M3(v) => return v[start..end].iter().map(|x| x.to_bits()).collect(),
        _ => panic!("no element size"),
    };
    bytes[start..end].to_vec()
}

/// A 2 x 3 CPU tensor of every dtype candle and DLPack share, with its DLPack dtype.
fn every_dtype() -> Result<Vec<(Tensor, DLDataType)>> {
    let cpu = &Device::Cpu;
    let floats = Tensor::new(&[[1.0f32, -2.0, 0.5], [4.0, 0.0, -0.25]], cpu)?;
    let dtype = |code, bits| DLDataType {
        code,
        bits,
        lanes: 1,
    };
    // OCP E8M0: 2^(bits - 127); 0xFF is NaN.
    let e8m0 = CpuStorage::F8E8M0(vec![127, 128, 126, 0, 254, 255]);
    Ok(vec![
        (
            Tensor::new(&[[1u8, 2, 3], [250, 0, 7]], cpu)?,
            dtype(kDLUInt, 8),
        ),
        (
            Tensor::new(&[[1u32, 2, 3], [u32::MAX, 0, 7]], cpu)?,
            dtype(kDLUInt, 32),
        ),
        (floats.to_dtype(DType::I16)?, dtype(kDLInt, 16)),
        (
            Tensor::new(&[[1i32, -2, 3], [i32::MIN, 0, 7]], cpu)?,
            dtype(kDLInt, 32),
        ),
        (
            Tensor::new(&[[1i64, -2, 3], [i64::MAX, 0, 7]], cpu)?,
            dtype(kDLInt, 64),
        ),
        (floats.to_dtype(DType::BF16)?, dtype(kDLBfloat, 16)),
        (floats.to_dtype(DType::F16)?, dtype(kDLFloat, 16)),
        (floats.clone(), dtype(kDLFloat, 32)),
        (floats.to_dtype(DType::F64)?, dtype(kDLFloat, 64)),
        (floats.to_dtype(DType::F8E4M3)?, dtype(kDLFloat8_e4m3fn, 8)),
        (
            Tensor::from_storage(Storage::Cpu(e8m0), (2, 3), BackpropOp::none(), false),
            dtype(kDLFloat8_e8m0fnu, 8),
        ),
    ])
}

#[test]
fn every_dtype_round_trips_zero_copy_and_copied() -> Result {
    for (tensor, dtype) in every_dtype()? {
        let name = format!("{:?}", tensor.dtype());
        assert_eq!(dlpack_dtype(tensor.dtype())?, dtype, "{name}");
        assert_eq!(candle_dtype(dtype)?, tensor.dtype(), "{name}");
        // SAFETY: nothing writes `tensor` in place in this test.
        let shared = unsafe { export_tensor(&tensor) }?;
        let copied = export_tensor_copy(&tensor)?;
        for exported in [&shared, &copied] {
            let view = exported.view();
            assert_eq!(
                (view.dtype(), view.shape()),
                (dtype, [2i64, 3].as_slice()),
                "{name}"
            );
            let back = copy_tensor(&view)?;
            assert_eq!(
                (back.dtype(), back.dims()),
                (tensor.dtype(), [2, 3].as_slice())
            );
            assert_eq!(element_bytes(&back), element_bytes(&tensor), "{name}");
        }
        assert_eq!(
            shared.as_raw().dl_tensor.data as usize,
            storage_address(&tensor)
        );
        assert_ne!(
            copied.as_raw().dl_tensor.data as usize,
            storage_address(&tensor)
        );
    }
    Ok(())
}

#[test]
fn values_read_through_dlpack_are_candles() -> Result {
    let cpu = &Device::Cpu;
    let floats = Tensor::new(&[1.0f32, -2.0, 0.5, 448.0], cpu)?;
    // SAFETY: nothing writes these tensors in place in this test.
    let exported = unsafe { export_tensor(&floats.to_dtype(DType::F16)?) }?;
    let halves: Vec<f32> = exported
        .view()
        .iter::<half::f16>()?
        .map(f32::from)
        .collect();
    assert_eq!(halves, [1.0, -2.0, 0.5, 448.0]);
    // SAFETY: as above.
    let exported = unsafe { export_tensor(&floats.to_dtype(DType::BF16)?) }?;
    let halves: Vec<f32> = exported
        .view()
        .iter::<half::bf16>()?
        .map(f32::from)
        .collect();
    assert_eq!(halves, [1.0, -2.0, 0.5, 448.0]);
    // OCP E4M3FN bits: 1.0 = 0x38, -2.0 = 0xC0, 0.5 = 0x30, 448 (its largest) = 0x7E.
    let e4m3 = element_bytes(&floats.to_dtype(DType::F8E4M3)?);
    assert_eq!(e4m3, [0x38, 0xC0, 0x30, 0x7E]);
    Ok(())
}

/// Checks a zero-copy export of `tensor` against candle's layout and values.
fn check_strided(tensor: &Tensor) -> Result {
    let expected = tensor.flatten_all()?.to_vec1::<f32>()?;
    let layout = tensor.layout();
    // SAFETY: nothing writes these tensors in place in this test.
    let exported = unsafe { export_tensor(tensor) }?;
    let view = exported.view();
    let dims: Vec<i64> = tensor.dims().iter().map(|&d| d as i64).collect();
    let strides: Vec<i64> = layout.stride().iter().map(|&s| s as i64).collect();
    assert_eq!(view.shape(), dims);
    assert_eq!(view.strides(), *strides.as_slice());
    let raw = &exported.as_raw().dl_tensor;
    assert_eq!(raw.data as usize, storage_address(tensor));
    assert_eq!(raw.byte_offset, layout.start_offset() as u64 * 4);
    assert_eq!(view.iter::<f32>()?.collect::<Vec<_>>(), expected);
    assert_eq!(view.flags(), DLPackFlags::READ_ONLY);
    let back = copy_tensor(&view)?;
    assert_eq!(back.flatten_all()?.to_vec1::<f32>()?, expected);
    assert!(back.is_contiguous());
    let copied = export_tensor_copy(tensor)?;
    assert_eq!(copied.view().as_slice::<f32>()?, expected);
    assert_eq!(copied.view().shape(), dims);
    Ok(())
}

#[test]
fn strided_transposed_narrowed_and_broadcast_tensors_keep_their_layout() -> Result {
    let cpu = &Device::Cpu;
    let cube = Tensor::arange(0f32, 24.0, cpu)?.reshape((2, 3, 4))?;
    let cases = [
        cube.clone(),
        cube.t()?,
        cube.narrow(2, 1, 2)?,
        cube.narrow(0, 1, 1)?,
        cube.permute((2, 0, 1))?,
        cube.i((.., 1.., 3))?,
        cube.i((1, 2))?,
        cube.i((1, 2, 3))?, // 0-d, at element 23
        Tensor::arange(0f32, 3.0, cpu)?
            .reshape((3, 1))?
            .broadcast_as((3, 4))?,
    ];
    for tensor in &cases {
        check_strided(tensor)?;
    }
    let start_offsets: Vec<usize> = cases.iter().map(|t| t.layout().start_offset()).collect();
    assert_eq!(start_offsets, [0, 0, 1, 12, 0, 7, 20, 23, 0]);
    Ok(())
}

#[test]
fn empty_tensors_export_and_import() -> Result {
    let empty = Tensor::zeros((0, 3), DType::F32, &Device::Cpu)?;
    // SAFETY: nothing writes `empty` in place.
    let exported = unsafe { export_tensor(&empty) }?;
    assert_eq!(exported.view().shape(), [0, 3]);
    let back = copy_tensor(&exported.view())?;
    assert_eq!(back.dims(), [0, 3]);
    assert_eq!(export_tensor_copy(&empty)?.view().element_count(), 0);
    Ok(())
}

#[test]
fn import_honours_negative_strides_and_byte_offset() -> Result {
    // Rows reversed and every other column of a 3 x 4 buffer, starting at its last row.
    let values: Vec<i32> = (0..12).collect();
    let tensor = Export::new(values, &[3, 2])
        .first_element(8)
        .strides(&[-4, 2])
        .finish()?;
    assert_eq!(tensor.as_raw().dl_tensor.byte_offset, 32);
    let imported = copy_tensor(&tensor.view())?;
    drop(tensor);
    assert_eq!(imported.to_vec2::<i32>()?, [[8, 10], [4, 6], [0, 2]]);
    Ok(())
}

/// A `Vec` whose drop is counted.
struct Counted(Vec<f32>, Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}
// SAFETY: reports the vector's own elements, which only the buffer holds.
unsafe impl HostBuffer for Counted {
    type Element = f32;
    fn memory(&mut self) -> HostMemory<f32> {
        self.0.memory()
    }
}

#[test]
fn import_copies_so_the_producer_is_freed_once_right_after() -> Result {
    let drops = Arc::new(AtomicUsize::new(0));
    let buffer = Counted(vec![1.0, 2.0, 3.0, 4.0], Arc::clone(&drops));
    let raw = Export::new(buffer, &[2, 2]).finish()?.into_raw();
    // SAFETY: `raw` is live and its deleter has not run.
    let tensor = unsafe { VersionedTensor::from_raw(raw) }?;
    let imported = copy_tensor(&tensor.view())?;
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(tensor);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(imported.to_vec2::<f32>()?, [[1.0, 2.0], [3.0, 4.0]]);
    Ok(())
}

#[test]
fn the_export_keeps_candles_storage_alive_and_frees_it_once() -> Result {
    let _one_at_a_time = WATCH
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for on_another_thread in [false, true] {
        let rows = Tensor::arange(0f32, 4096.0, &Device::Cpu)?.reshape((64, 64))?;
        let middle = rows.narrow(0, 2, 3)?;
        FREED.store(0, Ordering::SeqCst);
        WATCHED.store(storage_address(&rows), Ordering::SeqCst);
        // SAFETY: nothing writes `rows`' storage in place in this test.
        let exported = unsafe { export_tensor(&middle) }?;
        drop((rows, middle));
        assert_eq!(FREED.load(Ordering::SeqCst), 0, "freed while exported");
        assert_eq!(exported.view().get::<f32>(&[0, 1])?, 129.0);
        // Through the crate's import path, as a consumer takes it: the deleter runs on drop.
        // SAFETY: the pointer is live and its deleter has not run.
        let consumed = unsafe { VersionedTensor::from_raw(exported.into_raw()) }?;
        assert_eq!(consumed.view().as_slice::<f32>()?[..2], [128.0, 129.0]);
        assert_eq!(FREED.load(Ordering::SeqCst), 0);
        if on_another_thread {
            std::thread::spawn(move || drop(consumed)).join().unwrap();
        } else {
            drop(consumed);
        }
        assert_eq!(
            FREED.load(Ordering::SeqCst),
            1,
            "not freed once after the export"
        );
    }
    Ok(())
}

#[test]
fn zero_copy_is_read_only_and_copies_are_the_consumers() -> Result {
    let values = Tensor::new(&[[1u32, 2], [3, 4]], &Device::Cpu)?;
    // SAFETY: `values` is written in place only after `shared` is dropped.
    let mut shared = unsafe { export_tensor(&values) }?;
    assert_eq!(shared.view().flags(), DLPackFlags::READ_ONLY);
    assert_eq!(shared.as_mut_slice::<u32>(), Err(AccessError::ReadOnly));
    assert!(
        shared.into_legacy().is_err(),
        "a legacy tensor cannot say READ_ONLY"
    );
    let mut copied = export_tensor_copy(&values)?;
    assert_eq!(copied.view().flags(), DLPackFlags::IS_COPIED);
    values.zero_set()?;
    copied.as_mut_slice::<u32>()?[3] = 40;
    assert_eq!(copied.view().as_slice::<u32>()?, [1, 2, 3, 40]);
    assert_eq!(values.to_vec2::<u32>()?, [[0, 0], [0, 0]]);
    Ok(())
}

#[test]
fn copies_take_only_the_tensors_elements() -> Result {
    let rows = Tensor::arange(0i64, 1000, &Device::Cpu)?.reshape((100, 10))?;
    let copied = export_tensor_copy(&rows.narrow(0, 98, 2)?)?;
    assert_eq!(copied.view().shape(), [2, 10]);
    assert_eq!(copied.as_raw().dl_tensor.byte_offset, 0);
    assert_eq!(
        copied.view().as_slice::<i64>()?,
        (980..1000).collect::<Vec<_>>()
    );
    Ok(())
}

#[test]
fn candle_dtypes_without_a_dlpack_format_are_refused() {
    for dtype in [DType::F6E2M3, DType::F6E3M2, DType::F4] {
        let bytes = vec![0u8; 3];
        let storage = match dtype {
            DType::F6E2M3 => CpuStorage::F6E2M3(bytes),
            DType::F6E3M2 => CpuStorage::F6E3M2(bytes),
            _ => CpuStorage::F4(bytes),
        };
        let tensor = Tensor::from_storage(Storage::Cpu(storage), 4, BackpropOp::none(), false);
        // SAFETY: nothing writes `tensor` in place.
        let refused = unsafe { export_tensor(&tensor) }.unwrap_err();
        assert!(matches!(refused, CandleError::UnsupportedCandleDtype(d) if d == dtype));
        let refused = export_tensor_copy(&tensor).unwrap_err();
        assert!(matches!(refused, CandleError::UnsupportedCandleDtype(d) if d == dtype));
        assert!(matches!(
            dlpack_dtype(dtype),
            Err(CandleError::UnsupportedCandleDtype(_))
        ));
    }
}

/// A tensor description over a `Vec<u8>`, with any device and dtype.
struct Described {
    bytes: Vec<u8>,
    shape: [i64; 1],
    device: DLDevice,
    dtype: DLDataType,
}

// SAFETY: the vector is the owner's own allocation (never read on a non-CPU device here).
unsafe impl TensorOwner for Described {
    fn describe(&mut self) -> TensorDescription<'_> {
        let len = self.bytes.len();
        TensorDescription::new(
            self.bytes.as_mut_ptr().cast(),
            len,
            self.device,
            self.dtype,
            &self.shape,
        )
    }
}

fn described(device: DLDevice, dtype: DLDataType) -> VersionedTensor {
    let bytes = vec![0u8; 16];
    let owner = Described {
        bytes,
        shape: [2],
        device,
        dtype,
    };
    VersionedTensor::from_owner(owner).unwrap()
}

/// The CPU, as DLPack names it.
const CPU: DLDevice = DLDevice {
    device_type: kDLCPU,
    device_id: 0,
};

#[test]
fn imports_refuse_devices_dtypes_and_lanes_candle_has_not() {
    let cpu = CPU;
    for device_type in [kDLCUDA, kDLCUDAHost] {
        let device = DLDevice {
            device_type,
            device_id: 0,
        };
        let tensor = described(device, f32::DTYPE);
        let refused = copy_tensor(&tensor.view()).unwrap_err();
        assert!(matches!(refused, CandleError::UnsupportedDevice(d) if d == device));
    }
    for dtype in [
        i8::DTYPE,
        u16::DTYPE,
        u64::DTYPE,
        DLDataType {
            code: kDLFloat,
            bits: 8,
            lanes: 1,
        },
    ] {
        let refused = copy_tensor(&described(cpu, dtype).view()).unwrap_err();
        assert!(matches!(refused, CandleError::UnsupportedDtype(d) if d == dtype));
        assert!(matches!(
            candle_dtype(dtype),
            Err(CandleError::UnsupportedDtype(_))
        ));
    }
    let vector = DLDataType {
        code: kDLFloat,
        bits: 32,
        lanes: 2,
    };
    let refused = copy_tensor(&described(cpu, vector).view()).unwrap_err();
    assert!(matches!(refused, CandleError::VectorDtype(d) if d == vector));
    assert_eq!(
        refused.to_string(),
        "the dtype has 2 lanes; candle's elements are scalars"
    );
}

#[test]
fn imports_refuse_what_typed_access_refuses() {
    let owner = Unaligned {
        bytes: vec![0u8; 16],
        shape: [2],
    };
    let tensor = VersionedTensor::from_owner(owner).unwrap();
    let refused = copy_tensor(&tensor.view()).unwrap_err();
    assert!(
        matches!(
            refused,
            CandleError::Access(AccessError::Misaligned { align: 4, .. })
        ),
        "{refused:?}"
    );
}

/// Two `f32`s one byte into a byte buffer: misaligned.
struct Unaligned {
    bytes: Vec<u8>,
    shape: [i64; 1],
}

// SAFETY: the vector is the owner's own allocation; the tensor (bytes 1..9) ends inside it.
unsafe impl TensorOwner for Unaligned {
    fn describe(&mut self) -> TensorDescription<'_> {
        let len = self.bytes.len();
        let start = self.bytes.as_mut_ptr().cast();
        TensorDescription::new(start, len, CPU, f32::DTYPE, &self.shape).with_byte_offset(1)
    }
}
