#!/usr/bin/env bash
# Clean-build time of a crate that depends on dlpack-abi (default features), against a crate
# that depends only on bitflags + bytemuck + static_assertions (the floor), measured in the same
# run, alternating, RUNS times each (default 5). Prints each time and the medians. dlpack-abi is
# a path dependency here, which cargo would compile incrementally; a dependent that takes it
# from crates.io does not, so neither build is incremental (CARGO_INCREMENTAL=0).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
dir=target/build-time
mkdir -p "$dir/ours/src" "$dir/floor/src"
manifest() { printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\n\n[workspace]\n\n[dependencies]\n%s\n' "$1" "$2"; }
manifest build-time-ours 'dlpack-abi = { path = "../../.." }' >"$dir/ours/Cargo.toml"
manifest build-time-floor "$(printf 'bitflags = "2.6"\nbytemuck = "1.16"\nstatic_assertions = "1.1"')" >"$dir/floor/Cargo.toml"
for crate in ours floor; do
  : >"$dir/$crate/src/lib.rs"
  cp Cargo.lock "$dir/$crate/Cargo.lock"  # same dependency versions as the project
  cargo fetch -q --manifest-path "$dir/$crate/Cargo.toml"
done
declare -A times
for i in $(seq "$runs"); do
  for crate in ours floor; do
    rm -rf "$dir/$crate/target"
    start=$(date +%s.%N)
    CARGO_INCREMENTAL=0 cargo build -q --offline --manifest-path "$dir/$crate/Cargo.toml"
    t=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.3f", a - b }')
    times[$crate]+="$t "
    echo "run $i $crate ${t}s"
  done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ours=$(median "${times[ours]}")
floor=$(median "${times[floor]}")
echo "median clean build: dlpack-abi dependent ${ours}s, floor ${floor}s, ratio $(awk -v a="$ours" -v b="$floor" 'BEGIN { printf "%.2f", a / b }')"
