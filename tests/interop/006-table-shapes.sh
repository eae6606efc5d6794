#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Table shapes and request sizes that dm-crypt handles, handled the same:
#   (a) 4 MiB O_DIRECT writes and reads, which device-mapper splits (veil
#       takes at most 1 MiB per request), at an offset that is not a
#       multiple of 1 MiB: veil and dm-crypt read each other's data and
#       write the same ciphertext, for XTS, CBC-ESSIV and CTR;
#   (b) sector_size:2048, with and without iv_large_sectors: interop with
#       dm-crypt (tests/interop/interop.sh) for several specs;
#   (c) a read-only table (dmsetup create --readonly) reads the data
#       written earlier; writes, direct and buffered, fail with an error
#       at once (no hang) and change nothing on the device;
#   (d) veil at a non-zero start in a table of three targets (linear,
#       veil, linear) and the same table with crypt: each reads what the
#       other wrote, in requests that cross the target boundaries; the
#       linear parts hold the plaintext, the veil part does not; a table
#       with veil alone at start 0 over the same sectors reads the same
#       (the IV counts from the target's start); with 512- and 4096-byte
#       sectors;
#   (e) the null cipher with no key ("-"), as cryptsetup's cipher_null
#       volumes make it: the device holds the plaintext, each target
#       reads what the other wrote, and the table prints "-" as
#       dm-crypt's does.
. "$(dirname "$0")/../lib.sh"
requires root
requires module dm_crypt loop
veil_load
. "$TOP/tests/interop/interop.sh"

MIB=$((1024 * 1024))
# put FILE DEV BYTE [BS]: FILE written at byte BYTE of DEV in O_DIRECT
# requests of BS bytes (4 MiB unless given)
put() {
	dd if="$1" of="$2" bs="${4:-4M}" seek="$3" oflag=direct,seek_bytes \
		conv=notrunc status=none
}
# has FILE DEV BYTE [BS]: DEV holds FILE at BYTE, read in O_DIRECT
# requests of BS bytes
has() {
	dd if="$2" bs="${4:-4M}" skip="$3" count="$(stat -c %s "$1")" \
		iflag=direct,skip_bytes,count_bytes status=none | cmp -s - "$1"
}
# raw_sum DEV BYTE BYTES: checksum of a range of DEV (read with O_DIRECT:
# the page cache of a device that a table holds open may be stale)
raw_sum() {
	dd if="$1" bs=64k skip="$2" count="$3" iflag=direct,skip_bytes,count_bytes status=none |
		sha256sum
}

info "(a) 4 MiB requests"
plaintext "$WORK/big-a" $((12 * MIB))
plaintext "$WORK/big-b" $((12 * MIB))
mkloop 64M
at=$((3 * MIB + 4096))		# not a multiple of 1 MiB
for sk in aes-xts-plain64:64 aes-cbc-essiv:sha256:32 aes-ctr-plain64:32; do
	spec=${sk%:*} key=$(randhex "${sk##*:}")
	t="0 126976 TARGET $spec $key 777 $LOOP 2048"
	dm_create vt-veil "${t/TARGET/veil}"
	dm_create vt-crypt "${t/TARGET/crypt}"
	put "$WORK/big-a" /dev/mapper/vt-veil "$at"
	has "$WORK/big-a" /dev/mapper/vt-veil "$at" || fail "$spec: veil does not read back 4 MiB requests"
	w=$(status_field vt-veil writes)
	[ "$w" -ge 12 ] || fail "$spec: 12 MiB written in $w requests: not split to 1 MiB"
	dd if="$LOOP" of="$WORK/raw" bs=1M skip=$((2048 * 512 + at)) count=$((12 * MIB)) \
		iflag=direct,skip_bytes,count_bytes status=none
	n=$(grep -ac "$PLAIN_MARKER" "$WORK/raw" || true)
	[ "$n" = 0 ] || fail "$spec: plaintext on the device"
	sum=$(sha256sum < "$WORK/raw")
	has "$WORK/big-a" /dev/mapper/vt-crypt "$at" || fail "$spec: written by veil in 4 MiB requests, dm-crypt reads other data"
	put "$WORK/big-a" /dev/mapper/vt-crypt "$at"
	[ "$(raw_sum "$LOOP" $((2048 * 512 + at)) $((12 * MIB)))" = "$sum" ] ||
		fail "$spec: dm-crypt writes other ciphertext than veil"
	put "$WORK/big-b" /dev/mapper/vt-crypt "$at"
	has "$WORK/big-b" /dev/mapper/vt-veil "$at" || fail "$spec: written by dm-crypt, veil reads other data in 4 MiB requests"
	dm_remove vt-crypt
	dm_remove vt-veil
	echo "ok: $spec, 4 MiB requests ($w write requests reached veil)"
done

