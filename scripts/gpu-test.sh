#!/usr/bin/env bash
# Stream ordering on a real GPU: the cudarc bridge (integrations/cudarc/examples/cudarc_gpu.rs), the Python exchange
# with CuPy, PyTorch and JAX (python/gpu_tests: every producer writes late on its own stream and
# every consumer reads on another, without a device synchronisation), and the conformance
# checker run against PyTorch and CuPy. Not part of CI (which has no GPU). Ends with
# "gpu-test.sh: N passed, M failed"; says "skipped: no GPU" and exits 0 where nvidia-smi sees
# none (before building anything).
#
#   scripts/gpu-test.sh                 build here, then run (needs a GPU, cargo and Python)
#   scripts/gpu-test.sh --build DIR     only build into DIR, no GPU needed: the example binary
#                                       and a wheel with --features abi3,cuda,counters (maturin,
#                                       pinned as scripts/test.sh pins it, in a private venv)
#   scripts/gpu-test.sh --prebuilt DIR  run what --build put in DIR (a GPU machine without Rust)
#
# Build here, run there (docs/testing.md): `scripts/gpu-test.sh --build target/gpu-test` on
# any machine, then `scripts/gpu-test.sh --prebuilt target/gpu-test` on the GPU machine with
# target/gpu-test carried over (under 3 minutes).
#
# Python: the interpreter's own packages (PYTHON, default .venv/bin/python if there is one, else
# python3; on the lent GPU machines python3 is itself a venv with CuPy, JAX, PyTorch, NumPy and
# pytest). The wheel is unpacked into a private directory put first on PYTHONPATH: no nested
# venv (which would see the base interpreter's packages, not a venv's). The network is used
# only to fetch NumPy or pytest if the interpreter lacks them. CuPy, PyTorch and JAX that drive
# the GPU under the bare interpreter are required of the tests (DLPACK_ABI_GPU_REQUIRE): losing
# one fails the run. Every skipped test counts as a failure, except those whose reason starts
# with "optional:" (a library this interpreter does not have, or pyarrow without CUDA).
#
# Results (the log of each step, pytest's JUnit XML, the conformance JSON, the device findings'
# reproducers, versions, the nvidia-smi line, the summary, and all of them packed in
# results.tar.gz) go to $OUT when it is set, else to DIR/results. Every step has
# a time limit so that the whole run ends within GPU_TEST_SECONDS (default 170) with its
# summary line.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

usage() {
  echo "usage: $0 [--build DIR | --prebuilt DIR]" >&2
  exit 2
}

mode=build-and-run
artifacts=target/gpu-test
case "${1:-}" in
  --build | --prebuilt)
    if [ $# -ne 2 ] || [ -z "$2" ]; then usage; fi
    mode=${1#--}
    artifacts=$2
    ;;
  "") [ $# -eq 0 ] || usage ;;
  *) usage ;;
esac

has_gpu() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1
}

if [ "$mode" != build ] && ! has_gpu; then
  echo "gpu-test.sh: skipped: no GPU"
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# Build (no GPU needed).

MATURIN_VERSION=$(sed -n 's/^MATURIN_VERSION=//p' scripts/test.sh)
build_venv=target/gpu-test-build-venv

