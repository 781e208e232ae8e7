//! Errno values for stream error codes, as this target's C library defines them (the C Stream
//! Interface returns errno-compatible codes; the numbers differ between platforms).

use core::ffi::c_int;

#[cfg(any(target_os = "wasi", target_os = "emscripten"))]
mod values {
    use core::ffi::c_int;
    pub const EIO: c_int = 29;
    pub const ENOMEM: c_int = 48;
    pub const EINVAL: c_int = 28;
    pub const ENOSYS: c_int = 52;
}

#[cfg(not(any(target_os = "wasi", target_os = "emscripten")))]
mod values {
    use core::ffi::c_int;
    pub const EIO: c_int = 5;
    pub const ENOMEM: c_int = 12;
    pub const EINVAL: c_int = 22;
    #[cfg(any(target_os = "macos", target_os = "ios"))]
    pub const ENOSYS: c_int = 78;
    #[cfg(windows)]
    pub const ENOSYS: c_int = 40;
    #[cfg(all(target_os = "linux", any(target_arch = "mips", target_arch = "mips64")))]
    pub const ENOSYS: c_int = 89;
    #[cfg(not(any(
        target_os = "macos",
        target_os = "ios",
        windows,
        all(target_os = "linux", any(target_arch = "mips", target_arch = "mips64"))
    )))]
    pub const ENOSYS: c_int = 38;
}

/// Input/output error: the generic failure.
pub const EIO: c_int = values::EIO;
/// Out of memory.
pub const ENOMEM: c_int = values::ENOMEM;
/// Invalid argument: validation failed.
pub const EINVAL: c_int = values::EINVAL;
/// Function not implemented.
pub const ENOSYS: c_int = values::ENOSYS;
