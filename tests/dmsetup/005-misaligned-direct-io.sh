#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# O_DIRECT with a buffer aligned to less than the encryption sector: with
# sector_size:4096, a buffer at page offset 512 is refused up front with
# EINVAL, as dm-crypt refuses it, never half done or failed with EIO; with
# 512-byte sectors it works. Aligned buffers work in both cases, and the
# data reads back through dm-crypt.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_crypt
requires cmd cc
veil_load

cc -O2 -o "$WORK/odirect" "$TOP/tests/tools/odirect.c" || fail "cannot build odirect"
mkloop 16M
key=$(randhex 64)
for target in veil crypt; do
	dm_create vt-$target "0 32768 $target aes-xts-plain64 $key 0 $LOOP 0 1 sector_size:4096"
done
dm_create vt-512 "0 32768 veil aes-xts-plain64 $key 0 $LOOP 0"

# expect WANT OP DEV OFFSET LEN
expect() {
	local got
	got=$("$WORK/odirect" "$2" "$3" "$4" "$5") || true
	[ "$got" = "$1" ] || fail "$2 $3 at buffer offset $4, $5 bytes: got '$got', want '$1'"
	echo "# $2 $3 +$4 $5: $got"
}
for target in veil crypt; do
	for op in read write; do
		expect EINVAL $op /dev/mapper/vt-$target 512 4096
		expect EINVAL $op /dev/mapper/vt-$target 2048 8192
		expect ok $op /dev/mapper/vt-$target 0 4096
		expect ok $op /dev/mapper/vt-$target 4096 16384
	done
done
expect ok read /dev/mapper/vt-512 512 4096
expect ok write /dev/mapper/vt-512 512 4096

# Aligned data written through veil reads back through dm-crypt.
plaintext "$WORK/a" $((1 << 20))
dd if="$WORK/a" of=/dev/mapper/vt-veil bs=64k oflag=direct status=none
cmp -s "$WORK/a" <(dd if=/dev/mapper/vt-crypt bs=64k count=16 iflag=direct status=none) ||
	fail "dm-crypt reads other data than veil wrote"
