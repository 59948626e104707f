#!/usr/bin/env bash
# Each test binary's wall time from a log of `cargo test` lines stamped with the time
# they arrived ("SECONDS.MICROS LINE", as scripts/test.sh writes it): a binary runs
# from its "Running …"/"Doc-tests …" line to the next one (or the log's last line).
# Prints the slowest ten and the sum, so a regression of the suite's time shows in
# every CI log. Lines whose stamp is no number take the last good stamp; a binary whose
# stamps go backwards (the wall clock stepped back) is listed without a time.
#
#   bash scripts/binary-times.sh STAMPED_LOG
set -euo pipefail
[ -s "${1:-}" ] || { echo "binary-times: no stamped log" >&2; exit 0; }
times=$(awk '
  # A binary whose clock went back (the wall clock stepped) has no time: "-" for it.
  function close_binary(t) {
    if (name == "") return
    if (t >= start) printf "%.1f %s\n", t - start, name
    else printf "- %s\n", name
  }
  # A line whose stamp is no number (a garbled or cut log) is dated by the last good one.
  {
    if ($1 ~ /^[0-9]+(\.[0-9]+)?$/) { t = $1 + 0; last = t; dated = 1 }
    else if (!dated) next
    else t = last
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
{ grep -v '^- ' <<<"$times" || true; } | sort -rn | head -10 | awk '{ t = $1; sub(/^[^ ]+ /, ""); printf "%9.1f  %s\n", t, $0 }'
grep '^- ' <<<"$times" | sed 's/^- /    (no time: the clock went back)  /' || true
awk '$1 != "-" { s += $1 } { n++ } END { printf "%d test binaries, %.0f s in all\n", n, s }' <<<"$times"
