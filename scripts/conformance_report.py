#!/usr/bin/env python3
"""Writes CONFORMANCE.md: what dlpack_abi.conformance finds in the pinned Python libraries
(`scripts/test.sh` pins them). Run from the repository root with the venv's Python after the
package is built: `.venv/bin/python scripts/conformance_report.py`."""
import pathlib
import sys

from dlpack_abi import conformance

LIBRARIES = ["numpy", "pyarrow", "tvm_ffi", "jax", "polars", "nanoarrow", "arro3", "duckdb", "dlpack_abi"]
ROOT = pathlib.Path(__file__).resolve().parents[1]

HEADER = """# Conformance of Python DLPack and Arrow PyCapsule libraries

What `python -m dlpack_abi.conformance` reports for the libraries the test command pins
(regenerate with `.venv/bin/python scripts/conformance_report.py`). Each rule cites the section of
`dlpack-1.3.md` or `arrow-c-interfaces.md` (the specs' facts) it checks; `python -m
dlpack_abi.conformance producer LIBRARY` prints the whole table. These are findings, not test
failures: the test suite asserts only that every rule can fail (a broken fake for each) and that
dlpack-abi's own objects pass.

Verdicts: **fail** breaks the rule (the consumer check: mishandles the case); **crash** killed
the process; **warn** a recommendation not followed; **refused** a clean refusal the spec allows
(an optional feature). Rules a library passes, or that do not apply to it, are not listed.
"""


NOTES = """
## Reading the findings (the versions above)

- **NumPy** returns NULL from `from_dlpack` without setting an exception (`SystemError`) for
  FP4 tensors, packed or padded, and for a tensor of major version 2, which it must refuse with
  an error and whose deleter it must call.
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
- Not covered here: device memory and streams (no GPU on the test machine). Of these libraries
  only dlpack-abi publishes a C exchange API table on its tensor type.
"""


def main():
    lines = [HEADER]
    summary = ["| library | producer: fail / warn / refused | consumer: fail / refused |", "|---|---|---|"]
    sections = []
    for library in LIBRARIES:
        producer = conformance.check("producer", library)
        consumer = conformance.check("consumer", library)
        version = producer[0].library
        count = lambda rs, v: sum(r.verdict in v for r in rs)
        summary.append(f"| {version} | {count(producer, ('fail', 'crash'))} / {count(producer, ('warn',))} / "
                       f"{count(producer, ('refused',))} | {count(consumer, ('fail', 'crash'))} / "
                       f"{count(consumer, ('refused',))} |")
        rows = [r for r in producer + consumer if r.verdict not in ("pass", "n/a")]
        sections.append(f"\n## {version}\n")
        if not rows:
            sections.append("Every rule that applies passes.\n")
            continue
        sections.append("| rule | spec | result | detail |\n|---|---|---|---|")
        order = {"fail": 0, "crash": 0, "warn": 1, "refused": 2}
        for r in sorted(rows, key=lambda r: order[r.verdict]):
            detail = r.detail.replace("|", "\\|")
            sections.append(f"| `{r.rule}` | {r.spec} | **{r.verdict}** | {detail} |")
    text = "\n".join(lines + summary + [NOTES] + sections) + "\n"
    (ROOT / "CONFORMANCE.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
