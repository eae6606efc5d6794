#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Sectors beyond 2^32 (2 TiB): a 64 MiB ramdisk (brd) placed by dm-linear
# after dm-zero so that its first half lies below sector 2^32 and its
# second half above. veil and dm-crypt, mapped over the whole device with
# the same key and table line, read each other's bytes in requests below,
# across and beyond sector 2^32, and write the same ciphertext there:
#   - aes-xts-plain64 (the IV counts on past 2^32), aes-xts-plain and
#     aes-cbc-plain (the IV is the sector number's low 32 bits and wraps at
#     2^32, as dm-crypt's does);
#   - iv_offset 0, an iv_offset near 2^32 (the IV wraps a second time in
#     the ramdisk), and sector_size:4096 with iv_large_sectors and an
#     iv_offset that takes the 4096-byte sector number past 2^32 in the
#     ramdisk.
# The ramdisk never holds the plaintext. And plain and plain64 really
# differ: the same data has the same ciphertext below 2^32 and other
# ciphertext beyond; plain with iv_offset 2^32 writes what plain with
# iv_offset 0 writes (wrap), plain64 does not.
. "$(dirname "$0")/../lib.sh"
requires root
requires module dm_crypt dm_zero
modinfo brd > /dev/null 2>&1 || skip "no module brd"
veil_load

# brd takes its size at load time: another test may have loaded it with
# other parameters; take it over if nobody uses it.
if module_loaded brd; then
	rmmod brd 2>/dev/null || skip "brd is loaded and in use"
fi
modprobe brd rd_nr=1 rd_size=65536
# Devices on the ramdisk go before the module (at_exit runs before the
# devices made by dm_create are removed).
brd_cleanup() {
	local d
	for d in vt-veil vt-crypt vt-big; do
		dmsetup info "$d" > /dev/null 2>&1 && dmsetup remove --retry "$d"
	done
	rmmod brd
}
at_exit brd_cleanup
RAM=/dev/ram0
[ -b "$RAM" ] && [ "$(sectors "$RAM")" = 131072 ] || fail "no 64 MiB /dev/ram0"

G=$((1 << 32))			# sector 2^32
RS=131072			# ramdisk sectors
S0=$((G - RS / 2))		# where the ramdisk starts
LEN=$((S0 + RS))
dm_create vt-big "0 $S0 zero
$S0 $RS linear $RAM 0"
BIG=/dev/mapper/vt-big
[ "$(sectors "$BIG")" = "$LEN" ] || fail "linear device has $(sectors "$BIG") sectors"

B=$((G * 512))			# byte offset of sector 2^32
MIB=$((1024 * 1024))
# The regions written, 1 MiB each: below 2^32, across it, beyond it, and
# across sector 2^32 + 24576 (where IV_NEAR takes the IV past 2^33).
REGIONS="$((B - 16 * MIB)) $((B - MIB / 2)) $((B + 8 * MIB)) $((B + 12 * MIB - MIB / 2))"
IV_NEAR=$((G - 24576))
# With iv_large_sectors the IV is (sector + iv_offset) / 8: this offset
# takes it past 2^32 at the same place, sector 2^32 + 24576.
IV_LARGE=$((8 * G - G - 24576))
BS=262144
plaintext "$WORK/a" "$MIB"
plaintext "$WORK/b" "$MIB"

# raw_regions: the bytes of every region on the ramdisk, one after the
# other (O_DIRECT: the ramdisk's page cache goes stale under the tables)
raw_at() { read_direct "$RAM" "$MIB" $(($1 - S0 * 512)); }
raw_regions() {
	local r
	for r in $REGIONS; do raw_at "$r"; done
}

