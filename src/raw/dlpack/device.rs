//! `DLDeviceType` and `DLDevice`: where a tensor's memory lives.

/// The kind of memory a tensor's `data` refers to (C `DLDeviceType`).
///
/// An open C enum: a 4-byte `enum` in C (`enum : int32_t` in C++). Producers built from newer
/// headers send values this crate does not name (DLPack `main` has 19-21), so this is an `i32`
/// newtype; every value is valid and an unknown one prints as `DLDeviceType(42)`.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLCUDA, DLDeviceType};
///
/// assert_eq!(kDLCUDA, DLDeviceType(2));
/// assert_eq!(format!("{kDLCUDA:?}"), "kDLCUDA");
/// // A device type from a newer producer is a valid value too.
/// assert_eq!(format!("{:?}", DLDeviceType(42)), "DLDeviceType(42)");
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DLDeviceType(pub i32);

/// CPU memory (plain host memory).
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLCPU, DLDeviceType};
///
/// assert_eq!(kDLCPU, DLDeviceType(1));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLCPU")), Some(&kDLCPU));
/// ```
pub const kDLCPU: DLDeviceType = DLDeviceType(1);

/// CUDA device memory.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLCUDA, DLDeviceType};
///
/// assert_eq!(kDLCUDA, DLDeviceType(2));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLCUDA")), Some(&kDLCUDA));
/// ```
pub const kDLCUDA: DLDeviceType = DLDeviceType(2);

/// Pinned host memory allocated by `cudaMallocHost`.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLCUDAHost, DLDeviceType};
///
/// assert_eq!(kDLCUDAHost, DLDeviceType(3));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLCUDAHost")), Some(&kDLCUDAHost));
/// ```
pub const kDLCUDAHost: DLDeviceType = DLDeviceType(3);

/// OpenCL device memory; `data` is a `cl_mem` handle.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLOpenCL, DLDeviceType};
///
/// assert_eq!(kDLOpenCL, DLDeviceType(4));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLOpenCL")), Some(&kDLOpenCL));
/// ```
pub const kDLOpenCL: DLDeviceType = DLDeviceType(4);

/// Vulkan buffer.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLVulkan, DLDeviceType};
///
/// assert_eq!(kDLVulkan, DLDeviceType(7));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLVulkan")), Some(&kDLVulkan));
/// ```
pub const kDLVulkan: DLDeviceType = DLDeviceType(7);

/// Metal memory on Apple GPUs.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLMetal, DLDeviceType};
///
/// assert_eq!(kDLMetal, DLDeviceType(8));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLMetal")), Some(&kDLMetal));
/// ```
pub const kDLMetal: DLDeviceType = DLDeviceType(8);

/// Verilog simulator buffer.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLVPI, DLDeviceType};
///
/// assert_eq!(kDLVPI, DLDeviceType(9));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLVPI")), Some(&kDLVPI));
/// ```
pub const kDLVPI: DLDeviceType = DLDeviceType(9);

/// ROCm (HIP) device memory.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLROCM, DLDeviceType};
///
/// assert_eq!(kDLROCM, DLDeviceType(10));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLROCM")), Some(&kDLROCM));
/// ```
pub const kDLROCM: DLDeviceType = DLDeviceType(10);

/// Pinned host memory allocated by `hipMallocHost`.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLROCMHost, DLDeviceType};
///
/// assert_eq!(kDLROCMHost, DLDeviceType(11));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLROCMHost")), Some(&kDLROCMHost));
/// ```
pub const kDLROCMHost: DLDeviceType = DLDeviceType(11);

/// Reserved extension device; its meaning is implementation-defined.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLExtDev, DLDeviceType};
///
/// assert_eq!(kDLExtDev, DLDeviceType(12));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLExtDev")), Some(&kDLExtDev));
/// ```
pub const kDLExtDev: DLDeviceType = DLDeviceType(12);

/// CUDA managed (unified) memory from `cudaMallocManaged`.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLCUDAManaged, DLDeviceType};
///
/// assert_eq!(kDLCUDAManaged, DLDeviceType(13));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLCUDAManaged")), Some(&kDLCUDAManaged));
/// ```
pub const kDLCUDAManaged: DLDeviceType = DLDeviceType(13);

/// oneAPI unified shared memory on a non-partitioned device.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLOneAPI, DLDeviceType};
///
/// assert_eq!(kDLOneAPI, DLDeviceType(14));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLOneAPI")), Some(&kDLOneAPI));
/// ```
pub const kDLOneAPI: DLDeviceType = DLDeviceType(14);

/// WebGPU buffer.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLWebGPU, DLDeviceType};
///
/// assert_eq!(kDLWebGPU, DLDeviceType(15));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLWebGPU")), Some(&kDLWebGPU));
/// ```
pub const kDLWebGPU: DLDeviceType = DLDeviceType(15);

