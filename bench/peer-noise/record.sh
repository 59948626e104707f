#!/usr/bin/env bash
# Records the per-interval samples that crates/report/src/peers/noise_data.json holds:
# real fleet runs (`iogate run --target ×8`) of identical drives beside a CPU-bound
# load, from which the peer rule's unit tests draw resampled campaigns (README, "Peers").
#
#   sudo bash bench/peer-noise/record.sh [runs per condition] [> file]
#
# Conditions, each with eight drives run at once:
#   capped   loop devices over /dev/shm, each capped by one cgroup v1 blkio group at
#            CAP read and CAP write IOPS, unpaced (QD 4); in the `slow` runs drive 8 is
#            capped at 70% of CAP (30% slower)
#   paced    the same drives paced at a rate above the cap
#   free     the same drives uncapped and unpaced (no slow drive: false alarms only)
#   delay    NBD_DRIVES (6) nbdkit memory disks through the delay filter under nbdfuse
#            and a --direct-io=on loop device, QD 1, beside NBD_LOAD (1) busy loop; in
#            the `slow` runs the last drive has a read and write delay of DELAY_MS (2;
#            every drive capped as above, so the others' latency is the cap's 1 ms at
#            QD 1: at least twice the latency)
# Output: JSON lines, one per drive run: condition, run, fleet (`same`, or `slow` for
# the fleets with the slow drive), drive, slow, and per metric
# (iops, bandwidth, latency.mean, latency.p99) the step's figure and its samples, as
# RunResult::samples draws them (full intervals; latency only where requests
# completed). Needs root, cgroup v1 blkio, nbdkit, nbdfuse and a release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-6}
CAP=${CAP:-500}
DELAY_MS=${DELAY_MS:-2}
BIN=${IOGATE:-target/release/iogate}
work=$(mktemp -d /dev/shm/peer-noise.XXXXXX)
cg=/sys/fs/cgroup/blkio/iogate-peer-noise-$$
loops=() nbds=() load=()
cleanup() {
  for p in "${load[@]}"; do kill "$p" 2>/dev/null || true; done
  for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  for m in "$work"/nbd*/mnt; do fusermount3 -u "$m" 2>/dev/null || true; done
  for p in "${nbds[@]}"; do kill "$p" 2>/dev/null || true; done
  rmdir "$cg" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
NBD_DRIVES=${NBD_DRIVES:-6}
ONLY=${ONLY:-all}
# The CPU-bound load beside the drives: busy loops, one per core (LOAD to change it).
busy() { # count
  for p in "${load[@]}"; do kill "$p" 2>/dev/null || true; done
  load=()
  for _ in $(seq "$1"); do nice -n "${LOAD_NICE:-0}" sh -c "while :; do :; done" & load+=($!); done
}
busy "${LOAD:-$(nproc)}"

spec() { # name qd extra
  cat >"$work/$1.yaml" <<SPEC
iogate: 1
name: peer-noise
target: { size: 32MiB }
steps:
  - workload:
      name: rw
      queue_depth: $2
      duration: 8s
$3
      mix:
        - { block_size: 4KiB, weight: 100%, read: 50%, random: 100% }
SPEC
}
spec unpaced 4 ""
spec paced 4 "      rate: { iops: $((CAP * 3)) }"
spec qd1 1 ""

extract() { # condition run slow-drive out
  for r in "$4"/*/result.json; do
    local d; d=$(basename "$(dirname "$r")")
    jq -c --arg c "$1" --arg run "$2" --arg d "$d" --arg slow "$3" '
      .steps[0] as $s | ($s.intervals[:-1]) as $full |
      { condition: $c, run: ($run|tonumber),
        fleet: (if $slow == "-" then "same" else "slow" end), drive: $d, slow: ($d == $slow),
        iops: { value: $s.metrics.iops, samples: [$full[].iops] },
        bandwidth: { value: $s.metrics.bandwidth_bytes_per_s,
                     samples: [$full[].bandwidth_bytes_per_s] },
        "latency.mean": { value: ($s.metrics.latency.mean_ns / 1e9),
          samples: [$full[] | select(.read_ios + .write_ios > 0) | .mean_latency_ns / 1e9] },
        "latency.p99": { value: ($s.metrics.latency.p99_ns / 1e9),
          samples: [$full[] | select(.latency != null) | .latency.p99_ns / 1e9] } }' "$r"
  done
}

fleet() { # spec out
  local args=()
  for l in "${loops[@]}"; do args+=(--target "$l"); done
  sh -c "echo \$\$ > $cg/cgroup.procs && exec \"\$0\" \"\$@\"" "$BIN" run "$work/$1.yaml" \
    "${args[@]}" --out "$2" --quiet --allow-destructive >/dev/null 2>&1 || true
}

cap_all() { # cap-of-the-last-drive
  local i=0
  for l in "${loops[@]}"; do
    i=$((i + 1))
    local c=$CAP; [ "$i" = "${#loops[@]}" ] && c=$1
    local rdev; rdev=$(stat -L -c '%t:%T' "$l"); rdev=$((16#${rdev%:*})):$((16#${rdev#*:}))
    echo "$rdev $c" >"$cg/blkio.throttle.read_iops_device"
    echo "$rdev $c" >"$cg/blkio.throttle.write_iops_device"
  done
}

mkdir -p "$cg"
if [ "$ONLY" != delay ]; then
for i in $(seq 8); do
  truncate -s 32M "$work/d$i.img"
  loops+=("$(losetup -f --show --direct-io=on "$work/d$i.img")")
done
for run in $(seq "$RUNS"); do
  [ "$ONLY" = free ] && break
  for slow in no yes; do
    if [ "$slow" = yes ]; then cap_all $((CAP * 7 / 10)); s=$(basename "${loops[7]}"); else cap_all "$CAP"; s=-; fi
    fleet unpaced "$work/o"; extract capped "$run" "$s" "$work/o"; rm -rf "$work/o"
    fleet paced "$work/o"; extract paced "$run" "$s" "$work/o"; rm -rf "$work/o"
  done
done
[ "$ONLY" = free ] && RUNS=${FREE_RUNS:-$RUNS}
# Uncapped, unpaced: what the machine gives each drive is the only limit, so the
# drives differ by the load's share of the CPU (false alarms only: no slow drive).

CAP=1000000000 cap_all 1000000000
for run in $(seq "$RUNS"); do
  fleet unpaced "$work/o"; extract free "$run" - "$work/o"; rm -rf "$work/o"
done
for l in "${loops[@]}"; do losetup -d "$l"; done
loops=()
fi
[ "$ONLY" = free ] && exit 0
rmdir "$cg"; mkdir -p "$cg"
# The nbdkit stacks need CPU of their own: one busy loop beside them (NBD_LOAD).
busy "${NBD_LOAD:-1}"

nbd() { # index delay-ms
  local d="$work/nbd$1"; mkdir -p "$d/mnt"
  nbdkit -f -U "$d/sock" --filter=delay memory 32M rdelay="$2"ms wdelay="$2"ms & nbds+=($!)
  while [ ! -S "$d/sock" ]; do sleep 0.05; done
  nbdfuse "$d/mnt/disk" --unix "$d/sock" 2>/dev/null & nbds+=($!)
  while [ ! -e "$d/mnt/disk" ]; do sleep 0.05; done
  loops+=("$(losetup -f --show --direct-io=on "$d/mnt/disk")")
}
for slow in no yes; do
  for i in $(seq "$NBD_DRIVES"); do
    delay=0; [ "$slow" = yes ] && [ "$i" = "$NBD_DRIVES" ] && delay=$DELAY_MS
    nbd "$i" "$delay"
  done
  # Capped alike, as the loop devices: the stacks' own stalls are the noise.
  cap_all "$CAP"
  s=-; [ "$slow" = yes ] && s=$(basename "${loops[$((NBD_DRIVES - 1))]}")
  for run in $(seq "$RUNS"); do
    fleet qd1 "$work/o"; extract delay "$run" "$s" "$work/o"; rm -rf "$work/o"
  done
  for l in "${loops[@]}"; do losetup -d "$l"; done
  loops=()
  for m in "$work"/nbd*/mnt; do fusermount3 -u "$m" 2>/dev/null || true; done
  for p in "${nbds[@]}"; do kill "$p" 2>/dev/null || true; done
  nbds=(); rm -rf "$work"/nbd*
done
