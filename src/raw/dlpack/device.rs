//! `DLDeviceType` and `DLDevice`: where a tensor's memory lives.

/// The kind of memory a tensor's `data` refers to (C `DLDeviceType`).
///
/// An open C enum: a 4-byte `enum` in C (`enum : int32_t` in C++). Producers built from newer
/// headers send values this crate does not name (DLPack `main` has 19-21), so this is an `i32`
/// newtype; every value is valid and an unknown one prints as `DLDeviceType(19)`.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DLDeviceType(pub i32);

/// CPU memory (plain host memory).
pub const kDLCPU: DLDeviceType = DLDeviceType(1);
/// CUDA device memory.
pub const kDLCUDA: DLDeviceType = DLDeviceType(2);
/// Pinned host memory allocated by `cudaMallocHost`.
pub const kDLCUDAHost: DLDeviceType = DLDeviceType(3);
/// OpenCL device memory; `data` is a `cl_mem` handle.
pub const kDLOpenCL: DLDeviceType = DLDeviceType(4);
/// Vulkan buffer.
pub const kDLVulkan: DLDeviceType = DLDeviceType(7);
/// Metal memory on Apple GPUs.
pub const kDLMetal: DLDeviceType = DLDeviceType(8);
/// Verilog simulator buffer.
pub const kDLVPI: DLDeviceType = DLDeviceType(9);
/// ROCm (HIP) device memory.
pub const kDLROCM: DLDeviceType = DLDeviceType(10);
/// Pinned host memory allocated by `hipMallocHost`.
pub const kDLROCMHost: DLDeviceType = DLDeviceType(11);
/// Reserved extension device; its meaning is implementation-defined.
pub const kDLExtDev: DLDeviceType = DLDeviceType(12);
/// CUDA managed (unified) memory from `cudaMallocManaged`.
pub const kDLCUDAManaged: DLDeviceType = DLDeviceType(13);
/// oneAPI unified shared memory on a non-partitioned device.
pub const kDLOneAPI: DLDeviceType = DLDeviceType(14);
/// WebGPU buffer.
pub const kDLWebGPU: DLDeviceType = DLDeviceType(15);
/// Qualcomm Hexagon DSP memory.
pub const kDLHexagon: DLDeviceType = DLDeviceType(16);
/// Microsoft MAIA device memory.
pub const kDLMAIA: DLDeviceType = DLDeviceType(17);
/// AWS Trainium device memory.
pub const kDLTrn: DLDeviceType = DLDeviceType(18);

open_enum_names!(DLDeviceType {
    kDLCPU,
    kDLCUDA,
    kDLCUDAHost,
    kDLOpenCL,
    kDLVulkan,
    kDLMetal,
    kDLVPI,
    kDLROCM,
    kDLROCMHost,
    kDLExtDev,
    kDLCUDAManaged,
    kDLOneAPI,
    kDLWebGPU,
    kDLHexagon,
    kDLMAIA,
    kDLTrn,
});

impl DLDeviceType {
    /// Whether the host CPU can read and write the memory directly at `data + byte_offset`:
    /// plain CPU memory, pinned host memory (`kDLCUDAHost`, `kDLROCMHost`) and CUDA managed
    /// memory. The one rule behind typed access in the safe layers, for DLPack and Arrow alike.
    ///
    /// ```
    /// use dlpack_abi::raw::{kDLCPU, kDLCUDA, kDLCUDAManaged};
    ///
    /// assert!(kDLCPU.is_host_accessible() && kDLCUDAManaged.is_host_accessible());
    /// assert!(!kDLCUDA.is_host_accessible());
    /// ```
    pub const fn is_host_accessible(self) -> bool {
        matches!(self, kDLCPU | kDLCUDAHost | kDLROCMHost | kDLCUDAManaged)
    }

    /// Whether `data` is an address in a flat address space (the host's or a device's), so that
    /// an offset can be folded into it and its alignment is meaningful: the host-accessible
    /// types, CUDA, ROCm and oneAPI unified shared memory. Other devices (OpenCL, Vulkan, Metal,
    /// ...) pass opaque handles, and unknown or extension devices are not assumed to be flat.
    ///
    /// ```
    /// use dlpack_abi::raw::{kDLCUDA, kDLOpenCL};
    ///
    /// assert!(kDLCUDA.is_addressable());
    /// assert!(!kDLOpenCL.is_addressable());
    /// ```
    pub const fn is_addressable(self) -> bool {
        self.is_host_accessible() || matches!(self, kDLCUDA | kDLROCM | kDLOneAPI)
    }
}

impl DLDeviceType {
    /// The short lower-case name frameworks print devices with (`cpu`, `cuda`, `cuda_host`,
    /// `rocm`, `metal`, ...); `None` for a type this crate does not know. (`name()` is the C
    /// name, `kDLCUDAHost`.)
    ///
    /// ```
    /// use dlpack_abi::raw::{kDLCUDAHost, DLDeviceType};
    ///
    /// assert_eq!(kDLCUDAHost.short_name(), Some("cuda_host"));
    /// assert_eq!(DLDeviceType(19).short_name(), None);
    /// ```
    pub const fn short_name(self) -> Option<&'static str> {
        Some(match self {
            kDLCPU => "cpu",
            kDLCUDA => "cuda",
            kDLCUDAHost => "cuda_host",
            kDLOpenCL => "opencl",
            kDLVulkan => "vulkan",
            kDLMetal => "metal",
            kDLVPI => "vpi",
            kDLROCM => "rocm",
            kDLROCMHost => "rocm_host",
            kDLExtDev => "ext_dev",
            kDLCUDAManaged => "cuda_managed",
            kDLOneAPI => "oneapi",
            kDLWebGPU => "webgpu",
            kDLHexagon => "hexagon",
            kDLMAIA => "maia",
            kDLTrn => "trn",
            _ => return None,
        })
    }
}

/// `name:id`, as frameworks print devices (`cpu:0`, `cuda:1`); an unknown type prints its value
/// (`DLDeviceType(19):0`).
///
/// ```
/// use dlpack_abi::raw::{kDLCUDA, DLDevice, DLDeviceType};
///
/// assert_eq!(DLDevice { device_type: kDLCUDA, device_id: 1 }.to_string(), "cuda:1");
/// assert_eq!(DLDevice { device_type: DLDeviceType(19), device_id: 0 }.to_string(), "DLDeviceType(19):0");
/// ```
impl core::fmt::Display for DLDevice {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.device_type.short_name() {
            Some(name) => write!(f, "{name}:{}", self.device_id),
            None => write!(f, "{:?}:{}", self.device_type, self.device_id),
        }
    }
}

/// A device: a [`DLDeviceType`] and an ordinal within it.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DLDevice {
    /// The kind of memory.
    pub device_type: DLDeviceType,
    /// Device ordinal, numbered by the producer; 0 for plain CPU, pinned and managed memory.
    pub device_id: i32,
}
