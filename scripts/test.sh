#!/usr/bin/env bash
# The project's whole test suite: the README's test command, and what CI runs (.ci/run).
#
#   scripts/test.sh            every step (what CI runs)
#   scripts/test.sh STEP...    only the named steps (setup always runs; `fuzz-smoke`, `miri`, ...)
#   scripts/test.sh --list     the step names, in order
#
# Sets itself up on a fresh machine and is safe to re-run: rustup targets and components (Miri
# and rust-src on nightly), cargo-fuzz, gcc-multilib/g++-multilib (apt, for the i686 C checks),
# gcc-arm-none-eabi (apt, for the no_std code-size check), and a local venv (.venv) with the
# pinned PyPI packages that ship the real upstream headers. Then runs every check and ends with a line
# "test.sh: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."

# Pinned upstream headers: apache-tvm-ffi ships dlpack/dlpack.h (DLPack 1.3) in tvm_ffi/include;
# pyarrow ships arrow/c/abi.h in pyarrow/include.
TVM_FFI_VERSION=0.1.15.post2
PYARROW_VERSION=26.0.1
# The Python interop tests (python/tests): NumPy, pytest, and maturin to build the extension.
NUMPY_VERSION=2.4.6
PYTEST_VERSION=9.2.0
MATURIN_VERSION=1.16.0
# A real Arrow consumer that no one here wrote: a SQL query over our streams (python/tests).
DUCKDB_VERSION=2.0.0
# An array library that is not NumPy, with its own DLPack import rules (64-byte alignment).
JAX_VERSION=0.10.2
# Drives the model GPU's property tests of stream ordering (python/tests/test_stream_model.py).
HYPOTHESIS_VERSION=6.170.17
# Checks the package's type stubs (python/python/dlpack_abi/__init__.pyi) against the built module.
MYPY_VERSION=2.4.1
# The Arrow PyCapsule libraries the conformance checker (dlpack_abi.conformance) is run against.
POLARS_VERSION=2.1.0
NANOARROW_VERSION=0.9.0
ARRO3_VERSION=0.9.1
# The reference safetensors writer and reader: files for the safetensors tests, and the peer of
# the loading benchmark (benches/safetensors_load.py).
SAFETENSORS_VERSION=0.8.0
CARGO_FUZZ_VERSION=0.13.2
# Fuzz executions per run of this script (a smoke run; see the README for long runs).
FUZZ_RUNS=${FUZZ_RUNS:-300000}
MSRV=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
# The integration crates' own `rust-version`s, other than the core's (each checked on its own).
INTEGRATION_MSRVS=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' integrations/*/Cargo.toml |
  sort -uV | grep -vx "$MSRV")
TARGETS=(
  x86_64-unknown-linux-gnu
  aarch64-unknown-linux-gnu
  i686-unknown-linux-gnu
  armv7-unknown-linux-gnueabihf
  thumbv7em-none-eabihf
  wasm32-unknown-unknown
)

step() { echo; echo "==> $*"; }
die() { echo "setup failed: $*" >&2; exit 1; }

