#!/usr/bin/env bash
# The C tests, for ARCH: each builds a Rust static library (an example crate-type staticlib),
# compiles a C program against the generated header include/dlpack_abi.h, links and runs it.
#   import:   C produces tensors, Rust (tests/c/import_consumer.rs) imports, reads and drops them.
#   exchange: Rust (tests/c/exchange_rust.rs) exports tensors that C reads and deletes, and
#             re-exports (as legacy, upgraded, or transposed) tensors that C produced.
#   arrow:    C produces Arrow schemas, arrays, device arrays and streams that Rust
#             (tests/c/arrow_rust.rs) imports or refuses, consumes what Rust exports (arrays,
#             streams, a DLPack tensor bridged to Arrow), and handles an async stream Rust drives.
#   ffi:      C calls the kernels of the FFI-crate example (examples/ffi-kernels) with borrowed
#             and managed tensors, good and malformed, and Rust calls that crate's C kernel
#             (compiled against the header found through DEP_DLPACK_ABI_INCLUDE) with its memory.
# Each program checks the values it sees and that every deleter (release) ran exactly once.
#
# Usage: tests/c/run.sh x86_64|i686
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${1:?usage: tests/c/run.sh x86_64|i686}
case "$arch" in
  x86_64) target=x86_64-unknown-linux-gnu; m=-m64 ;;
  i686) target=i686-unknown-linux-gnu; m=-m32 ;;
  *) echo "unknown arch $arch" >&2; exit 2 ;;
esac
out=target/c-tests/$arch
mkdir -p "$out"
link_and_run() {
  local program=$1 library=$2
  gcc "$m" -std=c11 -Wall -Wextra -Werror -pedantic -I include "tests/c/$program.c" "$library" \
    -lgcc_s -lutil -lrt -lpthread -lm -ldl -o "$out/$program"
  "$out/$program"
}
run_c_test() {
  local program=$1 example=$2
  cargo build -q --target "$target" --example "$example"
  link_and_run "$program" "target/$target/debug/examples/lib$example.a"
}
run_c_test import c_import_consumer
run_c_test exchange c_exchange
run_c_test arrow c_arrow
# The FFI crate is its own package (its build script compiles C with the `cc` crate, for ARCH).
CFLAGS="$m" cargo build -q --manifest-path examples/ffi-kernels/Cargo.toml --target "$target" \
  --target-dir target/ffi-kernels
link_and_run ffi "target/ffi-kernels/$target/debug/libffi_kernels.a"
