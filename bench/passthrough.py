#!/usr/bin/env python3
"""NVMe passthrough against the block path, iogate against fio and t/io_uring, in one VM.

Boots scripts/qemu-nvme.sh's VM (QEMU's emulated NVMe controller under TCG) with fio and
fio's t/io_uring next to iogate (-c1 -t1: one completion waited for at a time and latency
tracking on, as iogate), and runs 4 KiB random reads at each queue depth through
the block device (/dev/nvme0n1: fio's io_uring engine, t/io_uring -u0, iogate's block
engine) and through passthrough (/dev/ng0n1: fio's io_uring_cmd engine, t/io_uring -u1,
iogate's `engine: passthrough`), fixed buffers and registered files everywhere. Prints
IOPS per tool and path, and iogate's ratio to fio on each path.

Under TCG every instruction is emulated, so the absolute figures say nothing about real
drives, and user-space work per request is inflated many times over: ratios between
tools favour whichever does less of it. Passthrough against block for the same tool is
the meaningful comparison. t/io_uring -u1 (fio-3.42-135) fails here on its first command
with NVMe status 0x4080 (LBA Out of Range, DNR): its column stays empty on that path.

Usage (root): python3 bench/passthrough.py --fio PATH --t-io-uring PATH [--runtime 4]
              [--depths 1,32]
Needs: a release build, fio and t/io_uring built from a fio source tree (`make fio
t/io_uring`), and what scripts/qemu-nvme.sh needs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def guest_script(depths, runtime):
    lines = []
    for qd in depths:
        batch = min(qd, 32)
        for path, dev, engine, u in (("block", "/dev/nvme0n1", "io_uring", 0),
                                     ("passthrough", "/dev/ng0n1", "io_uring_cmd", 1)):
            extra = "--cmd_type=nvme" if u else "--direct=1"
            lines.append(
                f"fio --name=b --filename={dev} --ioengine={engine} {extra} --rw=randread "
                f"--bs=4k --iodepth={qd} --fixedbufs --registerfiles --time_based "
                f"--runtime={runtime} --randrepeat=0 --output-format=json > /out/fio-{path}-{qd}.json")
            lines.append(
                f"io_uring -d{qd} -s{batch} -c1 -t1 -b4096 -p0 -B1 -F1 -n1 -u{u} -O{1 - u} "
                f"-r{runtime + 1} {dev} > /out/tio-{path}-{qd}.txt 2>&1")
            engine_line = "      engine: passthrough\\n" if u else ""
            spec = (f"iogate: 1\\nname: b\\nsteps:\\n  - workload:\\n      name: w\\n"
                    f"{engine_line}      queue_depth: {qd}\\n      duration: {runtime}s\\n"
                    f"      mix: [ {{ block_size: 4KiB, read: 100%%, random: 100%% }} ]\\n")
            lines.append(f"printf '{spec}' > /tmp/s.yaml")
            lines.append(f"iogate run /tmp/s.yaml --target {dev} --out /out/iogate-{path}-{qd} -q")
    return "\n".join(lines) + "\n"


def tio_iops(text):
    vals = []
    for line in text.splitlines():
        if line.startswith("IOPS="):
            v = line.split("IOPS=")[1].split(",")[0]
            scale = {"K": 1e3, "M": 1e6}.get(v[-1:], 1)
            vals.append(float(v.rstrip("KM")) * scale)
    return statistics.median(vals[1:] or vals) if vals else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fio", required=True)
    ap.add_argument("--t-io-uring", required=True)
    ap.add_argument("--runtime", type=int, default=4)
    ap.add_argument("--depths", default="1,32")
    args = ap.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    iogate = os.path.join(ROOT, "target", "release", "iogate")
    if not os.path.exists(iogate):
        sys.exit("build first: cargo build --release")
    with tempfile.TemporaryDirectory() as out:
        tio = os.path.join(out, "bin", "io_uring")
        os.makedirs(os.path.dirname(tio))
        subprocess.run(["cp", args.t_io_uring, tio], check=True)
        cmd = ["bash", os.path.join(ROOT, "scripts", "qemu-nvme.sh"), "--size", "1G",
               "--iogate", iogate, "--extra", args.fio, "--extra", tio, "--out",
               os.path.join(out, "vm"), "--", "sh", "-c", guest_script(depths, args.runtime)]
        rc = subprocess.run(cmd).returncode
        if rc != 0:
            sys.exit(f"the VM run failed ({rc}); see {out}/vm/console.log")
        vm = os.path.join(out, "vm")
        print("| queue depth | path | fio | t/io_uring | iogate | iogate / fio | iogate / t/io_uring | iogate's kernel path |")
        print("|---:|---|---:|---:|---:|---:|---:|---|")
        for qd in depths:
            for path in ("block", "passthrough"):
                with open(os.path.join(vm, f"fio-{path}-{qd}.json")) as f:
                    text = f.read()
                fio = json.loads(text[text.index("{"):])["jobs"][0]["read"]["iops"]
                with open(os.path.join(vm, f"tio-{path}-{qd}.txt")) as f:
                    t = tio_iops(f.read())
                with open(os.path.join(vm, f"iogate-{path}-{qd}", "result.json")) as f:
                    step = json.load(f)["steps"][0]
                g = step["metrics"]["iops"]
                kpath = (step.get("submission") or {}).get("path", "-")
                t_s = f"{t:.0f}" if t else "-"
                r_s = f"{g / t:.3f}" if t else "-"
                print(f"| {qd} | {path} | {fio:.0f} | {t_s} | {g:.0f} | {g / fio:.3f} | {r_s} | {kpath} |")


if __name__ == "__main__":
    main()
