#!/usr/bin/env python3
"""The cost of checking protection information on the host (fio issue #1661), in one VM.

Boots scripts/qemu-nvme.sh's VM with a DIX namespace (`ms=8,mset=0,pi=1`: type 1, a
16-bit guard, or --ns-props for another), fills 64 MiB with host-built PI, then reads
it back through /dev/ng0n1 in rounds that interleave the three ways PI can be handled:
`controller` (PRACT 1: the controller checks and strips it, only data travels), `host`
(PRACT 0: the PI travels to the host, the controller checks it) and `host_checked`
(PRACT 0, the controller does not check, iogate recomputes every block's guard and
compares its tags). Each round runs each mode for --runtime seconds at 4 KiB random
(QD 8) and at 128 KiB sequential (QD 4). Prints IOPS per mode and round, and each
mode's median as a ratio to `controller`'s.

Under TCG every guest instruction is emulated, so the CRC the host check computes costs
many times what it costs on a real CPU, while the emulated controller's own check runs
as native QEMU code: the `host_checked` ratio here is a pessimistic bound, not a figure
for real drives.

Usage (root): python3 bench/pi_host_check.py [--runtime 4] [--rounds 3] [--ns-props …]
Needs: a release build and what scripts/qemu-nvme.sh needs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ("controller", "host", "host_checked")
SHAPES = (("random_4k", "4KiB", "100%%", 8), ("sequential_128k", "128KiB", "0%%", 4))


def spec(runtime, rounds):
    s = ("iogate: 1\\nname: pi_cost\\ntarget: { size: 64MiB }\\nsteps:\\n"
         "  - workload: { name: fill, bytes: 64MiB, queue_depth: 8, protection_information: host,"
         " mix: [{ block_size: 128KiB, read: 0%%, random: 0%% }] }\\n")
    for r in range(rounds):
        for shape, bs, random, qd in SHAPES:
            for m in MODES:
                s += (f"  - workload: {{ name: {shape}_{m}_{r}, duration: {runtime}s, queue_depth: {qd},"
                      f" protection_information: {m},"
                      f" mix: [{{ block_size: {bs}, read: 100%%, random: {random} }}] }}\\n")
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runtime", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ns-props", default="ms=8,mset=0,pi=1")
    a = ap.parse_args()
    out = tempfile.mkdtemp(prefix="pi-cost-")
    script = (f"printf '{spec(a.runtime, a.rounds)}' > /tmp/s.yaml; "
              "iogate run /tmp/s.yaml --target /dev/ng0n1 --out /out/run -q; echo $? > /out/rc")
    subprocess.run(["bash", os.path.join(ROOT, "scripts/qemu-nvme.sh"), "--size", "128M",
                    "--ns-props", a.ns_props, "--time-limit", "3000", "--out", out,
                    "--", "sh", "-c", script], check=True)
    r = json.load(open(os.path.join(out, "run/result.json")))
    iops = {}
    for s in r["steps"][1:]:
        shape, rest = s["name"].rsplit("_", 1)[0], s["name"]
        for m in sorted(MODES, key=len, reverse=True):
            if rest.rsplit("_", 1)[0].endswith(m):
                shape = rest.rsplit("_", 1)[0][: -len(m) - 1]
                iops.setdefault((shape, m), []).append(s["metrics"]["read"]["iops"])
                e = s.get("protection_errors") or {}
                if s["metrics"]["errors"]:
                    sys.exit(f"{s['name']}: {s['metrics']['errors']} errors {e}")
                break
    print(f"ns-props {a.ns_props}, {a.rounds} rounds x {a.runtime} s, IOPS per round")
    for shape, *_ in SHAPES:
        base = statistics.median(iops[(shape, "controller")])
        for m in MODES:
            v = iops[(shape, m)]
            med = statistics.median(v)
            print(f"{shape:16} {m:13} {' '.join(f'{x:8.0f}' for x in v)}  median {med:8.0f}"
                  f"  ratio {med / base:.3f}")


if __name__ == "__main__":
    main()
