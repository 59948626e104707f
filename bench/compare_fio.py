#!/usr/bin/env python3
"""Compare iogate's io_uring engine with fio on the same device, in one run.

Targets (--target, default both): a loop device over a file in /dev/shm, and zram
(a RAM block device that compresses pages; fast, so the engines' own per-request costs
show). Fills the device, then for each workload runs fio (io_uring, default options),
fio with --fixedbufs --registerfiles, and iogate alternately, PAIRS times. Prints per-pair
IOPS ratios iogate/fio, their median, the median mean-latency ratio, and CPU seconds
(user+sys, from getrusage of the child) per million requests for each engine.

With --t-io-uring PATH (fio's t/io_uring, built from a fio source tree with
`make t/io_uring`), the run is the comparison with the kernel's reference instead: 4 KiB
random reads at queue depth 1, 32 and 128 with one job, and 32 with one job per CPU,
iogate and t/io_uring alternating PAIRS times, like with like: fixed buffers, registered
file, no IOPOLL (-p0), latency tracking on (-t1: iogate records every latency), submit
batches up to 32 (-s) and a wait for one completion at a time (-c1: iogate refills its
queue as each request completes). Each run's kernel path is recorded: iogate's from its
result (`steps[].submission`), t/io_uring's from its threads (an `iou-wrk-*` io-wq worker
running, read from /proc after 1 s). One more t/io_uring run per case with -c equal to
the batch (its default way of waiting for the whole batch) shows what that setting does
when requests go to io-wq. Prints the table for bench/RESULTS.md.

With --before PATH (an earlier iogate build), each pair also runs that build, and the
table gains its ratio: this build's IOPS and mean latency over the earlier one's (the
refactoring check: a change to the engine keeps every case within a few percent).

Usage (root): python3 bench/compare_fio.py [--pairs 5] [--runtime 5] [--only NAME]
              [--target shm|zram|both] [--fio PATH] [--t-io-uring PATH] [--before PATH]
Needs: fio (apt-get install fio, or --fio for a build from source), a release build
(cargo build --release).
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGATE = os.environ.get("IOGATE", os.path.join(ROOT, "target", "release", "iogate"))

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


FIO = "fio"


def fio(dev, rw, bs, qd, jobs, runtime, fixed):
    cmd = [FIO, "--name=bench", f"--filename={dev}", "--ioengine=io_uring", "--direct=1",
           f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--numjobs={jobs}", "--time_based",
           f"--runtime={runtime}", "--group_reporting", "--output-format=json", "--randrepeat=0"]
    if fixed:
        cmd += ["--fixedbufs", "--registerfiles"]
    if "write" in rw:
        # iogate writes unique, incompressible data by default; fio's closest is fresh
        # random buffers. fio's default (scramble_buffers) ran at 0.42-0.6x of this on
        # zram: there the data, not the engine, decides the figure.
        cmd += ["--refill_buffers"]
    out, cpu = run_measured(cmd)
    job = json.loads(out[out.index("{"):])["jobs"][0]
    side = job["write"] if rw.endswith("write") else job["read"]
    return side["iops"], side["total_ios"], side["lat_ns"]["mean"], cpu


def iogate(dev, rw, bs, qd, jobs, runtime, workdir, binary=None):
    size = bs.replace("k", "KiB")
    spec = os.path.join(workdir, "bench.yaml")
    with open(spec, "w") as f:
        f.write(f"iogate: 1\nname: bench\nsteps:\n  - workload:\n      name: w\n"
                f"      queue_depth: {qd}\n      jobs: {jobs}\n      duration: {runtime}s\n"
                f"      mix: [ {{ block_size: {size}, {SPEC_MIX[rw]} }} ]\n")
    out_dir = os.path.join(workdir, "out")
    _, cpu = run_measured([binary or IOGATE, "run", spec, "--target", dev, "--out", out_dir, "--quiet",
                           "--allow-destructive"])
    with open(os.path.join(out_dir, "result.json")) as f:
        m = json.load(f)["steps"][0]["metrics"]
    return m["iops"], m["ios"], m["latency"]["mean_ns"], cpu


def parse_count(text):
    """t/io_uring's counts: 68270, 188.19K, 1.02M."""
    scale = {"K": 1e3, "M": 1e6}.get(text[-1:], 1)
    return float(text.rstrip("KM")) * scale


