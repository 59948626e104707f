#!/usr/bin/env bash
# Boots a small VM with QEMU's emulated NVMe controller and runs one command in it.
#
#   scripts/qemu-nvme.sh [--size 256M] [--serial SERIAL] [--nvme-props 'k=v,…'] [--ns-props 'k=v,…']
#                        [--subsys-props 'k=v,…']
#                        [--mem 1024] [--iogate PATH] [--extra PATH]… [--out DIR]
#                        [--on-trigger 'HMP COMMAND'] [--controllers N] [--throttle I:IOPS]…
#                        [--numa] [--time-limit SECONDS] [--image PATH | --nbd SOCKET]
#                        [--on-trigger-exec 'HOST COMMAND'] [--namespace 'IMAGE,k=v,…']…
#                        [--sata | --scsi] -- COMMAND [ARGS…]
#
# The guest: the host's Debian kernel (linux-image-amd64) under TCG (no KVM needed), an
# initramfs with busybox, the nvme/nvme-core modules and their dependencies, `iogate`
# (default target/release/iogate, with the shared libraries it links) and util-linux's
# wipefs (the destructive-write guard's probe) on PATH, and the
# repository's specs in /specs; each --extra binary (e.g. fio, for benchmarks) is on PATH too,
# with its shared libraries. The NVMe namespace is a fresh raw image of --size bytes
# (zeros), on `-device nvme,serial=SERIAL,drive=…,<nvme-props>`; it is /dev/nvme0n1 (and
# /dev/ng0n1, its generic character device). With --ns-props the image is a namespace
# device of its own, `-device nvme-ns,drive=…,nsid=1,<ns-props>` (e.g. `zoned=true`).
# With --subsys-props the controller belongs to an NVMe subsystem device,
# `-device nvme-subsys,id=subsys0,<subsys-props>` (e.g. `fdp=on,fdp.nruh=8` for Flexible
# Data Placement, with `--ns-props fdp.ruhs=0-7`), and the namespace is an nvme-ns.
# COMMAND may load null_blk or scsi_debug (with sd_mod) with `vm-modprobe NAME [PARAM=VALUE…]`
# (e.g. `vm-modprobe null_blk zoned=1`, `vm-modprobe scsi_debug zbc=managed`): zoned and
# SCSI disks beside the NVMe namespace.
# COMMAND runs with /out as its working directory; what it writes under /out is copied
# back to --out DIR (tar + base64 over a second serial port), and the script exits with
# COMMAND's exit code (3 if the guest never reported one). The guest's console log is
# in DIR/console.log (or a temporary file, printed when the guest fails).
#
# --image PATH backs the (first) namespace with PATH instead of a fresh image, created
# at --size when missing and kept: a second boot sees what the first wrote (with
# metadata formats QEMU keeps each block's metadata after all the data).
# --nbd SOCKET backs the (first) namespace with the NBD server on that Unix socket
# (QEMU's NBD client, `-drive driver=nbd,…`; the server must be listening at boot).
# When the server goes away, the namespace's I/O fails (the guest's NVMe driver sees
# error completions) until a server listens on the socket again: the next request
# reconnects. With nbdkit's cache filter in writeback mode behind it, killing nbdkit is
# a power cut of a drive with a volatile write cache, whose flushes and FUA writes come
# from the kernel's NVMe driver.
# --namespace IMAGE,PROPS gives the (one) controller a namespace backed by IMAGE (created
# at --size when missing and kept, as --image), `-device nvme-ns,drive=…,nsid=K,PROPS`;
# repeatable: nsid 1, 2, … in order, /dev/nvme0n1, /dev/nvme0n2, … (and /dev/ng0nK), so
# one boot carries several formats. It replaces the fresh namespace and goes with neither
# --controllers, --ns-props, --subsys-props, --image nor --nbd.
# --sata puts a SATA disk on an AHCI controller in the guest (`-device ahci` + `ide-hd`,
# serial iogate-sata-0), --scsi a SCSI disk on a virtio-scsi controller (`scsi-hd`,
# serial iogate-scsi-0), each on a fresh raw image of --size bytes, beside the NVMe
# namespace; the guest loads its driver (libata's ahci, or virtio_scsi, with sd_mod)
# and the command starts once the disk is /dev/sda.
# --time-limit bounds COMMAND (default 1200 s): past it, the guest writes every busy
# task's state, wait channel and kernel stack and the kernel log's tail to the console, kills
# COMMAND and reports exit code 124 ("qemu-nvme: COMMAND ran past …" on stderr, with that
# dump), so a hang costs minutes and says where it hung. QEMU itself is stopped 600 s
# later if the guest never answers. A namespace or disk still missing 60 s into the boot
# is exit code 125 without running COMMAND (the console names what is missing).
#
# --controllers N gives the guest N controllers, each with one namespace on an image of
# its own: serials iogate-nvme-0 … iogate-nvme-(N−1) (or --serial with -0, -1, … appended),
# device ids nvme0 …; the command starts once all N namespaces are there. --throttle I:IOPS
# caps controller I's drive with QEMU's block throttling (`throttling.iops-total`), a
# slower drive among its peers; repeatable. --numa gives the guest two NUMA nodes (one
# vCPU and half the memory each) and puts controller I behind a PCI expander bridge of
# node I mod 2 (and a PCI bridge under it: pxb takes only bridges), so its PCI device's
# numa_node is I mod 2 (devices on the root bus would have none).
#
# --on-trigger changes the controller while COMMAND runs: when the guest writes a line
# `IOGATE-TRIGGER` to /dev/ttyS1, the HMP command is sent to QEMU's monitor (the NVMe
# device's id is `nvme0`), e.g. 'qom-set /machine/peripheral/nvme0 smart_critical_warning 2'.
#
# --on-trigger-exec runs a host shell command (sh -c) each time the guest writes a line
# `IOGATE-TRIGGER` to /dev/ttyS1, with IOGATE_TRIGGER_COUNT=1, 2, … in its environment
# (e.g. kill the --nbd server and start it again: a power cycle).
#
# The initramfs (all but the command) and the decompressed kernel are cached in
# $IOGATE_VM_CACHE (default $CARGO_TARGET_DIR or target/, under qemu-nvme-initrd/), keyed
# by the hash of everything that goes into them; the six images used last are kept.
#
# Needs qemu-system-x86, linux-image-amd64 and busybox-static (scripts/setup.sh); lz4
# (optional) packs the initramfs smaller.
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."
extras=()
size=256M serial="" props="" nsprops="" subsysprops="" mem=1024 iogate=target/release/iogate out="" trigger=""
nbd="" trigger_exec="" disk=""
controllers=1
throttles=()
namespaces=()
numa=0
limit=1200
# A value-taking option as the last argument, or followed by nothing.
value() { [ $# -ge 2 ] || { echo "qemu-nvme: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --size) value "$@"; size=$2; shift 2 ;;
    --serial) value "$@"; serial=$2; shift 2 ;;
    --nvme-props) value "$@"; props=$2; shift 2 ;;
    --ns-props) value "$@"; nsprops=$2; shift 2 ;;
    --subsys-props) value "$@"; subsysprops=$2; shift 2 ;;
    --mem) value "$@"; mem=$2; shift 2 ;;
    --iogate) value "$@"; iogate=$2; shift 2 ;;
    --extra) value "$@"; extras+=("$2"); shift 2 ;;
    --out) value "$@"; out=$2; shift 2 ;;
    --on-trigger) value "$@"; trigger=$2; shift 2 ;;
    --controllers) value "$@"; controllers=$2; shift 2 ;;
    --throttle) value "$@"; throttles+=("$2"); shift 2 ;;
    --numa) numa=1; shift ;;
    --time-limit) value "$@"; limit=$2; shift 2 ;;
    --image) value "$@"; image=$2; shift 2 ;;
    --nbd) value "$@"; nbd=$2; shift 2 ;;
    --on-trigger-exec) value "$@"; trigger_exec=$2; shift 2 ;;
    --namespace) value "$@"; namespaces+=("$2"); shift 2 ;;
    --sata|--scsi)
      [ -z "$disk" ] || { echo "qemu-nvme: --sata and --scsi each put the one disk /dev/sda: give one" >&2; exit 2; }
      disk=${1#--}; shift ;;
    --) shift; break ;;
    *) echo "qemu-nvme: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "qemu-nvme: no command (… -- COMMAND)" >&2; exit 2; }
