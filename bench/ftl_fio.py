#!/usr/bin/env python3
"""The simulated SSD (tests/ftl/ftl.c) written by iogate and by fio: steady-state random
writes, each tool's IOPS against the bound the drive's own work sets.

The drive (nbdkit's cc plugin, behind nbdfuse and a `--direct-io=on` loop device, as
tests/ftl.rs runs it) counts host pages, pages copied by garbage collection and erases.
Each pair, per tool: discard the whole drive (blkdiscard), fill it sequentially, then
random 4 KiB writes at QD16 for PASSES × the drive's pages; the drive's counters over the
random writes give the write amplification and the bound on host write IOPS
(channels × host pages / busy time, tests/ftl/README.md). A tool whose figure is near the
bound measures the drive; one far below it measures itself. fio runs twice: by default
(its random map: every block once per pass) and with --norandommap (uniform offsets with
replacement, as iogate's default `uniform` draws them), and iogate twice too (`uniform`,
and `permutation`: each block once per pass, as fio's map); the access pattern, not the
tool, sets the drive's write amplification.

Usage (root): python3 bench/ftl_fio.py [--pairs 3] [--passes 2]
Needs: nbdkit (with its cc plugin and a C compiler), nbdfuse, fio, a release build.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qd1 import wait_for  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGATE = os.environ.get("IOGATE", os.path.join(ROOT, "target", "release", "iogate"))
PLUGIN = os.path.join(ROOT, "tests", "ftl", "ftl.c")
PAGES, CHANNELS, READ_US, PROGRAM_US, ERASE_US = 4096, 2, 20, 300, 1000


def stats(path):
    time.sleep(0.06)  # the drive rewrites its stats every 20 ms
    with open(path) as f:
        return json.loads(f.read())


def bound(before, after):
    d = {k: after[k] - before[k] for k in ("host_pages_written", "pages_copied", "erases",
                                            "host_pages_read")}
    busy_us = (d["host_pages_written"] * PROGRAM_US + d["pages_copied"] * (READ_US + PROGRAM_US)
               + d["erases"] * ERASE_US + d["host_pages_read"] * READ_US)
    host = d["host_pages_written"]
    return CHANNELS * host / (busy_us / 1e6), (host + d["pages_copied"]) / host


def fio_writes(dev, rw, ios, extra=()):
    out = subprocess.run(["fio", *extra, "--name=w", f"--filename={dev}", "--ioengine=io_uring",
                          "--direct=1", f"--rw={rw}", "--bs=4k", "--iodepth=16",
                          f"--number_ios={ios}", f"--io_size={ios * 4096}", "--size=16M",
                          "--output-format=json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out[out.index("{"):])["jobs"][0]["write"]["iops"]


def iogate_writes(dev, random, ios, work, dist="uniform"):
    spec = os.path.join(work, "w.yaml")
    with open(spec, "w") as f:
        f.write(f"iogate: 1\nname: w\nsteps:\n  - workload: {{ name: w, queue_depth: 16, "
                f"ios: {ios}, distribution: {dist}, "
                f"mix: [ {{ block_size: 4KiB, read: 0%, random: {random}% }} ] }}\n")
    out = os.path.join(work, "out")
    subprocess.run(["rm", "-rf", out], check=True)
    subprocess.run([IOGATE, "run", spec, "--target", dev, "--out", out, "-q",
                    "--allow-destructive"], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "result.json")) as f:
        return json.load(f)["steps"][0]["metrics"]["iops"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--passes", type=int, default=2)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="iogate-ftl-") as work:
        sock, mnt, st = (os.path.join(work, n) for n in ("sock", "mnt", "stats"))
        os.makedirs(mnt)
        nbdkit = subprocess.Popen(["nbdkit", "-f", "-U", sock, "cc", PLUGIN, "size=16M",
                                   f"stats={st}", f"channels={CHANNELS}",
                                   f"program_us={PROGRAM_US}", "idle_ms=1000"])
        wait_for(sock)
        disk = os.path.join(mnt, "disk")
        fuse = subprocess.Popen(["nbdfuse", disk, "--unix", sock], stderr=subprocess.DEVNULL)
        wait_for(disk)
        dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", disk], check=True,
                             capture_output=True, text=True).stdout.strip()
        try:
            print("| run | random-write IOPS | drive bound | IOPS / bound | write amplification |")
            print("|---|---:|---:|---:|---:|")
            for i in range(a.pairs):
                for tool in ("iogate", "iogate permutation", "fio", "fio --norandommap"):
                    subprocess.run(["blkdiscard", dev], check=True)
                    if tool.startswith("iogate"):
                        iogate_writes(dev, 0, PAGES, work)
                    else:
                        fio_writes(dev, "write", PAGES)
                    before = stats(st)
                    ios = PAGES * a.passes
                    if tool.startswith("iogate"):
                        dist = "permutation" if "permutation" in tool else "uniform"
                        iops = iogate_writes(dev, 100, ios, work, dist)
                    else:
                        iops = fio_writes(dev, "randwrite", ios, tool.split()[1:])
                    top, waf = bound(before, stats(st))
                    print(f"| {tool} {i + 1} | {iops:,.0f} | {top:,.0f} | {iops / top:.3f} | "
                          f"{waf:.2f} |", flush=True)
        finally:
            subprocess.run(["losetup", "-d", dev])
            subprocess.run(["fusermount3", "-u", mnt], stderr=subprocess.DEVNULL)
            for p in (fuse, nbdkit):
                p.terminate()
                p.wait()


if __name__ == "__main__":
    main()
