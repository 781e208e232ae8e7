#!/usr/bin/env python3
"""Writes CONFORMANCE.md: what dlpack_abi.conformance finds in the pinned Python libraries
(`scripts/test.sh` pins them), and in the device libraries (PyTorch, CuPy) from a GPU run's JSON.
Run from the repository root with the venv's Python after the package is built:

    .venv/bin/python scripts/conformance_report.py                    # the CPU tables; the Device section is kept
    .venv/bin/python scripts/conformance_report.py --device-json DIR  # and the Device section from DIR

DIR holds what `python -m dlpack_abi.conformance producer torch cupy --json` and `... consumer
torch cupy --json` printed on a GPU machine (scripts/gpu-test.sh writes both to its artifacts
folder): every `*.json` file there that is such a report is read, whatever its name."""
import argparse
import datetime
import json
import pathlib
import re
import sys

LIBRARIES = ["numpy", "pyarrow", "tvm_ffi", "jax", "polars", "nanoarrow", "arro3", "duckdb", "dlpack_abi"]
ROOT = pathlib.Path(__file__).resolve().parents[1]

HEADER = """# Conformance of Python DLPack and Arrow PyCapsule libraries

What `python -m dlpack_abi.conformance` reports for the libraries the test command pins
(regenerate with `.venv/bin/python scripts/conformance_report.py`), and for PyTorch and CuPy on a
GPU ([Device](#device)). Each rule cites the section of `dlpack-1.3.md` or `arrow-c-interfaces.md`
(the specs' facts) it checks; `python -m dlpack_abi.conformance producer LIBRARY` prints the whole
table. These are findings, not test failures: the test suite asserts only that every rule can fail
(a broken fake for each), that dlpack-abi's own objects pass, and that device producers and
consumers (faked in CI) get real verdicts, or n/a with a reason, never a failure for the checker's
own limits.

Verdicts: **fail** breaks the rule (the consumer check: mishandles the case); **crash** killed
the process; **warn** a recommendation not followed; **refused** a clean refusal the spec allows
(an optional feature); **n/a** the rule does not apply, or the checker could not check it there
(the detail says why: device memory the producer will not copy to the CPU, a library that is not
installed). n/a is neither a pass nor a failure, and never sets the exit code. Rules a library
passes, or that do not apply to it, are not listed; the device tables list the n/a the checker
could not check.
"""


NOTES = """
## Reading the findings (the versions above)

- **Correction (issue 38):** earlier versions of this page said NumPy returns NULL without an
  exception (`SystemError`) for FP4 tensors and for a tensor of major version 2, and skips the
  deleter. That was the checker's own fault: its test capsules had a destructor written in
  Python, which lost the error NumPy had raised. NumPy refuses both cleanly and calls the
  deleter; the fakes now use a C destructor that keeps a pending error.
- **tvm-ffi** gives back a tensor that shares a `READ_ONLY` `dlpack_abi.Tensor`'s memory (taken
  through its C exchange API) and exports it writable: NumPy can then write read-only memory.
- **nanoarrow** crashes (SIGSEGV) reading the values of pyarrow's own `string_view` arrays.
- **tvm-ffi and JAX** accept a major-2 tensor (reading fields a 2.x layout may have moved), and
  call `__dlpack__()` without `max_version`, so a producer that exports versioned tensors only
  (allowed since 2025) cannot be consumed, nor read-only data from a producer that refuses to
  export it as a legacy capsule (NumPy, dlpack-abi).
- **JAX** has no versioned export: asked for 1.x it returns a legacy capsule, so it cannot mark
  its immutable buffers `READ_ONLY`; its capsule destructor frees the tensor without calling the
  struct's `deleter`.
- **pyarrow** exports its immutable buffers as a legacy capsule from a plain `__dlpack__()`,
  which cannot say read-only (NumPy and dlpack-abi refuse that export).
- **arro3** returns its own schema for an incompatible `requested_schema` instead of raising.
- **pyarrow, polars, nanoarrow and DuckDB** objects that offer data have no
  `__arrow_c_schema__`, so a consumer must take the stream or array to learn its schema;
  **nanoarrow** raises `NotImplementedError` for any `requested_schema`, its own included.
- Of these libraries only dlpack-abi publishes a C exchange API table on its tensor type. Device
  memory and streams (PyTorch and CuPy on a GPU): [Device](#device).
"""

