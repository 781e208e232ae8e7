#!/usr/bin/env bash
# Stream ordering on a real GPU: the cudarc bridge (examples/cudarc_gpu.rs) and the Python
# exchange with CuPy and JAX (python/gpu_tests), where every producer writes late on its own
# stream and every consumer reads on another without a device synchronisation. Not part of CI
# (which has no GPU). Ends with "gpu-test.sh: N passed, M failed"; says "skipped: no GPU" and
# exits 0 where there is none.
#
#   scripts/gpu-test.sh                 build here (cargo, maturin) and run
#   scripts/gpu-test.sh --build DIR     only build the two artifacts into DIR (no GPU needed):
#                                       the example binary and an abi3 wheel with `cuda`
#   scripts/gpu-test.sh --prebuilt DIR  run artifacts built elsewhere (a GPU machine without Rust)
#
# Python packages: CuPy (`cupy-cuda12x`, or whichever CuPy is installed) and JAX with CUDA are
# used when importable, and installed from PyPI when missing and PyPI can be reached; a missing
# one is reported as skipped, never as passed. PYTHON picks the interpreter (default: .venv's,
# else python3).
set -uo pipefail
cd "$(dirname "$0")/.."

mode=build-and-run
artifacts=target/gpu-test
case "${1:-}" in
  --build) mode=build; artifacts=${2:?--build DIR} ;;
  --prebuilt) mode=prebuilt; artifacts=${2:?--prebuilt DIR} ;;
  "") ;;
  *) echo "usage: $0 [--build DIR | --prebuilt DIR]" >&2; exit 2 ;;
esac

PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi

build() {
  mkdir -p "$artifacts" &&
    cargo build -q --release --example cudarc_gpu --features cudarc &&
    cp target/release/examples/cudarc_gpu "$artifacts/" &&
    rm -f "$artifacts"/dlpack_abi-*.whl &&
    "$PYTHON" -m maturin build -q --release -m python/Cargo.toml --features abi3,cuda \
      -o "$artifacts"
}

if [ "$mode" != prebuilt ]; then
  build || { echo "gpu-test.sh: build failed" >&2; exit 1; }
  [ "$mode" = build ] && { echo "gpu-test.sh: built into $artifacts"; exit 0; }
fi

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-test.sh: skipped: no GPU"
  exit 0
fi
echo "gpu-test.sh: on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"

passed=0
failed=0
skipped=0

echo
echo "==> cudarc bridge (examples/cudarc_gpu.rs)"
rust_log=$(mktemp)
"$artifacts/cudarc_gpu" 2>&1 | tee "$rust_log"
summary=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$rust_log" | tail -1)
if [ -n "$summary" ]; then
  passed=$((passed + $(echo "$summary" | cut -d' ' -f1)))
  failed=$((failed + $(echo "$summary" | cut -d' ' -f3)))
else
  echo "FAILED: the cudarc checks did not report (crashed?)"
  failed=$((failed + 1))
fi

echo
echo "==> Python: dlpack_abi with CuPy and JAX (python/gpu_tests)"
venv=$artifacts/venv
"$PYTHON" -m venv --system-site-packages "$venv" >/dev/null 2>&1 || "$PYTHON" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall \
  "$artifacts"/dlpack_abi-*.whl || { echo "FAILED: cannot install the wheel"; failed=$((failed + 1)); }
for package in numpy pytest; do
  "$venv/bin/python" -c "import $package" 2>/dev/null ||
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$package" >/dev/null 2>&1
done
"$venv/bin/python" -c "import cupy" 2>/dev/null ||
  "$venv/bin/python" -m pip install -q --disable-pip-version-check cupy-cuda12x >/dev/null 2>&1 ||
  echo "(CuPy is not installed and cannot be: its tests will be skipped)"
"$venv/bin/python" -c "import jax; jax.devices('gpu')" 2>/dev/null ||
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "jax[cuda12]" >/dev/null 2>&1 ||
  echo "(JAX with CUDA is not installed and cannot be: its tests will be skipped)"
python_log=$(mktemp)
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider python/gpu_tests 2>&1 | tee "$python_log"
last=$(tail -1 "$python_log")
# pytest's last line counts "N passed", "N failed", "N error(s)", "N skipped".
count() {
  local n
  n=$(echo "$last" | grep -Eo "[0-9]+ $1" | cut -d' ' -f1 | head -1)
  echo "${n:-0}"
}
python_failed=$(($(count failed) + $(count error)))
if ! echo "$last" | grep -Eq '[0-9]+ (passed|failed|skipped|error)'; then
  echo "FAILED: pytest did not report (crashed?)"
  python_failed=1
fi
passed=$((passed + $(count passed)))
failed=$((failed + python_failed))
skipped=$((skipped + $(count skipped)))

echo
echo "gpu-test.sh: $passed passed, $failed failed ($skipped skipped)"
[ "$failed" -eq 0 ]
