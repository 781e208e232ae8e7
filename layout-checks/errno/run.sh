#!/usr/bin/env bash
# Proves that dlpack_abi::arrow::errno equals the libc crate's EIO/ENOMEM/EINVAL/ENOSYS on each
# target below: src/lib.rs holds compile-time assertions, so `cargo check --target T` is the test.
#
#   layout-checks/errno/run.sh
#
# Only targets with a rustup rust-std are listed: MIPS Linux and the other tier-3 targets would
# need -Zbuild-std (sparc64-unknown-linux-gnu has one, but our rustup mirror answers 404 for it).
# Prints "ok" or "FAIL" per target; exits non-zero if any check failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

targets=(
  x86_64-unknown-linux-gnu  # Linux, ENOSYS 38
  i686-unknown-linux-gnu
  x86_64-unknown-linux-musl
  x86_64-linux-android
  x86_64-unknown-freebsd    # BSDs and Apple, ENOSYS 78
  x86_64-unknown-netbsd
  x86_64-apple-darwin
  x86_64-unknown-illumos    # Solaris/illumos, ENOSYS 89
  x86_64-pc-windows-gnu     # Windows CRT, ENOSYS 40
  wasm32-wasip1             # WASI libc: 29, 48, 28, 52
  wasm32-unknown-emscripten
)

if ! log=$(rustup --quiet target add "${targets[@]}" 2>&1); then
  printf 'rustup target add failed:\n%s\n' "$log" >&2
  exit 2
fi

export CARGO_TARGET_DIR=target/errno-check
status=0
for target in "${targets[@]}"; do
  if cargo check -q --manifest-path layout-checks/errno/Cargo.toml --target "$target"; then
    echo "ok    $target"
  else
    echo "FAIL  $target"
    status=1
  fi
done
exit "$status"
