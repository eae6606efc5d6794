#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Discards reach the device only with allow_discards.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd blkdiscard
veil_load

mkloop 16M
key=$(randhex 64)
dd if=/dev/urandom of="$LOOP" bs=1M count=16 oflag=direct status=none
used() { du -k "$LOOP_FILE" | cut -f1; }

dm_create vt "0 32768 veil aes-xts-plain64 $key 0 $LOOP 0"
expect_fail blkdiscard /dev/mapper/vt
dm_remove vt

dm_create vt "0 32768 veil aes-xts-plain64 $key 0 $LOOP 0 1 allow_discards"
dmsetup table vt | grep -q ' 1 allow_discards$' || fail "table: $(dmsetup table vt)"
before=$(used)
blkdiscard /dev/mapper/vt || fail "discard refused with allow_discards"
after=$(used)
info "backing file: ${before} KiB before, ${after} KiB after discard"
[ "$after" -lt "$before" ] || fail "discard did not reach the device"
dm_remove vt
