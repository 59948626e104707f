#!/usr/bin/env python3
"""One iogate run over 8 drives against fio with one job per drive, on the same devices,
in one run (issue 28).

Eight zram devices (created through /sys/class/zram-control, filled first), random 4 KiB
reads at QD 32 on each. Alternating PAIRS times: `iogate run --target /dev/zramA …
--target /dev/zramH` (one run, each drive on its own thread with its own jobs) and fio
with one job section per device (`--name=dN --filename=/dev/zramN`, io_uring, direct,
iodepth 32, the same fixed buffers and registered files iogate uses). Reports each
pair's total IOPS and the ratio iogate/fio, the per-drive spread of each tool, and an
iogate run on one drive alone (the same spec, one target), the per-drive figure when the
drive has the host to itself.

Usage (root): python3 bench/multidrive.py [--pairs 3] [--runtime 5] [--drives 8]
Needs: fio, a release build (cargo build --release).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_fio import IOGATE, Zram, run_measured  # noqa: E402


def fio_fleet(devs, qd, runtime):
    cmd = ["fio", "--ioengine=io_uring", "--direct=1", "--rw=randread", "--bs=4k",
           f"--iodepth={qd}", "--time_based", f"--runtime={runtime}", "--randrepeat=0",
           "--fixedbufs", "--registerfiles", "--output-format=json"]
    for i, d in enumerate(devs):
        cmd += [f"--name=d{i}", f"--filename={d}"]
    out, cpu = run_measured(cmd)
    jobs = json.loads(out[out.index("{"):])["jobs"]
    return [j["read"]["iops"] for j in jobs], cpu


def iogate_fleet(devs, qd, runtime, workdir):
    spec = os.path.join(workdir, "fleet.yaml")
    with open(spec, "w") as f:
        f.write(f"iogate: 1\nname: fleet\nsteps:\n  - workload:\n      name: w\n"
                f"      queue_depth: {qd}\n      duration: {runtime}s\n"
                f"      mix: [ {{ block_size: 4KiB, read: 100%, random: 100% }} ]\n")
    out = os.path.join(workdir, "out")
    cmd = [IOGATE, "run", spec, "--out", out, "--quiet"]
    for d in devs:
        cmd += ["--target", d]
    _, cpu = run_measured(cmd)
    per_drive = []
    if len(devs) == 1:
        with open(os.path.join(out, "result.json")) as f:
            return [json.load(f)["steps"][0]["metrics"]["iops"]], cpu
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    for d in summary["drives"]:
        with open(os.path.join(out, d["result_dir"], "result.json")) as f:
            per_drive.append(json.load(f)["steps"][0]["metrics"]["iops"])
    return per_drive, cpu


def spread(values):
    m = statistics.median(values)
    return f"{min(values) / m:.3f}–{max(values) / m:.3f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--drives", type=int, default=8)
    ap.add_argument("--qd", type=int, default=32)
    args = ap.parse_args()
    zrams = [Zram(256) for _ in range(args.drives)]
    devs = [z.dev for z in zrams]
    try:
        for d in devs:
            subprocess.run(["fio", "--name=fill", f"--filename={d}", "--rw=write", "--bs=1M",
                            "--direct=1", "--ioengine=io_uring", "--iodepth=8",
                            "--refill_buffers"], check=True, stdout=subprocess.DEVNULL)
        rows = []
        with tempfile.TemporaryDirectory() as work:
            for pair in range(args.pairs):
                ig, ig_cpu = iogate_fleet(devs, args.qd, args.runtime, work)
                fi, fi_cpu = fio_fleet(devs, args.qd, args.runtime)
                alone, _ = iogate_fleet(devs[:1], args.qd, args.runtime, work)
                rows.append((pair, sum(ig), sum(fi), spread(ig), spread(fi), alone[0],
                             ig_cpu, fi_cpu))
                print(f"pair {pair}: iogate {sum(ig):,.0f} IOPS, fio {sum(fi):,.0f} "
                      f"(ratio {sum(ig) / sum(fi):.3f}); one drive alone {alone[0]:,.0f}",
                      flush=True)
    finally:
        for z in zrams:
            z.close()
    print(f"\n{args.drives} zram devices, random 4 KiB reads, QD {args.qd} each, "
          f"{args.runtime} s per run\n")
    print("| pair | iogate total IOPS | fio total IOPS | ratio | iogate per drive / median | "
          "fio per job / median | iogate, one drive alone | CPU s iogate / fio |")
    print("|---:|---:|---:|---:|---|---|---:|---|")
    for p, ig, fi, sig, sfi, alone, c1, c2 in rows:
        print(f"| {p} | {ig:,.0f} | {fi:,.0f} | {ig / fi:.3f} | {sig} | {sfi} | {alone:,.0f} "
              f"| {c1:.1f} / {c2:.1f} |")
    ratios = [r[1] / r[2] for r in rows]
    print(f"\n**Median total IOPS ratio iogate/fio: {statistics.median(ratios):.3f}** "
          f"({min(ratios):.3f}–{max(ratios):.3f})")


if __name__ == "__main__":
    main()
