//! Compile-time proof that `dlpack_abi::arrow::errno` equals the `libc` crate's values on the
//! target being checked: `cargo check --target T` fails on T if any of them differs (run.sh).
#![no_std]

use dlpack_abi::arrow::errno;

/// Where libc defines `EIO`, `ENOMEM` and `EINVAL`: Windows, every `unix` target_os it knows
/// (all but LynxOS-178 and managarm), WASI, HelenOS, Hermit, TEEOS, SOLID.
#[cfg(any(
    windows,
    all(unix, not(any(target_os = "lynxos178", target_os = "managarm"))),
    target_os = "wasi",
    target_os = "helenos",
    target_os = "hermit",
    target_os = "teeos",
    target_os = "solid_asp3"
))]
const _: () = {
    assert!(
        errno::EIO == libc::EIO,
        "errno::EIO differs from libc::EIO on this target"
    );
    assert!(
        errno::ENOMEM == libc::ENOMEM,
        "errno::ENOMEM differs from libc::ENOMEM on this target"
    );
    assert!(
        errno::EINVAL == libc::EINVAL,
        "errno::EINVAL differs from libc::EINVAL on this target"
    );
};

/// Where libc defines `ENOSYS`: as above less HelenOS, and on Linux/L4Re only with a C library
/// (libc defines it per architecture there; every Rust Linux gnu/musl/ohos/uclibc architecture).
#[cfg(any(
    windows,
    all(
        unix,
        not(any(
            target_os = "linux",
            target_os = "l4re",
            target_os = "lynxos178",
            target_os = "managarm"
        ))
    ),
    all(
        target_os = "linux",
        any(
            target_env = "gnu",
            target_env = "musl",
            target_env = "ohos",
            target_env = "uclibc"
        )
    ),
    all(target_os = "l4re", target_env = "uclibc"),
    target_os = "wasi",
    target_os = "hermit",
    target_os = "teeos",
    target_os = "solid_asp3"
))]
const _: () = assert!(
    errno::ENOSYS == libc::ENOSYS,
    "errno::ENOSYS differs from libc::ENOSYS on this target"
);
