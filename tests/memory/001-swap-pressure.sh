#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Memory pressure: swap lives on a veil volume, and a memory hog in a
# memory cgroup far smaller than the hog keeps swapping through veil, while
# fio writes and verifies (crc32c) on another veil volume, XTS and CTR,
# with 1 MiB writes that need a full bio of ciphertext pages. Both make
# progress: the hog finishes its passes, fio finishes with no error and no
# mismatch; nothing hangs; the kernel log stays clean.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd fio mkswap swapon swapoff cc
veil_load

cc -O2 -o "$WORK/memhog" "$TOP/tests/tools/memhog.c" || fail "cannot build memhog"
CG=/sys/fs/cgroup
if [ ! -f "$CG/cgroup.controllers" ]; then
	mount -t cgroup2 none "$CG" || skip "no cgroup2"
	at_exit "umount $CG"
fi
grep -qw memory "$CG/cgroup.controllers" || skip "no memory controller"
echo +memory > "$CG/cgroup.subtree_control" 2>/dev/null || true
mkdir -p "$CG/veilhog"
at_exit "rmdir $CG/veilhog"
echo $((48 << 20)) > "$CG/veilhog/memory.max"

mkloop 256M
swapdev=$LOOP
mkloop 128M
datadev=$LOOP
dm_create vt-swap "0 524288 veil aes-xts-plain64 $(randhex 64) 0 $swapdev 0"
mkswap -q /dev/mapper/vt-swap
swapon /dev/mapper/vt-swap
at_exit "swapoff /dev/mapper/vt-swap"

for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	dm_create vt "0 262144 veil $spec 0 $datadev 0"
	# The hog runs in the small cgroup: all it touches beyond 48 MiB swaps.
	(echo $BASHPID > "$CG/veilhog/cgroup.procs" && exec "$WORK/memhog" 160 30) \
		> "$WORK/hog.txt" 2>&1 &
	hog=$!
	fio_verify pressure /dev/mapper/vt 2 16 30 || fail "fio: ${spec%% *}"
	wait "$hog" || { cat "$WORK/hog.txt"; fail "memhog failed"; }
	cat "$WORK/hog.txt"
	grep -q 'passes' "$WORK/hog.txt" || fail "memhog made no progress"
	swapped=$(awk '/^\/dev\/(dm-|mapper)/ { print $4 }' /proc/swaps | head -1)
	info "${spec%% *}: swap in use at the end: ${swapped:-?} KiB; $(grep -E '^(pswpin|pswpout) ' /proc/vmstat | tr '\n' ' ')"
	dmsetup status vt-swap
	dm_remove vt
done
[ "$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)" -gt 1000 ] || fail "the hog hardly swapped"
