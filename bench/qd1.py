#!/usr/bin/env python3
"""Queue depth 1 on every kind of target: iogate against fio, alternating, in one run.

At queue depth 1 every microsecond the tool spends between a completion and the next
submission is in the latency it reports and out of the IOPS; a tail figure that carries
the tool's own wait policy is not the drive's. This runs 4 KiB random reads at QD1 with
one job, fio (io_uring, direct, default options and with --fixedbufs --registerfiles)
and iogate alternating PAIRS times on the same device, on each target kind:

- `shm`: a loop device over a file in /dev/shm (buffered: the loop worker reads the page
  cache);
- `shm-direct`: the same with `--direct-io=on` (the loop worker's AIO on tmpfs);
- `zram`: a RAM block device (requests go to io-wq);
- `nbd`: nbdkit's memory plugin behind nbdfuse and a `--direct-io=on` loop device (the
  rig of the nbdkit tests: every request crosses FUSE and a Unix socket);
- `qemu`: QEMU's emulated NVMe controller in the project's TCG VM
  (scripts/qemu-nvme.sh), through the block device (/dev/nvme0n1: fio's io_uring engine)
  and passthrough (/dev/ng0n1: fio's io_uring_cmd engine, iogate's `engine: passthrough`),
  the pairs alternating inside the guest.

Prints per pair the IOPS of each and the ratios, then the table for bench/RESULTS.md:
median IOPS ratio iogate/fio and iogate/fio-fixed (min-max over pairs), and the median
mean total latency ratio (iogate/best fio). fio's latency is its `lat_ns` (total: submit
to completion), iogate's is `latency.mean_ns` (the same span).

Usage (root): python3 bench/qd1.py [--pairs 5] [--runtime 4] [--targets shm,shm-direct,zram,nbd,qemu]
Needs: fio, nbdkit, nbdfuse, losetup, a release build (cargo build --release), and for
qemu what scripts/qemu-nvme.sh needs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_fio  # noqa: E402  (fio, iogate, Shm, Zram)

ROOT = compare_fio.ROOT
IOGATE = compare_fio.IOGATE


class ShmDirect(compare_fio.Shm):
    """A `--direct-io=on` loop device over a file in /dev/shm."""

    def __init__(self, size_mib):
        self.backing = f"/dev/shm/iogate-qd1-{os.getpid()}.img"
        with open(self.backing, "wb") as f:
            f.truncate(size_mib << 20)
        self.dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", self.backing],
                                  check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
        self.label = f"direct-I/O loop device {self.dev} over {self.backing}"


class Nbd:
    """nbdkit's memory plugin behind nbdfuse and a `--direct-io=on` loop device."""

    def __init__(self, size_mib):
        self.work = tempfile.mkdtemp(prefix="iogate-qd1-nbd-")
        sock, self.mnt = os.path.join(self.work, "sock"), os.path.join(self.work, "mnt")
        os.makedirs(self.mnt)
        self.nbdkit = subprocess.Popen(["nbdkit", "-f", "-U", sock, "memory", f"{size_mib}M"])
        wait_for(sock)
        disk = os.path.join(self.mnt, "disk")
        self.fuse = subprocess.Popen(["nbdfuse", disk, "--unix", sock], stderr=subprocess.DEVNULL)
        wait_for(disk)
        self.dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", disk], check=True,
                                  stdout=subprocess.PIPE, text=True).stdout.strip()
        self.label = f"nbdkit memory behind nbdfuse, direct-I/O loop device {self.dev}"

    def close(self):
        subprocess.run(["losetup", "-d", self.dev])
        subprocess.run(["fusermount3", "-u", self.mnt], stderr=subprocess.DEVNULL)
        for p in (self.fuse, self.nbdkit):
            p.terminate()
            p.wait()
        subprocess.run(["rm", "-rf", self.work])


def wait_for(path):
    for _ in range(200):
        if os.path.exists(path):
            return
        time.sleep(0.05)
    sys.exit(f"{path} did not appear")


def summary(kind, pairs):
    """pairs: [(iogate (iops, lat), fio (iops, lat), fio-fixed (iops, lat))]."""
    r_def = [g[0] / f[0] for g, f, _ in pairs]
    r_fix = [g[0] / x[0] for g, _, x in pairs]
    lat = [g[1] / min(f[1], x[1]) for g, f, x in pairs]
    med = lambda v: statistics.median(v)  # noqa: E731
    return (kind, med([g[0] for g, _, _ in pairs]), med([f[0] for _, f, _ in pairs]),
            med([x[0] for _, _, x in pairs]), med(r_def), min(r_def), max(r_def), med(r_fix),
            min(r_fix), max(r_fix), med(lat), min(lat), max(lat))


def host_target(kind, target, args):
    dev = target.dev
    subprocess.run(["fio", "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1M",
                    "--direct=1", "--ioengine=io_uring", "--iodepth=8"], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"{kind}: {target.label}, {args.pairs} pairs x {args.runtime}s", flush=True)
    pairs = []
    with tempfile.TemporaryDirectory() as workdir:
        for _ in range(args.pairs):
            f = compare_fio.fio(dev, "randread", "4k", 1, 1, args.runtime, False)
            x = compare_fio.fio(dev, "randread", "4k", 1, 1, args.runtime, True)
            g = compare_fio.iogate(dev, "randread", "4k", 1, 1, args.runtime, workdir)
            pairs.append(((g[0], g[2]), (f[0], f[2]), (x[0], x[2])))
            print(f"  iogate {g[0]:9.0f} ({g[2] / 1e3:6.1f} us)  fio {f[0]:9.0f} "
                  f"({f[2] / 1e3:6.1f} us)  fio-fixed {x[0]:9.0f} ({x[2] / 1e3:6.1f} us)  "
                  f"ratio {g[0] / f[0]:.3f} / {g[0] / x[0]:.3f}", flush=True)
    return summary(kind, pairs)


