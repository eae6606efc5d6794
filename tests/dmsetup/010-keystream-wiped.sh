#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# No keystream outlives its key. CTR reads with keystream-ahead leave
# E_K(IV) of every sector they read in keystream pages; after `dmsetup
# suspend` and `key wipe` (what luksSuspend does) none of it may be left
# anywhere in memory. tests/tools/kcore-scan looks through all of RAM
# (/proc/kcore) for the first keystream block of each sector, with a
# planted control (sector 0's block in its own memory) that it must find.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
[ -r /proc/kcore ] || skip "no /proc/kcore"
veil_load
cc -O2 -Wall -o "$WORK/kcore-scan" "$TOP/tests/tools/kcore-scan.c" || fail "cannot build kcore-scan"

MIB=8
mkloop 16M
# Random bytes below, not zeros: a CTR read of a never-written (zero)
# sector returns its keystream as data, and blkid reads the new device
# through the page cache; those pages, freed uncleared, would count.
dd if=/dev/urandom of="$LOOP" bs=1M count=16 oflag=direct status=none
dm_create vt "0 $((MIB * 2048)) veil aes-ctr-plain64 $(randhex 32) 0 $LOOP 0"
udevadm settle
head -c ${MIB}M /dev/urandom > "$WORK/plain"
BS=1048576 write_direct "$WORK/plain" /dev/mapper/vt
BS=1048576 read_direct "$LOOP" $((MIB << 20)) > "$WORK/cipher"
dmsetup message vt 0 stats reset
BS=65536 same_data "$WORK/plain" /dev/mapper/vt || fail "the data does not read back"
hits=$(status_field vt keystream_hit) misses=$(status_field vt keystream_miss)
info "keystream_hit=$hits keystream_miss=$misses"
[ $((hits + misses)) -gt 0 ] || fail "no read used keystream-ahead"

dmsetup suspend vt
dmsetup message vt 0 key wipe
rc=0
"$WORK/kcore-scan" "$WORK/plain" "$WORK/cipher" || rc=$?
[ "$rc" = 0 ] || { [ "$rc" = 1 ] && fail "keystream left in memory after key wipe"; fail "kcore-scan failed ($rc)"; }
expect_fail dmsetup resume vt
dm_remove vt
