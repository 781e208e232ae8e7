//! The C Device Data Interface (`ARROW_C_DEVICE_DATA_INTERFACE`): `ArrowDeviceType` and
//! `ArrowDeviceArray`.

use core::ffi::c_void;

use super::ArrowArray;

/// The kind of memory an array's buffers live in (C `typedef int32_t ArrowDeviceType`).
///
/// Values are those of DLPack's `DLDeviceType`. Newer producers may send values this crate does
/// not name, so this is an open newtype; an unknown value prints as `ArrowDeviceType(17)`.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArrowDeviceType(pub i32);

/// CPU memory; `sync_event` must be NULL.
pub const ARROW_DEVICE_CPU: ArrowDeviceType = ArrowDeviceType(1);
/// CUDA device memory; `sync_event` points to a `cudaEvent_t`.
pub const ARROW_DEVICE_CUDA: ArrowDeviceType = ArrowDeviceType(2);
/// Pinned host memory from `cudaMallocHost`; `sync_event` points to a `cudaEvent_t`.
pub const ARROW_DEVICE_CUDA_HOST: ArrowDeviceType = ArrowDeviceType(3);
/// OpenCL device memory; `sync_event` points to a `cl_event`.
pub const ARROW_DEVICE_OPENCL: ArrowDeviceType = ArrowDeviceType(4);
/// Vulkan buffer; `sync_event` points to a `VkEvent`.
pub const ARROW_DEVICE_VULKAN: ArrowDeviceType = ArrowDeviceType(7);
/// Metal memory; `sync_event` points to an `MTLEvent`.
pub const ARROW_DEVICE_METAL: ArrowDeviceType = ArrowDeviceType(8);
/// Verilog simulator buffer.
pub const ARROW_DEVICE_VPI: ArrowDeviceType = ArrowDeviceType(9);
/// ROCm device memory; `sync_event` points to a `hipEvent_t`.
pub const ARROW_DEVICE_ROCM: ArrowDeviceType = ArrowDeviceType(10);
/// Pinned host memory from `hipMallocHost`; `sync_event` points to a `hipEvent_t`.
pub const ARROW_DEVICE_ROCM_HOST: ArrowDeviceType = ArrowDeviceType(11);
/// Reserved extension device; the producer documents what `sync_event` means.
pub const ARROW_DEVICE_EXT_DEV: ArrowDeviceType = ArrowDeviceType(12);
/// CUDA managed memory; `sync_event` points to a `cudaEvent_t`.
pub const ARROW_DEVICE_CUDA_MANAGED: ArrowDeviceType = ArrowDeviceType(13);
/// oneAPI unified shared memory; `sync_event` points to a `sycl::event`.
pub const ARROW_DEVICE_ONEAPI: ArrowDeviceType = ArrowDeviceType(14);
/// WebGPU buffer.
pub const ARROW_DEVICE_WEBGPU: ArrowDeviceType = ArrowDeviceType(15);
/// Qualcomm Hexagon DSP memory.
pub const ARROW_DEVICE_HEXAGON: ArrowDeviceType = ArrowDeviceType(16);

open_enum_names!(ArrowDeviceType {
    ARROW_DEVICE_CPU,
    ARROW_DEVICE_CUDA,
    ARROW_DEVICE_CUDA_HOST,
    ARROW_DEVICE_OPENCL,
    ARROW_DEVICE_VULKAN,
    ARROW_DEVICE_METAL,
    ARROW_DEVICE_VPI,
    ARROW_DEVICE_ROCM,
    ARROW_DEVICE_ROCM_HOST,
    ARROW_DEVICE_EXT_DEV,
    ARROW_DEVICE_CUDA_MANAGED,
    ARROW_DEVICE_ONEAPI,
    ARROW_DEVICE_WEBGPU,
    ARROW_DEVICE_HEXAGON,
});

/// An [`ArrowArray`] whose buffers live on one device. Only buffer contents are device memory;
/// the structs, pointer arrays and strings are CPU memory. Released iff `array.release` is NULL.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowDeviceArray {
    /// The array, by value; its `release` releases the whole device array.
    pub array: ArrowArray,
    /// Device ordinal; -1 for devices without ids (Arrow C++ uses -1 for CPU).
    pub device_id: i64,
    /// The kind of memory the buffers live in.
    pub device_type: ArrowDeviceType,
    /// NULL when no synchronisation is needed; otherwise points to the device's event object
    /// (e.g. a `cudaEvent_t`), owned by the producer until release. Wait on it before reading.
    pub sync_event: *mut c_void,
    /// Reserved; producers write zeros, consumers must not reject other values.
    pub reserved: [i64; 3],
}