setup() {
  step "setup: rustup targets and components"
  rustup target add "${TARGETS[@]}" >/dev/null || die "rustup target add"
  rustup component add clippy rustfmt >/dev/null || die "rustup component add"
  local version
  for version in "$MSRV" $INTEGRATION_MSRVS; do
    rustup toolchain install "$version" --profile minimal >/dev/null 2>&1 ||
      die "rustup toolchain install $version"
  done
  rustup toolchain install nightly --profile minimal >/dev/null 2>&1 || die "rustup toolchain install nightly"
  rustup component add miri rust-src --toolchain nightly >/dev/null || die "rustup component add miri rust-src"
  cargo +nightly miri setup >/dev/null 2>&1 || die "cargo miri setup"

  step "setup: cargo-fuzz $CARGO_FUZZ_VERSION"
  if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
    cargo install -q --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION" || die "cargo install cargo-fuzz"
  fi

  step "setup: 32-bit C toolchain (gcc-multilib, g++-multilib)"
  if ! printf 'int main(void){return 0;}\n' | gcc -m32 -x c - -o /dev/null 2>/dev/null ||
    ! printf 'int main(){return 0;}\n' | g++ -m32 -x c++ - -o /dev/null 2>/dev/null; then
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get install -y -q gcc-multilib g++-multilib >/dev/null ||
      { "${sudo[@]}" apt-get update -q >/dev/null && "${sudo[@]}" apt-get install -y -q gcc-multilib g++-multilib >/dev/null; } ||
      die "apt-get install gcc-multilib g++-multilib"
  fi

  step "setup: Arm bare-metal C toolchain (gcc-arm-none-eabi), for the no_std code-size check"
  if ! command -v arm-none-eabi-gcc >/dev/null; then
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get install -y -q gcc-arm-none-eabi binutils-arm-none-eabi >/dev/null ||
      { "${sudo[@]}" apt-get update -q >/dev/null && "${sudo[@]}" apt-get install -y -q gcc-arm-none-eabi binutils-arm-none-eabi >/dev/null; } ||
      die "apt-get install gcc-arm-none-eabi"
  fi

  step "setup: .venv with apache-tvm-ffi==$TVM_FFI_VERSION pyarrow==$PYARROW_VERSION numpy==$NUMPY_VERSION pytest==$PYTEST_VERSION maturin==$MATURIN_VERSION duckdb==$DUCKDB_VERSION jax==$JAX_VERSION mypy==$MYPY_VERSION polars==$POLARS_VERSION nanoarrow==$NANOARROW_VERSION arro3-core==$ARRO3_VERSION hypothesis==$HYPOTHESIS_VERSION safetensors==$SAFETENSORS_VERSION"
  [ -x .venv/bin/python ] || python3 -m venv .venv || die "python3 -m venv"
  local pins=("apache-tvm-ffi==$TVM_FFI_VERSION" "pyarrow==$PYARROW_VERSION" "numpy==$NUMPY_VERSION"
    "pytest==$PYTEST_VERSION" "maturin==$MATURIN_VERSION" "duckdb==$DUCKDB_VERSION"
    "jax==$JAX_VERSION" "jaxlib==$JAX_VERSION" "mypy==$MYPY_VERSION" "polars==$POLARS_VERSION"
    "nanoarrow==$NANOARROW_VERSION" "arro3-core==$ARRO3_VERSION" "hypothesis==$HYPOTHESIS_VERSION"
    "safetensors==$SAFETENSORS_VERSION")
  if ! .venv/bin/python -m pip freeze --disable-pip-version-check 2>/dev/null |
    sort | grep -Fxc -f <(printf '%s\n' "${pins[@]}") | grep -qx "${#pins[@]}"; then
    .venv/bin/python -m pip install -q --disable-pip-version-check "${pins[@]}" || die "pip install"
  fi
  SITE=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  UPSTREAM_INCLUDES=("$SITE/tvm_ffi/include" "$SITE/pyarrow/include")
  [ -f "$SITE/tvm_ffi/include/dlpack/dlpack.h" ] || die "dlpack/dlpack.h not in apache-tvm-ffi"
  [ -f "$SITE/pyarrow/include/arrow/c/abi.h" ] || die "arrow/c/abi.h not in pyarrow"
}

passed=0
failed=()
selected=("$@")
listing=0
if [ "${1:-}" = "--list" ]; then
  listing=1
  selected=()
