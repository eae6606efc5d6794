#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: time file-system commands on 32 MB volumes, per cipher and
# unencrypted, as the cryptoloop/dm-crypt timing study did (ext2, cramfs,
# jffs2 through block2mtd). For each step: wall seconds and the seconds
# the target's own counters spent in the cipher. Cold cache before every
# read and mount: unmount and drop caches. Appends
#   <fs> <config> <rep> <step> <wall_s> <cipher_s>
# to RESULTS/fs-times.txt.
#
#   fs-guest.sh RESULTS
set -eu
RES=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
REPS=${BENCH_FS_REPS:-3}
OUT=$RES/fs-times.txt
W=/tmp/fsbench
mkdir -p "$W/mnt" "$W/one" "$W/two"
: > "$OUT"

modprobe -a dm_mod loop mtdblock jffs2
insmod "$TOP/build/modules/$(uname -r)/dm-veil.ko"
insmod "$TOP/build/cramfs/$(uname -r)/cramfs.ko"
head -c 1000000 /dev/urandom > "$W/one/file1"
cp "$W/one/file1" "$W/two/file1"
head -c 10000000 /dev/urandom > "$W/two/file10"

configs="none aes-ctr-plain64:32 aes-xts-plain64:64 blowfish-ctr-plain64:32
	 cast6-ctr-plain64:32 cast6-xts-plain64:64 serpent-ctr-plain64:32
	 serpent-xts-plain64:64 twofish-ctr-plain64:32 twofish-xts-plain64:64"

now() { date +%s%N; }
cipher_ns() {
	dmsetup status vol | tr ' ' '\n' | awk -F= '/^cipher_ns_(de|en)crypt=/ { s += $2 } END { print s + 0 }'
}
cold() { sync; echo 3 > /proc/sys/vm/drop_caches; }
# step NAME CMD...: time CMD, record wall and cipher seconds
step() {
	local name=$1 t0 c0 t1 c1
	shift
	cold
	c0=$(cipher_ns)
	t0=$(now)
	"$@" > /dev/null
	sync
	t1=$(now)
	c1=$(cipher_ns)
	echo "$FS $CONFIG $REP $name $(awk "BEGIN { printf \"%.4f %.4f\", ($t1 - $t0) / 1e9, ($c1 - $c0) / 1e9 }")" >> "$OUT"
}

# volume: /dev/mapper/vol over a new 32 MB loop file, through veil or linear
volume() {
	local key
	truncate -s 32M "$W/img"
	LOOPDEV=$(losetup -f --show "$W/img")
	if [ "$CONFIG" = none ]; then
		dmsetup create vol --table "0 65536 linear $LOOPDEV 0"
	else
		key=$(head -c "${CONFIG#*:}" /dev/urandom | od -An -v -tx1 | tr -d ' \n')
		dmsetup create vol --table "0 65536 veil ${CONFIG%:*} $key 0 $LOOPDEV 0"
	fi
}
unvolume() {
	dmsetup remove vol
	losetup -d "$LOOPDEV"
	rm -f "$W/img"
}
mnt() { mount "$@" "$W/mnt"; }

ext2_run() {
	step mkfs mkfs.ext2 -q /dev/mapper/vol
	step mount mnt /dev/mapper/vol
	step write_1MB cp "$W/one/file1" "$W/mnt/"
	umount "$W/mnt"
	step mount_1file mnt /dev/mapper/vol
	step read_1MB cat "$W/mnt/file1"
	step write_10MB cp "$W/two/file10" "$W/mnt/"
	umount "$W/mnt"
	step mount_2files mnt /dev/mapper/vol
	step read_10MB cat "$W/mnt/file10"
	umount "$W/mnt"
}

jffs2_run() {
	local mtd
	echo "/dev/mapper/vol,128KiB" > /sys/module/block2mtd/parameters/block2mtd
	mtd=$(grep '^mtd' /proc/mtd | tail -1 | sed 's/^mtd\([0-9]*\):.*/\1/')
	step mkfs flash_erase -j -q "/dev/mtd$mtd" 0 0
	step mount mnt -t jffs2 "mtd$mtd"
	step write_1MB cp "$W/one/file1" "$W/mnt/"
	umount "$W/mnt"
	step mount_1file mnt -t jffs2 "mtd$mtd"
	step read_1MB cat "$W/mnt/file1"
	step write_10MB cp "$W/two/file10" "$W/mnt/"
	umount "$W/mnt"
	step mount_2files mnt -t jffs2 "mtd$mtd"
	step read_10MB cat "$W/mnt/file10"
	umount "$W/mnt"
	rmmod block2mtd
}

cramfs_write() { mkfs.cramfs "$1" "$W/cram.img" && dd if="$W/cram.img" of=/dev/mapper/vol bs=1M conv=fsync status=none; }
cramfs_run() {
	step mkfs_1file cramfs_write "$W/one"
	step mount mnt -t cramfs -o ro /dev/mapper/vol
	step read_1MB cat "$W/mnt/file1"
	umount "$W/mnt"
	step mkfs_2files cramfs_write "$W/two"
	step mount_2files mnt -t cramfs -o ro /dev/mapper/vol
	step read_10MB cat "$W/mnt/file10"
	umount "$W/mnt"
}

# One untimed pass first: the first mount of each file system loads and
# warms up its driver, which would otherwise land on the first config.
OUT_TIMED=$OUT
OUT=/dev/null
CONFIG=none REP=0
for FS in ext2 cramfs jffs2; do
	[ "$FS" = jffs2 ] && modprobe block2mtd
	volume
	"${FS}_run"
	unvolume
done
OUT=$OUT_TIMED

for REP in $(seq 1 "$REPS"); do
	for CONFIG in $configs; do
		for FS in ext2 cramfs jffs2; do
			[ "$FS" = jffs2 ] && modprobe block2mtd
			volume
			"${FS}_run"
			unvolume
			echo "fs-bench: rep $REP $CONFIG $FS done" >> "$RES/fs-bench.log"
		done
	done
done
rmmod dm_veil
echo "fs-bench: finished" >> "$RES/fs-bench.log"
