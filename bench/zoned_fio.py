#!/usr/bin/env python3
"""iogate against fio's zonemode=zbd on one ZNS namespace, in one VM.

Boots scripts/qemu-nvme.sh's VM with a zoned namespace on QEMU's NVMe controller (zone
capacity below zone size, open and active limits) and fio and util-linux's blkzone next
to iogate, and runs each case as alternating pairs (fio, then iogate, `--pairs` times),
every zone reset (`blkzone reset`) before each run so that both start from an empty
namespace:

- sequential writes, 128 KiB at queue depth 8 (fio `rw=write`), a fixed number of bytes;
- random-zone writes, 4 KiB at queue depth 16 (fio `rw=randwrite`), fio's
  `max_open_zones` set to the drive's limit (iogate reads it from the drive).

Both through io_uring on the block device with O_DIRECT. Prints IOPS per tool (median
of the pairs), the ratio, the write errors each saw, and the zones each touched (iogate:
`steps[].zones.zones_written`; fio: the namespace's zones left non-empty, from blkzone).
Zone append is not compared: fio 3.33's io_uring engine has no zone append, nor has
iogate's block path yet.

Under TCG every instruction is emulated: absolute figures say nothing about real drives,
and per-request user-space work is inflated; the ratio on one namespace in one boot is
the figure.

Usage (root): python3 bench/zoned_fio.py [--fio PATH] [--pairs 3]
Needs: a release build, fio, blkzone (util-linux) and what scripts/qemu-nvme.sh needs.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS = "zoned=true,zoned.zone_size=4M,zoned.zone_capacity=3M,zoned.max_open=8,zoned.max_active=8"
CASES = [
    # name, fio rw, block size, queue depth, bytes, random %
    ("seq-write", "write", "128k", 8, 192 << 20, 0),
    ("randzone-write", "randwrite", "4k", 16, 48 << 20, 100),
]


def guest_script(pairs):
    lines = ["DEV=/dev/nvme0n1", "MAXOPEN=$(cat /sys/block/nvme0c0n1/queue/max_open_zones)"]
    for name, rw, bs, qd, size, rand in CASES:
        spec = (f"iogate: 1\\nname: b\\nsteps:\\n  - workload:\\n      name: w\\n"
                f"      queue_depth: {qd}\\n      bytes: {size}B\\n"
                f"      mix: [ {{ block_size: {bs.upper()}iB, read: 0%%, random: {rand}%% }} ]\\n")
        lines.append(f"printf '{spec}' > /tmp/{name}.yaml")
        for p in range(pairs):
            lines.append("blkzone reset $DEV")
            lines.append(
                f"fio --name=b --filename=$DEV --ioengine=io_uring --direct=1 --zonemode=zbd "
                f"--max_open_zones=$MAXOPEN --rw={rw} --bs={bs} --iodepth={qd} --io_size={size} "
                f"--randrepeat=0 --output-format=json > /out/fio-{name}-{p}.json 2>/out/fio-{name}-{p}.err")
            lines.append(f"blkzone report $DEV | grep -vc '(em)' > /out/fio-{name}-{p}.zones")
            lines.append("blkzone reset $DEV")
            lines.append(f"iogate run /tmp/{name}.yaml --target $DEV --out /out/iogate-{name}-{p} -q --allow-destructive")
    return "\n".join(lines) + "\n"


def fio_figures(vm, name, p):
    with open(os.path.join(vm, f"fio-{name}-{p}.json")) as f:
        text = f.read()
    job = json.loads(text[text.index("{"):])["jobs"][0]
    with open(os.path.join(vm, f"fio-{name}-{p}.zones")) as f:
        zones = int(f.read().strip() or 0)
    return job["write"]["iops"], job.get("error", 0), zones


def iogate_figures(vm, name, p):
    with open(os.path.join(vm, f"iogate-{name}-{p}", "result.json")) as f:
        step = json.load(f)["steps"][0]
    m = step["metrics"]
    return m["iops"], m["errors"], step["zones"]["zones_written"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fio", default=shutil.which("fio"))
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args()
    iogate = os.path.join(ROOT, "target", "release", "iogate")
    blkzone = shutil.which("blkzone") or "/usr/sbin/blkzone"
    if not os.path.exists(iogate) or not args.fio or not os.path.exists(blkzone):
        sys.exit("needs target/release/iogate (cargo build --release), fio and blkzone")
    with tempfile.TemporaryDirectory() as out:
        vm = os.path.join(out, "vm")
        cmd = ["bash", os.path.join(ROOT, "scripts", "qemu-nvme.sh"), "--size", "1G",
               "--ns-props", NS, "--iogate", iogate, "--extra", args.fio, "--extra", blkzone,
               "--time-limit", "3000", "--out", vm, "--", "sh", "-c", guest_script(args.pairs)]
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
        if rc != 0:
            with open(os.path.join(vm, "console.log"), errors="replace") as f:
                tail = f.read().splitlines()[-30:]
            sys.exit("\n".join(tail) + f"\nthe VM run failed ({rc})")
        print("| case | fio IOPS | iogate IOPS | iogate / fio | fio errors | iogate errors | zones fio left written | zones iogate wrote |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, *_ in CASES:
            f = [fio_figures(vm, name, p) for p in range(args.pairs)]
            g = [iogate_figures(vm, name, p) for p in range(args.pairs)]
            fi = statistics.median(x[0] for x in f)
            gi = statistics.median(x[0] for x in g)
            print(f"| {name} | {fi:.0f} | {gi:.0f} | {gi / fi:.3f} | {sum(x[1] for x in f)} | "
                  f"{sum(x[1] for x in g)} | {f[-1][2]} | {g[-1][2]} |")


if __name__ == "__main__":
    main()
