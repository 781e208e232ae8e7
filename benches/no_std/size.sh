#!/usr/bin/env bash
# Code size of the no_std borrowed import path on a Cortex-M4 (thumbv7em-none-eabihf): the Rust
# staticlib in this folder (TensorView::from_raw + iter::<f32>, opt-level "s", no `alloc`) next to
# the same checks hand-written in C (sum_f32.c, arm-none-eabi-gcc -Os). Each is linked into a
# minimal ELF whose entry is the function, with --gc-sections, so that only the code it reaches
# is counted (compiler builtins included), and its .text measured.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=thumbv7em-none-eabihf
out=target/no_std
cpu=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)

rustup target add "$target" >/dev/null 2>&1 || rustup target add "$target"
if ! command -v arm-none-eabi-gcc >/dev/null; then
  sudo=$([ "$(id -u)" = 0 ] || echo sudo)
  $sudo apt-get install -y -qq gcc-arm-none-eabi binutils-arm-none-eabi >/dev/null
fi

cargo build -q --release --target "$target" --manifest-path benches/no_std/Cargo.toml \
  --target-dir "$out"
rust_lib=$out/$target/release/libdlpack_abi_no_std_size.a
arm-none-eabi-gcc -Os "${cpu[@]}" -ffunction-sections -std=c11 -Wall -Wextra -Werror -I include \
  -c benches/no_std/sum_f32.c -o "$out/sum_f32.o"

# No `alloc`: the dependency is built without the feature, and nothing allocates.
if cargo tree -q --target "$target" --manifest-path benches/no_std/Cargo.toml -e features \
  | grep -q 'dlpack-abi feature "alloc"'; then
  echo "error: dlpack-abi is built with the alloc feature" >&2; exit 1
fi
if arm-none-eabi-nm "$rust_lib" 2>/dev/null | grep -E '__rust_(alloc|dealloc|realloc)|__rg_|5alloc'; then
  echo "error: the Rust staticlib references alloc" >&2; exit 1
fi

link() { # entry symbol, output ELF, inputs...
  local entry=$1 elf=$2; shift 2
  arm-none-eabi-gcc "${cpu[@]}" -nostartfiles -nostdlib -Wl,--gc-sections -Wl,-e,"$entry" \
    -Wl,-u,"$entry" "$@" -lgcc -o "$elf"
}
link dlpack_sum_f32 "$out/rust.elf" "$rust_lib" # memcpy/memset from its compiler_builtins
link dlpack_sum_f32_c "$out/c.elf" "$out/sum_f32.o" -lc # memset from newlib
section() { arm-none-eabi-size -A "$1" | awk -v s="$2" '$1 == s { n = $2 } END { print n + 0 }'; }
# Bytes of the mem* routines (memcpy, memset, __aeabi_memclr8, ...) the ELF holds.
mem() {
  arm-none-eabi-nm -S -C -t d "$1" | awk '$4 ~ /(^|:|_)mem(cpy|set|clr|move)/ { n += $2 } END { print n + 0 }'
}
report() { # label, ELF
  local text mem
  text=$(section "$2" .text) mem=$(mem "$2")
  printf '%-32s %5d bytes .text (%d without mem* routines), %d bytes .rodata\n' \
    "$1:" "$text" "$((text - mem))" "$(section "$2" .rodata)"
}
report "rust (dlpack-abi, opt-level=s)" "$out/rust.elf"
report "C (arm-none-eabi-gcc -Os)" "$out/c.elf"
awk -v r="$(section "$out/rust.elf" .text)" -v c="$(section "$out/c.elf" .text)" \
  -v rm="$(mem "$out/rust.elf")" -v cm="$(mem "$out/c.elf")" \
  'BEGIN { printf "ratio rust/C (.text):            %.2f (%.2f without mem*)\n", r / c, (r - rm) / (c - cm) }'
echo "largest symbols of the Rust ELF:"
arm-none-eabi-nm --size-sort -S -r -C "$out/rust.elf" | head -n 8
