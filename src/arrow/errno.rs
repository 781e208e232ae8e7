//! Errno values for stream error codes, as this target's C library defines them (the C Stream
//! Interface returns errno-compatible codes; the numbers differ between platforms).
//!
//! The table follows the [`libc`](https://crates.io/crates/libc) crate, with the same `cfg`
//! predicates, tried in the order of libc's own dispatch; `layout-checks/errno/run.sh` proves
//! that the values equal libc's on every target it checks. Targets without a C library (the
//! `target_os = "none"` embedded targets, `wasm32-unknown-unknown`, UEFI, SGX, ...) get the
//! POSIX-common values of Linux: `EIO` 5, `ENOMEM` 12, `EINVAL` 22, `ENOSYS` 38.
//!
//! ```
//! use dlpack_abi::arrow::{errno, ProducerError};
//!
//! // A stream producer that lost its source reports it with the platform's EIO.
//! let error = ProducerError::code_only(errno::EIO);
//! assert_eq!(error.code(), errno::EIO);
//! assert_ne!(errno::EIO, errno::EINVAL);
//! ```

use core::ffi::c_int;

/// `[EIO, ENOMEM, EINVAL, ENOSYS]` for this target: the first row whose `cfg` holds.
// libc's `target_os = "qnx"` has no rustc target yet; 1.81 knows neither "cygwin" nor "helenos".
#[allow(unexpected_cfgs)]
const VALUES: [c_int; 4] = if cfg!(windows) {
    [5, 12, 22, 40] // Windows CRT (MSVC, MinGW)
} else if cfg!(target_os = "vxworks") {
    [5, 12, 22, 71] // VxWorks (before `unix`: its targets are unix with env "gnu")
} else if cfg!(any(all(unix, target_env = "newlib"), target_os = "cygwin")) {
    [5, 12, 22, 88] // newlib (ESP-IDF, Horizon/3DS, Vita, RTEMS), Cygwin
} else if cfg!(any(target_os = "emscripten", target_os = "wasi")) {
    [29, 48, 28, 52] // WASI libc and Emscripten (musl with WASI numbering)
} else if cfg!(any(
    all(
        target_os = "linux",
        any(
            target_arch = "mips",
            target_arch = "mips32r6",
            target_arch = "mips64",
            target_arch = "mips64r6"
        )
    ),
    target_os = "solaris",
    target_os = "illumos",
    target_os = "nto",
    target_os = "qnx"
)) {
    [5, 12, 22, 89] // Linux MIPS (all C libraries), Solaris/illumos, QNX Neutrino
} else if cfg!(all(
    target_os = "linux",
    any(target_arch = "sparc", target_arch = "sparc64")
)) {
    [5, 12, 22, 90] // Linux SPARC
} else if cfg!(any(
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "dragonfly",
    target_os = "openbsd",
    target_os = "netbsd"
)) {
    [5, 12, 22, 78] // macOS/iOS/tvOS/watchOS/visionOS, FreeBSD, DragonFly, OpenBSD, NetBSD
} else if cfg!(target_os = "aix") {
    [5, 12, 22, 109] // AIX
} else if cfg!(target_os = "haiku") {
    // B_NO_MEMORY = INT_MIN, B_IO_ERROR = INT_MIN + 1, B_BAD_VALUE = INT_MIN + 5,
    // ENOSYS = B_POSIX_ERROR_BASE (INT_MIN + 0x7000) + 9.
    [-2147483647, -2147483648, -2147483643, -2147454967] // Haiku
} else if cfg!(target_os = "hurd") {
    [0x4000_0005, 0x4000_000C, 0x4000_0016, 0x4000_004E] // GNU Hurd: 0x4000_0000 | BSD errno
} else if cfg!(target_os = "helenos") {
    [28, 2, 14, 155] // HelenOS (libc lacks ENOSYS: 155 is HelenOS's abi/errno.h)
} else {
    // Linux (other architectures, every C library), Android, L4Re, Fuchsia, Redox, NuttX,
    // Hermit, TEEOS, QuRT, SOLID, and targets without a C library.
    [5, 12, 22, 38]
};

/// Input/output error: the generic failure.
///
/// ```
/// use dlpack_abi::arrow::errno::EIO;
///
/// // The target C library's value: 5 on x86_64 Linux.
/// #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
/// assert_eq!(EIO, 5);
/// ```
pub const EIO: c_int = VALUES[0];

/// Out of memory.
///
/// ```
/// use dlpack_abi::arrow::errno::ENOMEM;
///
/// // The target C library's value: 12 on x86_64 Linux.
/// #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
/// assert_eq!(ENOMEM, 12);
/// ```
pub const ENOMEM: c_int = VALUES[1];

/// Invalid argument: validation failed.
///
/// ```
/// use dlpack_abi::arrow::errno::EINVAL;
///
/// // The target C library's value: 22 on x86_64 Linux.
/// #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
/// assert_eq!(EINVAL, 22);
/// ```
pub const EINVAL: c_int = VALUES[2];

/// Function not implemented.
///
/// ```
/// use dlpack_abi::arrow::errno::ENOSYS;
///
/// // The target C library's value: 38 on x86_64 Linux.
/// #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
/// assert_eq!(ENOSYS, 38);
/// ```
pub const ENOSYS: c_int = VALUES[3];