build() {
  command -v cargo >/dev/null || { echo "gpu-test.sh: cargo is not installed" >&2; return 1; }
  [ -n "$MATURIN_VERSION" ] || { echo "gpu-test.sh: no MATURIN_VERSION in scripts/test.sh" >&2; return 1; }
  if ! "$build_venv/bin/maturin" --version 2>/dev/null | grep -qx "maturin $MATURIN_VERSION"; then
    echo "gpu-test.sh: maturin $MATURIN_VERSION into $build_venv"
    "${BUILD_PYTHON:-python3}" -m venv "$build_venv" &&
      "$build_venv/bin/python" -m pip install -q --disable-pip-version-check \
        "maturin==$MATURIN_VERSION" || return 1
  fi
  mkdir -p "$artifacts" &&
    rm -f "$artifacts/cudarc_gpu" "$artifacts"/dlpack_abi-*.whl "$artifacts/BUILD-INFO" &&
    cargo build -q --release -p dlpack-abi-cudarc --example cudarc_gpu &&
    cp target/release/examples/cudarc_gpu "$artifacts/" &&
    "$build_venv/bin/maturin" build -q --release -m python/Cargo.toml \
      --features abi3,cuda,counters -i "$build_venv/bin/python" -o "$artifacts" || return 1
  local glibc
  glibc=$( (objdump -T "$artifacts/cudarc_gpu" 2>/dev/null || true) |
    grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
  {
    echo "commit: $(git rev-parse HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(ldd --version 2>/dev/null | head -1)"
    echo "rustc: $(rustc --version)"
    echo "maturin: $MATURIN_VERSION, features abi3,cuda,counters"
    echo "wheel: $(basename "$artifacts"/dlpack_abi-*.whl)"
    echo "cudarc_gpu needs: ${glibc:-?} or newer"
  } >"$artifacts/BUILD-INFO"
}

if [ "$mode" != prebuilt ]; then
  build || { echo "gpu-test.sh: build failed" >&2; exit 1; }
  if [ "$mode" = build ]; then
    echo "gpu-test.sh: built into $artifacts ($(du -sh "$artifacts" | cut -f1)):"
    sed 's/^/  /' "$artifacts/BUILD-INFO"
    exit 0
  fi
fi

# ---------------------------------------------------------------------------------------------
# Run.

deadline=$((SECONDS + ${GPU_TEST_SECONDS:-170}))
results=${OUT:-$artifacts/results}
mkdir -p "$results" || { echo "gpu-test.sh: cannot write $results" >&2; exit 1; }
results=$(cd "$results" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

passed=0
failed=0
optional=0
failures=()
fail() {
  echo "FAILED: $*"
  failed=$((failed + 1))
  failures+=("$*")
}
step() {
  echo
  echo "==> $*"
}
# The seconds a step may take: at most $1, and no more than the run has left (less a margin
# for the summary); 0 when it is out of time.
limit() {
  local left=$((deadline - SECONDS - 5))
  if [ "$left" -lt 5 ]; then
    echo 0
  elif [ "$left" -lt "$1" ]; then
    echo "$left"
  else
    echo "$1"
  fi
}

PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
export XLA_PYTHON_CLIENT_PREALLOCATE=false # JAX shares the GPU with CuPy and PyTorch

gpu_line=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
echo "gpu-test.sh: on ${gpu_line:-a GPU nvidia-smi does not describe}"
echo "$gpu_line" >"$results/nvidia-smi-line.txt"
nvidia-smi >"$results/nvidia-smi.txt" 2>&1
{
  echo "gpu: $gpu_line"
  echo "python: $("$PYTHON" -c 'import sys; print(sys.version.split()[0], sys.prefix)' 2>&1)"
  echo "glibc: $(ldd --version 2>/dev/null | head -1)"
  [ -f "$artifacts/BUILD-INFO" ] && sed 's/^/build /' "$artifacts/BUILD-INFO"
} >"$results/versions.txt"

wheels=("$artifacts"/dlpack_abi-*.whl)
if [ ! -x "$artifacts/cudarc_gpu" ] || [ ${#wheels[@]} -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
  fail "$artifacts lacks the artifacts (cudarc_gpu and one dlpack_abi wheel): run scripts/gpu-test.sh --build $artifacts first"
  echo
  echo "gpu-test.sh: $passed passed, $failed failed" | tee "$results/summary.txt"
  exit 1
fi

# -- which GPU libraries the bare interpreter has (probed in parallel with the cudarc run) -----
libraries=(cupy torch jax)
for library in "${libraries[@]}"; do
  (
    code=0
    timeout -k 5 120 "$PYTHON" python/gpu_tests/_probe.py "$library" >"$scratch/probe-$library" 2>&1 || code=$?
    echo "$code" >"$scratch/probe-$library.rc"
  ) &
done

step "cudarc bridge (integrations/cudarc/examples/cudarc_gpu.rs)"
seconds=$(limit 60)
if [ "$seconds" -eq 0 ]; then
  fail "cudarc_gpu: out of time"
else
  timeout -k 5 "$seconds" "$artifacts/cudarc_gpu" 2>&1 | tee "$results/cudarc_gpu.log"
  code=${PIPESTATUS[0]}
  summary=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$results/cudarc_gpu.log" | tail -1)
  if grep -q "skipped: no GPU" "$results/cudarc_gpu.log"; then
    fail "cudarc_gpu sees no GPU although nvidia-smi does"
  elif [ -z "$summary" ]; then
    fail "cudarc_gpu did not report (exit status $code: crashed or out of time)"
  else
    passed=$((passed + $(echo "$summary" | cut -d' ' -f1)))
    failed=$((failed + $(echo "$summary" | cut -d' ' -f3)))
    [ "$code" -eq 0 ] || [ "$(echo "$summary" | cut -d' ' -f3)" -ne 0 ] ||
      fail "cudarc_gpu exited with status $code after reporting $summary"
  fi
fi
wait

step "Python: the interpreter ($PYTHON) and its GPU libraries"
required=()
for library in "${libraries[@]}"; do
  line=$(tail -1 "$scratch/probe-$library")
  code=$(cat "$scratch/probe-$library.rc")
  echo "$line" | tee -a "$results/versions.txt"
  case "$code" in
    0) required+=("$library") ;;
    3) echo "  (its tests are skipped as optional: it cannot drive the GPU under this interpreter)" ;;
    4) echo "  (its tests are skipped as optional: this interpreter does not have it)" ;;
    *)
      cat "$scratch/probe-$library"
      fail "probing $library crashed or hung (exit status $code)"
      ;;
  esac
