#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# jffs2 through block2mtd (erase size 128 KiB) on a veil volume: erase,
# mount, write, unmount, remount, verify; close, reopen, verify again. An
# erase size that does not divide the volume is refused.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd flash_erase
modprobe block2mtd || skip "no block2mtd"
modprobe -a mtdblock jffs2 || skip "no mtdblock/jffs2"
veil_load
at_exit "rmmod block2mtd"
mnt=$WORK/mnt
mkdir -p "$mnt"

# attach DEV: block2mtd on DEV, prints the new mtd number
attach() {
	local before
	before=$(grep -c '^mtd' /proc/mtd)
	echo "$1,128KiB" > /sys/module/block2mtd/parameters/block2mtd
	[ "$(grep -c '^mtd' /proc/mtd)" -gt "$before" ] || return 1
	grep '^mtd' /proc/mtd | tail -1 | sed 's/^mtd\([0-9]*\):.*/\1/'
}

mkloop 32M
vs_open "$LOOP" vt
mtd=$(attach /dev/mapper/vt) || fail "block2mtd did not attach"
flash_erase -j -q "/dev/mtd$mtd" 0 0
mount -t jffs2 "mtd$mtd" "$mnt"
track_mount "$mnt"
fill_files "$mnt"
umount "$mnt"
mount -t jffs2 "mtd$mtd" "$mnt"
verify_files "$mnt"
umount "$mnt"
rmmod block2mtd
vs_close vt
no_plaintext "$LOOP"

modprobe block2mtd
vs_open "$LOOP" vt
mtd=$(attach /dev/mapper/vt) || fail "block2mtd did not attach again"
mount -t jffs2 "mtd$mtd" "$mnt"
verify_files "$mnt"
umount "$mnt"
rmmod block2mtd
vs_close vt

# 32 MiB - 64 KiB is not a multiple of 128 KiB.
modprobe block2mtd
mkloop $((32 * 1024 - 64))K
vs_open "$LOOP" odd
kmsg_mark
if attach /dev/mapper/odd >/dev/null; then fail "block2mtd accepted an erase size that does not divide the volume"; fi
kmsg_since | grep -i 'block2mtd' | tee "$WORK/msg"
grep -qi 'erase' "$WORK/msg" || fail "no block2mtd message about the erase size"
rmmod block2mtd
vs_close odd
