#!/usr/bin/env bash
# Installs what iogate's build and tests need on a bare Debian machine, each package
# detected by the command or file that uses it (Slurm and munge: tests/campaign.rs): losetup (mount),
# mkfs.ext4 and e2fsck (e2fsprogs), fio (measurement agreement tests and benchmarks),
# headless Chromium (the HTML report is screenshotted in tests/browser.rs), xmllint
# (libxml2-utils: JUnit XML is validated against tests/schema/junit.xsd in tests/gate.rs).
# Idempotent; needs root for apt-get.
set -euo pipefail
need=()
command -v losetup >/dev/null 2>&1 || need+=(mount)
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
command -v e2fsck >/dev/null 2>&1 || need+=(e2fsprogs)
command -v fio >/dev/null 2>&1 || need+=(fio)
# fio's example job files, converted by tests/import.rs (GPL: read at test time only).
[ -e /usr/share/doc/fio/examples/fio-rand-read.fio ] || need+=(fio-examples)
command -v chromium-headless-shell >/dev/null 2>&1 || need+=(chromium-headless-shell)
command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
# Building iogate needs the Rust toolchain and a C compiler with the C library's headers
# (zstd, lz4 and SQLite are compiled from their bundled sources by the cc crate); no
# other headers, no libclang, no pkg-config. Each is detected by what the build runs.
command -v cc >/dev/null 2>&1 || need+=(gcc)
[ -e /usr/include/stdio.h ] || need+=(libc6-dev)
# The destructive-write guard runs util-linux's wipefs at run time; the guard tests make
# minix and bfs file systems with its mkfs.minix and mkfs.bfs.
command -v wipefs >/dev/null 2>&1 || [ -x /sbin/wipefs ] || need+=(util-linux)
command -v mkfs.minix >/dev/null 2>&1 || [ -x /sbin/mkfs.minix ] || need+=(util-linux)
# The Debian package (scripts/deb.sh, checked by tests/package.rs): dpkg-shlibdeps
# finds the shared libraries the binary needs.
command -v dpkg-shlibdeps >/dev/null 2>&1 || need+=(dpkg-dev)
# The loop driver is loaded with modprobe when its control node is missing.
command -v modprobe >/dev/null 2>&1 || [ -x /sbin/modprobe ] || need+=(kmod)
# A faulty device for tests/faults.rs: nbdkit (ddrescue, error, delay filters) through
# nbdfuse (libnbd-bin) and FUSE.
command -v nbdkit >/dev/null 2>&1 || need+=(nbdkit)
command -v nbdfuse >/dev/null 2>&1 || need+=(libnbd-bin)
# tests/powercut.rs compiles its faulty drive (tests/powercut/dropwrite.c) with nbdkit's
# cc plugin, which needs the plugin header.
[ -e /usr/include/nbdkit-plugin.h ] || need+=(nbdkit-plugin-dev)
command -v fusermount3 >/dev/null 2>&1 || need+=(fuse3)
# A real NVMe controller for tests/nvme.rs: QEMU's emulated one in a TCG VM booted by
# scripts/qemu-nvme.sh (Debian's kernel, a busybox initramfs packed with cpio).
# Installed without their recommendations (QEMU's recommend graphical front ends).
# QEMU 10 from Debian's bookworm-backports suite, not bookworm's 7.2: the NVMe features
# the drive tests reach (Flexible Data Placement, the OCP extended SMART log C0h with
# `ocp=on`, atomic write units, 64-bit protection-information guards) arrived after 7.2.
vm=()
backports=()
qemu_major=$({ qemu-system-x86_64 --version 2>/dev/null || true; } | awk 'NR == 1 {split($4, v, "."); print v[1]}')
if [ "${qemu_major:-0}" -lt 10 ]; then
  backports+=(qemu-system-x86)
fi
compgen -G "/boot/vmlinuz-*" >/dev/null || vm+=(linux-image-amd64)
[ -x /bin/busybox ] || vm+=(busybox-static)
command -v cpio >/dev/null 2>&1 || vm+=(cpio)
# The history store's PostgreSQL backend (tests/history.rs starts its own server from
# the Debian packages' binaries) and Python's venv for Apache Otava (the reference
# change-point detector the history test compares with).
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
# A one-node Slurm cluster for tests/campaign.rs (the test starts munged, slurmctld and
# slurmd itself, with its own key, socket, ports and state; no service is enabled).
[ -x /usr/sbin/slurmctld ] || need+=(slurmctld)
[ -x /usr/sbin/slurmd ] || need+=(slurmd)
command -v sbatch >/dev/null 2>&1 || need+=(slurm-client)
[ -x /usr/sbin/munged ] || need+=(munge)
python3 -c 'import venv' >/dev/null 2>&1 || need+=(python3-venv)

if ((${#need[@]} + ${#vm[@]} + ${#backports[@]})); then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing ${need[*]} ${vm[*]} ${backports[*]}; run as root (or: sudo bash scripts/setup.sh) to install them" >&2
    exit 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ((${#backports[@]})) && ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
    cat > /etc/apt/sources.list.d/iogate-bookworm-backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  apt-get update -qq
  if ((${#need[@]})); then
    apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  if ((${#vm[@]})); then
    apt-get install -y -qq --no-install-recommends "${vm[@]}" >/dev/null
  fi
  if ((${#backports[@]})); then
    apt-get install -y -qq --no-install-recommends -t bookworm-backports "${backports[@]}" >/dev/null
  fi
fi
# Apache Otava from PyPI, in its own venv (its pinned numpy and scipy stay out of the
# system's Python).
OTAVA=/opt/iogate-otava
if [ "$(id -u)" = 0 ] && ! "$OTAVA/bin/python" -c 'import otava' >/dev/null 2>&1; then
  command -v python3 >/dev/null 2>&1 || apt-get install -y -qq python3 python3-venv >/dev/null
  python3 -m venv "$OTAVA"
  "$OTAVA/bin/pip" install -q --disable-pip-version-check apache-otava==0.8.0
fi
# check-jsonschema from PyPI, in its own venv: validates the shipped specs, results and
# baselines against schema/*.json, and the CI recipes against GitHub's and GitLab's
# schemas (it ships both).
CJS=/opt/iogate-check-jsonschema
if [ "$(id -u)" = 0 ] && ! "$CJS/bin/check-jsonschema" --version >/dev/null 2>&1; then
  python3 -m venv "$CJS"
  "$CJS/bin/pip" install -q --disable-pip-version-check check-jsonschema==0.39.0
fi
# kubernetes-validate from PyPI, in its own venv: checks ci/kubernetes/ against the
# Kubernetes API's schemas (it ships them), strictly (an unknown field is an error).
KV=/opt/iogate-kubernetes-validate
if [ "$(id -u)" = 0 ] && ! "$KV/bin/kubernetes-validate" --version >/dev/null 2>&1; then
  python3 -m venv "$KV"
  "$KV/bin/pip" install -q --disable-pip-version-check kubernetes-validate==1.37.0
fi
# Loop devices need the loop driver's control node.
if [ "$(id -u)" = 0 ] && [ ! -e /dev/loop-control ]; then
  modprobe loop 2>/dev/null || true
fi
echo "setup: ok"