done
DLPACK_ABI_GPU_REQUIRE=$(
  IFS=,
  echo "${required[*]}"
)
export DLPACK_ABI_GPU_REQUIRE
echo "required of the tests: ${DLPACK_ABI_GPU_REQUIRE:-none}"

# The wheel, unpacked into a private directory first on PYTHONPATH (no network: --no-index).
site=$scratch/site
if ! "$PYTHON" -m pip install -q --disable-pip-version-check --no-index --no-deps \
  --target "$site" "${wheels[0]}" >"$scratch/pip.log" 2>&1; then
  # No pip: a wheel of a package and its .dist-info is a zip of what goes on the path.
  echo "(pip cannot install the wheel: $(tail -1 "$scratch/pip.log"); unpacking it instead)"
  rm -rf "$site"
  "$PYTHON" -m zipfile -e "${wheels[0]}" "$site" >>"$scratch/pip.log" 2>&1 ||
    { cat "$scratch/pip.log"; fail "cannot install $(basename "${wheels[0]}")"; }
fi
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"

# NumPy and pytest: the interpreter's, or fetched into the private directory if it lacks them.
for package in numpy pytest; do
  if ! "$PYTHON" -c "import $package" 2>/dev/null; then
    echo "($PYTHON has no $package: fetching it into $site)"
    "$PYTHON" -m pip install -q --disable-pip-version-check --target "$site" "$package" >/dev/null 2>&1 ||
      fail "$package: $PYTHON has none and it cannot be installed"
  fi
done
# shellcheck disable=SC2016 # Python code
"$PYTHON" -c 'import numpy, pytest; print("numpy:", numpy.__version__); print("pytest:", pytest.__version__)' \
  2>&1 | tee -a "$results/versions.txt"

