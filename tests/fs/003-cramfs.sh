#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# cramfs (built out of tree, see scripts/build-cramfs.sh) on a veil volume:
# image from mkfs.cramfs written through veil, mounted read-only, verified;
# after close and reopen again. A volume smaller than the image is refused.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd mkfs.cramfs
CRAMFS_KO=$TOP/build/cramfs/$(uname -r)/cramfs.ko
[ -f "$CRAMFS_KO" ] || skip "no $CRAMFS_KO (scripts/build-cramfs.sh)"
veil_load
module_loaded cramfs || insmod "$CRAMFS_KO"
at_exit "rmmod cramfs"
mnt=$WORK/mnt
mkdir -p "$mnt" "$WORK/src"

fill_files "$WORK/src"
mkfs.cramfs "$WORK/src" "$WORK/img" >/dev/null
info "image: $(stat -c %s "$WORK/img") bytes"

mkloop 32M
vs_open "$LOOP" vt
cat "$WORK/img" > /dev/mapper/vt
sync
mount -t cramfs -o ro /dev/mapper/vt "$mnt"
track_mount "$mnt"
verify_files "$mnt"
umount "$mnt"
vs_close vt
no_plaintext "$LOOP"

vs_open "$LOOP" vt
mount -t cramfs -o ro /dev/mapper/vt "$mnt"
verify_files "$mnt"
umount "$mnt"
vs_close vt

# A volume smaller than the image: the write runs out of space; the cut
# image may mount (cramfs checks only its superblock), but what lies past
# the end reads as an error, never as wrong data.
head -c $((3 * 1024 * 1024)) /dev/urandom > "$WORK/src/incompressible"
mkfs.cramfs "$WORK/src" "$WORK/img2" >/dev/null
mkloop 2M
vs_open "$LOOP" small
if cat "$WORK/img2" > /dev/mapper/small 2> "$WORK/err"; then fail "image larger than the volume was written"; fi
grep -q 'No space left on device' "$WORK/err" || fail "write error: $(cat "$WORK/err")"
if mount -t cramfs -o ro /dev/mapper/small "$mnt" 2>/dev/null; then
	if cat "$mnt/incompressible" > /dev/null 2>&1; then fail "read past the end of the volume succeeded"; fi
	umount "$mnt"
fi
vs_close small
