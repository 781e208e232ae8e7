#!/usr/bin/env python3
"""Prints the BENCHMARKS.md table from criterion's results of `cargo bench --bench exchange`:
median ns per exchange, and the ratios to the floor, to the exchange written by hand
(`benches/exchange/by_hand.rs`) and to dlpark, all measured in the same run."""
import json
import os
import pathlib
import sys

# Criterion's own rule: `CRITERION_HOME` if set, else `target/criterion`.
home = os.environ.get("CRITERION_HOME")
root = (
    pathlib.Path(home)
    if home
    else pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion"
) / "exchange"


def median(name, elements):
    path = root / name / str(elements) / "new" / "estimates.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())["median"]["point_estimate"]


rows = []
for elements in (1, 1_000, 1_000_000, 100_000_000):
    floor, ours, by_hand, dlpark = (
        median(n, elements) for n in ("floor", "dlpack-abi", "by-hand", "dlpark")
    )
    if None in (floor, ours, by_hand, dlpark):
        sys.exit(f"missing results for {elements} elements: run `cargo bench --bench exchange`")
    vec = median("dlpack-abi-vec", elements)
    vec_cell = f"{vec:.1f}" if vec is not None and elements <= 1_000 else "—"
    rows.append(
        f"| {elements:,} | {floor:.1f} | {ours:.1f} | {by_hand:.1f} | {dlpark:.1f} | {vec_cell} "
        f"| {ours / floor:.2f}x | {by_hand / floor:.2f}x | {ours / by_hand:.2f}x "
        f"| {ours / dlpark:.2f}x |"
    )
print("| elements | floor (ns) | dlpack-abi (ns) | by hand (ns) | dlpark 0.10 (ns) "
      "| dlpack-abi, `Vec` freed (ns) | dlpack-abi / floor | by hand / floor "
      "| dlpack-abi / by hand | dlpack-abi / dlpark |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
print("\n".join(rows))
