#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ext2 with 1 KiB and default blocks on a veilsetup volume over a loop file:
# create, fill, unmount, close, reopen, verify every file; no plaintext (nor
# file names) on the raw device; a wrong key does not mount and harms
# nothing.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd mkfs.ext2
veil_load
mnt=$WORK/mnt
mkdir -p "$mnt"

for blocks in "-b 1024" ""; do
	mkloop 32M
	vs_open "$LOOP" vt
	mkfs.ext2 -q $blocks /dev/mapper/vt
	mount /dev/mapper/vt "$mnt"
	track_mount "$mnt"
	fill_files "$mnt"
	umount "$mnt"
	vs_close vt
	no_plaintext "$LOOP"

	mv "$WORK/vs.key" "$WORK/right.key"
	vs_open "$LOOP" vt
	expect_fail mount -o ro /dev/mapper/vt "$mnt"
	vs_close vt
	mv "$WORK/right.key" "$WORK/vs.key"

	vs_open "$LOOP" vt
	mount /dev/mapper/vt "$mnt"
	verify_files "$mnt"
	umount "$mnt"
	vs_close vt
	echo "ok: ext2 ${blocks:-default blocks}"
done
