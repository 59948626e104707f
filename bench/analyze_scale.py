#!/usr/bin/env python3
"""Trace analysis at scale: `iogate analyze` on a generated MSR Cambridge CSV trace.

Generates REQUESTS records in the MSR format (Timestamp in 100 ns ticks, Hostname,
DiskNumber, Type, Offset, Size, ResponseTime), with a mix like the MSR server traces:
60% reads, sizes from 512 B to 64 KiB, sequential runs and random offsets over 500 GiB,
Poisson arrivals at 2,000/s with idle gaps, response times of 0.1–20 ms. Then times
`iogate analyze --format msr --json` and reads its peak memory (getrusage of the child),
and checks the JSON against the generator's own counts.

Goal (issue 4): 10 million requests in <= 20 s with <= 1 GiB peak memory on 2 cores.

Usage: python3 bench/analyze_scale.py [--requests 10000000] [--keep PATH]
Needs: a release build (cargo build --release).
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGATE = os.path.join(ROOT, "target", "release", "iogate")
SIZES = [512, 4096, 4096, 4096, 8192, 16384, 32768, 65536]


def generate(path, n, seed=11):
    rng = random.Random(seed)
    t = 128166372000000000  # a 2007 filetime, as in the MSR traces
    reads = writes = bytes_read = bytes_written = 0
    offset = end = 0
    lines = []
    with open(path, "w") as f:
        for i in range(n):
            gap = rng.expovariate(2000.0)
            if rng.random() < 0.001:
                gap += rng.uniform(0.05, 2.0)  # idle periods
            t += int(gap * 1e7)
            size = rng.choice(SIZES)
            if rng.random() < 0.3:
                offset = end  # continue a sequential run
            else:
                offset = rng.randrange(500 << 21) * 512
            end = offset + size
            op = "Read" if rng.random() < 0.6 else "Write"
            if op == "Read":
                reads += 1
                bytes_read += size
            else:
                writes += 1
                bytes_written += size
            resp = int(rng.uniform(1e3, 2e5))
            lines.append(f"{t},src1,0,{op},{offset},{size},{resp}\n")
            if len(lines) == 100000:
                f.writelines(lines)
                lines.clear()
        f.writelines(lines)
    return {"requests": n, "reads": reads, "writes": writes,
            "bytes_read": bytes_read, "bytes_written": bytes_written}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--keep", help="reuse or keep the generated trace at this path")
    args = ap.parse_args()
    if not os.path.exists(IOGATE):
        sys.exit("build first: cargo build --release")
    path = args.keep or os.path.join(tempfile.mkdtemp(prefix="iogate-scale-"), "msr.csv")
    expected = None
    if not (args.keep and os.path.exists(path)):
        t0 = time.time()
        expected = generate(path, args.requests)
        print(f"generated {args.requests} MSR records ({os.path.getsize(path) / 2**20:.0f} MiB) "
              f"in {time.time() - t0:.0f} s")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    r = subprocess.run([IOGATE, "analyze", path, "--format", "msr", "--json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.time() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"analyze failed: {r.stderr}")
    a = json.loads(r.stdout)
    peak_mib = after.ru_maxrss / 1024  # KiB on Linux
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"analyze: {a['requests']} requests in {wall:.1f} s wall, {cpu:.1f} s CPU, "
          f"peak memory {peak_mib:.0f} MiB")
    print(f"  reads {a['reads']}, writes {a['writes']}, mean size {a['mean_size_bytes']:.0f} B, "
          f"sequential {a['sequential_pct']:.1f}%, idle periods {a['idle_periods']['duration_ns']['count']}, "
          f"queue depth mean {a['queue_depth']['mean']:.2f}")
    if expected:
        for k, v in expected.items():
            if a[k] != v:
                sys.exit(f"mismatch: {k} = {a[k]}, generated {v}")
        print("  counts match the generator")
    ok = wall <= 20 and peak_mib <= 1024
    print(f"goal (<= 20 s, <= 1 GiB): {'met' if ok else 'NOT met'}")
    if not args.keep:
        os.unlink(path)


if __name__ == "__main__":
    main()
