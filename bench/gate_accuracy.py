#!/usr/bin/env python3
"""Accuracy of the regression gate: simulated firmware revisions on one loop device.

A loop device over a file on disk (direct I/O) stands for the drive; cgroup v1 blkio
throttling stands for the firmware. For each scenario the script blesses revision A from
`iogate run --repeat 5` (the baseline holds run-to-run samples), then runs revision A
again RUNS times and revision B RUNS times, each a single `iogate run` judged against
that baseline (this run's samples: its one-second intervals), and counts the verdicts.

Scenarios (a 1 s ramp, then SECONDS measured; rules `w.iops: -5%`, `w.latency.mean: +25%`;
the mean latency of a loop device over a virtual disk moves about 10% between runs):
  iops     A capped at X IOPS, B at 0.9 X (closed loop, queue depth 32): B is 10% slower
           (its mean latency is 11% higher, within the latency rule's tolerance).
  latency  A and B run a paced workload (X/4 IOPS, queue depth 32) that both sustain; B
           stalls: every 50 ms the cap drops to 10 IOPS for STALL ms (garbage
           collection pauses), so its IOPS hold and its latency grows.
  noise    the cap changes every 200 ms to X * U(0.6, 1.4) on both revisions, and B's
           mean cap is 0.9 X: the noise is larger than the change.

Goals (issue 6): 0 regressions on A in every scenario; B regressed in RUNS of RUNS runs
in the iops and latency scenarios; in the noise scenario, `inconclusive` rather than a
wrong verdict (A never regressed, B never pass).

Usage (root): python3 bench/gate_accuracy.py [--runs 10] [--iops 4000] [--seconds 5]
Writes the table to stdout and to bench/reports/gate-accuracy.md (gate-accuracy-<scenario>.md
with --only).
Needs: a release build (cargo build --release), cgroup v1 blkio, losetup.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGATE = os.path.join(ROOT, "target", "release", "iogate")
BLKIO = "/sys/fs/cgroup/blkio"

SPEC = """iogate: 1
name: gate
target: {{ size: 256MiB }}
steps:
  - workload:
      name: w
      ramp: 1s
      duration: {seconds}s
      queue_depth: 32
{rate}      mix: [ {{ block_size: 4KiB, read: 100%, random: 100% }} ]
baseline:
  required: true
  w.iops: -5%
  w.latency.mean: +25%
