//! The C Device Data Interface (`ARROW_C_DEVICE_DATA_INTERFACE`): `ArrowDeviceType` and
//! `ArrowDeviceArray`.

use core::ffi::c_void;

use super::ArrowArray;

/// The kind of memory an array's buffers live in (C `typedef int32_t ArrowDeviceType`).
///
/// Values are those of DLPack's `DLDeviceType`. Newer producers may send values this crate does
/// not name, so this is an open newtype; an unknown value prints as `ArrowDeviceType(17)`.
///
/// ```
/// use dlpack_abi::raw::arrow::{ArrowDeviceType, ARROW_DEVICE_CUDA};
/// use dlpack_abi::raw::dlpack::{kDLCUDA, DLDeviceType};
///
/// // The values are DLPack's, so converting is lossless.
/// assert_eq!(ARROW_DEVICE_CUDA.0, kDLCUDA.0);
/// assert_eq!(DLDeviceType::from(ARROW_DEVICE_CUDA), kDLCUDA);
/// assert_eq!(format!("{:?}", ArrowDeviceType(17)), "ArrowDeviceType(17)");
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArrowDeviceType(pub i32);

/// CPU memory; `sync_event` must be NULL.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_CPU, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_CPU, ArrowDeviceType(1));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_CPU")), Some(&ARROW_DEVICE_CPU));
/// ```
pub const ARROW_DEVICE_CPU: ArrowDeviceType = ArrowDeviceType(1);

/// CUDA device memory; `sync_event` points to a `cudaEvent_t`.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_CUDA, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_CUDA, ArrowDeviceType(2));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_CUDA")), Some(&ARROW_DEVICE_CUDA));
/// ```
pub const ARROW_DEVICE_CUDA: ArrowDeviceType = ArrowDeviceType(2);

/// Pinned host memory from `cudaMallocHost`; `sync_event` points to a `cudaEvent_t`.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_CUDA_HOST, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_CUDA_HOST, ArrowDeviceType(3));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_CUDA_HOST")), Some(&ARROW_DEVICE_CUDA_HOST));
/// ```
pub const ARROW_DEVICE_CUDA_HOST: ArrowDeviceType = ArrowDeviceType(3);

/// OpenCL device memory; `sync_event` points to a `cl_event`.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_OPENCL, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_OPENCL, ArrowDeviceType(4));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_OPENCL")), Some(&ARROW_DEVICE_OPENCL));
/// ```
pub const ARROW_DEVICE_OPENCL: ArrowDeviceType = ArrowDeviceType(4);

/// Vulkan buffer; `sync_event` points to a `VkEvent`.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_VULKAN, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_VULKAN, ArrowDeviceType(7));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_VULKAN")), Some(&ARROW_DEVICE_VULKAN));
/// ```
pub const ARROW_DEVICE_VULKAN: ArrowDeviceType = ArrowDeviceType(7);

/// Metal memory; `sync_event` points to an `MTLEvent`.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_METAL, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_METAL, ArrowDeviceType(8));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_METAL")), Some(&ARROW_DEVICE_METAL));
/// ```
pub const ARROW_DEVICE_METAL: ArrowDeviceType = ArrowDeviceType(8);

/// Verilog simulator buffer.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_VPI, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_VPI, ArrowDeviceType(9));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_VPI")), Some(&ARROW_DEVICE_VPI));
/// ```
pub const ARROW_DEVICE_VPI: ArrowDeviceType = ArrowDeviceType(9);

/// ROCm device memory; `sync_event` points to a `hipEvent_t`.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_ROCM, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_ROCM, ArrowDeviceType(10));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_ROCM")), Some(&ARROW_DEVICE_ROCM));
/// ```
pub const ARROW_DEVICE_ROCM: ArrowDeviceType = ArrowDeviceType(10);

/// Pinned host memory from `hipMallocHost`; `sync_event` points to a `hipEvent_t`.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_ROCM_HOST, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_ROCM_HOST, ArrowDeviceType(11));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_ROCM_HOST")), Some(&ARROW_DEVICE_ROCM_HOST));
/// ```
pub const ARROW_DEVICE_ROCM_HOST: ArrowDeviceType = ArrowDeviceType(11);

/// Reserved extension device; the producer documents what `sync_event` means.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_EXT_DEV, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_EXT_DEV, ArrowDeviceType(12));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_EXT_DEV")), Some(&ARROW_DEVICE_EXT_DEV));
/// ```
pub const ARROW_DEVICE_EXT_DEV: ArrowDeviceType = ArrowDeviceType(12);

/// CUDA managed memory; `sync_event` points to a `cudaEvent_t`.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_CUDA_MANAGED, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_CUDA_MANAGED, ArrowDeviceType(13));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_CUDA_MANAGED")), Some(&ARROW_DEVICE_CUDA_MANAGED));
/// ```
pub const ARROW_DEVICE_CUDA_MANAGED: ArrowDeviceType = ArrowDeviceType(13);

/// oneAPI unified shared memory; `sync_event` points to a `sycl::event`.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_ONEAPI, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_ONEAPI, ArrowDeviceType(14));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_ONEAPI")), Some(&ARROW_DEVICE_ONEAPI));
/// ```
pub const ARROW_DEVICE_ONEAPI: ArrowDeviceType = ArrowDeviceType(14);

/// WebGPU buffer.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_WEBGPU, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_WEBGPU, ArrowDeviceType(15));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_WEBGPU")), Some(&ARROW_DEVICE_WEBGPU));
/// ```
pub const ARROW_DEVICE_WEBGPU: ArrowDeviceType = ArrowDeviceType(15);

/// Qualcomm Hexagon DSP memory.
///
/// ```
/// use dlpack_abi::raw::arrow::{ARROW_DEVICE_HEXAGON, ArrowDeviceType};
///
/// assert_eq!(ARROW_DEVICE_HEXAGON, ArrowDeviceType(16));
/// assert_eq!(ArrowDeviceType::KNOWN.iter().find(|v| v.name() == Some("ARROW_DEVICE_HEXAGON")), Some(&ARROW_DEVICE_HEXAGON));
/// ```
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
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Array, DeviceArray};
/// use dlpack_abi::raw::arrow::{ArrowDeviceArray, ARROW_DEVICE_CPU};
///
/// let mut raw: ArrowDeviceArray = DeviceArray::from_cpu(Array::from_vec(vec![1u8, 2])?).into_raw();
/// assert_eq!((raw.device_type, raw.device_id), (ARROW_DEVICE_CPU, -1));
/// assert!(raw.sync_event.is_null()); // CPU memory needs no event
/// // Releasing the device array is releasing its `array`.
/// // SAFETY: the array is live and owned here; it is released exactly once.
/// unsafe { raw.array.release.unwrap()(&mut raw.array) };
/// # }
/// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
/// ```
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
