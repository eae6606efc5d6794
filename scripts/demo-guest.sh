#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo, inside the guest: a LUKS2 volume on a loop file made with
# veilsetup, ext2 on it, files in, closed, reopened, verified; its status
# and counters; a short cipher comparison; cryptsetup opens the same volume.
set -eu -o pipefail
OUT=$1
TOP=$(cd "$(dirname "$0")/.." && pwd)
VS=$TOP/userspace/veilsetup
PASS="demo passphrase"
exec > "$OUT/demo.log" 2>&1
step() { echo; echo "demo: $*"; }
run() { echo "  # $*"; "$@" 2>&1 | sed 's/^/  /'; }
piped() { echo "  # echo '<passphrase>' | $*"; echo "$PASS" | "$@" 2>&1 | sed 's/^/  /'; }

step "load device-mapper and the veil target"
modprobe -a dm_mod dm_crypt loop
run insmod "$TOP/build/modules/$(uname -r)/dm-veil.ko"

step "a 64 MiB loop file, formatted as LUKS2 by veilsetup (argon2id, 64 MiB memory)"
truncate -s 64M /tmp/volume.img
dev=$(losetup -f --show /tmp/volume.img)
echo "  loop device $dev"
piped "$VS" luksFormat -q --pbkdf-memory 65536 --iter-time 500 "$dev"

step "open it with the veil target (the key goes to the kernel keyring, not the table)"
piped "$VS" open "$dev" secret
run dmsetup table secret

step "ext2 on it, files copied in"
run mkfs.ext2 -q /dev/mapper/secret
mkdir -p /tmp/mnt
mount /dev/mapper/secret /tmp/mnt
cp -r "$TOP/docs" "$TOP/dm-target" "$TOP/userspace" /tmp/mnt/
(cd /tmp/mnt && find . -type f | sort | xargs sha256sum) > /tmp/sums
echo "  copied $(wc -l < /tmp/sums) files, $(du -sh /tmp/mnt | cut -f1)"

step "close it; the raw file holds no plaintext"
umount /tmp/mnt
run "$VS" close secret
if grep -qa "veil_engine_map" /tmp/volume.img; then echo "  PLAINTEXT FOUND"; exit 1; fi
echo "  grep for a word of the copied sources in the raw file: not found"

step "reopen and verify every file"
piped "$VS" open "$dev" secret
mount -o ro /dev/mapper/secret /tmp/mnt
(cd /tmp/mnt && sha256sum --quiet -c /tmp/sums) && echo "  all $(wc -l < /tmp/sums) files intact"
run "$VS" status secret
umount /tmp/mnt
run "$VS" close secret

step "the same volume through cryptsetup and the kernel's dm-crypt"
piped cryptsetup open "$dev" secret-crypt
mount -o ro /dev/mapper/secret-crypt /tmp/mnt
(cd /tmp/mnt && sha256sum --quiet -c /tmp/sums) && echo "  cryptsetup + dm-crypt read all files of the veil volume"
umount /tmp/mnt
run cryptsetup close secret-crypt
losetup -d "$dev"

step "a short cipher comparison (kernel crypto API, memory only)"
VEILSETUP_BENCH_MS=100 run "$VS" benchmark -s 256
run rmmod dm_veil
echo
echo "demo: done"