# both SPEC KEY_BYTES IV_OFFSET "FEATURES": veil and dm-crypt mapped side
# by side over the device: veil writes A in every region, the ramdisk holds
# no plaintext there, dm-crypt reads A and writes it again (the same
# ciphertext must result), dm-crypt writes B, veil reads B
both() {
	local spec=$1 iv=$3 feat key r t n
	key=$(randhex "$2")
	feat=$(set -- $4; [ $# -eq 0 ] || echo " $# $*")
	t="0 $LEN SPEC $spec $key $iv $BIG 0$feat"
	dm_create vt-veil "${t/SPEC/veil}"
	dm_create vt-crypt "${t/SPEC/crypt}"

	for r in $REGIONS; do write_direct "$WORK/a" /dev/mapper/vt-veil "$r"; done
	raw_regions > "$WORK/raw.veil"
	n=$(grep -ac "$PLAIN_MARKER" "$WORK/raw.veil" || true)
	[ "$n" = 0 ] || fail "$spec iv_offset=$iv$feat: plaintext on the ramdisk"
	for r in $REGIONS; do
		same_data "$WORK/a" /dev/mapper/vt-crypt "$r" ||
			fail "$spec iv_offset=$iv$feat: written by veil, dm-crypt reads other data at byte $r"
		write_direct "$WORK/a" /dev/mapper/vt-crypt "$r"
	done
	raw_regions | cmp -s - "$WORK/raw.veil" ||
		fail "$spec iv_offset=$iv$feat: dm-crypt writes other ciphertext than veil"
	for r in $REGIONS; do write_direct "$WORK/b" /dev/mapper/vt-crypt "$r"; done
	for r in $REGIONS; do
		same_data "$WORK/b" /dev/mapper/vt-veil "$r" ||
			fail "$spec iv_offset=$iv$feat: written by dm-crypt, veil reads other data at byte $r"
	done
	dm_remove vt-crypt
	dm_remove vt-veil
	echo "ok: $spec iv_offset=$iv${feat:- (no features)}"
}

both aes-xts-plain64 64 0 ""
both aes-xts-plain64 64 "$IV_NEAR" ""
both aes-xts-plain64 64 "$IV_LARGE" "sector_size:4096 iv_large_sectors"
both aes-xts-plain 64 0 ""
both aes-xts-plain 64 "$IV_NEAR" ""
both aes-xts-plain 64 "$IV_NEAR" "sector_size:4096"
both aes-xts-plain 64 "$IV_LARGE" "sector_size:4096 iv_large_sectors"
both aes-cbc-plain 32 0 ""
both aes-cbc-plain 32 "$IV_NEAR" ""
both aes-cbc-plain 32 "$IV_LARGE" "sector_size:4096 iv_large_sectors"

# cipher_at SPEC IV_OFFSET: write A through veil (fixed key) in every
# region; the ciphertext of region n in $WORK/c.<SPEC>.<IV_OFFSET>.<n>.
# (That dm-crypt writes the same ciphertext, both() showed.)
KEY=$(randhex 64)
cipher_at() {
	local n=0 r
	dm_create vt-veil "0 $LEN veil $1 $KEY $2 $BIG 0"
	for r in $REGIONS; do write_direct "$WORK/a" /dev/mapper/vt-veil "$r"; done
	dm_remove vt-veil
	for r in $REGIONS; do
		n=$((n + 1))
		raw_at "$r" > "$WORK/c.$1.$2.$n"
	done
}
c() { echo "$WORK/c.$1.$2.$3"; }
half() { head -c $((MIB / 2)) "$1"; }
tail_half() { tail -c $((MIB / 2)) "$1"; }

cipher_at aes-xts-plain64 0
cipher_at aes-xts-plain 0
cipher_at aes-xts-plain "$G"
cipher_at aes-xts-plain64 "$G"
# Region 1 lies below 2^32, region 2 across it (its first half below),
# regions 3 and 4 beyond.
cmp -s "$(c aes-xts-plain 0 1)" "$(c aes-xts-plain64 0 1)" ||
	fail "plain and plain64 differ below sector 2^32"
cmp -s <(half "$(c aes-xts-plain 0 2)") <(half "$(c aes-xts-plain64 0 2)") ||
	fail "plain and plain64 differ just below sector 2^32"
expect_fail cmp -s <(tail_half "$(c aes-xts-plain 0 2)") <(tail_half "$(c aes-xts-plain64 0 2)")
for n in 3 4; do
	expect_fail cmp -s "$(c aes-xts-plain 0 $n)" "$(c aes-xts-plain64 0 $n)"
done
for n in 1 2 3 4; do
	cmp -s "$(c aes-xts-plain 0 $n)" "$(c aes-xts-plain "$G" $n)" ||
		fail "plain with iv_offset 2^32 does not wrap to iv_offset 0 (region $n)"
	expect_fail cmp -s "$(c aes-xts-plain64 0 $n)" "$(c aes-xts-plain64 "$G" $n)"
done
# Not only some sectors beyond 2^32 differ: first, last and some between.
sector() { dd if="$1" bs=512 skip="$2" count=1 status=none; }
for k in 0 1 8 1024 2047; do
	expect_fail cmp -s <(sector "$(c aes-xts-plain 0 3)" $k) <(sector "$(c aes-xts-plain64 0 3)" $k)
done
info "plain wraps at sector 2^32, plain64 does not ($SECONDS s)"

# Nothing of the plaintext anywhere on the ramdisk, read once no table
# holds it (so its page cache is fresh).
dm_remove vt-big
no_plaintext "$RAM"
