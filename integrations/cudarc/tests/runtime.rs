//! What runs without a GPU: the CUDA runtime's answers that make no CUDA call (which devices it
//! drives, the streams it cannot record on), on any machine. The bridge itself, on a GPU, is
//! `examples/cudarc_gpu.rs` (scripts/gpu-test.sh).

use dlpack_abi::dlpack::{ConsumerStream, OrderError, StreamRuntime};
use dlpack_abi::raw::{
    kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged, kDLMetal, kDLROCM, DLDevice, DLDeviceType,
};
use dlpack_abi_cudarc::{cuda_available, CudaRuntime};

fn device(device_type: DLDeviceType) -> DLDevice {
    DLDevice {
        device_type,
        device_id: 0,
    }
}

#[test]
fn the_runtime_drives_cuda_memory_only_where_the_driver_loads() {
    let runtime = CudaRuntime::new();
    for cuda in [kDLCUDA, kDLCUDAHost, kDLCUDAManaged] {
        assert_eq!(runtime.drives(device(cuda)), cuda_available(), "{cuda:?}");
    }
    for other in [kDLCPU, kDLROCM, kDLMetal] {
        assert!(!runtime.drives(device(other)), "{other:?}");
    }
}

#[test]
fn the_runtime_records_on_no_stream_for_the_host_or_no_sync() {
    let runtime = CudaRuntime::new();
    for stream in [ConsumerStream::Host, ConsumerStream::NoSync] {
        match runtime.record(device(kDLCUDA), stream) {
            Err(OrderError::Unsupported { stream: refused }) => assert_eq!(refused, stream),
            Err(other) => panic!("{stream:?}: {other}"),
            Ok(_) => panic!("{stream:?}: an event recorded on no stream"),
        }
    }
}
