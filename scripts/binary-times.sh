#!/usr/bin/env bash
# Each test binary's wall time from a log of `cargo test` lines stamped with the time
# they arrived ("SECONDS.MICROS LINE", as scripts/test.sh writes it): a binary runs
# from its "Running …"/"Doc-tests …" line to the next one (or the log's last line).
# Prints the slowest ten and the sum, so a regression of the suite's time shows in
# every CI log.
#
#   bash scripts/binary-times.sh STAMPED_LOG
set -euo pipefail
[ -s "${1:-}" ] || { echo "binary-times: no stamped log" >&2; exit 0; }
times=$(awk '
  function close_binary(t) { if (name != "") printf "%.1f %s\n", t - start, name }
  {
    t = $1 + 0; last = t
    line = $0; sub(/^[^ ]+ /, "", line)
    if (line ~ /^ *(Running|Doc-tests) /) {
      close_binary(t)
      name = line; sub(/^ *(Running|Doc-tests) /, "", name); sub(/ \(.*$/, "", name)
      start = t
    }
  }
  END { close_binary(last) }
' "$1")
[ -n "$times" ] || { echo "binary-times: no test binary ran"; exit 0; }
echo "slowest test binaries (wall time, s):"
sort -rn <<<"$times" | head -10 | awk '{ printf "%9.1f  %s\n", $1, $2 }'
awk '{ s += $1; n++ } END { printf "%d test binaries, %.0f s in all\n", n, s }' <<<"$times"
