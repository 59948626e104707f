#!/usr/bin/env bash
# Times the history store at scale: one real run of a small spec on a scratch file,
# copied into N runs (default 10,000) of N builds with a 10% IOPS drop at build N/2
# (values scaled, each copy a distinct run: start time and build changed), then
# `history ingest` of all of them into a fresh SQLite file and `history detect` over
# the result. Prints the wall-clock seconds of each and the change points found.
# Usage: scripts/history-bench.sh [N]   (needs a release build: cargo build --release)
set -euo pipefail
N=${1:-10000}
cd "$(dirname "$0")/.."
BIN=./target/release/iogate
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat > "$W/bench.yaml" <<'SPEC'
iogate: 1
name: history-bench
target: { size: 16MiB }
steps:
  - workload: { name: w, ios: 2000, queue_depth: 4, mix: [ { block_size: 4KiB, read: 70%, random: 100% } ] }
SPEC
"$BIN" run "$W/bench.yaml" --out "$W/seed" --baseline "$W/golden" --quiet >/dev/null 2>&1 || true
python3 - "$W" "$N" <<'PY'
import json, os, random, sys
w, n = sys.argv[1], int(sys.argv[2])
seed = json.load(open(os.path.join(w, "seed", "result.json")))
rng = random.Random(7)
for b in range(1, n + 1):
    r = json.loads(json.dumps(seed))
    r["started_at"] = f"2026-01-01T00:00:00.{b:09d}Z"
    r["build"] = {"id": f"b{b}", "order": b}
    f = (0.9 if b > n // 2 else 1.0) * (1 + rng.gauss(0, 0.01))
    for s in r["steps"]:
        m = s["metrics"]
        for k in ("iops", "bandwidth_bytes_per_s"):
            if k in m:
                m[k] *= f
    d = os.path.join(w, "runs", f"{b:06d}")
    os.makedirs(d)
    json.dump(r, open(os.path.join(d, "result.json"), "w"))
PY
t0=$(date +%s.%N)
"$BIN" history ingest --db "$W/h.db" "$W/runs"
t1=$(date +%s.%N)
"$BIN" history detect --db "$W/h.db" --json > "$W/alerts.json" || true
t2=$(date +%s.%N)
python3 - "$W/alerts.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
print("change points:", [(x["build_order"], [(c["metric"], round(c["change_pct"], 1)) for c in x["changes"]]) for x in a])
PY
echo "runs: $N  ingest: $(echo "$t1 - $t0" | bc) s  detect: $(echo "$t2 - $t1" | bc) s  db: $(du -h "$W/h.db" | cut -f1)"
