#!/usr/bin/env python3
"""Compare iogate's io_uring engine with fio on the same device, in one run.

Sets up a loop device over a file in /dev/shm (fast, so the engines' own overheads
show), fills it, then for each workload runs fio (io_uring, default options), fio with
--fixedbufs --registerfiles, and iogate alternately, PAIRS times. Prints per-pair IOPS
ratios iogate/fio, their median, and CPU seconds (user+sys, from getrusage of the
child) per million requests for each engine.

Usage (root): python3 bench/compare_fio.py [--pairs 5] [--runtime 5] [--only NAME]
Needs: fio (apt-get install fio), a release build (cargo build --release).
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGATE = os.path.join(ROOT, "target", "release", "iogate")

# name, fio rw, block size, queue depth, jobs
WORKLOADS = [
    ("randread-4k-qd1", "randread", "4k", 1, 1),
    ("randread-4k-qd32", "randread", "4k", 32, 1),
    ("randread-4k-qd128", "randread", "4k", 128, 1),
    ("randwrite-4k-qd32", "randwrite", "4k", 32, 1),
    ("seqread-128k-qd8", "read", "128k", 8, 1),
    ("randread-4k-qd32-2jobs", "randread", "4k", 32, 2),
]

SPEC_MIX = {
    "randread": "read: 100%, random: 100%",
    "randwrite": "read: 0%, random: 100%",
    "read": "read: 100%, random: 0%",
}


def run_measured(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 1):
        sys.exit(f"command failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, cpu


def fio(dev, rw, bs, qd, jobs, runtime, fixed):
    cmd = ["fio", "--name=bench", f"--filename={dev}", "--ioengine=io_uring", "--direct=1",
           f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--numjobs={jobs}", "--time_based",
           f"--runtime={runtime}", "--group_reporting", "--output-format=json", "--randrepeat=0"]
    if fixed:
        cmd += ["--fixedbufs", "--registerfiles"]
    out, cpu = run_measured(cmd)
    job = json.loads(out[out.index("{"):])["jobs"][0]
    side = job["write"] if rw.endswith("write") else job["read"]
    return side["iops"], side["total_ios"], side["lat_ns"]["mean"], cpu


def iogate(dev, rw, bs, qd, jobs, runtime, workdir):
    size = bs.replace("k", "KiB")
    spec = os.path.join(workdir, "bench.yaml")
    with open(spec, "w") as f:
        f.write(f"iogate: 1\nname: bench\nsteps:\n  - workload:\n      name: w\n"
                f"      queue_depth: {qd}\n      jobs: {jobs}\n      duration: {runtime}s\n"
                f"      mix: [ {{ block_size: {size}, {SPEC_MIX[rw]} }} ]\n")
    out_dir = os.path.join(workdir, "out")
    _, cpu = run_measured([IOGATE, "run", spec, "--target", dev, "--out", out_dir, "--quiet",
                           "--allow-destructive"])
    with open(os.path.join(out_dir, "result.json")) as f:
        m = json.load(f)["steps"][0]["metrics"]
    return m["iops"], m["ios"], m["latency"]["mean_ns"], cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    if not os.path.exists(IOGATE):
        sys.exit("build first: cargo build --release")
    backing = f"/dev/shm/iogate-bench-{os.getpid()}.img"
    with open(backing, "wb") as f:
        f.truncate(args.size_mib << 20)
    dev = subprocess.run(["losetup", "-f", "--show", backing], check=True, stdout=subprocess.PIPE,
                         text=True).stdout.strip()
    try:
        subprocess.run(["fio", "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1M",
                        "--direct=1", "--ioengine=io_uring", "--iodepth=8"], check=True,
                       stdout=subprocess.DEVNULL)
        print(f"device {dev} over {backing} ({args.size_mib} MiB), {args.pairs} pairs x {args.runtime}s\n")
        rows = []
        with tempfile.TemporaryDirectory() as workdir:
            for name, rw, bs, qd, jobs in WORKLOADS:
                if args.only and args.only not in name:
                    continue
                r_def, r_fix, cpu = [], [], {"fio": [0, 0], "fio-fixed": [0, 0], "iogate": [0, 0]}
                lat = {"fio": [], "iogate": []}
                for _ in range(args.pairs):
                    f_iops, f_ios, f_lat, f_cpu = fio(dev, rw, bs, qd, jobs, args.runtime, False)
                    x_iops, x_ios, x_lat, x_cpu = fio(dev, rw, bs, qd, jobs, args.runtime, True)
                    g_iops, g_ios, g_lat, g_cpu = iogate(dev, rw, bs, qd, jobs, args.runtime, workdir)
                    r_def.append(g_iops / f_iops)
                    r_fix.append(g_iops / x_iops)
                    for k, ios, c in (("fio", f_ios, f_cpu), ("fio-fixed", x_ios, x_cpu), ("iogate", g_ios, g_cpu)):
                        cpu[k][0] += ios
                        cpu[k][1] += c
                    lat["fio"].append(f_lat)
                    lat["iogate"].append(g_lat)
                    print(f"  {name}: iogate {g_iops:9.0f}  fio {f_iops:9.0f}  fio-fixed {x_iops:9.0f}  "
                          f"ratio {g_iops / f_iops:.3f} / {g_iops / x_iops:.3f}", flush=True)
                cpm = {k: v[1] / (v[0] / 1e6) for k, v in cpu.items()}
                rows.append((name, statistics.median(r_def), statistics.median(r_fix), cpm,
                             statistics.median(lat["iogate"]) / statistics.median(lat["fio"])))
        print("\n| workload | median IOPS ratio vs fio | vs fio fixedbufs+registerfiles | CPU s per 1M req: iogate / fio / fio-fixed | mean latency ratio |")
        print("|---|---:|---:|---:|---:|")
        for name, rd, rf, cpm, lr in rows:
            print(f"| {name} | {rd:.3f} | {rf:.3f} | {cpm['iogate']:.2f} / {cpm['fio']:.2f} / {cpm['fio-fixed']:.2f} | {lr:.3f} |")
    finally:
        subprocess.run(["losetup", "-d", dev])
        os.remove(backing)


if __name__ == "__main__":
    main()