def kernel_path(pid):
    """'io_wq' when one of the process's threads is an io-wq worker (`iou-wrk-<tid>`)."""
    try:
        names = [open(f"/proc/{pid}/task/{t}/comm").read().strip()
                 for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return "?"
    return "io_wq" if any(n.startswith("iou-wrk-") for n in names) else "inline"


def t_io_uring(path, dev, qd, jobs, runtime, complete=1):
    """t/io_uring's 4 KiB random-read IOPS (the median of its per-second lines, the first
    dropped) and its kernel path."""
    batch = min(qd, 32)
    cmd = [path, f"-d{qd}", f"-s{batch}", f"-c{complete}", "-b4096", "-p0", "-B1", "-F1",
           "-t1", f"-n{jobs}", "-R1", f"-r{runtime + 1}", dev]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.0)
    path_seen = kernel_path(proc.pid)
    out = proc.communicate()[0]
    lines = [parse_count(l.split("IOPS=")[1].split(",")[0]) for l in out.splitlines()
             if l.startswith("IOPS=")]
    if not lines:
        sys.exit(f"t/io_uring printed no IOPS: {' '.join(cmd)}\n{out}")
    return statistics.median(lines[1:] or lines), path_seen, " ".join(cmd[1:-1])


def iogate_path(workdir):
    with open(os.path.join(workdir, "out", "result.json")) as f:
        sub = json.load(f)["steps"][0].get("submission") or {}
    return sub.get("path", "?"), sub.get("io_wq_workers", 0)


def limit_cases():
    cpus = os.cpu_count() or 1
    return [(1, 1), (32, 1), (128, 1), (32, cpus)]


def limit_target(target, args, rows):
    dev = target.dev
    subprocess.run([FIO, "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1M",
                    "--direct=1", "--ioengine=io_uring", "--iodepth=8"], check=True,
                   stdout=subprocess.DEVNULL)
    kind = type(target).__name__.lower()
    print(f"{target.label} ({args.size_mib} MiB), {args.pairs} pairs x {args.runtime}s\n")
    with tempfile.TemporaryDirectory() as workdir:
        for qd, jobs in limit_cases():
            ratios, t_all, g_all = [], [], []
            for _ in range(args.pairs):
                t_iops, t_path, t_cmd = t_io_uring(args.t_io_uring, dev, qd, jobs, args.runtime)
                g_iops, _, _, _ = iogate(dev, "randread", "4k", qd, jobs, args.runtime, workdir)
                g_path, workers = iogate_path(workdir)
                ratios.append(g_iops / t_iops)
                t_all.append(t_iops)
                g_all.append(g_iops)
                print(f"  qd {qd} x {jobs}: iogate {g_iops:9.0f} ({g_path}, {workers} workers)  "
                      f"t/io_uring {t_iops:9.0f} ({t_path})  ratio {g_iops / t_iops:.3f}", flush=True)
            batch_iops, batch_path, batch_cmd = t_io_uring(args.t_io_uring, dev, qd, jobs,
                                                           args.runtime, complete=min(qd, 32))
            print(f"  qd {qd} x {jobs}: t/io_uring -c{min(qd, 32)} {batch_iops:9.0f} ({batch_path})")
            rows.append((kind, qd, jobs, t_cmd, t_path, g_path, statistics.median(t_all),
                         statistics.median(g_all), statistics.median(ratios),
                         min(ratios), max(ratios), batch_iops, batch_path))


