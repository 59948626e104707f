#!/usr/bin/env python3
"""False-alarm rate of `run --history` over unchanged builds, on tests/history.rs's stack.

Every build runs the same spec on the same "firmware": nbdkit's 64 MiB memory disk under
its delay filter (reads after 1 ms), through nbdfuse and a `--direct-io=on` loop device,
capped by cgroup v1 blkio at 1000 IOPS, exactly as tests/history.rs's builds 1-19. Nothing
changes between builds, so every `regressed` verdict is a false alarm. For each build the
script records iogate's own verdicts (history.json: the rule in the binary, a one-sided
t-test against the 5% band's edge, p <= 0.025, the builds' spread as noise) and recomputes
the previous rule (two-sided t-test of the history against the one value, population
standard deviation, p <= 0.001, and |change| > 5%) on the same accepted builds, so both
rules are measured on the same runs.

    sudo python3 bench/history_false_alarms.py [--builds 60] [--load 0] [--iogate PATH]

`--load K` runs K busy-looping processes during the builds (a loaded CI host); with
`--burst` they alternate busy and idle spells, so that some builds are hit and others
not (the heavy tail a shared host gives). Needs
root, nbdkit, nbdfuse, fusermount3 and cgroup v1 blkio (scripts/setup.sh installs them).
Prints one line per build and a summary; results in bench/RESULTS.md.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

SPEC = """iogate: 1
name: firmware-history
target: { size: 64MiB }
seed: 7
steps:
  - workload:
      name: throughput
      duration: 1s
      queue_depth: 8
      mix: [ { block_size: 4KiB, read: 100%, random: 100% } ]
  - workload:
      name: paced
      duration: 1s
      queue_depth: 4
      rate: { iops: 300 }
      mix: [ { block_size: 4KiB, read: 100%, random: 100% } ]
"""

BURSTY = """
import random, time
while True:
    end = time.time() + random.uniform(0.5, 3.0)
    while time.time() < end:
        pass
    time.sleep(random.uniform(0.5, 5.0))
"""

CAP_IOPS = 1000
TOLERANCE = 0.05
MAX_PVALUE = 0.001
MIN_HISTORY = 5
WINDOW = 50


def betacf(a, b, x):
    """Continued fraction of the regularized incomplete beta (Numerical Recipes 6.4)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > 1e-300 else 1e-300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > 1e-300 else 1e-300
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-12:
            break
    return h


