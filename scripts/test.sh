#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this script): installs what the
# tests need (scripts/setup.sh), builds once in release, runs every test binary even
# when one fails (--no-fail-fast), and closes with one line of totals.
#
# A test whose needs are unmet (root, fio, Chromium, cgroup blkio, …) is counted as
# skipped, never as passed. As root, or under CI, such a test fails instead
# (IOGATE_REQUIRE_ROOT_TESTS=1), so a green run as root has run everything.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "$(id -u)" = 0 ]; then
  export IOGATE_REQUIRE_ROOT_TESTS=1
fi
cargo build --release --locked --workspace --all-targets
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --release --locked --workspace --no-fail-fast "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# libtest's closing line of each binary: "test result: ok. 3 passed; 0 failed; 1 ignored; …"
sum() { grep -E '^test result:' "$log" | grep -oE "[0-9]+ $1" | awk '{s+=$1} END {print s+0}'; }
binaries=$(grep -cE '^test result:' "$log" || true)
echo "$binaries test binaries ran; cargo test exited $status"
echo "tests: $(sum passed) passed, $(sum failed) failed, $(sum ignored) skipped"
exit "$status"