/// Qualcomm Hexagon DSP memory.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLHexagon, DLDeviceType};
///
/// assert_eq!(kDLHexagon, DLDeviceType(16));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLHexagon")), Some(&kDLHexagon));
/// ```
pub const kDLHexagon: DLDeviceType = DLDeviceType(16);

/// Microsoft MAIA device memory.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLMAIA, DLDeviceType};
///
/// assert_eq!(kDLMAIA, DLDeviceType(17));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLMAIA")), Some(&kDLMAIA));
/// ```
pub const kDLMAIA: DLDeviceType = DLDeviceType(17);

/// AWS Trainium device memory.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLTrn, DLDeviceType};
///
/// assert_eq!(kDLTrn, DLDeviceType(18));
/// assert_eq!(DLDeviceType::KNOWN.iter().find(|v| v.name() == Some("kDLTrn")), Some(&kDLTrn));
/// ```
pub const kDLTrn: DLDeviceType = DLDeviceType(18);

/// Google TPU device memory. Not in a DLPack release yet: on upstream `main` (dmlc/dlpack#188).
/// Not host-accessible.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLTPU, DLDeviceType};
///
/// assert_eq!(kDLTPU, DLDeviceType(19));
/// assert!(DLDeviceType::UNRELEASED.contains(&kDLTPU) && !kDLTPU.is_host_accessible());
/// ```
pub const kDLTPU: DLDeviceType = DLDeviceType(19);

/// Pinned host memory of a Google TPU runtime (JAX exports `pinned_host` arrays with it). Not in
/// a DLPack release yet: on upstream `main` (dmlc/dlpack#188). Host-accessible, as `kDLCUDAHost`.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLTPUHost, DLDeviceType};
///
/// assert_eq!(kDLTPUHost, DLDeviceType(20));
/// assert!(DLDeviceType::UNRELEASED.contains(&kDLTPUHost) && kDLTPUHost.is_host_accessible());
/// ```
pub const kDLTPUHost: DLDeviceType = DLDeviceType(20);

/// Huawei Ascend NPU memory. Not in a DLPack release yet: on upstream `main` (dmlc/dlpack#189).
/// Not host-accessible.
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLAscend, DLDeviceType};
///
/// assert_eq!(kDLAscend, DLDeviceType(21));
/// assert_eq!(kDLAscend.short_name(), Some("ascend"));
/// ```
pub const kDLAscend: DLDeviceType = DLDeviceType(21);

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
} unreleased {
    kDLTPU,
    kDLTPUHost,
    kDLAscend,
});

impl DLDeviceType {
    /// Whether the host CPU can read and write the memory directly at `data + byte_offset`:
    /// plain CPU memory, pinned host memory (`kDLCUDAHost`, `kDLROCMHost`) and CUDA managed
    /// memory, and (not in a release yet) TPU pinned host memory, `kDLTPUHost`. The one rule
    /// behind typed access in the safe layers, for DLPack and Arrow alike.
    ///
    /// ```
    /// use dlpack_abi::raw::{kDLCPU, kDLCUDA, kDLCUDAManaged};
    ///
    /// assert!(kDLCPU.is_host_accessible() && kDLCUDAManaged.is_host_accessible());
    /// assert!(!kDLCUDA.is_host_accessible());
    /// ```
    pub const fn is_host_accessible(self) -> bool {
        matches!(
            self,
            kDLCPU | kDLCUDAHost | kDLROCMHost | kDLCUDAManaged | kDLTPUHost
        )
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
    /// assert_eq!(DLDeviceType(42).short_name(), None);
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
            kDLTPU => "tpu",
            kDLTPUHost => "tpu_host",
            kDLAscend => "ascend",
            _ => return None,
        })
    }
}

/// `name:id`, as frameworks print devices (`cpu:0`, `cuda:1`); an unknown type prints its value
/// (`DLDeviceType(42):0`).
///
/// ```
/// use dlpack_abi::raw::{kDLCUDA, DLDevice, DLDeviceType};
///
/// assert_eq!(DLDevice { device_type: kDLCUDA, device_id: 1 }.to_string(), "cuda:1");
/// assert_eq!(DLDevice { device_type: DLDeviceType(42), device_id: 0 }.to_string(), "DLDeviceType(42):0");
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
///
/// ```
/// use dlpack_abi::raw::dlpack::{kDLCPU, kDLCUDA, DLDevice};
///
/// let gpu1 = DLDevice { device_type: kDLCUDA, device_id: 1 };
/// assert_eq!(gpu1.to_string(), "cuda:1");
/// assert!(!gpu1.device_type.is_host_accessible());
/// assert_ne!(gpu1, DLDevice { device_type: kDLCPU, device_id: 0 });
/// ```
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DLDevice {
    /// The kind of memory.
    pub device_type: DLDeviceType,
    /// Device ordinal, numbered by the producer; 0 for plain CPU, pinned and managed memory.
    pub device_id: i32,
}