"""


def sh(*cmd, check=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r


class Cgroup:
    """A blkio cgroup throttling reads on one device."""

    def __init__(self, device):
        rdev = os.stat(device).st_rdev
        self.dev = f"{os.major(rdev)}:{os.minor(rdev)}"
        self.dir = os.path.join(BLKIO, f"iogate-gate-{os.getpid()}")
        os.makedirs(self.dir, exist_ok=True)

    def cap(self, iops):
        with open(os.path.join(self.dir, "blkio.throttle.read_iops_device"), "w") as f:
            f.write(f"{self.dev} {int(iops)}")

    def uncap(self):
        with open(os.path.join(self.dir, "blkio.throttle.read_iops_device"), "w") as f:
            f.write(f"{self.dev} 0")

    def remove(self):
        try:
            self.uncap()
            os.rmdir(self.dir)
        except OSError:
            pass


class Firmware(threading.Thread):
    """Drives the cap while a run lasts: constant, periodic stalls, or random noise."""

    def __init__(self, cg, kind, iops, stall_ms=0.0, seed=0):
        super().__init__(daemon=True)
        self.cg, self.kind, self.iops, self.stall_ms = cg, kind, iops, stall_ms
        self.rng = random.Random(seed)
        self.stop = threading.Event()

    def run(self):
        if self.kind == "constant":
            self.cg.cap(self.iops)
            return
        if self.kind == "stalls":
            self.cg.cap(self.iops)
            while not self.stop.is_set():
                time.sleep(0.050 - self.stall_ms / 1000)
                if self.stall_ms > 0:
                    self.cg.cap(10)
                    time.sleep(self.stall_ms / 1000)
                    self.cg.cap(self.iops)
            return
        while not self.stop.is_set():  # noise
            self.cg.cap(self.iops * self.rng.uniform(0.6, 1.4))
            time.sleep(0.2)


def run(spec, device, cg, firmware, golden, out, revision, repeat=1):
    firmware.start()
    time.sleep(0.05)
    cmd = [IOGATE, "run", spec, "--target", device, "--out", out, "--baseline", golden,
           "--quiet", "--model", "sim-drive", "--firmware-revision", revision,
           "--repeat", str(repeat)]
    r = subprocess.run(["sh", "-c", f"echo $$ > {cg.dir}/cgroup.procs && exec \"$0\" \"$@\""]
                       + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    firmware.stop.set()
    firmware.join()
    if not os.path.exists(os.path.join(out, "result.json")):
        sys.exit(f"iogate wrote no result (exit {r.returncode}):\n{r.stderr}")
    with open(os.path.join(out, "result.json")) as f:
        return r.returncode, json.load(f)


def scenario(name, args, device, cg, work):
    x = args.iops
    spec = os.path.join(work, f"{name}.yaml")
    rate = f"      rate: {{ iops: {x // 4} }}\n" if name == "latency" else ""
    with open(spec, "w") as f:
        f.write(SPEC.format(seconds=args.seconds, rate=rate))
    golden = os.path.join(work, f"golden-{name}")

    def firmware(rev, seed):
        if name == "iops":
            return Firmware(cg, "constant", x if rev == "A" else 0.9 * x)
        if name == "latency":
            return Firmware(cg, "stalls", x, 0.0 if rev == "A" else args.stall_ms)
        return Firmware(cg, "noise", x if rev == "A" else 0.9 * x, seed=seed)

    out = os.path.join(work, f"{name}-bless")
    code, _ = run(spec, device, cg, firmware("A", 1), golden, out, "A", repeat=5)
    sh(IOGATE, "bless", out, "--golden", golden)
    rows = []
    for rev in ("A", "B"):
        for i in range(args.runs):
            out = os.path.join(work, f"{name}-{rev}-{i}")
            code, r = run(spec, device, cg, firmware(rev, 100 + i), golden, out, rev)
            rules = {x["metric"]: x for x in r["baseline"]["rules"]}
            rows.append((rev, code, r["outcome"], rules))
            print(f"  {name} {rev} run {i + 1}: {r['outcome']:<12} "
                  + "  ".join(f"{m} {x['change_pct']:+.1f}% "
                              f"[{(x['change_interval_pct'] or [0, 0])[0]:+.1f}, "
                              f"{(x['change_interval_pct'] or [0, 0])[1]:+.1f}] {x['outcome']}"
                              for m, x in rules.items()), file=sys.stderr)
    return rows


def summarize(name, rows):
    lines = []
    for rev in ("A", "B"):
        mine = [r for r in rows if r[0] == rev]
        count = {o: sum(1 for r in mine if r[2] == o)
                 for o in ("pass", "regressed", "inconclusive", "fail", "error")}
        changes = {}
        for m in ("w.iops", "w.latency.mean"):
            cs = [r[3][m]["change_pct"] for r in mine]
            ws = [r[3][m]["change_interval_pct"][1] - r[3][m]["change_interval_pct"][0]
                  for r in mine if r[3][m]["change_interval_pct"]]
            changes[m] = (statistics.median(cs), statistics.median(ws) if ws else float("nan"))
        lines.append(
            f"| {name} | {rev} | {len(mine)} | {count['pass']} | {count['regressed']} | "
            f"{count['inconclusive']} | {changes['w.iops'][0]:+.1f}% (±{changes['w.iops'][1] / 2:.1f}) | "
            f"{changes['w.latency.mean'][0]:+.1f}% (±{changes['w.latency.mean'][1] / 2:.1f}) |")
    return lines


def goals(results):
    ok = []
    for name, rows in results.items():
        a = [r for r in rows if r[0] == "A"]
        b = [r for r in rows if r[0] == "B"]
        ok.append((f"{name}: no regression on A", all(r[2] != "regressed" for r in a)))
        if name == "noise":
            ok.append((f"{name}: B never passes", all(r[2] != "pass" for r in b)))
        else:
            ok.append((f"{name}: B regressed every run", all(r[2] == "regressed" for r in b)))
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--iops", type=int, default=4000, help="revision A's cap (X)")
    p.add_argument("--seconds", type=int, default=8)
    p.add_argument("--stall-ms", type=float, default=2.0)
    p.add_argument("--only", choices=["iops", "latency", "noise"])
    args = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (loop device, cgroups)")
    if not os.path.exists(os.path.join(BLKIO, "blkio.throttle.read_iops_device")):
        sys.exit("needs cgroup v1 blkio throttling")
    if not os.path.exists(IOGATE):
        sys.exit("build first: cargo build --release")
    work = tempfile.mkdtemp(prefix="iogate-gate-", dir="/var/tmp")
    backing = os.path.join(work, "drive.img")
    with open(backing, "wb") as f:  # real data, so reads reach the disk
        for _ in range(256):
            f.write(os.urandom(1 << 20))
    device = sh("losetup", "--direct-io=on", "-f", "--show", backing).stdout.strip()
    cg = Cgroup(device)
    results = {}
    try:
        for name in ("iops", "latency", "noise"):
            if args.only and name != args.only:
                continue
            print(f"scenario {name}", file=sys.stderr)
            results[name] = scenario(name, args, device, cg, work)
    finally:
        cg.remove()
        sh("losetup", "-d", device, check=False)
    table = [
        f"Gate accuracy: {args.runs} runs per revision, {args.seconds} s each, X = {args.iops} IOPS,"
        f" stalls {args.stall_ms} ms every 50 ms; baseline blessed from 5 repeats of A.",
        "",
        "| scenario | revision | runs | pass | regressed | inconclusive | IOPS change (median, ±half 95% interval) | mean latency change |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rows in results.items():
        table += summarize(name, rows)
    table.append("")
    for goal, met in goals(results):
        table.append(f"- {goal}: {'met' if met else 'NOT MET'}")
    text = "\n".join(table) + "\n"
    print(text)
    os.makedirs(os.path.join(ROOT, "bench", "reports"), exist_ok=True)
    name = f"gate-accuracy-{args.only}.md" if args.only else "gate-accuracy.md"
    with open(os.path.join(ROOT, "bench", "reports", name), "w") as f:
        f.write(text)
    subprocess.run(["rm", "-rf", work])
    return 0 if all(m for _, m in goals(results)) else 1


if __name__ == "__main__":
    sys.exit(main())
