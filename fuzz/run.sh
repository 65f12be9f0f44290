#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60) with cargo fuzz (libFuzzer), starting
# from the kept corpus in fuzz/corpus/<target> and adding what it finds there, minimised.
# A crash stops the run: its input is in fuzz/artifacts/<target>/, and
# `cargo fuzz run <target> <that file>` replays it.
# Usage: fuzz/run.sh [SECONDS] [target ...]
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(payment_header solana_transaction route_input sign_in)

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --version 0.13.2 -q
# cargo fuzz passes unstable flags to rustc; this lets the machine's one (stable) toolchain
# take them. No sanitizer: the code is safe Rust, and what is looked for is a panic.
export RUSTC_BOOTSTRAP=1
# Build artefacts outside the tree, beside the workspace's when CI sets one.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-../target}/fuzz"
cargo fuzz build --sanitizer none

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target" "artifacts/$target"
  echo "== $target: ${seconds}s"
  # A panic stops libFuzzer with a non-zero status and leaves its input in artifacts/.
  if ! cargo fuzz run --sanitizer none "$target" "corpus/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "$target: crashed; the input is in fuzz/artifacts/$target/ (cargo fuzz run $target <file> replays it)" >&2
    exit 1
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  cargo fuzz cmin --sanitizer none "$target" "corpus/$target" >/dev/null 2>&1
  echo "$target: 0 crashes in ${runs:-?} runs; corpus $(ls "corpus/$target" | wc -l) inputs"
done
