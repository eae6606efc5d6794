#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ext2 on a veil volume over a loop file: mkfs, mount, write, unmount,
# remove, re-create, mount, files intact; a wrong key does not mount and
# does no harm.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd mkfs.ext2
veil_load

mkloop 64M
key=$(randhex 64)
table="0 131072 veil aes-xts-plain64 $key 0 $LOOP 0"
mnt=$WORK/mnt
mkdir -p "$mnt"

dm_create vt "$table"
mkfs.ext2 -q /dev/mapper/vt
mount /dev/mapper/vt "$mnt"
track_mount "$mnt"
mkdir -p "$mnt/dir/sub"
plaintext "$mnt/big" $((3 * 1024 * 1024))
plaintext "$mnt/dir/small" 4096
echo "hello veil" > "$mnt/dir/sub/text"
(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$WORK/sums"
umount "$mnt"
dm_remove vt
no_plaintext "$LOOP"

dm_create vt "0 131072 veil aes-xts-plain64 $(randhex 64) 0 $LOOP 0"
expect_fail mount -o ro /dev/mapper/vt "$mnt"
dm_remove vt

dm_create vt "$table"
mount /dev/mapper/vt "$mnt"
(cd "$mnt" && sha256sum --quiet -c "$WORK/sums") || fail "files changed"
umount "$mnt"
dm_remove vt
