#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write masks (keystream made ahead for AEAD writes) against dm-crypt:
# capi:gcm(aes)-random integrity:28:aead (what cryptsetup's
# --cipher aes-gcm-random --integrity aead maps) and
# capi:rfc4106(gcm(aes))-random integrity:24:aead (its IV is 8 bytes), over
# dm-integrity made by hand (direct mode), 512- and 4096-byte sectors:
#   - masks on (the default): 1 MiB written through veil, in 4 KiB and
#     64 KiB O_DIRECT writes (a write shared with helpers takes no mask,
#     a 4 KiB one does), counts aead_mask_hit > 0 and reads back
#     through dm-crypt; 1 MiB written through dm-crypt reads back through
#     veil; no "aead write masks off" in the log (the self-test at table
#     load passed);
#   - rekey: with the pool full of masks of key A (a pause lets the refill
#     finish), `key wipe` then `key set` of key B while suspended; writes
#     after it count hits again and read back through dm-crypt with key B.
#     A mask of key A would have left a tag and ciphertext of key A there,
#     which dm-crypt with key B refuses (EILSEQ): every hit after the rekey
#     came from a mask of key B;
#   - aead_masks:0: no hit and no miss counted, the line prints back with
#     it, and what veil writes reads back through dm-crypt.
#   - the stack cryptsetup makes for luksFormat --type luks2 --cipher
#     aes-gcm-random --integrity aead (its table on record in the log):
#     dm-crypt's layer swapped for veil with the same line, veil's writes
#     count hits and read back through dm-crypt.
# interop/008 checks that 64 writes of one sector under masks store 64
# different IVs and tags.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_integrity dm_crypt
requires cmd cryptsetup
veil_load

MIB=$((1024 * 1024))
plaintext "$WORK/a" "$MIB"
plaintext "$WORK/b" "$MIB"
plaintext "$WORK/c" "$MIB"
plaintext "$WORK/d" "$MIB"

hits() { status_field "$1" aead_mask_hit; }
# Masks need the architecture's GHASH (lib.sh's arch_ghash); a kernel
# built without it has none, and every write goes through the AEAD: the
# checks below still read every write back through the other target, and
# count no hit.
ARCH_GHASH=0
arch_ghash && ARCH_GHASH=1
[ "$ARCH_GHASH" = 1 ] || info "no architecture GHASH in this kernel: write masks off, no hit expected"
# hits_ok DEV MIN WHAT: DEV counted more than MIN hits (none without the
# architecture's GHASH, where its masks are off)
hits_ok() {
	local h m
	h=$(hits "$1") m=$(misses "$1")
	if [ "$ARCH_GHASH" = 1 ]; then
		[ "$h" -gt "$2" ] || fail "$3: aead_mask_hit=$h aead_mask_miss=$m, want more than $2"
	else
		[ "$h" = 0 ] && [ "$m" = 0 ] || fail "$3: masks off, yet aead_mask_hit=$h aead_mask_miss=$m"
	fi
}
# ns_per_sector DEV SIZE: the writes' cipher time per sector, for the record
ns_per_sector() {
	echo $(($(status_field "$1" cipher_ns_encrypt) * $2 / $(status_field "$1" bytes_encrypted)))
}
# timed DEV SIZE: 16 rounds of 24 O_DIRECT writes of one sector, each
# round after a pause that lets the refill finish: the writes' cipher time
# per sector and the hits, for the record (timing under emulation is no
# test)
timed() {
	local r
	dmsetup message "$1" 0 stats reset
	for r in $(seq 16); do
		sleep 0.5
		dd if="$WORK/a" of="/dev/mapper/$1" bs="$2" count=24 seek=$((r * 24)) \
			oflag=direct conv=notrunc status=none
	done
	echo "$(ns_per_sector "$1" "$2") ns per sector, aead_mask_hit=$(hits "$1")"
}
misses() { status_field "$1" aead_mask_miss; }