# Each number a whole decimal in its range (QEMU and bash arithmetic would take 0, -1,
# 08 or 1e3 their own way, or loop for hours).
whole() { # NAME VALUE MIN MAX
  [[ $2 =~ ^[0-9]{1,9}$ ]] && [ $((10#$2)) -ge "$3" ] && [ $((10#$2)) -le "$4" ] \
    || { echo "qemu-nvme: $1 $2: expected a whole number from $3 to $4" >&2; exit 2; }
}
whole --controllers "$controllers" 1 32
whole --mem "$mem" 128 65536
whole --time-limit "$limit" 1 86400
controllers=$((10#$controllers)) mem=$((10#$mem)) limit=$((10#$limit))
[[ $size =~ ^[1-9][0-9]{0,15}[KMGT]?$ ]] \
  || { echo "qemu-nvme: --size $size: expected bytes above 0, with an optional K, M, G or T" >&2; exit 2; }
for t in "${throttles[@]}"; do
  [[ $t =~ ^[0-9]+:[1-9][0-9]{0,8}$ ]] && [ $((10#${t%%:*})) -lt "$controllers" ] \
    || { echo "qemu-nvme: --throttle $t: expected CONTROLLER:IOPS, a controller from 0 to $((controllers - 1)) and IOPS above 0" >&2; exit 2; }
done
seen_images=" "
for ns in "${namespaces[@]}"; do
  img=${ns%%,*}
  [ -n "$img" ] || { echo "qemu-nvme: --namespace $ns: no IMAGE before the properties" >&2; exit 2; }
  case "$seen_images" in
    *" $(realpath -m "$img") "*) echo "qemu-nvme: --namespace $img twice: one image backs one namespace" >&2; exit 2 ;;
  esac
  seen_images+="$(realpath -m "$img") "
done
if [ ${#namespaces[@]} -gt 0 ] && { [ "$controllers" != 1 ] || [ -n "$nsprops$subsysprops$nbd${image:-}" ]; }; then
  echo "qemu-nvme: --namespace goes with neither --controllers, --ns-props, --subsys-props, --image nor --nbd" >&2
  exit 2
fi
kernel=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
[ -n "$kernel" ] || { echo "qemu-nvme: no kernel in /boot (apt-get install linux-image-amd64)" >&2; exit 2; }
kver=${kernel#/boot/vmlinuz-}
command -v qemu-system-x86_64 >/dev/null || { echo "qemu-nvme: qemu-system-x86_64 missing" >&2; exit 2; }
busybox=/bin/busybox  # busybox-static: no shared libraries to carry into the guest
[ -x "$busybox" ] || { echo "qemu-nvme: busybox-static missing" >&2; exit 2; }
[ -x "$iogate" ] || { echo "qemu-nvme: $iogate is not built" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The guest's files but this boot's command: (host file, guest path) pairs, packed once
# into a base initramfs cached under the hash of every input (each file's content and
# guest path, the kernel version, this script with the guest's init); the command, its
# time limit and the namespace count go into a small uncompressed cpio of their own put
# before it (Linux unpacks concatenated archives in order; nothing may follow an lz4 one).
# lz4 (legacy frames, as the kernel wants them) unpacks in the guest in a quarter of
# gzip's time; without lz4 on the host the base is left uncompressed.
wipefs=$(command -v wipefs || echo /sbin/wipefs)
[ -x "$wipefs" ] || { echo "qemu-nvme: wipefs (util-linux) missing" >&2; exit 2; }
extras+=("$wipefs")
# blkzone (util-linux): the drive's own zone report and zone commands, beside iogate's.
blkzone=$(command -v blkzone || echo /usr/sbin/blkzone)
[ -x "$blkzone" ] || { echo "qemu-nvme: blkzone (util-linux) missing" >&2; exit 2; }
extras+=("$blkzone")
srcs=("$busybox") dsts=(bin/busybox)
# The NVMe driver and its dependencies, in load order (modprobe resolves them on the
# host for the guest's kernel version).
n=0
for ko in $(modprobe -S "$kver" --show-depends nvme | awk '$1 == "insmod" {print $2}' | awk '!seen[$0]++'); do
  n=$((n + 1))
  name=$(basename "$ko"); name=${name%.xz}; name=${name%.zst}
  srcs+=("$ko") dsts+=("modules/$(printf %02d $n)-$name")
done
# Drivers a command loads itself with `vm-modprobe NAME [PARAM=VALUE…]`: null_blk and
# scsi_debug (with sd_mod, so its disk is /dev/sdX), each with its dependencies in load
# order under /modules/extra/NAME/, the module itself last.
for mod in null_blk "scsi_debug sd_mod" "ahci sd_mod" "virtio_scsi virtio_pci sd_mod"; do
  dir=${mod%% *} n=0
  for ko in $(for m in $mod; do modprobe -S "$kver" --show-depends "$m"; done | awk '$1 == "insmod" {print $2}' | awk '!seen[$0]++' | grep -v "/$dir\.ko"; \
              modprobe -S "$kver" --show-depends "$dir" | awk '$1 == "insmod" {print $2}' | tail -1); do
    n=$((n + 1))
    name=$(basename "$ko"); name=${name%.xz}; name=${name%.zst}
    srcs+=("$ko") dsts+=("modules/extra/$dir/$(printf %02d $n)-$name")
  done
done
# iogate and the shared libraries it links, at the same paths; util-linux's wipefs too
# (the destructive-write guard runs it before a writing plan touches the namespace).
srcs+=("$iogate") dsts+=(usr/bin/iogate)
for bin in "$iogate" "${extras[@]}"; do
  [ "$bin" = "$iogate" ] || { srcs+=("$bin"); dsts+=("usr/bin/$(basename "$bin")"); }
  for lib in $(ldd "$bin" | grep -oE '/[^ ]+' | sort -u); do
    srcs+=("$lib") dsts+=("${lib#/}")
  done
done
while IFS= read -r f; do srcs+=("$f") dsts+=("$f"); done < <(find specs -type f | sort)
key=$({ echo "$kver"; printf '%s\n' "${dsts[@]}"; sha256sum "$self" "${srcs[@]}" | cut -d' ' -f1; } | sha256sum | cut -c1-32)
cache=${IOGATE_VM_CACHE:-${CARGO_TARGET_DIR:-target}/qemu-nvme-initrd}
mkdir -p "$cache"
trap 'rm -rf "$work" "$cache"/*.$$.tmp' EXIT
pack=(lz4 -l -1 -q) ext=lz4
command -v lz4 >/dev/null || pack=(cat) ext=raw
base=$cache/$key.cpio.$ext
if [ ! -e "$base" ]; then
  root=$work/root
  mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,out,specs,modules,lib64,usr/bin}
  for i in "${!srcs[@]}"; do
    src=${srcs[$i]} dst=$root/${dsts[$i]}
    mkdir -p "$(dirname "$dst")"
    case "$src" in
      *.ko.xz) xz -dc "$src" > "$dst" ;;
      *.ko.zst) zstd -dcq "$src" > "$dst" ;;
      *) cp -L "$src" "$dst" ;;
    esac
  done
  for app in $("$root/bin/busybox" --list); do
    [ -e "$root/bin/$app" ] || ln -s busybox "$root/bin/$app"
  done
  cat > "$root/init" <<'INIT'
#!/bin/sh
export PATH=/usr/bin:/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
for m in /modules/*.ko; do insmod "$m" 2>/dev/null; done
want=$(cat /namespaces)
count() { ls /dev | grep -cE "^$1[0-9]+n[0-9]+\$"; }
i=0
while { [ "$(count nvme)" -lt "$want" ] || [ "$(count ng)" -lt "$want" ]; } && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
# A device that never came is the boot's failure (exit 125), not a minute's silent wait.
missing=""
[ "$(count nvme)" -ge "$want" ] && [ "$(count ng)" -ge "$want" ] || missing="$want NVMe namespaces"
if [ -s /disk ]; then
  # --sata or --scsi: the disk's driver, and the disk as /dev/sda.
  case $(cat /disk) in sata) vm-modprobe ahci ;; scsi) vm-modprobe virtio_scsi ;; esac
  i=0
  while [ ! -b /dev/sda ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  [ -b /dev/sda ] || missing="$missing /dev/sda ($(cat /disk))"
fi
cd /out
set --
while IFS= read -r a; do set -- "$@" "$(echo "$a" | base64 -d)"; done < /command.args
if [ -n "$missing" ]; then
  echo "qemu-nvme: after 60 s the guest still lacks: $missing; it has: $(ls /dev | grep -E '^(nvme|ng|sd)' | tr '\n' ' ')"
  (exit 125) &
else
  echo "qemu-nvme: running $*"
  "$@" &
fi
pid=$!
limit=$(cat /time-limit)
(
  sleep "$limit"
  [ -d "/proc/$pid" ] || exit 0
  echo "qemu-nvme: the command ran past ${limit} s; every task not idle:"
  for t in /proc/[0-9]*/task/[0-9]*; do
    state=$(grep '^State' "$t/status" 2>/dev/null)
    case "$state" in *idle*) continue ;; esac
    echo "== ${t#/proc/} $(cat "$t/comm" 2>/dev/null) $state wchan=$(cat "$t/wchan" 2>/dev/null)"
    cat "$t/stack" 2>/dev/null
  done
  echo "qemu-nvme: kernel log:"
  dmesg | tail -40
  touch /timed-out
  kill -9 -1  # every process but init (this one, too)
) &
watch=$!
wait "$pid"
rc=$?
kill "$watch" 2>/dev/null
[ -e /timed-out ] && rc=124
echo "qemu-nvme: exit $rc"
{
  echo "IOGATE-OUT-BEGIN $rc"
  tar czf - -C /out . | base64
  echo "IOGATE-OUT-END"
} > /dev/ttyS1
sync
poweroff -f
INIT
  chmod +x "$root/init"
  cat > "$root/usr/bin/vm-modprobe" <<'MODPROBE'
#!/bin/sh
# vm-modprobe NAME [PARAM=VALUE…]: loads NAME's dependencies, then NAME with the parameters.
dir=/modules/extra/$1
[ -d "$dir" ] || { echo "vm-modprobe: no module $1 in this VM" >&2; exit 2; }
shift
last=$(ls "$dir" | tail -1)
for m in $(ls "$dir"); do
  [ "$m" = "$last" ] || { insmod "$dir/$m" 2>/dev/null; continue; }
  insmod "$dir/$m" "$@" || exit 1
done
MODPROBE
  chmod +x "$root/usr/bin/vm-modprobe"
  # Written beside its final name and renamed: a concurrent boot sees it whole or not at all.
  if ! (cd "$root" && find . | cpio -o -H newc --quiet | "${pack[@]}") > "$base.$$.tmp" \
    || ! mv -f "$base.$$.tmp" "$base"; then
    echo "qemu-nvme: cannot write the initramfs to $cache (a full or read-only file system?); set IOGATE_VM_CACHE to a directory with room" >&2
    exit 2
  fi
  # Keeps the six images used last; an older one goes once unused for 10 minutes.
  ls -1t "$cache"/*.cpio.* | tail -n +7 | while read -r old; do
    find "$old" -mmin +10 -delete 2>/dev/null || true
  done
fi
touch "$base"
boot=$work/boot
mkdir -p "$boot"
# One argument per line, base64-encoded: arguments may hold newlines (a script for sh -c).
for a in "$@"; do printf '%s' "$a" | base64 -w0; echo; done > "$boot/command.args"
echo "$((${#namespaces[@]} > 0 ? ${#namespaces[@]} : controllers))" > "$boot/namespaces"
echo "$limit" > "$boot/time-limit"
printf %s "$disk" > "$boot/disk"  # empty without --sata/--scsi: the guest waits for no disk
(cd "$boot" && find . -mindepth 1 | cpio -o -H newc --quiet) | cat - "$base" > "$work/initrd"
# The kernel, decompressed once on the host: a kernel built with PVH boots its ELF image
# directly (QEMU's PVH entry), which skips the in-guest decompression (about half of a
# trivial boot's CPU time under TCG). Cached under the kernel's hash; without PVH, or
# when no xz/zstd/gzip payload decompresses to an ELF image, the bzImage boots as before.
boot_kernel=$kernel
if grep -q '^CONFIG_PVH=y' "/boot/config-$kver" 2>/dev/null; then
  elf=$cache/vmlinux-$(sha256sum "$kernel" | cut -c1-32)
  if [ ! -s "$elf" ]; then
    for magic in '\xfd7zXZ:xz -dcq' '\x28\xb5\x2f\xfd:zstd -dcq' '\x1f\x8b\x08:gzip -dcq'; do
      at=$(LC_ALL=C grep -abo "$(printf "${magic%%:*}")" "$kernel" | head -1 | cut -d: -f1) || true
      [ -n "$at" ] || continue
      tail -c +$((at + 1)) "$kernel" | ${magic#*:} > "$elf.$$.tmp" 2>/dev/null || true
      if [ "$(head -c 4 "$elf.$$.tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
        mv -f "$elf.$$.tmp" "$elf"
        break
      fi
    done
    rm -f "$elf.$$.tmp"
  fi
  [ -s "$elf" ] && boot_kernel=$elf
fi

console=$work/console.log
[ -n "$out" ] && mkdir -p "$out" && console=$out/console.log
# One image, drive and controller per --controllers; the first keeps the ids `nvm` and
# `nvme0` (--on-trigger's commands name them).
drives=()
machine=(-smp 1 -m "$mem")
if [ "$numa" = 1 ]; then
  half=$((mem / 2))
  machine=(-smp 2 -m "$mem"
    -object "memory-backend-ram,id=m0,size=${half}M" -object "memory-backend-ram,id=m1,size=$((mem - half))M"
    -numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1
    -device pxb,id=pxb0,bus_nr=64,numa_node=0,bus=pci.0
    -device pci-bridge,id=br0,bus=pxb0,chassis_nr=1
    -device pxb,id=pxb1,bus_nr=128,numa_node=1,bus=pci.0
    -device pci-bridge,id=br1,bus=pxb1,chassis_nr=2)
fi
for ((c = 0; c < controllers; c++)); do
  drive=nvm; [ "$c" -gt 0 ] && drive=nvm$c
  sn=${serial:-iogate-nvme}-$c
  [ -n "$serial" ] && [ "$controllers" -eq 1 ] && sn=$serial
  throttle=""
  for t in "${throttles[@]}"; do
    [ "${t%%:*}" = "$c" ] && throttle=",throttling.iops-total=${t#*:}"
  done
  img=$work/nvme$c.img
  if [ "$c" -eq 0 ] && [ -n "${image:-}" ]; then
    img=$image  # kept across boots: created at --size when missing
    [ -e "$img" ] || truncate -s "$size" "$img"
  else
    truncate -s "$size" "$img"
  fi
  if [ "$c" -eq 0 ] && [ -n "$nbd" ]; then
    drives+=(-drive "driver=nbd,server.type=unix,server.path=$nbd,if=none,id=$drive$throttle")
  else
    drives+=(-drive "file=$img,if=none,id=$drive,format=raw$throttle")
  fi
  if [ ${#namespaces[@]} -gt 0 ]; then
    drives=(-device "nvme,id=nvme0,serial=$sn${props:+,$props}")
    k=0
    for ns in "${namespaces[@]}"; do
      k=$((k + 1))
      img=${ns%%,*} nsp=""
      [ "$img" = "$ns" ] || nsp=${ns#*,}
      [ -e "$img" ] || truncate -s "$size" "$img"
      id=nvm; [ "$k" -gt 1 ] && id=nvm-ns$k
      drives+=(-drive "file=$img,if=none,id=$id,format=raw")
      drives+=(-device "nvme-ns,drive=$id,nsid=$k${nsp:+,$nsp}")
    done
  elif [ -n "$subsysprops" ]; then
    [ "$c" -eq 0 ] && drives+=(-device "nvme-subsys,id=subsys0,nqn=iogate-subsys,$subsysprops")
    drives+=(-device "nvme,id=nvme$c,serial=$sn,subsys=subsys0${props:+,$props}")
    drives+=(-device "nvme-ns,drive=$drive,nsid=$((c + 1))${nsprops:+,$nsprops}")
  elif [ -n "$nsprops" ]; then
    drives+=(-device "nvme,id=nvme$c,serial=$sn${props:+,$props}")
    drives+=(-device "nvme-ns,drive=$drive,nsid=1,$nsprops")
  else
    bus=""
    [ "$numa" = 1 ] && bus=",bus=br$((c % 2)),addr=$((c / 2 + 1))"
    drives+=(-device "nvme,id=nvme$c,serial=$sn,drive=$drive${props:+,$props}$bus")
  fi
done
if [ -n "$disk" ]; then
  truncate -s "$size" "$work/disk.img"
  drives+=(-drive "file=$work/disk.img,if=none,id=disk0,format=raw")
  if [ "$disk" = sata ]; then
    drives+=(-device ahci,id=ahci0 -device "ide-hd,drive=disk0,bus=ahci0.0,serial=iogate-sata-0")
  else
    drives+=(-device virtio-scsi-pci,id=scsi0 -device "scsi-hd,drive=disk0,bus=scsi0.0,serial=iogate-scsi-0")
  fi
fi
monitor=(-monitor none)
if [ -n "$trigger" ]; then
  # QEMU's monitor on a pair of FIFOs (pipe:NAME opens NAME.in and NAME.out).
  mkfifo "$work/mon.in" "$work/mon.out"
  monitor=(-monitor "pipe:$work/mon")
  touch "$work/data.txt"
  (
    cat "$work/mon.out" >/dev/null &
    exec 3>"$work/mon.in"
    until grep -q IOGATE-TRIGGER "$work/data.txt" 2>/dev/null; do
      [ -e "$work/qemu.done" ] && exit 0
      sleep 0.1
    done
    echo "$trigger" >&3
    until [ -e "$work/qemu.done" ]; do sleep 0.1; done
  ) &
  watcher=$!
fi
if [ -n "$trigger_exec" ]; then
  touch "$work/data.txt"
  (
    fired=0
    until [ -e "$work/qemu.done" ]; do
      seen=$(grep -c IOGATE-TRIGGER "$work/data.txt" 2>/dev/null || true)
      while [ "${seen:-0}" -gt "$fired" ]; do
        fired=$((fired + 1))
        IOGATE_TRIGGER_COUNT=$fired sh -c "$trigger_exec" </dev/null >&2 || echo "qemu-nvme: --on-trigger-exec failed (trigger $fired)" >&2
      done
      sleep 0.05
    done
  ) &
  exec_watcher=$!
fi
set +e
timeout $((limit + 600)) qemu-system-x86_64 -accel tcg -cpu max "${machine[@]}" -nographic -no-reboot -nic none \
  -kernel "$boot_kernel" -initrd "$work/initrd" \
  -append "console=ttyS0 panic=-1 quiet loglevel=5" \
  "${drives[@]}" \
  -serial "file:$console" -serial "file:$work/data.txt" "${monitor[@]}" \
  </dev/null >/dev/null 2>"$work/qemu.err"
qemu_rc=$?
touch "$work/qemu.done"
[ -n "$trigger" ] && wait "$watcher" 2>/dev/null
[ -n "$trigger_exec" ] && wait "$exec_watcher" 2>/dev/null
set -e
rc=$(tr -d '\r' < "$work/data.txt" 2>/dev/null | awk '$1 == "IOGATE-OUT-BEGIN" {print $2}' | tail -1)
if [ -z "$rc" ]; then
  echo "qemu-nvme: the guest reported no exit code (qemu exit $qemu_rc)" >&2
  cat "$work/qemu.err" >&2
  tail -40 "$console" >&2
  exit 3
fi
if [ "$rc" = 124 ]; then
  echo "qemu-nvme: the command ran past $limit s and was killed; the guest's dump:" >&2
  sed -n '/ran past/,$p' "$console" | tr -d '\r' >&2
fi
if [ -n "$out" ]; then
  sed -n '/^IOGATE-OUT-BEGIN/,/^IOGATE-OUT-END/p' "$work/data.txt" | sed '1d;$d' | tr -d '\r' \
    | base64 -d | tar xzf - -C "$out"
fi
exit "$rc"
