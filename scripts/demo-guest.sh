#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo, inside the guest: an encrypted ext2 volume on a loop file,
# made, filled, closed, reopened and verified with plain dmsetup.
set -eu -o pipefail
OUT=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
exec > "$OUT/demo.log" 2>&1
step() { echo; echo "demo: $*"; }
run() { echo "  # $*"; "$@" 2>&1 | sed 's/^/  /'; }

step "load device-mapper and the veil target"
modprobe -a dm_mod loop
run insmod "$TOP/dm-target/dm-veil.ko"
run dmsetup targets

step "make a 64 MiB loop file and a random 512-bit key"
truncate -s 64M /tmp/volume.img
dev=$(losetup -f --show /tmp/volume.img)
key=$(head -c 64 /dev/urandom | od -An -v -tx1 | tr -d ' \n')
echo "  loop device $dev"
table="0 $(blockdev --getsz "$dev") veil aes-xts-plain64 $key 0 $dev 0"

step "map it through veil (aes-xts-plain64), put ext2 on it, copy files in"
echo "  # dmsetup create secret --table '0 <sectors> veil aes-xts-plain64 <key> 0 $dev 0'"
dmsetup create secret --table "$table"
run mkfs.ext2 -q /dev/mapper/secret
mkdir -p /tmp/mnt
mount /dev/mapper/secret /tmp/mnt
cp -r "$TOP/docs" "$TOP/dm-target" /tmp/mnt/
(cd /tmp/mnt && find . -type f | sort | xargs sha256sum) > /tmp/sums
echo "  copied $(wc -l < /tmp/sums) files, $(du -sh /tmp/mnt | cut -f1)"
run dmsetup status secret

step "close it; the raw file holds no plaintext"
umount /tmp/mnt
run dmsetup remove secret
if grep -qa "veil_crypt_map" /tmp/volume.img; then echo "  PLAINTEXT FOUND"; exit 1; fi
echo "  grep for a word of the copied sources in the raw file: not found"

step "reopen with the same key and verify every file"
dmsetup create secret --table "$table"
mount -o ro /dev/mapper/secret /tmp/mnt
(cd /tmp/mnt && sha256sum --quiet -c /tmp/sums) && echo "  all $(wc -l < /tmp/sums) files intact"
run df -h /tmp/mnt

step "the same bytes through the kernel's dm-crypt"
umount /tmp/mnt
dmsetup remove secret
dmsetup create secret-crypt --table "${table/ veil / crypt }"
mount -o ro /dev/mapper/secret-crypt /tmp/mnt
(cd /tmp/mnt && sha256sum --quiet -c /tmp/sums) && echo "  dm-crypt reads all files of the veil volume"
umount /tmp/mnt
dmsetup remove secret-crypt
losetup -d "$dev"
run rmmod dm_veil
echo
echo "demo: done"
