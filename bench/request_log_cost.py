#!/usr/bin/env python3
"""What `iogate run --log-requests` costs: IOPS and peak RSS with and without the
request log, same target, alternating, in one run.

The target is a file in /dev/shm (the fastest target this machine has: the log's writer
competes with the jobs for CPU, so its cost shows most here; on a drive slower than the
host it hides). The workload: random 4 KiB requests, 70% reads, --jobs jobs at queue
depth 16, for --runtime seconds. Peak RSS is the child's `ru_maxrss` (os.wait4). Prints
each pair, the ratios with/without, and their medians.

Usage: python3 bench/request_log_cost.py [--pairs 3] [--runtime 5] [--jobs 2]
Needs: a release build (cargo build --release).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGATE = os.environ.get("IOGATE", os.path.join(ROOT, "target", "release", "iogate"))

SPEC = """iogate: 1
name: request-log-cost
target: {{ size: 256MiB }}
steps:
  - workload:
      name: mixed
      jobs: {jobs}
      queue_depth: 16
      duration: {runtime}s
      mix: [ {{ block_size: 4KiB, read: 70%, random: 100% }} ]
"""


def run(spec, target, work, log):
    out = os.path.join(work, "out")
    args = [IOGATE, "run", spec, "--target", target, "-q", "--out", out]
    if log:
        args.append("--log-requests")
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"iogate exited {p.returncode}")
    with open(os.path.join(out, "result.json")) as f:
        r = json.load(f)
    rows = None
    if log:
        size = os.path.getsize(os.path.join(out, "ios.parquet"))
        rows = (r["steps"][0]["metrics"]["ios"], size)
    subprocess.run(["rm", "-rf", out], check=True)
    return r["steps"][0]["metrics"]["iops"], usage.ru_maxrss / 1024.0, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="iogate-log-cost") as work:
        spec = os.path.join(work, "spec.yaml")
        with open(spec, "w") as f:
            f.write(SPEC.format(runtime=a.runtime, jobs=a.jobs))
        target = os.path.join(work, "target.img")
        iops_ratios, rss_growth = [], []
        for i in range(a.pairs):
            plain_iops, plain_rss, _ = run(spec, target, work, False)
            log_iops, log_rss, (ios, size) = run(spec, target, work, True)
            iops_ratios.append(log_iops / plain_iops)
            rss_growth.append(log_rss - plain_rss)
            print(
                f"pair {i + 1}: without {plain_iops:,.0f} IOPS, {plain_rss:.1f} MiB; "
                f"with {log_iops:,.0f} IOPS, {log_rss:.1f} MiB "
                f"({ios:,} rows, {size / 2**20:.0f} MiB file)"
            )
        print(
            f"median IOPS with/without {statistics.median(iops_ratios):.3f}; "
            f"median peak RSS growth {statistics.median(rss_growth):.1f} MiB "
            f"(max {max(rss_growth):.1f})"
        )


if __name__ == "__main__":
    main()
