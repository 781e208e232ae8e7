#!/usr/bin/env bash
# C producer -> Rust importer test: builds the Rust static library (tests/c/import_consumer.rs)
# for ARCH, compiles tests/c/import.c against the generated header include/dlpack_abi.h, links,
# and runs it. The program checks Rust's reports and every deleter count.
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
out=target/c-import/$arch
mkdir -p "$out"
cargo build -q --target "$target" --example c_import_consumer
lib=target/$target/debug/examples/libc_import_consumer.a
gcc "$m" -std=c11 -Wall -Wextra -Werror -pedantic -I include tests/c/import.c "$lib" \
  -lgcc_s -lutil -lrt -lpthread -lm -ldl -o "$out/import"
"$out/import"
