#!/bin/bash
# fio on tests/powercut.rs's rig, for comparison with `iogate verify`: a drive with a
# volatile write cache (nbdkit cache=writeback over a file, nbdfuse, a --direct-io=on loop
# device with 4 KiB blocks), fio writing with verify_state_save (random 4 KiB, QD 8,
# fsync=256), the cut (SIGKILL of nbdkit) after 2 s, the planted bug, the drive back
# without a cache, fio verifying with verify_state_load. Needs root, fio, nbdkit,
# nbdfuse, nbdkit-plugin-dev. Prints fio's exit codes and first complaints.
#
#   sudo bash bench/powercut_fio.sh honest|ignoredflush|torn|dropped|restored
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
fault=$1; D=/tmp/iogate-powercut-fio/$fault; rm -rf $D; mkdir -p $D/mnt; cd $D
disk=/dev/shm/iogate-powercut-fio.img; rm -f $disk; truncate -s 64M $disk
case $fault in
  ignoredflush) args="--filter=fua --filter=cache file file=$disk cache=writeback fuamode=discard";;
  dropped) args="--filter=cache cc $repo/tests/powercut/dropwrite.c file=$disk drop_every=20 cache=writeback";;
  *) args="--filter=cache file file=$disk cache=writeback";;
esac
start() { rm -f sock; nbdkit -U sock -P nbdkit.pid $1 2>/dev/null; sleep 0.5; nbdfuse mnt/disk --unix sock 2>/dev/null & sleep 1; LOOP=$(losetup --direct-io=on --sector-size 4096 -f --show mnt/disk); }
stop() { losetup -d $LOOP; sleep 0.3; fusermount3 -u mnt 2>/dev/null || umount -l mnt; }
start "$args"
fio --name=pc --filename=$LOOP --ioengine=io_uring --direct=1 --rw=randwrite --bs=4k --iodepth=8 --size=32M --fsync=256 --verify=crc32c --do_verify=0 --verify_state_save=1 --time_based --runtime=60 > write.log 2>&1 &
FIO=$!
sleep 1
[ $fault = restored ] && cp $disk old.img
sleep 1
kill -9 $(cat nbdkit.pid)
wait $FIO; echo "fio write exit $?"
stop
if [ $fault = torn ]; then python3 - <<PY
import os
f=open("$disk","r+b")
for b in range(2048):
    half = 2048 if b < 1024 else 0
    f.seek((8<<20)+b*4096+half); f.write(os.urandom(2048))
f.close()
PY
fi
if [ $fault = restored ]; then dd if=old.img of=$disk bs=1M count=16 conv=notrunc status=none; fi
start "file file=$disk"
fio --name=pc --filename=$LOOP --ioengine=io_uring --direct=1 --rw=randwrite --bs=4k --iodepth=8 --size=32M --verify=crc32c --verify_only --verify_state_load=1 > verify.log 2>&1
echo "fio verify exit $?"
grep -E "verify:|bad magic|crc32c|err=|io_u error" verify.log | head -5
stop; pkill -9 nbdkit; rm -f $disk
