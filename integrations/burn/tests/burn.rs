//! The burn bridge against the real `burn-std` (`burn::tensor::TensorData`): every dtype's
//! mapping and values, shapes and strides, memory shared where promised (pointers compared),
//! flags, every buffer and tensor released exactly once, and each refusal's exact error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use burn_std::{AllocationProperty, BoolStore, Bytes, DType, QuantScheme, TensorData};
use dlpack_abi::dlpack::{AccessError, Element, Export, HostBuffer, HostMemory, VersionedTensor};
use dlpack_abi::raw::{kDLBfloat, kDLBool, kDLCPU, kDLCUDA, kDLFloat, kDLInt, kDLUInt};
use dlpack_abi::raw::{DLDataType, DLDevice, DLPackFlags, DLTensor};
use dlpack_abi_burn::{copy_tensor_data, export_tensor_data, import_tensor_data, BurnError};

#[path = "../../../tests/fixture/watched_frees.rs"]
mod watched_frees;
use watched_frees::{frees, watch};

/// What a C consumer does with an export: takes the raw pointer and imports it.
fn through_c(tensor: VersionedTensor) -> VersionedTensor {
    let raw = tensor.into_raw();
    // SAFETY: `raw` is live and its deleter has not run.
    unsafe { VersionedTensor::from_raw(raw) }.expect("valid")
}

/// `data` out (zero-copy, writable, the expected DLPack dtype) and back in through C (zero-copy
/// again), as `expected` burn dtype, with the same bytes.
fn round_trip(data: TensorData, dlpack: DLDataType, expected: DType) {
    let shape = data.shape().as_slice().to_vec();
    let bytes = data.as_bytes().to_vec();
    let address = data.as_bytes().as_ptr();
    let tensor = export_tensor_data(data).expect("exported");
    let view = tensor.view();
    assert_eq!(view.dtype(), dlpack, "{expected:?}");
    assert_eq!(view.shape(), [2, 3]);
    assert_eq!(view.strides(), [3, 1]);
    assert_eq!(
        view.device(),
        DLDevice {
            device_type: kDLCPU,
            device_id: 0
        }
    );
    assert_eq!(view.flags(), DLPackFlags::IS_COPIED);
    assert_eq!(view.data_ptr().cast_const().cast(), address);

    // Through C: IS_COPIED makes it the consumer's alone, so burn shares it again.
    let tensor = through_c(tensor);
    let back = import_tensor_data(tensor).expect("imported");
    assert_eq!(back.dtype(), expected);
    assert_eq!(back.shape().as_slice(), shape);
    assert_eq!(back.as_bytes(), bytes);
    assert_eq!(back.as_bytes().as_ptr(), address);
    watch(address);
    drop(back);
    assert_eq!(frees(), 1, "{expected:?}");
}

