#!/usr/bin/env python3
"""The planted-tail drive read by iogate and by fio: what each reports for the same reads.

The drive is tests/qos/slowread.c (an nbdkit plugin built by nbdkit's cc plugin: every
K-th read delayed by D ms, the number delayed written to a count file) behind nbdfuse and
a `--direct-io=on` loop device, as tests/qos.rs runs it. Each pair runs, on the same
drive, iogate (4 KiB random reads at queue depth 1, N requests, `latency.over[D/2]`
counted, percentiles to six nines) and fio (the same reads: io_uring, direct, iodepth 1,
--number_ios N, --lat_percentiles with --percentile_list to six nines), alternating.
Prints per run: the reads the drive delayed during it, iogate's count over D/2, and both
tools' p99.99, p99.999 and p99.9999 (iogate leaves a percentile out where N is below the
10ⁿ requests its rank needs; fio reports one regardless).

Usage (root): python3 bench/tails_fio.py [--pairs 2] [--ios 300000] [--every 15000]
              [--delay-ms 25]
Needs: nbdkit, nbdfuse, fio, losetup; a release build (cargo build --release).
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGATE = os.environ.get("IOGATE", os.path.join(ROOT, "target", "release", "iogate"))
PLUGIN = os.path.join(ROOT, "tests", "qos", "slowread.c")


def wait_for(path):
    for _ in range(200):
        if os.path.exists(path):
            return
        time.sleep(0.1)
    raise SystemExit(f"{path} did not appear")


def start_drive(work, every, delay_ms):
    sock, count, mnt = (os.path.join(work, n) for n in ("sock", "count", "mnt"))
    os.makedirs(mnt, exist_ok=True)
    nbdkit = subprocess.Popen(["nbdkit", "-f", "-U", sock, "cc", PLUGIN, "size=64M",
                               f"every={every}", f"delay_ms={delay_ms}", f"count={count}"])
    wait_for(sock)
    disk = os.path.join(mnt, "disk")
    fuse = subprocess.Popen(["nbdfuse", disk, "--unix", sock], stderr=subprocess.DEVNULL)
    wait_for(disk)
    dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", disk], check=True,
                         capture_output=True, text=True).stdout.strip()
    return dev, count, (nbdkit, fuse, mnt)


def stop_drive(dev, procs):
    nbdkit, fuse, mnt = procs
    subprocess.run(["losetup", "-d", dev])
    subprocess.run(["fusermount3", "-u", mnt], stderr=subprocess.DEVNULL)
    for p in (fuse, nbdkit):
        p.terminate()
        p.wait()


def delayed(count):
    with open(count) as f:
        return int(f.read().strip() or 0)


def run_iogate(work, dev, ios, threshold_ms):
    spec = os.path.join(work, "tails.yaml")
    with open(spec, "w") as f:
        f.write(f"""iogate: 1
name: tails
target: {{ size: 64MiB }}
steps:
  - workload:
      name: r
      queue_depth: 1
      ios: {ios}
      mix: [ {{ block_size: 4KiB, read: 100%, random: 100% }} ]
assert:
  - r.read.latency.over[{threshold_ms}ms] >= 0
""")
    out = os.path.join(work, "out")
    subprocess.run(["rm", "-rf", out], check=True)
    subprocess.run([IOGATE, "run", spec, "--target", dev, "--out", out, "-q"], check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "result.json")) as f:
        read = json.load(f)["steps"][0]["metrics"]["read"]
    lat = read["latency"]
    return {
        "over": read["latency_over"][0]["count"],
        "p99.99": lat["p99_99_ns"],
        "p99.999": lat.get("p99_999_ns"),
        "p99.9999": lat.get("p99_9999_ns"),
        "iops": read["iops"],
        "ios": read["ios"],
    }


def run_fio(dev, ios):
    args = ["fio", "--name=tails", f"--filename={dev}", "--ioengine=io_uring", "--direct=1",
            "--rw=randread", "--bs=4k", "--iodepth=1", "--size=64M", f"--io_size={ios * 4096}",
            f"--number_ios={ios}",
            "--lat_percentiles=1", "--percentile_list=99.99:99.999:99.9999",
            "--output-format=json"]
    r = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    read = r["jobs"][0]["read"]
    pct = read["lat_ns"]["percentile"]
    return {
        "p99.99": pct["99.990000"],
        "p99.999": pct["99.999000"],
        "p99.9999": pct["99.999900"],
        "iops": read["iops"],
        "ios": read["total_ios"],
    }


def ms(v):
    return "undecided" if v is None else f"{v / 1e6:.2f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--ios", type=int, default=300_000)
    ap.add_argument("--every", type=int, default=15_000)
    ap.add_argument("--delay-ms", type=int, default=25)
    a = ap.parse_args()
    threshold_ms = a.delay_ms // 2
    with tempfile.TemporaryDirectory(prefix="iogate-tails-") as work:
        dev, count, procs = start_drive(work, a.every, a.delay_ms)
        try:
            print(f"{a.ios:,} random 4 KiB reads at QD1; every {a.every:,}th delayed "
                  f"{a.delay_ms} ms\n")
            print(f"| run | reads | delayed by the drive | over {threshold_ms} ms | p99.99 | p99.999 | "
                  "p99.9999 | IOPS |")
            print("|---|---|---|---|---|---|---|---|")
            for i in range(a.pairs):
                for tool in ("iogate", "fio"):
                    before = delayed(count)
                    r = run_iogate(work, dev, a.ios, threshold_ms) if tool == "iogate" \
                        else run_fio(dev, a.ios)
                    planted = delayed(count) - before
                    over = r.get("over", "—")
                    print(f"| {tool} {i + 1} | {r['ios']:,} | {planted} | {over} | {ms(r['p99.99'])} | "
                          f"{ms(r['p99.999'])} | {ms(r['p99.9999'])} | {r['iops']:,.0f} |")
        finally:
            stop_drive(dev, procs)


if __name__ == "__main__":
    main()
