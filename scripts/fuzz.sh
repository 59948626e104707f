#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/fuzz_targets: spec, compose, trace, baseline, result,
# fio_import, iometer_import, journal) for a bounded time each and prints, per target, the
# executions and the crashes found. FUZZ_TIMEOUT (s, default 10) is libFuzzer's limit
# per input: the importers run with FUZZ_TIMEOUT=1 (linear time).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, every target)
#
# Installs what it needs: the nightly toolchain (libFuzzer's sanitizer coverage needs it)
# and cargo-fuzz. New inputs go to a scratch corpus, so the repository's corpus
# (fuzz/corpus/<target>, the seeds) is only read; crashes are written under
# fuzz/artifacts/<target>/ and make the script exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(spec compose trace baseline result fio_import iometer_import journal)
fi
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# The targets that read traces, baselines and results need polars (fuzz/Cargo.toml's
# `tables` feature); the others build without it.
features=()
for t in "${targets[@]}"; do
  case "$t" in trace | baseline | result) features=(--features tables) ;; esac
done
# One build for every target; a crash stops its target, and the others still run.
cargo +nightly fuzz build --release "${features[@]}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
summary=""
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t" "fuzz/artifacts/$t"
  before=$(find "fuzz/artifacts/$t" -type f | wc -l)
  log="$scratch/$t.log"
  set +e
  cargo +nightly fuzz run --release "${features[@]}" "$t" "$scratch/$t" "fuzz/corpus/$t" -- \
    -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout="${FUZZ_TIMEOUT:-10}" \
    -print_final_stats=1 >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  after=$(find "fuzz/artifacts/$t" -type f | wc -l)
  crashes=$((after - before))
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    status=1
    tail -40 "$log"
  fi
  summary+="$t: ${runs:-0} executions in ${seconds} s, $crashes crashes (libFuzzer exit $rc)"$'\n'
done
printf '%s' "$summary"
exit "$status"