BEGIN = "<!-- device: begin -->"
END = "<!-- device: end -->"

HOW = """How to produce it: on a machine with an NVIDIA GPU, a CUDA build of PyTorch and CuPy, and this
package installed,

```sh
python -m dlpack_abi.conformance producer torch cupy --json > DIR/conformance-producer.json
python -m dlpack_abi.conformance consumer torch cupy --json > DIR/conformance-consumer.json
.venv/bin/python scripts/conformance_report.py --device-json DIR
```

(`scripts/gpu-test.sh` runs the first two and writes the JSON to its artifacts folder; without
`--json` they print the tables.) A library that is missing, or has no GPU, is reported as not
checked (n/a); the exit code is 1 only when a rule fails or a library crashes. The last command
replaces this section with the run's tables; a regeneration without `--device-json` keeps it.

The checker never reads device memory in place: the elements of device data are read through the
producer's own copy to the CPU (`__dlpack__(dl_device=(1, 0), copy=True)`), and where the producer
refuses that copy the rule is n/a with the reason, never a failure. It passes the streams
consumers pass (`dlpack.call.stream_device`: CUDA's 1 and 2), checks the C exchange API once per
device, and runs the consumer cases a second time in the library's own device memory, reading the
results back through their copy to the CPU; `consumer.stream` checks the stream a consumer
passes for each device.
"""

#: The write-up of the findings of the run this text was written from: appended only to that
#: run's section (a later run's JSON and `device-findings.json` speak for themselves).
DEVICE_NOTES_RUN = "2026-11-27"

DEVICE_NOTES = """
### Device findings, for their maintainers

Each has a minimal reproducer in [`scripts/device_findings.py`](scripts/device_findings.py)
(only the library, NumPy and ctypes; an odd producer is a capsule built with ctypes over the
library's own device memory). `scripts/gpu-test.sh` runs them and saves `device-findings.json`:
a reproducer says `reproduces` or `does not reproduce`. They were written from the run's
evidence, after it: **none has run on a GPU yet** (the next device run is their first).

- **PyTorch: copies are not marked `IS_COPIED`** (`torch_copy_is_not_marked_copied`).
  `t.__dlpack__(max_version=(1, 3), copy=True)` and `t.__dlpack__(max_version=(1, 3),
  dl_device=(1, 0), copy=True)` of a CUDA tensor return copies whose `flags` lack `IS_COPIED`
  (bit 1), which dlpack-1.3.md §4 asks of a producer that copies: a consumer cannot tell it may
  write the result.
- **PyTorch: negative strides abort the process** (`torch_aborts_on_negative_strides`).
  `torch.from_dlpack` of a CUDA tensor of 6 float32 with `strides=(-1,)` and `byte_offset=20`
  (the last element first; dlpack-1.3.md §5.3 allows negative strides) ends with SIGABRT;
  importing (with a copy if it must) or raising `BufferError` would be correct.
- **PyTorch and CuPy: `READ_ONLY` ignored** (`torch_ignores_read_only`,
  `cupy_ignores_read_only`). `torch.from_dlpack` / `cupy.from_dlpack` of a CUDA tensor whose
  `flags` has `READ_ONLY` returns a writable tensor over the same memory: `t[0] = 42` writes
  the producer's read-only memory. A consumer that cannot keep it read-only must copy or refuse
  (dlpack-1.3.md §4). PyTorch does the same through the C exchange API (CPU rule
  `consumer.read_only_exchange`).
- **PyTorch: `stream=2` refused** (`torch_refuses_the_per_thread_default_stream`).
  `__dlpack__(stream=2)` raises `BufferError: per-thread default stream is not supported.`;
  allowed, but a consumer on the per-thread default stream then has to ask for the legacy
  default stream, which CUDA orders with it (dlpack-abi does since issue 38).
- **CuPy: `SystemError: error return without exception set` — in doubt**
  (`cupy_system_error_on_subbyte`, `cupy_system_error_on_major_2`). The run reported it for a
  `float4_e2m1fn` tensor (code 17, 4 bits), packed or padded, and for a tensor of major version
  2. The same report against NumPy was found to be the checker's own fault after the run (its
  test capsules' Python destructor lost the consumer's error; fixed, see the correction above),
  and the run's JSON predates the fix, so these three CuPy verdicts are probably the same
  artefact. The reproducers use capsules without a destructor; the next device run decides.
- **CuPy: negative strides come back wrong** (`cupy_negative_strides`). Given a tensor with
  strides `(-3, -1)` (float32), the array `cupy.from_dlpack` made exported `strides[0] =
  4611686018427387901` through its `__dlpack__`: `2**62 - 3`, which is a byte stride of -12
  divided by 4 as an unsigned number. The reproducer checks both the import of a reversed
  tensor (`.strides`) and the export of `cupy.arange(6)[::-1]`, to say which side it is.
- **CuPy: `copy=True` on the device refused** (`BufferError: copy=True only supported for copy
  to CPU.`): allowed (refused, not failed).
- Seen in an earlier run (2026-11, the checker before issue 28): PyTorch publishes
  `__dlpack_c_exchange_api__` on `torch.Tensor`, its `__dlpack__`'s `stream` defaults to -1,
  and `torch.from_dlpack` passes its current stream (1 for the legacy default) and
  `max_version=(1, 0)`; CuPy has no C exchange API, and `cupy.from_dlpack` passes stream 1 (2 in
  per-thread mode).
"""