# The tests must import this wheel, built with `cuda` and `counters`, and see the GPU.
# shellcheck disable=SC2016 # Python code
check=$("$PYTHON" -W ignore -c '
import os, sys
import dlpack_abi
ext = dlpack_abi.dlpack_abi
print("dlpack_abi:", os.path.dirname(dlpack_abi.__file__))
if not os.path.realpath(dlpack_abi.__file__).startswith(os.path.realpath(sys.argv[1]) + os.sep):
    sys.exit("dlpack_abi is imported from elsewhere than the wheel under test")
if not hasattr(ext, "_cuda_available") or not hasattr(dlpack_abi, "counts"):
    sys.exit("the wheel was built without the cuda or the counters feature")
if not ext._cuda_available():
    sys.exit("no GPU visible to dlpack_abi (its CUDA driver does not load or sees no device) although nvidia-smi sees one")
' "$site" 2>&1)
code=$?
echo "$check" | tee -a "$results/versions.txt"
[ "$code" -eq 0 ] || fail "$(echo "$check" | tail -1)"

# -- the conformance checker against PyTorch and CuPy, in the background -----------------------
conformance=()
for library in torch cupy; do
  printf '%s\n' "${required[@]}" | grep -qx "$library" && conformance+=("$library")
done
if [ ${#conformance[@]} -gt 0 ]; then
  seconds=$(limit 150)
  for run in producer consumer; do
    (
      code=0
      timeout -k 5 "$seconds" "$PYTHON" -m dlpack_abi.conformance "$run" "${conformance[@]}" --json \
        >"$results/conformance-$run.json" 2>"$results/conformance-$run.stderr" || code=$?
      echo "$code" >"$scratch/conformance-$run.rc"
    ) &
  done
fi

# -- the device findings' reproducers (scripts/device_findings.py), in the background ----------
(
  code=0
  timeout -k 5 "$(limit 60)" "$PYTHON" scripts/device_findings.py --json \
    >"$results/device-findings.json" 2>"$results/device-findings.stderr" || code=$?
  echo "$code" >"$scratch/device-findings.rc"
) &

# -- the test modules, one pytest process each (a crash loses one module, not the run) ---------
# Counts a JUnit XML file: "passed failed optional" and one line per counted skip.
count_junit() {
  "$PYTHON" - "$1" <<'EOF'
import sys
import xml.etree.ElementTree as ET

passed = failed = optional = 0
notes = []
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    name = f"{case.get('classname')}.{case.get('name')}"
    if case.find("failure") is not None or case.find("error") is not None:
        failed += 1
    elif (skip := case.find("skipped")) is not None:
        # A test's skip has its reason as the message; a module's, in the text.
        reason = f"{skip.get('message', '')} {skip.text or ''}"
        if "optional:" in reason:
            optional += 1
        else:
            failed += 1
            notes.append(f"a skip counted as a failure: {name}: {reason}")
    else:
        passed += 1
print(passed, failed, optional)
print("\n".join(notes))
EOF
}

for module in python/gpu_tests/test_*.py; do
  name=$(basename "$module" .py)
  step "Python: $module"
  seconds=$(limit 90)
  if [ "$seconds" -eq 0 ]; then
    fail "$module: out of time"
    continue
  fi
  xml=$results/pytest-$name.xml
  rm -f "$xml"
  timeout -k 5 "$seconds" "$PYTHON" -m pytest -q -rs -p no:cacheprovider --junitxml="$xml" \
    "$module" 2>&1 | tee "$results/pytest-$name.log"
  code=${PIPESTATUS[0]}
  if [ ! -s "$xml" ]; then
    fail "$module: pytest did not finish (exit status $code: crashed or out of time)"
    continue
  fi
  counted=$(count_junit "$xml") || { fail "$module: cannot read $xml"; continue; }
  read -r p f o <<<"$(echo "$counted" | head -1)"
  passed=$((passed + p))
  optional=$((optional + o))
  [ "$f" -eq 0 ] || {
    failed=$((failed + f))
    failures+=("$module: $f")
  }
  echo "$counted" | tail -n +2 | sed '/^$/d; s/^/FAILED: /'
  # 2: collection errors or an interruption; 5: no test ran, right only for a module skipped
  # as optional as a whole.
  if [ "$code" -ne 0 ] && [ "$f" -eq 0 ] && ! { [ "$code" -eq 5 ] && [ "$o" -gt 0 ]; }; then
    fail "$module: pytest exited with status $code"
  fi
done

step "conformance checker: python -m dlpack_abi.conformance {producer,consumer} ${conformance[*]:-(none)} --json"
wait
if [ ${#conformance[@]} -eq 0 ]; then
  echo "(neither PyTorch nor CuPy drives the GPU under this interpreter: nothing to check)"
fi
for run in producer consumer; do
  [ ${#conformance[@]} -gt 0 ] || break
  code=$(cat "$scratch/conformance-$run.rc" 2>/dev/null || echo '?')
  # The checker's verdicts about the libraries are findings; only the checker failing to run
  # (a traceback, a crash, a timeout, JSON missing or incomplete) is a failure.
  if verdicts=$("$PYTHON" - "$results/conformance-$run.json" "$code" "${conformance[@]}" 2>&1 <<'EOF'
import collections, json, sys

path, code, libraries = sys.argv[1], sys.argv[2], sys.argv[3:]
if code not in ("0", "1"):
    sys.exit(f"the checker exited with status {code}")
try:
    with open(path) as file:
        report = json.load(file)
except (OSError, ValueError) as error:
    sys.exit(f"no JSON report ({error})")
for library in libraries:
    entry = report.get(library)
    if not isinstance(entry, dict) or not entry.get("results"):
        sys.exit(f"no results for {library}")
    tally = collections.Counter(result["verdict"] for result in entry["results"])
    if set(tally) == {"n/a"}:  # the library did not load in the checker
        sys.exit(f"{library}: nothing checked ({entry['results'][0].get('detail', '')})")
    print(f"{entry.get('version') or library}: "
          + ", ".join(f"{n} {verdict}" for verdict, n in sorted(tally.items())))
EOF
  ); then
    echo "$run: ran (its verdicts are findings, not failures; $results/conformance-$run.json)"
    printf '  %s\n' "${verdicts//$'\n'/$'\n'  }"
    passed=$((passed + 1))
  else
    tail -n 20 "$results/conformance-$run.stderr" 2>/dev/null
    fail "conformance $run: the checker itself failed: $(echo "$verdicts" | tail -1)"
  fi
done

step "CUDA import timing: python/gpu_tests/bench_cuda_import.py (figures, not verdicts)"
seconds=$(limit 60)
if [ "$seconds" -eq 0 ]; then
  echo "(out of time: not measured)"
elif timeout -k 5 "$seconds" "$PYTHON" python/gpu_tests/bench_cuda_import.py \
  >"$results/cuda-import-bench.json" 2>"$results/cuda-import-bench.stderr"; then
  cat "$results/cuda-import-bench.json"
else
  echo "(the timing did not run: $(tail -n 1 "$results/cuda-import-bench.stderr"))"
fi

step "device findings: scripts/device_findings.py --json (facts about PyTorch and CuPy, not failures)"
code=$(cat "$scratch/device-findings.rc" 2>/dev/null || echo '?')
if findings=$("$PYTHON" - "$results/device-findings.json" <<'EOF'
import json, sys

for name, entry in json.load(open(sys.argv[1])).items():
    print(f"{entry['verdict']:>18}  {name}: {entry['detail'][:160]}")
EOF
); then
  printf '%s\n' "$findings"
  passed=$((passed + 1))
else
  tail -n 20 "$results/device-findings.stderr" 2>/dev/null
  fail "device findings: the reproducers did not run (status $code)"
fi

echo
[ "$optional" -eq 0 ] || echo "($optional optional tests skipped: libraries this interpreter does not have)"
[ ${#failures[@]} -eq 0 ] || printf 'failed: %s\n' "${failures[@]}"
echo "gpu-test.sh: $passed passed, $failed failed" | tee "$results/summary.txt"
# Everything the run wrote, in one archive beside the summary: taking the results off the GPU
# machine is one file.
tar -czf "$scratch/results.tar.gz" -C "$results" --exclude=results.tar.gz . \
  && mv "$scratch/results.tar.gz" "$results/results.tar.gz" \
  && echo "gpu-test.sh: results in $results/results.tar.gz ($(du -h "$results/results.tar.gz" | cut -f1))"
[ "$failed" -eq 0 ]
