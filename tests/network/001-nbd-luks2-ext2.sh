#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A LUKS2 volume on an NBD export, made and used with veilsetup from the
# client's side: ext2 on it, files in, close, disconnect, reconnect,
# reopen, every file intact. The server's export file holds the LUKS2
# header and ciphertext only: no plaintext, no file name. A wrong
# passphrase opens nothing over the network either.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd mkfs.ext2
. "$TOP/tests/network/nbd.sh"
veil_load
mnt=$WORK/mnt
mkdir -p "$mnt"
nbd_setup 64M
nbd_connect
echo -n "correct horse" > "$WORK/pass"
LUKS_FAST="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"

"$VS" luksFormat -q --type luks2 $LUKS_FAST -d "$WORK/pass" "$NBD"
_devs+=(vt)
"$VS" open -d "$WORK/pass" "$NBD" vt
"$VS" status vt | grep -E "^ *device: +$NBD\$" || fail "status does not name $NBD"
mkfs.ext2 -q /dev/mapper/vt
mount /dev/mapper/vt "$mnt"
track_mount "$mnt"
fill_files "$mnt"
umount "$mnt"
"$VS" close vt
nbd_disconnect

# The server's side: a LUKS2 header, then ciphertext.
"$VS" isLuks "$EXPORT" || fail "the export file is not a LUKS device"
no_plaintext "$EXPORT"

nbd_connect
echo -n "wrong horse" > "$WORK/wrong"
rc=0
"$VS" open -d "$WORK/wrong" "$NBD" vt 2> "$WORK/err" || rc=$?
[ "$rc" = 2 ] || fail "wrong passphrase: exit $rc, want 2 ($(cat "$WORK/err"))"
grep -q "No key available with this passphrase" "$WORK/err" ||
	fail "wrong passphrase: $(cat "$WORK/err")"
dmsetup info vt >/dev/null 2>&1 && fail "a wrong passphrase mapped vt"

"$VS" open -d "$WORK/pass" "$NBD" vt
mount -o ro /dev/mapper/vt "$mnt"
verify_files "$mnt"
umount "$mnt"
"$VS" close vt
nbd_disconnect
echo "ok: LUKS2 and ext2 over NBD, through a disconnect and a reconnect"
