#!/usr/bin/env python3
"""What `iogate run --journal` costs: write IOPS with and without the journal, same
device, alternating, in one run.

The target is a loop device over a file in /dev/shm (fast, so the journal's own cost
shows; a real drive's slower writes hide more of it). The workload is specs/powercut.yaml's
shape: random 4 KiB writes at queue depth 32 with a flush every 256 writes, for
--runtime seconds. "without" runs with --verify-state (writes stamped the same way, no
journal), "with" adds --journal on /tmp (another device). Prints each pair's IOPS, the
ratio with/without, their median, and the journal's mean fdatasync and longest lag.

Usage (root): python3 bench/journal_overhead.py [--pairs 3] [--runtime 4]
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
name: journal-overhead
target:
  size: 512MiB
seed: 3
steps:
  - workload:
      name: writes
      queue_depth: 32
      duration: {runtime}s
      fsync: 256
      mix: [{{ block_size: 4KiB, read: 0%, random: 100% }}]
"""


def run(spec, dev, work, extra):
    out = os.path.join(work, "out")
    subprocess.run(
        [IOGATE, "run", spec, "--target", dev, "--allow-destructive", "-q", "--out", out] + extra,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with open(os.path.join(out, "result.json")) as f:
        r = json.load(f)
    subprocess.run(["rm", "-rf", out], check=True)
    return r["steps"][0]["metrics"]["write"]["iops"], r.get("journal")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=4)
    a = ap.parse_args()
    backing = "/dev/shm/iogate-journal-overhead.img"
    subprocess.run(["truncate", "-s", "1G", backing], check=True)
    dev = subprocess.run(
        ["losetup", "--direct-io=on", "-f", "--show", backing],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    try:
        with tempfile.TemporaryDirectory() as work:
            spec = os.path.join(work, "spec.yaml")
            with open(spec, "w") as f:
                f.write(SPEC.format(runtime=a.runtime))
            ratios = []
            print(f"{dev} over {backing}, {a.pairs} pairs of {a.runtime} s")
            print("pair  without IOPS  with IOPS  ratio  sync mean  longest lag")
            for i in range(a.pairs):
                state = os.path.join(work, "state")
                without, _ = run(spec, dev, work, ["--verify-state", state])
                os.unlink(state)
                journal = os.path.join("/tmp", f"iogate-journal-overhead-{os.getpid()}.bin")
                with_j, j = run(spec, dev, work, ["--journal", journal])
                os.unlink(journal)
                ratios.append(with_j / without)
                print(f"{i:>4}  {without:>12.0f}  {with_j:>9.0f}  {with_j / without:.3f}  "
                      f"{j['sync_mean_ns'] / 1e3:>7.1f} µs  {j['max_lag_ns'] / 1e6:>8.2f} ms")
            print(f"median ratio with/without journal: {statistics.median(ratios):.3f}")
    finally:
        subprocess.run(["losetup", "-d", dev])
        os.unlink(backing)


if __name__ == "__main__":
    main()