const fn dtype(code: dlpack_abi::raw::DLDataTypeCode, bits: u8) -> DLDataType {
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

#[test]
fn every_dtype_round_trips_without_copying() {
    let shape = [2, 3];
    round_trip(
        TensorData::new(vec![1.5f64, -2.0, 0.0, 4.0, 5.0, 6.0], shape),
        dtype(kDLFloat, 64),
        DType::F64,
    );
    round_trip(
        TensorData::new(vec![1.5f32, -2.0, 0.0, 4.0, 5.0, 6.0], shape),
        dtype(kDLFloat, 32),
        DType::F32,
    );
    let halves = [1.5f32, -2.0, 0.0, 4.0, 5.0, 6.0];
    round_trip(
        TensorData::new(halves.map(half::f16::from_f32).to_vec(), shape),
        dtype(kDLFloat, 16),
        DType::F16,
    );
    round_trip(
        TensorData::new(halves.map(half::bf16::from_f32).to_vec(), shape),
        dtype(kDLBfloat, 16),
        DType::BF16,
    );
    round_trip(
        TensorData::new(vec![i64::MIN, -1, 0, 1, 2, i64::MAX], shape),
        dtype(kDLInt, 64),
        DType::I64,
    );
    round_trip(
        TensorData::new(vec![i32::MIN, -1, 0, 1, 2, i32::MAX], shape),
        dtype(kDLInt, 32),
        DType::I32,
    );
    round_trip(
        TensorData::new(vec![i16::MIN, -1, 0, 1, 2, i16::MAX], shape),
        dtype(kDLInt, 16),
        DType::I16,
    );
    round_trip(
        TensorData::new(vec![i8::MIN, -1, 0, 1, 2, i8::MAX], shape),
        dtype(kDLInt, 8),
        DType::I8,
    );
    round_trip(
        TensorData::new(vec![0u64, 1, 2, 3, 4, u64::MAX], shape),
        dtype(kDLUInt, 64),
        DType::U64,
    );
    round_trip(
        TensorData::new(vec![0u32, 1, 2, 3, 4, u32::MAX], shape),
        dtype(kDLUInt, 32),
        DType::U32,
    );
    round_trip(
        TensorData::new(vec![0u16, 1, 2, 3, 4, u16::MAX], shape),
        dtype(kDLUInt, 16),
        DType::U16,
    );
    round_trip(
        TensorData::new(vec![0u8, 1, 2, 3, 4, u8::MAX], shape),
        dtype(kDLUInt, 8),
        DType::U8,
    );
    round_trip(
        TensorData::new(vec![true, false, true, true, false, false], shape),
        dtype(kDLBool, 8),
        DType::Bool(BoolStore::Native),
    );
    // Read in Rust through the core's `Bool8`, DLPack's boolean (`bool` is no `Element`).
    let mask = TensorData::new(vec![true, false, true, true, false, false], shape);
    let tensor = export_tensor_data(mask).unwrap();
    let read: Vec<bool> = tensor
        .view()
        .iter::<dlpack_abi::dlpack::Bool8>()
        .unwrap()
        .map(dlpack_abi::dlpack::Bool8::get)
        .collect();
    assert_eq!(read, [true, false, true, true, false, false]);
    // One-byte booleans stored as u8 are the same format; they come back as burn's native bools.
    let flags = vec![1u8, 0, 1, 1, 0, 0];
    let data = TensorData::from_bytes_vec(flags, shape, DType::Bool(BoolStore::U8));
    round_trip(data, dtype(kDLBool, 8), DType::Bool(BoolStore::Native));
    // Flex32 is stored as f32; it comes back as F32.
    let data =
        TensorData::from_bytes_vec(bytemuck::cast_slice(&halves).to_vec(), shape, DType::Flex32);
    round_trip(data, dtype(kDLFloat, 32), DType::F32);
}

#[test]
fn values_and_shapes_are_kept_both_ways() {
    let data = TensorData::new(
        (0..24).map(|i| i as f32 / 2.0).collect::<Vec<_>>(),
        [2, 3, 4],
    );
    let tensor = export_tensor_data(data).expect("exported");
    assert_eq!(tensor.view().shape(), [2, 3, 4]);
    assert_eq!(tensor.view().strides(), [12, 4, 1]);
    assert_eq!(tensor.view().get::<f32>(&[1, 2, 3]), Ok(11.5));
    let back = copy_tensor_data(&tensor.view()).expect("copied");
    assert_eq!(back.shape().as_slice(), [2, 3, 4]);
    assert_eq!(back.as_slice::<f32>().unwrap()[23], 11.5);
    assert_ne!(
        back.as_bytes().as_ptr(),
        tensor.view().data_ptr().cast_const().cast()
    );

    // 0-d and empty tensors.
    let scalar = export_tensor_data(TensorData::new(vec![7i32], [0usize; 0])).unwrap();
    assert_eq!(
        (scalar.view().ndim(), scalar.view().get::<i32>(&[])),
        (0, Ok(7))
    );
    assert_eq!(
        import_tensor_data(scalar)
            .unwrap()
            .as_slice::<i32>()
            .unwrap(),
        [7]
    );
    let empty = export_tensor_data(TensorData::new(Vec::<u16>::new(), [4, 0])).unwrap();
    assert_eq!(empty.view().shape(), [4, 0]);
    let back = import_tensor_data(empty).unwrap();
    assert_eq!(
        (back.shape().as_slice(), back.num_elements()),
        ([4, 0].as_slice(), 0)
    );
}

#[test]
fn strided_tensors_are_copied_through_their_strides() {
    // The transpose of a 2 x 3 matrix, and its rows reversed.
    let transposed = Export::new(vec![0i32, 1, 2, 3, 4, 5], &[3, 2])
        .strides(&[1, 3])
        .finish()
        .unwrap();
    let address = transposed.view().data_ptr();
    let data = import_tensor_data(transposed).expect("copied");
    assert_eq!(data.shape().as_slice(), [3, 2]);
    assert_eq!(data.as_slice::<i32>().unwrap(), [0, 3, 1, 4, 2, 5]);
    assert_ne!(data.as_bytes().as_ptr(), address.cast_const().cast());

    let reversed = Export::new(vec![0.5f64, 1.5, 2.5, 3.5, 4.5, 5.5], &[2, 3])
        .first_element(3)
        .strides(&[-3, 1])
        .finish()
        .unwrap();
    let data = copy_tensor_data(&reversed.view()).expect("copied");
    assert_eq!(
        data.as_slice::<f64>().unwrap(),
        [3.5, 4.5, 5.5, 0.5, 1.5, 2.5]
    );
    // Broadcast (zero strides).
    let broadcast = Export::new(vec![true as u8], &[2, 2])
        .strides(&[0, 0])
        .finish()
        .unwrap();
    assert_eq!(
        copy_tensor_data(&broadcast.view())
            .unwrap()
            .as_slice::<u8>()
            .unwrap(),
        [1, 1, 1, 1]
    );
}

/// A host buffer that counts its drops.
struct Counted(Vec<u16>, Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: reports the vector's own elements, which only the buffer holds.
unsafe impl HostBuffer for Counted {
    type Element = u16;
    fn memory(&mut self) -> HostMemory<u16> {
        self.0.memory()
    }
}

#[test]
fn an_exclusive_tensor_is_shared_with_burn_and_released_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let values = vec![1u16, 2, 3, 4];
    let address = values.as_ptr();
    let tensor = Export::new(Counted(values, Arc::clone(&drops)), &[2, 2])
        .finish()
        .unwrap();
    let mut data = import_tensor_data(tensor).expect("shared");
    assert_eq!(data.bytes().property(), AllocationProperty::Other);
    assert_eq!(data.as_bytes().as_ptr().cast(), address);
    // burn's writes go to the tensor's memory.
    data.as_mut_slice::<u16>().unwrap()[3] = 40;
    assert_eq!(data.as_bytes().as_ptr().cast(), address);
    assert_eq!(data.as_slice::<u16>().unwrap(), [1, 2, 3, 40]);
    // burn's clone copies; dropping it leaves the tensor alone.
    let copy = data.clone();
    assert_ne!(copy.as_bytes().as_ptr().cast(), address);
    drop(copy);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(data);
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // Writable but not `IS_COPIED`, from a foreign producer (here ours, through C): nothing
    // proves this consumer holds it alone (the producer may have handed it out twice), so burn
    // gets a copy, and the tensor is released at once.
    let drops = Arc::new(AtomicUsize::new(0));
    let values = vec![7u16, 8];
    let address = values.as_ptr();
    let tensor = Export::new(Counted(values, Arc::clone(&drops)), &[2])
        .finish()
        .unwrap();
    let foreign = through_c(tensor);
    assert_eq!(foreign.view().flags(), DLPackFlags::empty());
    let data = import_tensor_data(foreign).expect("copied");
    assert_ne!(data.as_bytes().as_ptr().cast(), address);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(data.as_slice::<u16>().unwrap(), [7, 8]);

    // A read-only tensor is copied and released at once.
    let shared: Arc<[u16]> = Arc::from(vec![5u16, 6]);
    let tensor = Export::new(Arc::clone(&shared), &[2]).finish().unwrap();
    assert!(tensor.view().flags().contains(DLPackFlags::READ_ONLY));
    let data = import_tensor_data(tensor).expect("copied");
    assert_eq!(Arc::strong_count(&shared), 1);
    assert_ne!(data.as_bytes().as_ptr().cast(), shared.as_ptr());
    assert_eq!(data.as_slice::<u16>().unwrap(), [5, 6]);
}

/// Bytes owned by `bytes::Bytes`, counting the owner's drops.
struct Owner(Vec<u8>, Arc<AtomicUsize>);

impl AsRef<[u8]> for Owner {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn shared_bytes_are_exported_read_only_and_released_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let storage = bytemuck::cast_slice(&[1.0f32, 2.0, 3.0, 4.0]).to_vec();
    let shared = bytes::Bytes::from_owner(Owner(storage, Arc::clone(&drops)));
    let address = shared.as_ptr();
    let data = TensorData::from_bytes(
        Bytes::from_shared(shared, AllocationProperty::Other),
        [4],
        DType::F32,
    );
    let tensor = export_tensor_data(data).expect("exported");
    assert_eq!(tensor.view().flags(), DLPackFlags::READ_ONLY);
    assert_eq!(tensor.view().data_ptr().cast_const().cast(), address);
    assert_eq!(
        tensor.view().as_slice::<f32>().unwrap(),
        [1.0, 2.0, 3.0, 4.0]
    );
    // Through C and back: read-only, so burn gets a copy; the export is released once.
    let back = import_tensor_data(through_c(tensor)).expect("copied");
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(back.as_slice::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);

    // burn's copy-on-write clones share one allocation: both stay readable, read-only.
    let data = TensorData::new(vec![9u32, 8], [2]);
    let (bytes, _, _) = data.into_parts();
    let bytes = bytes.shared();
    let twin = TensorData::from_bytes(bytes.clone(), [2], DType::U32);
    let tensor = export_tensor_data(TensorData::from_bytes(bytes, [2], DType::U32)).unwrap();
    assert_eq!(tensor.view().flags(), DLPackFlags::READ_ONLY);
    assert_eq!(
        tensor.view().data_ptr().cast_const().cast(),
        twin.as_bytes().as_ptr()
    );
    drop(tensor);
    assert_eq!(twin.as_slice::<u32>().unwrap(), [9, 8]);
}

/// `tensor` with its raw struct changed as a foreign producer might have written it.
fn rewritten(tensor: VersionedTensor, change: impl FnOnce(&mut DLTensor)) -> VersionedTensor {
    let raw = tensor.into_raw();
    // SAFETY: `raw` is live and ours; only plain fields are changed.
    change(unsafe { &mut (*raw).dl_tensor });
    // SAFETY: `raw` is live and its deleter has not run.
    unsafe { VersionedTensor::from_raw(raw) }.expect("still valid")
}

#[test]
fn refusals_say_what_was_found() {
    // Out: quantized data and 32-bit booleans have no DLPack dtype.
    let quantized = DType::QFloat(QuantScheme::default());
    let data = TensorData::from_bytes_vec(vec![1, 2, 3, 4], [4], quantized);
    let error = export_tensor_data(data).unwrap_err();
    assert_eq!(error, BurnError::Quantized { dtype: quantized });
    let wide_bool = DType::Bool(BoolStore::U32);
    let data = TensorData::from_bytes_vec(vec![1, 0, 0, 0], [1], wide_bool);
    let error = export_tensor_data(data).unwrap_err();
    assert_eq!(error, BurnError::NoDlpackDtype { dtype: wide_bool });
    assert_eq!(
        error.to_string(),
        "burn's dtype Bool(U32) has no DLPack equivalent (kDLBool is one byte)"
    );

    // Out: f32s one byte into a shared buffer; the buffer is released once all the same.
    let drops = Arc::new(AtomicUsize::new(0));
    let shared = bytes::Bytes::from_owner(Owner(vec![0; 9], Arc::clone(&drops))).slice(1..);
    let address = shared.as_ptr() as usize;
    let data = TensorData::from_bytes(
        Bytes::from_shared(shared, AllocationProperty::Other),
        [2],
        DType::F32,
    );
    let error = export_tensor_data(data).unwrap_err();
    assert_eq!(error, BurnError::Misaligned { address, align: 4 });
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // In: dtypes burn does not have.
    let wide = Export::new(vec![1u128], &[1]).finish().unwrap();
    assert_eq!(
        import_tensor_data(wide).unwrap_err(),
        BurnError::NoBurnDtype { dtype: u128::DTYPE }
    );
    let vector = rewritten(Export::new(vec![0u8; 8], &[2]).finish().unwrap(), |raw| {
        raw.dtype = DLDataType {
            code: kDLUInt,
            bits: 8,
            lanes: 4,
        }
    });
    let found = vector.view().dtype();
    assert_eq!(
        copy_tensor_data(&vector.view()).unwrap_err(),
        BurnError::NoBurnDtype { dtype: found }
    );

    // In: device memory, and misaligned data.
    let on_gpu = rewritten(Export::new(vec![0f32; 2], &[2]).finish().unwrap(), |raw| {
        raw.device = DLDevice {
            device_type: kDLCUDA,
            device_id: 0,
        }
    });
    let device = on_gpu.view().device();
    let error = import_tensor_data(on_gpu).unwrap_err();
    assert_eq!(
        error,
        BurnError::Access(AccessError::NotHostAccessible { device })
    );
    let misaligned = rewritten(Export::new(vec![0u16; 3], &[2]).finish().unwrap(), |raw| {
        raw.byte_offset = 1
    });
    let address = misaligned.view().data_ptr() as usize;
    let error = copy_tensor_data(&misaligned.view()).unwrap_err();
    assert_eq!(
        error,
        BurnError::Access(AccessError::Misaligned { address, align: 2 })
    );
}
