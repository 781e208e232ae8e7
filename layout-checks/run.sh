#!/usr/bin/env bash
# Proves that the Rust layouts, our generated header and the real upstream headers agree.
#
#   layout-checks/run.sh ARCH INCLUDE_DIRS...
#
# ARCH is x86_64 or i686 (gcc -m32, Rust i686-unknown-linux-gnu). INCLUDE_DIRS hold the upstream
# dlpack/dlpack.h and arrow/c/abi.h (scripts/test.sh passes the pinned PyPI packages' include
# directories). Checks, each reported as "ok" or "FAIL":
#   layout    sizeof/alignment/offsetof/field sizes and constant values (and the C types' sizes
#             of the macros): C + upstream == C + ours == Rust (examples/layout.rs --check)
#   unreleased  values on DLPack main in no release: only under -DDLPACK_ABI_UNRELEASED, = Rust
#   dropin    dropin.c behaves identically against upstream and ours, as C11 and C++11
#   coexist   ours + upstream in one translation unit, both orders, as C11 and C++11
#   errors    dlpack-abi's own part: every DLPackAbiErrorCode value of the header, and
#             DLPackAbiErrorReport's layout (errors.c), == Rust (examples/layout.rs --errors)
# All C is compiled with -Wall -Wextra -Werror -pedantic.
set -uo pipefail
cd "$(dirname "$0")"

arch=$1
shift
upstream=()
for dir in "$@"; do upstream+=("-I$dir"); done
case "$arch" in
  x86_64) m=(); target=x86_64-unknown-linux-gnu ;;
  i686) m=(-m32); target=i686-unknown-linux-gnu ;;
  *) echo "unknown arch $arch" >&2; exit 2 ;;
esac
out=build/$arch
mkdir -p "$out"
warn=(-Wall -Wextra -Werror -pedantic)
c=(gcc "${m[@]}" -std=c11 "${warn[@]}")
cxx=(g++ "${m[@]}" -std=c++11 "${warn[@]}" -x c++)
passed=0
failed=0

check() {
  local name=$1
  shift
  if "$@" >"$out/$name.log" 2>&1; then
    echo "ok   $arch $name"
    passed=$((passed + 1))
  else
    echo "FAIL $arch $name"
    sed 's/^/     /' "$out/$name.log" | head -40
    failed=$((failed + 1))
  fi
}

layout_matches() {
  "${c[@]}" -DUPSTREAM "${upstream[@]}" layout.c -o "$out/layout-upstream" &&
    "${c[@]}" -I../include layout.c -o "$out/layout-ours" &&
    "$out/layout-upstream" >"$out/upstream.txt" &&
    "$out/layout-ours" >"$out/ours.txt" &&
    (cd .. && cargo run -q --example layout --target "$target" -- --check) >"$out/rust.txt" &&
    grep -q '^value DLPACK_MINOR_VERSION 3$' "$out/upstream.txt" &&
    diff -u "$out/upstream.txt" "$out/ours.txt" &&
    diff -u <(grep -v '^macrosize ' "$out/upstream.txt" | sort) <(sort "$out/rust.txt") &&
    echo "$(grep -c '^offset ' "$out/rust.txt") field offsets, $(grep -c '^value ' "$out/rust.txt") constants agree"
}

# The values on DLPack's main that no release has: declared by ours only under
# -DDLPACK_ABI_UNRELEASED (so the default is exactly 1.3, which `layout` proves), with the Rust
# values and upstream main's (kDLBcomplex 18, kDLTPU 19, kDLTPUHost 20, kDLAscend 21).
unreleased_values_on_request() {
  "${c[@]}" -DDLPACK_ABI_UNRELEASED -I../include layout.c -o "$out/layout-unreleased" &&
    echo '#include "dlpack_abi.h"' | "${cxx[@]}" -DDLPACK_ABI_UNRELEASED -I../include -fsyntax-only - &&
    "$out/layout-unreleased" >"$out/unreleased.txt" &&
    (cd .. && cargo run -q --example layout --target "$target" -- --check --unreleased) \
      >"$out/rust-unreleased.txt" &&
    diff -u <(grep -v '^macrosize ' "$out/unreleased.txt" | sort) <(sort "$out/rust-unreleased.txt") &&
    grep -qx 'value kDLBcomplex 18' "$out/unreleased.txt" &&
    grep -qx 'value kDLTPU 19' "$out/unreleased.txt" &&
    grep -qx 'value kDLTPUHost 20' "$out/unreleased.txt" &&
    grep -qx 'value kDLAscend 21' "$out/unreleased.txt" &&
    "${c[@]}" -I../include layout.c -o "$out/layout-default" &&
    "$out/layout-default" >"$out/default.txt" &&
    ! grep -q 'kDLTPU\|kDLBcomplex\|kDLAscend' "$out/default.txt"
}

# The error codes and the report struct (our own part, not upstream's): the header's names and
# values (every `DLPACK_ABI_X =` line, printed by C) == Rust's `ErrorCode::KNOWN`, both ways.
error_codes_match() {
  sed -n 's/^  \(DLPACK_ABI_[A-Z0-9_]*\) = .*/VALUE(\1);/p' ../include/dlpack_abi.h >"$out/error_values.h" &&
    "${c[@]}" -I../include -I"$out" errors.c -o "$out/errors" &&
    "$out/errors" >"$out/errors-c.txt" &&
    (cd .. && cargo run -q --example layout --target "$target" -- --errors) >"$out/errors-rust.txt" &&
    diff -u <(sort "$out/errors-c.txt") <(sort "$out/errors-rust.txt") &&
    echo "$(grep '^value DLPACK_ABI_' "$out/errors-rust.txt" | grep -vc MESSAGE_SIZE) error codes agree"
}

dropin_behaves_identically() {
  local lang=$1
  local -n compiler=$2
  "${compiler[@]}" -DUPSTREAM "${upstream[@]}" dropin.c -o "$out/dropin-$lang-upstream" &&
    "${compiler[@]}" -I../include dropin.c -o "$out/dropin-$lang-ours" &&
    "$out/dropin-$lang-upstream" >"$out/dropin-$lang-upstream.txt" &&
    "$out/dropin-$lang-ours" >"$out/dropin-$lang-ours.txt" &&
    diff -u "$out/dropin-$lang-upstream.txt" "$out/dropin-$lang-ours.txt"
}

coexist_compiles() {
  local lang=$1 order=$2
  local -n compiler=$3
  local flag=()
  [ "$order" = ours-first ] && flag=(-DOURS_FIRST)
  "${compiler[@]}" "${flag[@]}" "${upstream[@]}" -I../include coexist.c -o "$out/coexist-$lang-$order" &&
    "$out/coexist-$lang-$order"
}

check layout layout_matches
check unreleased unreleased_values_on_request
check errors error_codes_match
check dropin-c11 dropin_behaves_identically c11 c
check dropin-c++11 dropin_behaves_identically cxx11 cxx
for order in ours-first upstream-first; do
  check "coexist-c11-$order" coexist_compiles c11 "$order" c
  check "coexist-c++11-$order" coexist_compiles cxx11 "$order" cxx
done
echo "layout-checks $arch: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