for spec in "capi:gcm(aes)-random 28 32" "capi:rfc4106(gcm(aes))-random 24 36"; do
	set -- $spec
	cipher=$1 tuple=$2 keylen=$3
	for size in 512 4096; do
		what="$cipher sector $size"
		info "$what"
		mkloop 16M
		integrity vt-int "$LOOP" "$tuple" D "$size"
		len=$INT_LEN
		feat="1 integrity:$tuple:aead"
		[ "$size" = 512 ] || feat="2 integrity:$tuple:aead sector_size:$size"
		keya=$(randhex "$keylen") keyb=$(randhex "$keylen")
		int=$(majmin /dev/mapper/vt-int)
		crypt="0 $len crypt $cipher $keya 0 $int 0 $feat"
		veil="0 $len veil $cipher $keya 0 $int 0 $feat"

		# Masks on: veil writes, dm-crypt reads; and the reverse.
		kmsg_mark
		dm_create vt-ae "$veil"
		BS=4096 write_direct "$WORK/a" /dev/mapper/vt-ae $MIB
		BS=65536 write_direct "$WORK/a" /dev/mapper/vt-ae $((2 * MIB))
		hits_ok vt-ae 0 "$what: 2 MiB written through veil"
		echo "ok: $what: veil wrote 2 MiB: aead_mask_hit=$(hits vt-ae) aead_mask_miss=$(misses vt-ae)"
		if [ "$ARCH_GHASH" = 1 ]; then
			! kmsg_since | grep -q "aead write masks off" ||
				fail "$what: $(kmsg_since | grep 'aead write masks off')"
		else
			kmsg_since | grep -q "aead write masks off: no ctr(aes) or architecture GHASH" ||
				fail "$what: no architecture GHASH, and no log line saying the masks are off"
		fi
		dm_remove vt-ae
		dm_create vt-ae "$crypt"
		BS=65536 same_data "$WORK/a" /dev/mapper/vt-ae $MIB &&
			BS=65536 same_data "$WORK/a" /dev/mapper/vt-ae $((2 * MIB)) ||
			fail "$what: dm-crypt does not read what veil wrote with masks"
		BS=65536 write_direct "$WORK/b" /dev/mapper/vt-ae $((3 * MIB))
		dm_remove vt-ae
		dm_create vt-ae "$veil"
		BS=65536 same_data "$WORK/b" /dev/mapper/vt-ae $((3 * MIB)) ||
			fail "$what: veil does not read what dm-crypt wrote"
		echo "ok: $what: dm-crypt reads what veil wrote with masks, veil what dm-crypt wrote"

		# Rekey: the pool full of key A's masks, then key B.
		BS=4096 write_direct "$WORK/a" /dev/mapper/vt-ae $((4 * MIB))
		sleep 2
		dmsetup suspend vt-ae
		dmsetup message vt-ae 0 key wipe
		dmsetup message vt-ae 0 key set "$keyb"
		dmsetup resume vt-ae
		dmsetup message vt-ae 0 stats reset
		BS=4096 write_direct "$WORK/c" /dev/mapper/vt-ae $((5 * MIB))
		BS=65536 write_direct "$WORK/c" /dev/mapper/vt-ae $((6 * MIB))
		hits_ok vt-ae 0 "$what: after the rekey"
		h=$(hits vt-ae) m=$(misses vt-ae)
		info "$what: masks on: $(timed vt-ae "$size")"
		info "$what: GHASH drivers in use: $(awk '/^driver/ { d = $3 } /^refcnt/ && $3 > 1 && d ~ /ghash/ { print d }' /proc/crypto | sort -u | tr '\n' ' ')"
		dm_remove vt-ae
		dm_create vt-ae "${crypt/$keya/$keyb}"
		BS=65536 same_data "$WORK/c" /dev/mapper/vt-ae $((5 * MIB)) &&
			BS=65536 same_data "$WORK/c" /dev/mapper/vt-ae $((6 * MIB)) ||
			fail "$what: after key wipe and key set, dm-crypt with the new key does not read veil's writes"
		dm_remove vt-ae
		echo "ok: $what: key wipe, key set: aead_mask_hit=$h aead_mask_miss=$m, all read back through dm-crypt with the new key"

		# Masks off.
		dm_create vt-ae "0 $len veil $cipher $keya 0 $int 0 $((${feat%% *} + 1)) ${feat#* } aead_masks:0"
		dmsetup table vt-ae | grep -q ' aead_masks:0$' ||
			fail "$what: aead_masks:0 does not print back: $(dmsetup table vt-ae)"
		BS=65536 write_direct "$WORK/d" /dev/mapper/vt-ae $((7 * MIB))
		[ "$(hits vt-ae)" = 0 ] && [ "$(misses vt-ae)" = 0 ] ||
			fail "$what: aead_masks:0 counted hits or misses: $(dmsetup status vt-ae)"
		info "$what: masks off: $(timed vt-ae "$size")"
		dm_remove vt-ae
		dm_create vt-ae "$crypt"
		BS=65536 same_data "$WORK/d" /dev/mapper/vt-ae $((7 * MIB)) ||
			fail "$what: with aead_masks:0, dm-crypt does not read what veil wrote"
		dm_remove vt-ae
		echo "ok: $what: aead_masks:0: no masks used, dm-crypt reads veil's writes"
		dm_remove vt-int
	done
done