DEVICE_DEFAULT = f"""## Device

{BEGIN}

{HOW}
**No device run of this checker has been made yet.** The session that made it device-aware
(issue 28) was not lent a GPU, so this section has no tables of its own. Until the next device run
replaces it, these are the facts of an earlier run, with the checker as it was before that change:

*Earlier run (2026-11; NVIDIA H200, driver 580.159, CUDA 13, Python 3.12, CuPy 14.2.0, JAX 0.11.2,
PyTorch 2.11.0+cu130), not regenerated:*

- **PyTorch** as a producer failed only `dlpack.call.copy_true`: its copies are not marked
  `IS_COPIED`. The same run also reported `dlpack.fields.values`, `dlpack.exchange.export` and
  `dlpack.exchange.import` as failing ("BufferError: cannot copy memory on cuda:0 to the CPU (no
  device runtime)"): that was the checker's own limit, not PyTorch's; those rules now read device
  memory through the producer's copy to the CPU, or are n/a.
- **PyTorch** as a consumer aborts the process (SIGABRT) on a tensor with negative strides, and
  ignores `READ_ONLY`, also through the C exchange API.
- PyTorch 2.10 and later publish `__dlpack_c_exchange_api__` on `torch.Tensor`;
  `torch.Tensor.__dlpack__`'s `stream` defaults to -1 from 2.10; `torch.from_dlpack` passes
  `stream` = its current stream (1 for the legacy default) and `max_version=(1, 0)`.
- **CuPy** has no C exchange API; `cupy.from_dlpack` passes stream 1 (2 in per-thread mode); its
  `__dlpack__(copy=True)` on the device raises `BufferError` ("copy=True only supported for copy to
  CPU").
- Rules added since that run: `dlpack.call.to_cpu` (which also asks for `IS_COPIED` on the copy
  to the CPU), `dlpack.call.stream_device` and `consumer.stream`.

{END}
"""

ORDER = {"fail": 0, "crash": 0, "warn": 1, "refused": 2, "n/a": 3}


def count(results, verdicts):
    return sum(r["verdict"] in verdicts and (r["verdict"] != "n/a" or r.get("unchecked")) for r in results)


def rows(results, unchecked):
    """The table rows of one library: every verdict but pass, and n/a only the unchecked ones
    when ``unchecked``."""
    shown = [r for r in results
             if r["verdict"] != "pass" and (r["verdict"] != "n/a" or unchecked and r.get("unchecked"))]
    lines = []
    for r in sorted(shown, key=lambda r: ORDER[r["verdict"]]):
        detail = r["detail"].replace("|", "\\|")
        lines.append(f"| `{r['rule']}` | {r['spec']} | **{r['verdict']}** | {detail} |")
    return lines