fi
ran=()
# Runs step NAME (a command and its arguments) when no steps were named or NAME was; with
# --list, prints NAME instead. Each step reports its wall time.
run() {
  local name=$1
  shift
  if [ "$listing" -eq 1 ]; then
    echo "$name"
    return
  fi
  if [ ${#selected[@]} -gt 0 ] && ! printf '%s\n' "${selected[@]}" | grep -Fxq "$name"; then
    return
  fi
  ran+=("$name")
  step "$name: $*"
  local start=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "($name: $((SECONDS - start)) s)"
  else
    echo "FAILED: $name ($((SECONDS - start)) s)"
    failed+=("$name")
  fi
}

# A crate that depends on dlpack-abi (default features, or none) builds dlpack-abi and its three
# dependencies, bitflags, bytemuck and static_assertions, and nothing else: no build tool
# (cbindgen, syn), no crate of an integration (those are the workspace's other crates).
dependent_builds_three_crates() {
  local dir=target/dependent-check features
  mkdir -p "$dir/src"
  : >"$dir/src/lib.rs"
  for features in "" "default-features = false, "; do
    printf '[package]\nname = "dependent-check"\nversion = "0.0.0"\nedition = "2021"\n\n[workspace]\n\n[dependencies]\ndlpack-abi = { %spath = "../.." }\n' "$features" >"$dir/Cargo.toml"
    local crates
    crates=$(cargo tree --manifest-path "$dir/Cargo.toml" --target all -e normal,build --prefix none \
      --no-dedupe | sed 's/ (.*//; s/ v[0-9].*//' | sort -u | tr '\n' ' ') || return 1
    echo "dlpack-abi { ${features}...}: $crates"
    [ "$crates" = "bitflags bytemuck dependent-check dlpack-abi static_assertions " ] || return 1
  done
}

# The safe layers' tests under Miri, with strict provenance, on x86_64 and again on i686 (`u64`
# aligned to 4, 32-bit `usize`: checks 32-bit behaviour, not only 32-bit layout): the core's unit
# tests, its two test binaries and the async device stream consumer against hostile producers on
# threads (and, on x86_64, its doctests); the ndarray crate's property tests (6 cases each); the
# arrow-rs crate's tests (arrow-rs runs under Miri too); the safetensors crate's in-memory tests
# (files parsed by the safetensors crate; mapping is outside Miri); the image and burn crates'
# tests (both crates are plain Rust; candle's SIMD and threads are left out). tests/header.rs
# reads files and the C test links C, neither of which Miri runs; dlpack-abi-pyo3 calls into
# libpython, which Miri cannot run either: python_tests covers it, except for its shared
# tensor's counts, which Miri runs.
miri() {
  export MIRIFLAGS="-Zmiri-strict-provenance"
  # One invocation per target: the packages' features unify, so the core is built once.
  local packages=(-p dlpack-abi -p dlpack-abi-ndarray -p dlpack-abi-arrow-rs
    -p dlpack-abi-safetensors -p dlpack-abi-image -p dlpack-abi-burn)
  local features=dlpack-abi/alloc,dlpack-abi/half,dlpack-abi/num-complex,dlpack-abi/std
  local target
  for target in x86_64-unknown-linux-gnu i686-unknown-linux-gnu; do
    cargo +nightly miri test -q --target "$target" "${packages[@]}" --features "$features" \
      --lib --test dlpack --test arrow --test async_consumer --test ndarray --test arrow_rs \
      --test safetensors --test image --test burn || return 1
  done
  cargo +nightly miri test -q -p dlpack-abi -p dlpack-abi-ndarray \
    --features dlpack-abi/alloc,dlpack-abi/half,dlpack-abi/num-complex --doc || return 1
  # dlpack-abi-pyo3's shared tensor (its counts, with a lock in the GIL's place) runs without
  # Python: Miri checks its atomics on both targets (pyo3 is told the interpreter's version when
  # cross-compiling).
  for target in x86_64-unknown-linux-gnu i686-unknown-linux-gnu; do
    PYO3_CROSS_PYTHON_VERSION=3.11 cargo +nightly miri test -q --target "$target" \
      -p dlpack-abi-pyo3 --lib shared:: || return 1
  done
}

# A short run of each fuzz target (ASan, debug assertions): the DLPack import, the Arrow
# schema import and parsers, and safetensors headers. Every target runs, each with its own log
# (target/fuzz-smoke-<name>.log); fails on any finding.
fuzz_smoke() {
  local name log status=0
  mkdir -p target
  for name in import_versioned arrow_schema safetensors_header; do
    log=target/fuzz-smoke-$name.log
    if (cd fuzz && cargo +nightly fuzz run -s address "$name" -- \
      -runs="$FUZZ_RUNS" -seed=1 -print_final_stats=1) >"$log" 2>&1; then
      echo "$name: $(grep -E 'stat::number_of_executed_units' "$log")"
    else
      tail -n 60 "$log"
      echo "$name: failed (see $log)"
      status=1
    fi
  done
  return "$status"
}

# The MSRV promise covers the libraries as dependents build them; dev-dependencies (dlpark 0.10,
# the benchmark's comparison, needs Rust 1.88) and the `header` feature (cbindgen) are not part of
# it. The crates whose `rust-version` is the core's are checked on it here; the others (the
# minimum of the crate they integrate) by msrv_integrations.
msrv_check() {
  cargo "+$MSRV" check -q -p dlpack-abi --lib --no-default-features &&
    cargo "+$MSRV" check -q -p dlpack-abi --lib --features half,num-complex,futures-core &&
    cargo "+$MSRV" check -q -p dlpack-abi-pyo3-macros -p dlpack-abi-ndarray \
      -p dlpack-abi-safetensors --lib
}

# Every integration crate whose `rust-version` is not the core's builds, with all its features, on
# that version (its own target directory per version: another compiler's artifacts).
msrv_integrations() {
  local version manifest crates
  for version in $INTEGRATION_MSRVS; do
    crates=()
    for manifest in integrations/*/Cargo.toml; do
      grep -qx "rust-version = \"$version\"" "$manifest" &&
        crates+=(-p "$(sed -n 's/^name = "\(.*\)"/\1/p' "$manifest" | head -n 1)")
    done
    echo "Rust $version: ${crates[*]}"
    cargo "+$version" check -q "${crates[@]}" --lib --all-features \
      --target-dir "target/msrv-$version" || return 1
  done
}

# The `dlpack_abi` Python package (python/, pyo3 feature) and the example extension
# (python/examples/tensor-ops, public API only) built with maturin into the venv, then the interop
# tests against the pinned NumPy, pyarrow, apache-tvm-ffi, JAX and DuckDB, and the type stubs
# checked against the built module (mypy.stubtest). Two builds: first the stable-ABI wheel
# (`--features abi3`, where `from_dlpack` calls `__dlpack__` with a keyword dict, NumPy arrays
# read directly) under the NumPy, tvm-ffi and direct NumPy import tests, then the per-version
# build (vectorcall) under all of them, both with
# the `counters` feature the leak checks read, the second with the `model` GPU the stream-ordering
# property tests drive. Both have the default `cuda-runtime` (CUDA loaded at run time: absent
# here, so hand-overs between streams are refused unless the model installs its own runtime).
# Its crates are linted in both configurations.
python_tests() {
  local pip=(.venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation
    --no-deps --force-reinstall)
  (cd python && cargo fmt --all -- --check &&
    cargo clippy -q --workspace --all-targets --features counters,cuda,model -- -D warnings &&
    cargo clippy -q --workspace --all-targets --features abi3 -- -D warnings) &&
    PATH="$PWD/.venv/bin:$PATH" MATURIN_PEP517_ARGS="--features abi3,counters" "${pip[@]}" \
      ./python &&
    .venv/bin/python -m pytest -q -p no:cacheprovider python/tests/test_numpy.py \
      python/tests/test_tvm_ffi.py python/tests/test_numpy_direct.py &&
    PATH="$PWD/.venv/bin:$PATH" MATURIN_PEP517_ARGS="--features counters,model" "${pip[@]}" ./python &&
    PATH="$PWD/.venv/bin:$PATH" "${pip[@]}" ./python/examples/tensor-ops &&
    .venv/bin/python -m pytest -q -p no:cacheprovider python/tests &&
    (cd target && ../.venv/bin/python -m mypy.stubtest dlpack_abi \
      --allowlist ../python/stubtest-allowlist.txt)
}

# The FFI-crate example (examples/ffi-kernels, its own workspace) is formatted and lint-clean;
# tests/c/run.sh builds and runs it.
ffi_example_lint() {
  local manifest=examples/ffi-kernels/Cargo.toml
  cargo fmt --manifest-path "$manifest" -- --check &&
    cargo clippy -q --manifest-path "$manifest" --target-dir target/ffi-kernels -- -D warnings
}

# Every public item of every crate of the workspace has an example a user can copy (rustdoc's
# JSON, counted; must be zero).
doc_examples() {
  RUSTDOCFLAGS="-Z unstable-options --output-format json" cargo +nightly doc -q --workspace --lib \
    --no-deps --all-features --target-dir target/nightly-doc || return 1
  local json status=0
  for json in target/nightly-doc/doc/dlpack_abi*.json; do
    scripts/doc_examples.py "$json" || status=1
  done
  return "$status"
}

# The core's public API is a checked record (public-api/dlpack-abi.txt): a change to it fails
# here until the record is regenerated (`--bless`) and committed with the change. Reads the JSON
# that doc_examples builds, with the core's every feature but `header`.
public_api() {
  RUSTDOCFLAGS="-Z unstable-options --output-format json" cargo +nightly doc -q -p dlpack-abi \
    --lib --no-deps --features std,half,num-complex,futures-core \
    --target-dir target/public-api &&
    scripts/public_api.py target/public-api/doc/dlpack_abi.json public-api/dlpack-abi.txt
}

cross_build() {
  local target=$1
  cargo build -q --target "$target" --no-default-features && cargo build -q --target "$target"
}

clippy_feature_sets() {
  cargo clippy -q -p dlpack-abi --lib --tests --no-default-features --features alloc -- -D warnings &&
    cargo clippy -q -p dlpack-abi --lib --tests --no-default-features --features fast-path -- -D warnings
}

[ "$listing" -eq 1 ] || setup
run fmt cargo fmt --all -- --check
run clippy cargo clippy -q --workspace --all-targets --all-features -- -D warnings
# c_ulong is u64 on LP64 and u32 on i686: lints that depend on it must hold on both.
run clippy-i686 cargo clippy -q --target i686-unknown-linux-gnu --all-targets -- -D warnings
# The core's feature sets between none and all: `alloc` without `fast-path` (what a size-minded
# user with export picks) and `fast-path` without `alloc`.
run clippy-feature-sets clippy_feature_sets
run test-all-features cargo test --workspace --all-features
run test-no-default-features cargo test --no-default-features
run test-i686 cargo test --target i686-unknown-linux-gnu
run "msrv-$MSRV" msrv_check
run msrv-integrations msrv_integrations
for target in "${TARGETS[@]}"; do
  run "build-$target" cross_build "$target"
done
run miri miri
# The borrowed import path links for thumbv7em-none-eabihf without `alloc` (it fails otherwise),
# and its code size next to the same checks in C (BENCHMARKS.md, P4).
run no-std-size benches/no_std/size.sh
run example-exchange cargo run -q --example exchange
run example-arrow cargo run -q --example arrow
run python-tests python_tests
run ffi-example-lint ffi_example_lint
run c-tests-x86_64 tests/c/run.sh x86_64
run c-tests-i686 tests/c/run.sh i686
run fuzz-smoke fuzz_smoke
run layout-checks-x86_64 layout-checks/run.sh x86_64 "${UPSTREAM_INCLUDES[@]}"
run layout-checks-i686 layout-checks/run.sh i686 "${UPSTREAM_INCLUDES[@]}"
run errno-values layout-checks/errno/run.sh
run dependent-builds-three-crates dependent_builds_three_crates
run public-api public_api
# Every crate of the workspace, in dependency order (cargo sorts them: the core first).
run publish-dry-run cargo publish -q --workspace --dry-run --allow-dirty
run doc env RUSTDOCFLAGS="-D warnings" cargo doc -q --workspace --no-deps --all-features
# docs.rs's build, simulated: nightly, `--cfg docsrs` (every item says which features it needs).
run docs-rs env RUSTDOCFLAGS="--cfg docsrs -D warnings" cargo +nightly doc -q --workspace \
  --no-deps --all-features --target-dir target/nightly-doc
run doc-examples doc_examples
# The README's quick starts that are not doctests: the C program, and excerpts of built files.
run readme-quick-starts scripts/readme_snippets.py

[ "$listing" -eq 1 ] && exit 0
for name in "${selected[@]}"; do
  if ! printf '%s\n' "${ran[@]}" | grep -Fxq "$name"; then
    echo "unknown step: $name (scripts/test.sh --list names them)"
    failed+=("$name")
  fi
done

echo
[ ${#failed[@]} -eq 0 ] || echo "failed steps: ${failed[*]}"
echo "test.sh: $passed passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