info "the stack of cryptsetup luksFormat --cipher aes-gcm-random --integrity aead"
head -c 32 /dev/urandom > "$WORK/pass"
for size in 512 4096; do
	what="luks2 aes-gcm-random aead sector $size"
	mkloop 48M
	cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
		--key-file "$WORK/pass" --cipher aes-gcm-random --integrity aead \
		--integrity-no-wipe --sector-size "$size" "$LOOP"
	_devs+=(vt-luks_dif vt-luks)
	cryptsetup open --disable-keyring --key-file "$WORK/pass" "$LOOP" vt-luks
	info "$what: $(dmsetup table vt-luks)"
	table=$(dmsetup table --showkeys vt-luks)
	dmsetup suspend vt-luks
	dmsetup reload vt-luks --table "${table/ crypt / veil }"
	dmsetup resume vt-luks
	BS=4096 write_direct "$WORK/a" /dev/mapper/vt-luks $MIB
	hits_ok vt-luks 0 "$what: veil in cryptsetup's stack"
	h=$(hits vt-luks)
	dmsetup suspend vt-luks
	dmsetup reload vt-luks --table "$table"
	dmsetup resume vt-luks
	BS=65536 same_data "$WORK/a" /dev/mapper/vt-luks $MIB ||
		fail "$what: dm-crypt does not read what veil wrote with masks"
	dm_remove vt-luks
	dm_remove vt-luks_dif
	echo "ok: $what: veil in cryptsetup's stack: aead_mask_hit=$h, dm-crypt reads it back"
done

info "concurrent writers, one slot, rekeys while the refill runs, a reload under I/O"
# Four writers at once write zeros over 12 MiB of 4096-byte sectors, four
# times, with a pool of one slot (aead_masks:1: the refill must be queued
# by the write that empties it) and with the default pool: a rekey (wipe,
# set) after passes 1 and 2, right after the writes, while the refill
# runs; in pass 3 the table is reloaded with a new key while the writers
# run (the old target, its refill perhaps running, goes while the new one
# takes the writes); pass 4 writes everything under that last key. Zeros
# under one IV and key give the same ciphertext: no 512-byte block of the
# device below (data or metadata) but zeros may appear twice. Then
# dm-crypt with the last key reads every sector back as zeros.
for masks in 1 64; do
	what="gcm(aes) aead_masks:$masks, 4 writers"
	mkloop 16M
	integrity vt-int "$LOOP" 28 D 4096
	len=$INT_LEN
	key=$(randhex 32)
	feat="3 integrity:28:aead sector_size:4096 aead_masks:$masks"
	dm_create vt-ae "0 $len veil capi:gcm(aes)-random $key 0 $(majmin /dev/mapper/vt-int) 0 $feat"
	quarter=$((len / 8 / 4))
	reloads=0
	for pass in 1 2 3 4; do
		writers=()
		for w in 0 1 2 3; do
			dd if=/dev/zero of=/dev/mapper/vt-ae bs=4096 count=$quarter \
				seek=$((w * quarter)) oflag=direct conv=notrunc status=none &
			writers+=($!)
		done
		# Pass 3: reloads, each with a new key, as long as a writer runs.
		while [ "$pass" = 3 ] && kill -0 "${writers[@]}" 2>/dev/null; do
			key=$(randhex 32)
			dmsetup reload vt-ae --table "0 $len veil capi:gcm(aes)-random $key 0 $(majmin /dev/mapper/vt-int) 0 $feat"
			dmsetup resume vt-ae
			reloads=$((reloads + 1))
			sleep 0.1
		done
		wait
		[ "$pass" -ge 3 ] && continue
		key=$(randhex 32)
		dmsetup suspend vt-ae
		dmsetup message vt-ae 0 key wipe
		dmsetup message vt-ae 0 key set "$key"
		dmsetup resume vt-ae
	done
	[ "$reloads" -gt 0 ] || fail "$what: the writers were done before the first reload"
	info "$what: $reloads reloads while writers ran"
	# More hits than the one slot made at the reload's table load: the
	# refill ran again after it (the counters start again with the table).
	hits_ok vt-ae 1 "$what"
	h=$(hits vt-ae) m=$(misses vt-ae)
	dm_remove vt-ae
	dups=$(python3 - "$LOOP" <<'PY'
import collections, sys
with open(sys.argv[1], "rb") as f:
    data = f.read()
zero = bytes(512)
seen = collections.Counter(data[i:i + 512] for i in range(0, len(data), 512))
print(sum(n - 1 for b, n in seen.items() if n > 1 and b != zero))
PY
)
	[ "$dups" = 0 ] || fail "$what: $dups blocks of the device repeat: an IV and keystream used twice"
	dm_create vt-ae "0 $len crypt capi:gcm(aes)-random $key 0 $(majmin /dev/mapper/vt-int) 0 2 integrity:28:aead sector_size:4096"
	cmp -s -n $((quarter * 4 * 4096)) /dev/zero <(dd if=/dev/mapper/vt-ae bs=4096 count=$((quarter * 4)) iflag=direct status=none) ||
		fail "$what: dm-crypt does not read back zeros with the last key"
	dm_remove vt-ae
	dm_remove vt-int
	echo "ok: $what: aead_mask_hit=$h aead_mask_miss=$m, no block repeated, dm-crypt reads them back"
done

[ -z "$(kmsg_bad)" ] || fail "kernel log: $(kmsg_bad)"