def library_section(version, results, unchecked=False, level="##"):
    shown = rows(results, unchecked)
    lines = [f"\n{level} {version}\n"]
    if not shown:
        return lines + ["Every rule that applies passes.\n"]
    return lines + ["| rule | spec | result | detail |\n|---|---|---|---|"] + shown


def load_device_runs(directory):
    """``{library: {"producer": entry, "consumer": entry}}`` from the reports in ``directory``,
    and the date of the newest report."""
    runs, newest, dates = {}, 0.0, set()
    for path in sorted(pathlib.Path(directory).glob("*.json")):
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(report, dict):
            continue
        for library, entry in report.items():
            if not (isinstance(entry, dict) and entry.get("results")):
                continue
            mode = "consumer" if entry["results"][0]["rule"].startswith("consumer.") else "producer"
            runs.setdefault(library, {})[mode] = entry
            newest = max(newest, path.stat().st_mtime)
            if entry.get("date"):
                dates.add(entry["date"])
    # The day the reports say they were made; else one the folder is named with (copies lose
    # their files' times); else the files' own time.
    named = re.search(r"\d{4}-\d{2}-\d{2}", pathlib.Path(directory).resolve().name)
    if dates:
        day = max(dates)
    elif named:
        day = named.group(0)
    else:
        day = datetime.datetime.fromtimestamp(newest, datetime.timezone.utc).date().isoformat() if runs else ""
    return runs, day


def device_section(directory):
    """The Device section from the JSON reports of a GPU run in ``directory``."""
    runs, today = load_device_runs(directory)
    if not runs:
        raise SystemExit(f"no conformance JSON reports in {directory}")
    lines = ["## Device", "", BEGIN, "", HOW,
             f"*From the device run of {today} (`--device-json {directory}`).*", "",
             "| library | producer: fail / warn / refused / n/a | consumer: fail / refused / n/a |", "|---|---|---|"]
    sections = []
    for library, modes in runs.items():
        producer = modes.get("producer", {}).get("results", [])
        consumer = modes.get("consumer", {}).get("results", [])
        entry = modes.get("producer") or modes.get("consumer")
        version = entry["version"]
        unavailable = entry.get("unavailable")
        if unavailable:
            lines.append(f"| {library} | not checked | not checked |")
            sections.append(f"\n### {library}\n\nNot checked: {unavailable}.\n")
            continue
        lines.append(f"| {version} | {count(producer, ('fail', 'crash'))} / {count(producer, ('warn',))} / "
                     f"{count(producer, ('refused',))} / {count(producer, ('n/a',))} | "
                     f"{count(consumer, ('fail', 'crash'))} / {count(consumer, ('refused',))} / "
                     f"{count(consumer, ('n/a',))} |")
        sections += library_section(version, producer + consumer, unchecked=True, level="###")
    notes = [DEVICE_NOTES] if today == DEVICE_NOTES_RUN else []
    return "\n".join(lines + sections + notes + [END, ""])


def kept_device_section(path):
    """The Device section of the existing file (``None`` when it has none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    start, end = text.find("## Device\n"), text.find(END)
    if start < 0 or end < start or BEGIN not in text[start:end]:
        return None
    return text[start:end + len(END)] + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device-json", metavar="DIR", help="render the Device section from a GPU run's JSON")
    args = parser.parse_args(argv)
    from dlpack_abi import conformance

    out = ROOT / "CONFORMANCE.md"
    device = (device_section(args.device_json) if args.device_json
              else kept_device_section(out) or DEVICE_DEFAULT)
    summary = ["| library | producer: fail / warn / refused | consumer: fail / refused |", "|---|---|---|"]
    sections = []
    for library in LIBRARIES:
        checked = conformance.check("producer", library)
        version = checked[0].library
        producer = [r.to_json() for r in checked]
        consumer = [r.to_json() for r in conformance.check("consumer", library)]
        summary.append(f"| {version} | {count(producer, ('fail', 'crash'))} / {count(producer, ('warn',))} / "
                       f"{count(producer, ('refused',))} | {count(consumer, ('fail', 'crash'))} / "
                       f"{count(consumer, ('refused',))} |")
        sections += library_section(version, producer + consumer)
    text = "\n".join([HEADER] + summary + [NOTES] + sections) + "\n\n" + device
    out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