info "(b) sector_size:2048 ($SECONDS s)"
specs='^(aes-xts-plain64|aes-cbc-essiv:sha256)$'
# interop.sh makes its data with lib.sh's plaintext unless it is there
plaintext "$WORK/a" "$DATA"
plaintext "$WORK/b" "$DATA"
interop_all $((4 * 3001)) "sector_size:2048" "" "$specs"
interop_all $((4 * 3001)) "sector_size:2048 iv_large_sectors" "" "$specs"

info "(c) read-only table ($SECONDS s)"
mkloop 16M
key=$(randhex 64)
t="0 30720 veil aes-xts-plain64 $key 0 $LOOP 2048"
plaintext "$WORK/ro" $((2 * MIB))
dm_create vt-rw "$t"
put "$WORK/ro" /dev/mapper/vt-rw $MIB 1M
dm_remove vt-rw
before=$(raw_sum "$LOOP" 0 $((16 * MIB)))
at_exit "dmsetup remove --retry vt-ro"
printf '%s\n' "$t" | dmsetup create --readonly vt-ro
[ "$(blockdev --getro /dev/mapper/vt-ro)" = 1 ] || fail "--readonly device is writable"
dmsetup info vt-ro | grep -q 'READ-ONLY' || fail "dmsetup info: $(dmsetup info vt-ro | grep State)"
has "$WORK/ro" /dev/mapper/vt-ro $MIB 1M || fail "read-only table reads other data"
has "$WORK/ro" /dev/mapper/vt-ro $MIB 4k || fail "read-only table reads other data (4 KiB reads)"
# wr_rc CMD...: CMD's exit status; 124 if it did not end within 30 s
wr_rc() { local rc=0; within 30 "$@" > /dev/null 2>&1 || rc=$?; echo "$rc"; }
for how in "oflag=direct" "conv=fsync" "oflag=sync"; do
	rc=$(wr_rc dd if=/dev/urandom of=/dev/mapper/vt-ro bs=64k count=4 seek=3 conv=notrunc $how status=none)
	[ "$rc" != 124 ] || fail "write ($how) to a read-only table hangs"
	[ "$rc" != 0 ] || fail "write ($how) to a read-only table succeeded"
done
if command -v blkdiscard > /dev/null; then
	rc=$(wr_rc blkdiscard -z -o 0 -l 65536 /dev/mapper/vt-ro)
	[ "$rc" != 124 ] || fail "zeroout on a read-only table hangs"
	[ "$rc" != 0 ] || fail "zeroout on a read-only table succeeded"
fi
has "$WORK/ro" /dev/mapper/vt-ro $MIB 1M || fail "read-only table: data changed"
dmsetup remove --retry vt-ro
[ "$(raw_sum "$LOOP" 0 $((16 * MIB)))" = "$before" ] || fail "the device under a read-only table changed"
echo "ok: read-only table reads, refuses writes"

