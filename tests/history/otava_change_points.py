"""Change points of each series by Apache Otava (the reference iogate's E-divisive
implementation must agree with). Reads `iogate history show --json` output on stdin:
a list of series, each with `key.metric` and `points[].build_order` / `points[].value`.
Prints a JSON object: metric path -> build orders of the first build after each change
point, computed by otava.analysis.compute_change_points with Otava's defaults
(window 50, max p-value 0.001) and the minimum magnitude given (iogate's default 5%:
`python3 otava_change_points.py 50 0.001 0.05`), as Otava's own `AnalyzedSeries` calls it.
"""
import json
import sys

from otava.analysis import compute_change_points, fill_missing

series = json.load(sys.stdin)
window = int(sys.argv[1]) if len(sys.argv) > 1 else 50
pvalue = float(sys.argv[2]) if len(sys.argv) > 2 else 0.001
magnitude = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
out = {}
for s in series:
    values = [p["value"] for p in s["points"]]
    fill_missing(values)
    cps, _ = compute_change_points(values, window_len=window, max_pvalue=pvalue, min_magnitude=magnitude)
    key = "|".join([s["key"]["spec_name"], s["key"]["metric"], s["key"]["device_model"], s["key"]["host_class"]])
    out[key] = [s["points"][int(c.index)]["build_order"] for c in cps]
json.dump(out, sys.stdout, indent=1, sort_keys=True)