def print_limit(rows):
    print("\n| target | QD x jobs | path: iogate / t/io_uring | t/io_uring IOPS (median) | iogate IOPS (median) | ratio median (min-max) | t/io_uring -c=batch | settings |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for kind, qd, jobs, cmd, t_path, g_path, t_med, g_med, r, lo, hi, b_iops, b_path in rows:
        print(f"| {kind} | {qd} x {jobs} | {g_path} / {t_path} | {t_med:,.0f} | {g_med:,.0f} | "
              f"{r:.3f} ({lo:.3f}-{hi:.3f}) | {b_iops:,.0f} ({b_path}) | `{cmd}` |")


class Shm:
    """A loop device over a file in /dev/shm."""

    def __init__(self, size_mib):
        self.backing = f"/dev/shm/iogate-bench-{os.getpid()}.img"
        with open(self.backing, "wb") as f:
            f.truncate(size_mib << 20)
        self.dev = subprocess.run(["losetup", "-f", "--show", self.backing], check=True,
                                  stdout=subprocess.PIPE, text=True).stdout.strip()
        self.label = f"loop device {self.dev} over {self.backing}"

    def close(self):
        subprocess.run(["losetup", "-d", self.dev])
        os.remove(self.backing)


class Zram:
    """A zram device (a new one through /sys/class/zram-control, or zram0 when free)."""

    def __init__(self, size_mib):
        ctl = "/sys/class/zram-control/hot_add"
        if not os.path.exists(ctl) and subprocess.run(["modprobe", "zram"]).returncode != 0:
            sys.exit("zram: no /sys/class/zram-control and modprobe zram failed")
        with open(ctl) as f:
            self.index = int(f.read().strip())
        self.dev = f"/dev/zram{self.index}"
        with open(f"/sys/block/zram{self.index}/disksize", "w") as f:
            f.write(f"{size_mib}M")
        for _ in range(100):
            if os.path.exists(self.dev):
                break
            time.sleep(0.01)
        self.label = f"zram device {self.dev}"

    def close(self):
        # The device stays busy for a moment after its last user exits.
        for attempt in range(50):
            try:
                with open(f"/sys/block/zram{self.index}/reset", "w") as f:
                    f.write("1")
                with open("/sys/class/zram-control/hot_remove", "w") as f:
                    f.write(str(self.index))
                return
            except OSError:
                if attempt == 49:
                    raise
                time.sleep(0.1)


def bench_target(target, args, rows):
    dev = target.dev
    subprocess.run([FIO, "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1M",
                    "--direct=1", "--ioengine=io_uring", "--iodepth=8"], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"{target.label} ({args.size_mib} MiB), {args.pairs} pairs x {args.runtime}s\n")
    kind = type(target).__name__.lower()
    with tempfile.TemporaryDirectory() as workdir:
            for name, rw, bs, qd, jobs in WORKLOADS:
                if args.only and args.only not in name:
                    continue
                r_def, r_fix, cpu = [], [], {"fio": [0, 0], "fio-fixed": [0, 0], "iogate": [0, 0]}
                lat = {"fio": [], "iogate": []}
                g_all = []
                before = {"iops": [], "lat": []}
                for _ in range(args.pairs):
                    if args.before:
                        b_iops, _, b_lat, _ = iogate(dev, rw, bs, qd, jobs, args.runtime, workdir,
                                                     args.before)
                    f_iops, f_ios, f_lat, f_cpu = fio(dev, rw, bs, qd, jobs, args.runtime, False)
                    x_iops, x_ios, x_lat, x_cpu = fio(dev, rw, bs, qd, jobs, args.runtime, True)
                    g_iops, g_ios, g_lat, g_cpu = iogate(dev, rw, bs, qd, jobs, args.runtime, workdir)
                    g_all.append(g_iops)
                    r_def.append(g_iops / f_iops)
                    r_fix.append(g_iops / x_iops)
                    for k, ios, c in (("fio", f_ios, f_cpu), ("fio-fixed", x_ios, x_cpu), ("iogate", g_ios, g_cpu)):
                        cpu[k][0] += ios
                        cpu[k][1] += c
                    lat["fio"].append(f_lat)
                    lat["iogate"].append(g_lat)
                    extra = ""
                    if args.before:
                        before["iops"].append(g_iops / b_iops)
                        before["lat"].append(g_lat / b_lat)
                        extra = f"  before {b_iops:9.0f} ({g_iops / b_iops:.3f})"
                    print(f"  {name}: iogate {g_iops:9.0f}  fio {f_iops:9.0f}  fio-fixed {x_iops:9.0f}  "
                          f"ratio {g_iops / f_iops:.3f} / {g_iops / x_iops:.3f}{extra}", flush=True)
                cpm = {k: v[1] / (v[0] / 1e6) for k, v in cpu.items()}
                rows.append((kind, name, statistics.median(r_def), statistics.median(r_fix), cpm,
                             statistics.median(lat["iogate"]) / statistics.median(lat["fio"]),
                             None,
                             (statistics.median(before["iops"]), statistics.median(before["lat"]))
                             if args.before else None))


def main():
    global FIO
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--only", default=None)
    ap.add_argument("--target", choices=["shm", "zram", "both"], default="both")
    ap.add_argument("--fio", default="fio", help="fio binary (e.g. a 3.42 build from source)")
    ap.add_argument("--t-io-uring", default=None, help="fio's t/io_uring binary")
    ap.add_argument("--before", default=None, help="an earlier iogate build to compare with")
    args = ap.parse_args()
    FIO = args.fio
    if not os.path.exists(IOGATE):
        sys.exit("build first: cargo build --release")
    version = subprocess.run([FIO, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    print(f"{version}, iogate {IOGATE}")
    rows = []
    kinds = ["shm", "zram"] if args.target == "both" else [args.target]
    for kind in kinds:
        target = Shm(args.size_mib) if kind == "shm" else Zram(args.size_mib)
        try:
            if args.t_io_uring:
                limit_target(target, args, rows)
            else:
                bench_target(target, args, rows)
        finally:
            target.close()
    if args.t_io_uring:
        print_limit(rows)
        return
    print("\n| target | workload | median IOPS ratio vs fio | vs fio fixedbufs+registerfiles | CPU s per 1M req: iogate / fio / fio-fixed | mean latency ratio vs fio | IOPS vs t/io_uring | IOPS / latency vs --before |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for kind, name, rd, rf, cpm, lr, lim, bef in rows:
        lim_s = f"{lim:.3f}" if lim else "-"
        bef_s = f"{bef[0]:.3f} / {bef[1]:.3f}" if bef else "-"
        print(f"| {kind} | {name} | {rd:.3f} | {rf:.3f} | {cpm['iogate']:.2f} / {cpm['fio']:.2f} / {cpm['fio-fixed']:.2f} | {lr:.3f} | {lim_s} | {bef_s} |")


if __name__ == "__main__":
    main()
