"""Change points of each series by Apache Otava (the reference iogate's E-divisive
implementation must agree with). Reads `iogate history show --json` output on stdin:
a list of series, each with `key.metric` and `points[].build_order` / `points[].value`.
Prints a JSON object: series key -> {"fixed": [...], "upstream": [...]}, the build orders
of the first build after each change point, computed by Otava's compute_change_points
with its defaults (window 50, max p-value 0.001) and the minimum magnitude given
(iogate's default 5%: `python3 otava_change_points.py 50 0.001 0.05`): "upstream" as
installed, "fixed" with the merge pass's neighbour recomputation corrected
(otava_merge_fix.py says what and why).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from otava.analysis import fill_missing  # noqa: E402
from otava_merge_fix import change_points  # noqa: E402

series = json.load(sys.stdin)
window = int(sys.argv[1]) if len(sys.argv) > 1 else 50
pvalue = float(sys.argv[2]) if len(sys.argv) > 2 else 0.001
magnitude = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
out = {}
for s in series:
    values = [p["value"] for p in s["points"]]
    fill_missing(values)
    key = "|".join([s["key"]["spec_name"], s["key"]["metric"], s["key"]["device_model"], s["key"]["host_class"]])
    builds = [p["build_order"] for p in s["points"]]
    out[key] = {
        kind: [builds[i] for i in change_points(values, window, pvalue, magnitude, kind == "fixed")]
        for kind in ("fixed", "upstream")
    }
json.dump(out, sys.stdout, indent=1, sort_keys=True)
