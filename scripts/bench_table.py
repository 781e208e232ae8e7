#!/usr/bin/env python3
"""Prints the BENCHMARKS.md table from criterion's results of `cargo bench --bench exchange`:
median ns per exchange, for the untyped import (`VersionedTensor::from_raw` then `as_slice`) and
the typed one (`HostSlice::from_raw`), and the ratios to the floor, to the exchange written by
hand (`benches/exchange/by_hand.rs`) and to dlpark, all measured in the same run."""
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
    floor, ours, typed, by_hand, dlpark = (
        median(n, elements)
        for n in ("floor", "dlpack-abi", "dlpack-abi-typed", "by-hand", "dlpark")
    )
    if None in (floor, ours, typed, by_hand, dlpark):
        sys.exit(f"missing results for {elements} elements: run `cargo bench --bench exchange`")
    vec = median("dlpack-abi-vec", elements)
    vec_cell = f"{vec:.1f}" if vec is not None and elements <= 1_000 else "—"
    rows.append(
        f"| {elements:,} | {floor:.1f} | {ours:.1f} | {typed:.1f} | {by_hand:.1f} "
        f"| {dlpark:.1f} | {vec_cell} | {ours / floor:.2f}x | {typed / floor:.2f}x "
        f"| {by_hand / floor:.2f}x | {ours / by_hand:.2f}x | {typed / by_hand:.2f}x "
        f"| {ours / dlpark:.2f}x |"
    )
print("| elements | floor (ns) | dlpack-abi (ns) | typed (ns) | by hand (ns) "
      "| dlpark 0.10 (ns) | dlpack-abi, `Vec` freed (ns) | dlpack-abi / floor "
      "| typed / floor | by hand / floor | dlpack-abi / by hand | typed / by hand "
      "| dlpack-abi / dlpark |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
print("\n".join(rows))
