#!/usr/bin/env python3
"""Trace analysis at scale: `iogate analyze` against DuckDB, and a 100 M-request trace.

1. Generates REQUESTS records in the MSR Cambridge format (Timestamp in 100 ns ticks,
   Hostname, DiskNumber, Type, Offset, Size, ResponseTime) with a mix like the MSR server
   traces: 60% reads, sizes from 512 B to 64 KiB, sequential runs and random offsets over
   500 GiB, Poisson arrivals at 2,000/s with idle gaps, response times of 0.1-20 ms.
2. Runs `iogate analyze --format msr --json` (every core) and DuckDB's SQL over the same
   CSV (counts, bytes, size and response-time quantiles, idle gaps by a window function
   over the arrival order), one run each, each tool in its own process: wall time and peak
   RSS (wait4's ru_maxrss). Goals: iogate >= 2x DuckDB's speed with <= 0.2x its memory.
   The JSON is checked against the generator's own counts.
3. `iogate analyze --parquet DIR` writes the parsed trace as Parquet; DuckDB reads
   DIR/*.parquet as it is and computes the counts, bytes, transfer-size histogram and
   service-time percentiles, which must match iogate's (percentiles within the HDR
   histograms' 3 significant digits, 0.1%).
4. --large N (default 100 M) requests generated from a real trace (--real, default
   ../shared/traces/libcachesim-cloudPhysicsIO.csv, a VMware vSCSI CSV of 113,872
   records) by repetition, each copy's times shifted past the previous copy's end and its
   blocks by 1 GiB: `iogate analyze --format vscsi` must stay within 1 GiB peak RSS.

Usage: python3 bench/analyze_scale.py [--requests 10000000] [--large 100000000]
           [--keep DIR] [--skip-large]
Needs: a release build (cargo build --release); DuckDB's Python package
(pip install duckdb).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGATE = os.path.join(ROOT, "target", "release", "iogate")
SIZES = [512, 4096, 4096, 4096, 8192, 16384, 32768, 65536]
REAL = os.path.join(ROOT, "..", "shared", "traces", "libcachesim-cloudPhysicsIO.csv")


def generate(path, n, seed=11):
    rng = random.Random(seed)
    t = 128166372000000000  # a 2007 filetime, as in the MSR traces
    reads = writes = bytes_read = bytes_written = 0
    offset = end = 0
    lines = []
    with open(path, "w") as f:
        for _ in range(n):
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


def measured(cmd):
    """(exit code, stdout, wall s, CPU s, peak RSS MiB, stderr) of `cmd` in a child of its
    own (wait4 gives that child's own resource use)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.time()
        pid = os.fork()
        if pid == 0:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                os.execvp(cmd[0], cmd)
            finally:
                os._exit(127)
        _, status, ru = os.wait4(pid, 0)
        wall = time.time() - t0
        out.seek(0)
        err.seek(0)
        return (os.waitstatus_to_exitcode(status), out.read(), wall, ru.ru_utime + ru.ru_stime,
                ru.ru_maxrss / 1024, err.read())


DUCK_CSV = """
import duckdb, json, sys
con = duckdb.connect()
con.execute('SET enable_progress_bar = false')
row = con.execute('''
WITH t AS (
  SELECT *, ts - lag(ts) OVER (ORDER BY ts) AS gap
  FROM read_csv('{path}', header=false, columns={{'ts':'UBIGINT','host':'VARCHAR',
    'disk':'INTEGER','type':'VARCHAR','offset':'UBIGINT','size':'UBIGINT','resp':'UBIGINT'}})
)
SELECT count(*), count(*) FILTER (WHERE type = 'Read'), count(*) FILTER (WHERE type = 'Write'),
  sum(size) FILTER (WHERE type = 'Read'), sum(size) FILTER (WHERE type = 'Write'),
  quantile_disc(size, [0.5, 0.9, 0.99]), quantile_disc(resp * 100, [0.5, 0.9, 0.99]),
  count(*) FILTER (WHERE gap * 100 >= 1000000), sum(gap * 100) FILTER (WHERE gap * 100 >= 1000000)
FROM t''').fetchone()
print(json.dumps([x if isinstance(x, (int, list)) else str(x) for x in row]))
"""

DUCK_PARQUET = """
import duckdb, json
con = duckdb.connect()
con.execute('SET enable_progress_bar = false')
glob = '{dir}/*.parquet'
row = con.execute(f'''
SELECT count(*), count(*) FILTER (WHERE op = 'read'), count(*) FILTER (WHERE op = 'write'),
  sum(length_bytes) FILTER (WHERE op = 'read'), sum(length_bytes) FILTER (WHERE op = 'write'),
  quantile_disc(service_time_ns, [0.5, 0.9, 0.99]), max(time_ns)
FROM read_parquet('{{glob}}')''').fetchone()
sizes = dict(con.execute(f"SELECT length_bytes, count(*) FROM read_parquet('{{glob}}') GROUP BY 1").fetchall())
print(json.dumps({{"row": [int(x) if not isinstance(x, list) else x for x in row],
                  "sizes": {{str(k): v for k, v in sizes.items()}}}}))
"""


def iogate_analyze(path, fmt, extra=()):
    code, out, wall, cpu, rss, err = measured([IOGATE, "analyze", path, "--format", fmt,
                                               "--json", *extra])
    if code != 0:
        sys.exit(f"iogate analyze failed ({code}): {err}")
    return json.loads(out), wall, cpu, rss


def compare_duckdb(path, a, wall, rss):
    code, out, d_wall, d_cpu, d_rss, err = measured(
        [sys.executable, "-c", DUCK_CSV.format(path=path)])
    if code != 0:
        sys.exit(f"duckdb failed: {err}")
    row = json.loads(out.strip().splitlines()[-1])
    import duckdb
    print(f"duckdb {duckdb.__version__} over the CSV: {d_wall:.2f} s wall, {d_cpu:.2f} s CPU, "
          f"peak {d_rss:.0f} MiB; counts {row[0]}, reads {row[1]}, writes {row[2]}, "
          f"size p50/p90/p99 {row[5]}, response time p50/p90/p99 ns {row[6]}, "
          f"arrival gaps >= 1 ms: {row[7]}")
    for k, i in (("requests", 0), ("reads", 1), ("writes", 2), ("bytes_read", 3),
                 ("bytes_written", 4)):
        if a[k] != int(row[i]):
            sys.exit(f"mismatch with DuckDB: {k} {a[k]} against {row[i]}")
    speed, mem = d_wall / wall, rss / d_rss
    ok = speed >= 2.0 and mem <= 0.2
    print(f"iogate: {speed:.2f}x DuckDB's speed, {mem:.3f}x its memory: goal (>= 2x, <= 0.2x) "
          f"{'met' if ok else 'NOT met'}")


def parquet_check(path, a, workdir):
    pdir = os.path.join(workdir, "parquet")
    code, out, wall, cpu, rss, err = measured(
        [IOGATE, "analyze", path, "--format", "msr", "--json", "--parquet", pdir])
    if code != 0:
        sys.exit(f"iogate analyze --parquet failed: {err}")
    files = sorted(os.listdir(pdir))
    size = sum(os.path.getsize(os.path.join(pdir, f)) for f in files)
    print(f"--parquet: {len(files)} files, {size / 2**20:.0f} MiB, in {wall:.2f} s wall "
          f"(analysis included), peak {rss:.0f} MiB")
    code, out, *_ = measured([sys.executable, "-c", DUCK_PARQUET.format(dir=pdir)])
    d = json.loads(out.strip().splitlines()[-1])
    row, sizes = d["row"], d["sizes"]
    want = [a["requests"], a["reads"], a["writes"], a["bytes_read"], a["bytes_written"]]
    if row[:5] != want:
        sys.exit(f"Parquet counts differ: DuckDB {row[:5]}, iogate {want}")
    if {int(k): v for k, v in sizes.items()} != {int(k): v for k, v in a["size_histogram"].items()}:
        sys.exit("Parquet transfer-size histogram differs")
    svc = a["service_time"]["all_ns"]
    for q, exact, hdr in zip(("p50", "p90", "p99"), row[5], (svc["p50"], svc["p90"], svc["p99"])):
        err_pct = abs(hdr - exact) * 100 / exact
        print(f"  service time {q}: DuckDB {exact} ns, iogate {hdr} ns ({err_pct:.3f}%)")
        if err_pct > 0.1:
            sys.exit(f"service time {q} differs beyond the histogram's precision")
    print(f"  DuckDB over the Parquet: {row[0]} requests, {row[1]} reads, {row[2]} writes, "
          f"{row[3]} + {row[4]} bytes, {len(sizes)} transfer sizes: the same as iogate's")


def generate_large(real, path, n):
    """`n` vSCSI records from `real` repeated: times shifted past each copy, blocks by 1 GiB."""
    records = []
    with open(real) as f:
        for line in f:
            p = line.strip().split(",")
            if len(p) < 5 or not p[1].isdigit():
                continue
            records.append((p[0], int(p[1]), p[2], p[3], int(p[4])))
    span = records[-1][1] - records[0][1] + 1
    copies = -(-n // len(records))
    written = 0
    with open(path, "w") as f:
        f.write("version,time,op,size,lbn\n")
        for c in range(copies):
            shift_t, shift_b = c * span, c * (1 << 21)
            take = records[: min(len(records), n - written)]
            f.writelines(f"{v},{t + shift_t},{op},{size},{lbn + shift_b}\n"
                         for v, t, op, size, lbn in take)
            written += len(take)
    return written, len(records), copies


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--large", type=int, default=100_000_000)
    ap.add_argument("--real", default=REAL)
    ap.add_argument("--keep", help="keep (or reuse) the generated traces in this directory")
    ap.add_argument("--skip-large", action="store_true")
    args = ap.parse_args()
    if not os.path.exists(IOGATE):
        sys.exit("build first: cargo build --release")
    workdir = args.keep or tempfile.mkdtemp(prefix="iogate-scale-")
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, f"msr-{args.requests}.csv")
    expected = None
    if not os.path.exists(path):
        t0 = time.time()
        expected = generate(path, args.requests)
        print(f"generated {args.requests} MSR records ({os.path.getsize(path) / 2**20:.0f} MiB) "
              f"in {time.time() - t0:.0f} s")
    a, wall, cpu, rss = iogate_analyze(path, "msr")
    print(f"iogate analyze ({os.cpu_count()} CPUs): {a['requests']} requests in {wall:.2f} s "
          f"wall, {cpu:.2f} s CPU, peak {rss:.0f} MiB")
    if expected:
        for k, v in expected.items():
            if a[k] != v:
                sys.exit(f"mismatch: {k} = {a[k]}, generated {v}")
        print("  counts match the generator")
    compare_duckdb(path, a, wall, rss)
    parquet_check(path, a, workdir)
    if not args.skip_large:
        big = os.path.join(workdir, f"vscsi-{args.large}.csv")
        if not os.path.exists(big):
            t0 = time.time()
            n, per, copies = generate_large(args.real, big, args.large)
            print(f"generated {n} vSCSI records ({copies} copies of {per} from {args.real}, "
                  f"{os.path.getsize(big) / 2**30:.1f} GiB) in {time.time() - t0:.0f} s")
        b, wall, cpu, rss = iogate_analyze(big, "vscsi")
        print(f"iogate analyze, {b['requests']} requests: {wall:.1f} s wall, {cpu:.1f} s CPU, "
              f"peak {rss:.0f} MiB: goal (<= 1 GiB) {'met' if rss <= 1024 else 'NOT met'}")
        if b["requests"] != args.large:
            sys.exit(f"expected {args.large} requests, got {b['requests']}")
    if not args.keep:
        subprocess.run(["rm", "-rf", workdir])


if __name__ == "__main__":
    main()