def beta_reg(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * betacf(b, a, 1 - x) / b


def t_two_sided(t, df):
    if math.isinf(t):
        return 0.0
    return beta_reg(df / 2, 0.5, df / (df + t * t))


def old_rule(history, value, higher_is_better):
    """The rule before issue 24: t-test against the mean, then |change| > 5%."""
    n = len(history)
    if n < MIN_HISTORY:
        return "not_enough_history"
    m = statistics.fmean(history)
    s = statistics.pstdev(history)
    t = (m - value) / (s * math.sqrt(1 / n + 1)) if s > 0 else (math.inf if m != value else 0)
    p = t_two_sided(t, n - 1) if t == t else 1.0
    change = value / m - 1
    if p <= MAX_PVALUE and abs(change) > TOLERANCE:
        return "regressed" if (change < 0) == higher_is_better else "improved"
    return "unchanged"


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout.strip()


class Disk:
    def __init__(self, work):
        self.dir = tempfile.mkdtemp(dir=work)
        sock = os.path.join(self.dir, "nbd.sock")
        self.nbdkit = subprocess.Popen(
            ["nbdkit", "-f", "-U", sock, "--filter=delay", "memory", "64M", "rdelay=1ms"]
        )
        wait(lambda: os.path.exists(sock))
        self.mnt = os.path.join(self.dir, "mnt")
        os.makedirs(self.mnt)
        disk = os.path.join(self.mnt, "disk")
        self.fuse = subprocess.Popen(["nbdfuse", disk, "--unix", sock], stderr=subprocess.DEVNULL)
        wait(lambda: os.path.exists(disk))
        self.dev = sh("losetup", "-f", "--show", "--direct-io=on", disk)
        rdev = os.stat(self.dev).st_rdev
        self.majmin = f"{os.major(rdev)}:{os.minor(rdev)}"
        self.cg = f"/sys/fs/cgroup/blkio/iogate-false-alarms-{os.getpid()}"
        os.makedirs(self.cg, exist_ok=True)
        for f in ("read_iops_device", "write_iops_device"):
            with open(f"{self.cg}/blkio.throttle.{f}", "w") as fh:
                fh.write(f"{self.majmin} {CAP_IOPS}")

    def close(self):
        subprocess.run(["losetup", "-d", self.dev])
        subprocess.run(["fusermount3", "-u", self.mnt])
        for p in (self.fuse, self.nbdkit):
            p.kill()
            p.wait()
        try:
            os.rmdir(self.cg)
        except OSError:
            pass


def wait(cond, seconds=10):
    end = time.time() + seconds
    while not cond():
        if time.time() > end:
            sys.exit("timed out setting up the disk")
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", type=int, default=60)
    ap.add_argument("--load", type=int, default=0)
    ap.add_argument("--burst", action="store_true", help="burners alternate busy (0.5-3 s) and idle (0.5-5 s) spells, so only some builds are hit")
    ap.add_argument("--iogate", default="target/release/iogate")
    a = ap.parse_args()
    iogate = os.path.abspath(a.iogate)
    work = tempfile.mkdtemp(prefix="iogate-false-alarms-")
    spec = os.path.join(work, "firmware-history.yaml")
    with open(spec, "w") as f:
        f.write(SPEC)
    db = os.path.join(work, "history.db")
    disk = Disk(work)
    burner = BURSTY if a.burst else "while True: pass"
    burners = [subprocess.Popen([sys.executable, "-c", burner]) for _ in range(a.load)]
    series = {}  # metric -> [(build, value, accepted)]
    new_counts, old_counts = {}, {}
    try:
        for b in range(1, a.builds + 1):
            out = os.path.join(work, f"r{b:03d}")
            cmd = [
                "sh", "-c", f"echo $$ > {disk.cg}/cgroup.procs && exec \"$0\" \"$@\"", iogate,
                "run", spec, "--target", disk.dev, "--out", out, "--baseline", os.path.join(work, "golden"),
                "--model", "SIM-DRIVE", "--build", f"fw-{b}", "--build-order", str(b),
                "--history", db, "--quiet",
            ]
            rc = subprocess.run(cmd, capture_output=True, text=True).returncode
            with open(os.path.join(out, "history.json")) as f:
                judged = json.load(f)["judgements"]
            verdicts = []
            for j in judged:
                m = j["metric"]
                hist = [v for (_, v, ok) in series.get(m, []) if ok][-WINDOW:]
                old = old_rule(hist, j["value"], not m.endswith("latency"))
                new = j["verdict"]
                new_counts[new] = new_counts.get(new, 0) + 1
                old_counts[old] = old_counts.get(old, 0) + 1
                if new != "unchanged" or old != "unchanged":
                    verdicts.append(f"{m}: new {new} / old {old} ({j['change_pct']:+.1f}%)")
            for j in judged:
                series.setdefault(j["metric"], []).append((b, j["value"], rc == 0))
            iops = next((j["value"] for j in judged if j["metric"] == "throughput.iops"), float("nan"))
            print(f"build {b:3d}: exit {rc}, throughput {iops:7.1f} IOPS  {'; '.join(verdicts)}", flush=True)
    finally:
        for p in burners:
            p.kill()
        disk.close()
    judged_new = sum(v for k, v in new_counts.items() if k != "not_enough_history")
    iops = [v for (_, v, _) in series.get("throughput.iops", [])]
    cv = statistics.pstdev(iops) / statistics.fmean(iops) * 100 if iops else float("nan")
    print()
    print(f"builds {a.builds}, load {a.load}{' (bursts)' if a.burst else ''}, metric judgements {judged_new} (of {sum(new_counts.values())})")
    print(f"throughput IOPS: mean {statistics.fmean(iops):.1f}, CV {cv:.2f}%, min {min(iops):.1f}, max {max(iops):.1f}")
    for name, counts in (("new rule (band edge, prediction interval)", new_counts), ("old rule (t-test vs mean + 5%)", old_counts)):
        fa = counts.get("regressed", 0) + counts.get("improved", 0)
        print(f"{name}: false alarms {fa} of {judged_new} judgements ({fa / max(judged_new, 1) * 100:.2f}%); {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    main()
