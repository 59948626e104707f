#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this script): installs what the
# tests need (scripts/setup.sh), builds once in release as the invoking user, runs every
# test binary even when one fails (--no-fail-fast), and closes with one line of totals.
#
#   bash scripts/test.sh [cargo test arguments…]
#
# Works for root (CI, a lab host) and for a user with rustup and sudo: cargo stays the
# user's own (sudo's secure_path would drop ~/.cargo/bin), and only what needs root goes
# through sudo: apt-get in set-up, and the test binaries themselves (cargo's runner
# setting, CARGO_TARGET_<host>_RUNNER="sudo -E"), which create loop devices, cgroups and
# VMs.
#
# A test whose needs are unmet (root, fio, Chromium, cgroup blkio, …) is counted as
# skipped, never as passed. When the tests run as root (directly or through sudo), or
# under CI, such a test fails instead (IOGATE_REQUIRE_ROOT_TESTS=1), so a green run as
# root has run everything.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null 2>&1 || {
  echo "test.sh: cargo is not in PATH (install Rust with rustup, then open a new shell)" >&2
  exit 127
}
if [ "$(id -u)" = 0 ]; then
  bash scripts/setup.sh
  export IOGATE_REQUIRE_ROOT_TESTS=1
elif command -v sudo >/dev/null 2>&1; then
  sudo bash scripts/setup.sh
  host=$(rustc -vV | sed -n 's/^host: //p')
  runner_var="CARGO_TARGET_$(echo "$host" | tr 'a-z-' 'A-Z_')_RUNNER"
  export "$runner_var=sudo -E"
  export IOGATE_REQUIRE_ROOT_TESTS=1
  echo "test.sh: test binaries run as root through $runner_var=\"sudo -E\""
else
  echo "test.sh: not root and no sudo: nothing is installed, and tests that need root are skipped" >&2
  bash scripts/setup.sh
fi
build_start=$EPOCHREALTIME
cargo build --release --locked --workspace --all-targets
# The Debian package of that build, checked by tests/package.rs.
bash scripts/deb.sh --no-build --quiet
build_end=$EPOCHREALTIME
log=$(mktemp)
set +e
# Each output line is stamped with the time it arrived ($EPOCHREALTIME, bash 5) in a
# second log, to tell each test binary's wall time; the console gets the lines as they are.
stamped=$(mktemp)
trap 'rm -f "$log" "$stamped"' EXIT
cargo test --release --locked --workspace --no-fail-fast "$@" 2>&1 \
  | while IFS= read -r line || [ -n "$line" ]; do
      printf '%s\n' "$line"
      printf '%s %s\n' "$EPOCHREALTIME" "$line" >>"$stamped"
    done | tee "$log"
status=${PIPESTATUS[0]}
tests_end=$EPOCHREALTIME
set -e
bash scripts/binary-times.sh "$stamped"
awk -v b0="$build_start" -v b1="$build_end" -v t1="$tests_end" \
  'BEGIN { printf "wall time: build and package %.0f s, tests %.0f s\n", b1 - b0, t1 - b1 }'
# libtest's closing line of each binary: "test result: ok. 3 passed; 0 failed; 1 ignored; …"
sum() { grep -E '^test result:' "$log" | grep -oE "[0-9]+ $1" | awk '{s+=$1} END {print s+0}'; }
binaries=$(grep -cE '^test result:' "$log" || true)
echo "$binaries test binaries ran; cargo test exited $status"
echo "tests: $(sum passed) passed, $(sum failed) failed, $(sum ignored) skipped"
exit "$status"