info "(d) veil in the middle of a table ($SECONDS s)"
mkloop 64M
DEV=$LOOP
A=8200				# veil's start: 4 MiB + 4 KiB
V=49152				# veil's length: 24 MiB
T=131072
plaintext "$WORK/span1" $((8 * MIB))
plaintext "$WORK/span2" $((8 * MIB))
plaintext "$WORK/span3" $((8 * MIB))
plaintext "$WORK/span4" $((8 * MIB))
# Two 8 MiB spans, in one request each, across veil's start and end.
X1=$((2 * MIB)) X2=$((26 * MIB))
# layout TARGET SPEC KEY IV "FEATURES": the three-target table
layout() {
	local feat
	feat=$(features "$5")
	echo "0 $A linear $DEV 0"
	echo "$A $V $1 $2 $3 $4 $DEV $A${feat:+ $feat}"
	echo "$((A + V)) $((T - A - V)) linear $DEV $((A + V))"
}
multi() {
	local spec=$1 key iv=$3 lv lc n
	key=$(randhex "$2")
	lv=$(layout veil "$spec" "$key" "$iv" "$4")
	lc=$(layout crypt "$spec" "$key" "$iv" "$4")

	# Both tables side by side over the same device; O_DIRECT throughout.
	dm_create vt-mv "$lv"
	dm_create vt-mc "$lc"
	[ "$(sectors /dev/mapper/vt-mv)" = "$T" ] || fail "three-target table: wrong size"
	put "$WORK/span1" /dev/mapper/vt-mv "$X1" 8M
	put "$WORK/span2" /dev/mapper/vt-mv "$X2" 8M
	has "$WORK/span1" /dev/mapper/vt-mv "$X1" 8M || fail "$spec $4: veil table does not read back across its start"
	has "$WORK/span2" /dev/mapper/vt-mv "$X2" 8M || fail "$spec $4: veil table does not read back across its end"
	# The linear parts hold the plaintext as it is, veil's part does not.
	cmp -s <(head -c $((A * 512 - X1)) "$WORK/span1") \
		<(dd if="$DEV" bs=4k skip="$X1" count=$((A * 512 - X1)) iflag=direct,skip_bytes,count_bytes status=none) ||
		fail "$spec $4: the linear part before veil does not hold the plaintext"
	cmp -s <(tail -c $((X2 + 8 * MIB - (A + V) * 512)) "$WORK/span2") \
		<(dd if="$DEV" bs=4k skip=$(((A + V) * 512)) count=$((X2 + 8 * MIB - (A + V) * 512)) iflag=direct,skip_bytes,count_bytes status=none) ||
		fail "$spec $4: the linear part after veil does not hold the plaintext"
	n=$(dd if="$DEV" bs=64k skip=$((A * 512)) count=$((V * 512)) \
		iflag=direct,skip_bytes,count_bytes status=none | grep -ac "$PLAIN_MARKER" || true)
	[ "$n" = 0 ] || fail "$spec $4: plaintext in veil's part of the device"
	sum=$(raw_sum "$DEV" "$X1" $((8 * MIB)))$(raw_sum "$DEV" "$X2" $((8 * MIB)))

	has "$WORK/span1" /dev/mapper/vt-mc "$X1" 8M || fail "$spec $4: written by veil, dm-crypt's table reads other data across the start"
	has "$WORK/span2" /dev/mapper/vt-mc "$X2" 8M || fail "$spec $4: written by veil, dm-crypt's table reads other data across the end"
	put "$WORK/span1" /dev/mapper/vt-mc "$X1" 8M
	put "$WORK/span2" /dev/mapper/vt-mc "$X2" 8M
	[ "$(raw_sum "$DEV" "$X1" $((8 * MIB)))$(raw_sum "$DEV" "$X2" $((8 * MIB)))" = "$sum" ] || fail "$spec $4: dm-crypt's table writes other bytes"
	put "$WORK/span3" /dev/mapper/vt-mc "$X1" 8M
	put "$WORK/span4" /dev/mapper/vt-mc "$X2" 8M
	has "$WORK/span3" /dev/mapper/vt-mv "$X1" 8M || fail "$spec $4: written by dm-crypt, veil's table reads other data across the start"
	has "$WORK/span4" /dev/mapper/vt-mv "$X2" 8M || fail "$spec $4: written by dm-crypt, veil's table reads other data across the end"
	# The same spans in 64 KiB requests, which meet the boundaries too.
	has "$WORK/span3" /dev/mapper/vt-mv "$X1" 64k || fail "$spec $4: veil's table, 64 KiB reads across the start"
	has "$WORK/span4" /dev/mapper/vt-mv "$X2" 64k || fail "$spec $4: veil's table, 64 KiB reads across the end"
	dm_remove vt-mc
	dm_remove vt-mv

	# veil alone at start 0 over veil's sectors: the same plaintext.
	local feat
	feat=$(features "$4")
	dm_create vt-alone "0 $V veil $spec $key $iv $DEV $A${feat:+ $feat}"
	cmp -s <(tail -c $((X1 + 8 * MIB - A * 512)) "$WORK/span3") \
		<(dd if=/dev/mapper/vt-alone bs=1M count=$((X1 + 8 * MIB - A * 512)) iflag=direct,count_bytes status=none) ||
		fail "$spec $4: veil alone at start 0 reads other data than in the table"
	dm_remove vt-alone
	echo "ok: $spec ${4:-(no features)} iv_offset=$iv in a three-target table"
}
multi aes-xts-plain64 64 4096 ""
multi aes-cbc-essiv:sha256 32 16 "sector_size:4096 iv_large_sectors"
multi serpent-xts-plain64 64 80 "sector_size:4096"

# (e) null_cipher SPEC
null_cipher() {
	local at=$MIB
	head -c $MIB /dev/urandom > "$WORK/null1"
	head -c $MIB /dev/urandom > "$WORK/null2"
	dm_create vt-veil "0 $LEN veil $1 - 0 $DEV $OFFSET"
	[ "$(dmsetup table --showkeys vt-veil | awk '{ print $5 }')" = - ] ||
		fail "$1: veil's table prints the key as $(dmsetup table --showkeys vt-veil)"
	write_direct "$WORK/null1" /dev/mapper/vt-veil "$at"
	dm_remove vt-veil
	same_data "$WORK/null1" "$DEV" $((OFFSET * 512 + at)) ||
		fail "$1: the device does not hold what veil wrote"
	dm_create vt-crypt "0 $LEN crypt $1 - 0 $DEV $OFFSET"
	same_data "$WORK/null1" /dev/mapper/vt-crypt "$at" ||
		fail "$1: written by veil, dm-crypt reads other data"
	write_direct "$WORK/null2" /dev/mapper/vt-crypt "$at"
	dm_remove vt-crypt
	dm_create vt-veil "0 $LEN veil $1 - 0 $DEV $OFFSET"
	same_data "$WORK/null2" /dev/mapper/vt-veil "$at" ||
		fail "$1: written by dm-crypt, veil reads other data"
	dm_remove vt-veil
	echo "ok: $1 with no key"
}
null_cipher cipher_null-ecb
null_cipher "capi:ecb(cipher_null)"
info "done ($SECONDS s)"