def guest_script(pairs, runtime):
    lines = []
    for i in range(pairs):
        for path, dev, engine, u in (("block", "/dev/nvme0n1", "io_uring", 0),
                                     ("passthrough", "/dev/ng0n1", "io_uring_cmd", 1)):
            extra = "--cmd_type=nvme" if u else "--direct=1"
            for fixed in (0, 1):
                opts = " --fixedbufs --registerfiles" if fixed else ""
                lines.append(
                    f"fio --name=b --filename={dev} --ioengine={engine} {extra} --rw=randread "
                    f"--bs=4k --iodepth=1{opts} --time_based --runtime={runtime} --randrepeat=0 "
                    f"--output-format=json > /out/fio{fixed}-{path}-{i}.json")
            engine_line = "      engine: passthrough\\n" if u else ""
            spec = (f"iogate: 1\\nname: b\\nsteps:\\n  - workload:\\n      name: w\\n"
                    f"{engine_line}      queue_depth: 1\\n      duration: {runtime}s\\n"
                    f"      mix: [ {{ block_size: 4KiB, read: 100%%, random: 100%% }} ]\\n")
            lines.append(f"printf '{spec}' > /tmp/s.yaml")
            lines.append(f"iogate run /tmp/s.yaml --target {dev} --out /out/iogate-{path}-{i} -q "
                         "--allow-destructive")
    return "\n".join(lines) + "\n"


def qemu_targets(args):
    print(f"qemu: QEMU NVMe in the TCG VM, {args.pairs} pairs x {args.runtime}s", flush=True)
    with tempfile.TemporaryDirectory() as out:
        vm = os.path.join(out, "vm")
        cmd = ["bash", os.path.join(ROOT, "scripts", "qemu-nvme.sh"), "--size", "256M",
               "--iogate", IOGATE, "--extra", subprocess.check_output(["which", "fio"], text=True)
               .strip(), "--out", vm, "--time-limit", str(args.pairs * args.runtime * 8 + 300),
               "--", "sh", "-c", guest_script(args.pairs, args.runtime)]
        if subprocess.run(cmd).returncode != 0:
            sys.exit(f"the VM run failed; see {vm}/console.log")
        rows = []
        for path, side in (("block", "read"), ("passthrough", "read")):
            pairs = []
            for i in range(args.pairs):
                fios = []
                for fixed in (0, 1):
                    with open(os.path.join(vm, f"fio{fixed}-{path}-{i}.json")) as f:
                        text = f.read()
                    job = json.loads(text[text.index("{"):])["jobs"][0][side]
                    fios.append((job["iops"], job["lat_ns"]["mean"]))
                with open(os.path.join(vm, f"iogate-{path}-{i}", "result.json")) as f:
                    m = json.load(f)["steps"][0]["metrics"]
                g = (m["iops"], m["latency"]["mean_ns"])
                pairs.append((g, fios[0], fios[1]))
                print(f"  {path}: iogate {g[0]:7.0f} ({g[1] / 1e3:6.1f} us)  fio {fios[0][0]:7.0f} "
                      f"({fios[0][1] / 1e3:6.1f} us)  fio-fixed {fios[1][0]:7.0f} "
                      f"({fios[1][1] / 1e3:6.1f} us)", flush=True)
            rows.append(summary(f"qemu-{path}", pairs))
        return rows


def print_table(rows):
    print("\n| target | iogate IOPS | fio IOPS | fio-fixed IOPS | iogate / fio (min-max) | "
          "iogate / fio-fixed (min-max) | mean latency iogate / best fio (min-max) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for k, g, f, x, r, rl, rh, q, ql, qh, lt, ll, lh in rows:
        print(f"| {k} | {g:,.0f} | {f:,.0f} | {x:,.0f} | {r:.3f} ({rl:.3f}-{rh:.3f}) | "
              f"{q:.3f} ({ql:.3f}-{qh:.3f}) | {lt:.3f} ({ll:.3f}-{lh:.3f}) |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=4)
    ap.add_argument("--size-mib", type=int, default=512)
    ap.add_argument("--targets", default="shm,shm-direct,zram,nbd,qemu")
    args = ap.parse_args()
    if not os.path.exists(IOGATE):
        sys.exit("build first: cargo build --release")
    kinds = {"shm": compare_fio.Shm, "shm-direct": ShmDirect, "zram": compare_fio.Zram,
             "nbd": Nbd}
    rows = []
    for kind in args.targets.split(","):
        if kind == "qemu":
            rows += qemu_targets(args)
            continue
        target = kinds[kind](args.size_mib)
        try:
            rows.append(host_target(kind, target, args))
        finally:
            target.close()
    print_table(rows)


if __name__ == "__main__":
    main()
