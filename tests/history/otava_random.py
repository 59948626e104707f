"""Differential test of iogate's E-divisive against Apache Otava on seeded random series.

Usage: otava_random.py EDIVISIVE_JSON_BINARY SEED COUNT
Generates COUNT series (20-100 points, one to four levels 0-50% apart, Gaussian noise,
about half of them rounded to a coarse grid so that values tie, as latency percentiles
read from histogram buckets do), runs them through iogate's `edivisive_json` example and
through Otava (upstream and with the merge fix of otava_merge_fix.py) for windows 10, 20
and 50, max p-value 0.001 and minimum magnitude 5%. Prints a JSON summary; exits 1 when
iogate and the fixed Otava disagree on any series.
"""
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from otava_merge_fix import change_points  # noqa: E402

binary, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
series = []
for _ in range(count):
    n = rng.choice([20, 40, 60, 100])
    grid = rng.choice([0, 0, 1, 2, 5, 10])
    levels = [rng.choice([100, 105, 110, 150]) for _ in range(rng.randint(1, 4))]
    noise = rng.choice([0.5, 2, 5])
    values = []
    for i in range(n):
        v = levels[i * len(levels) // n] + rng.gauss(0, noise)
        values.append(float(round(v / grid) * grid) if grid else v)
    series.append(values)

summary = {"series": count, "windows": {}}
failed = False
for window in (10, 20, 50):
    request = {"window": window, "max_pvalue": 0.001, "min_magnitude": 0.05, "series": series}
    ours = json.loads(
        subprocess.run([binary], input=json.dumps(request), capture_output=True, text=True, check=True).stdout
    )
    fixed = [change_points(v, window, 0.001, 0.05, True) for v in series]
    upstream = [change_points(v, window, 0.001, 0.05, False) for v in series]
    bad = [i for i in range(count) if ours[i] != fixed[i]]
    summary["windows"][window] = {
        "change_points": sum(len(c) for c in ours),
        "disagree_with_fixed": len(bad),
        "differ_from_upstream": sum(1 for i in range(count) if ours[i] != upstream[i]),
        "examples": [{"series": series[i], "iogate": ours[i], "otava_fixed": fixed[i]} for i in bad[:3]],
    }
    failed |= bool(bad)
json.dump(summary, sys.stdout, indent=1)
sys.exit(1 if failed else 0)
