#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Key messages against status: while the device is suspended, 40 rounds of
# "key set" (two keys in turn) and "key wipe" race with "dmsetup table --showkeys"
# from two other processes. Every key status prints is whole: one of the
# two keys or all zeros, never a mix or freed memory (KASAN on the debug
# kernel). Then resume is refused after a wipe and works after a set, and
# resume races "key wipe": a resumed device never reads under a random key.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
veil_load

mkloop 8M
k1=$(randhex 64) k2=$(randhex 64) zeros=$(printf '0%.0s' $(seq 128))
dm_create vt "0 16384 veil aes-xts-plain64 $k1 0 $LOOP 0"
dmsetup suspend vt

reader() {
	while [ ! -f "$WORK/stop" ]; do
		dmsetup table --showkeys vt | cut -d' ' -f5
	done > "$WORK/keys.$1"
}
reader 1 &
r1=$!
reader 2 &
r2=$!
for ((n = 0; n < 40; n++)); do
	dmsetup message vt 0 key set "$k2"
	dmsetup message vt 0 key wipe
	dmsetup message vt 0 key set "$k1"
done
touch "$WORK/stop"
wait $r1 $r2
seen=$(cat "$WORK"/keys.* | wc -l)
bad=$(cat "$WORK"/keys.* | grep -v -x -e "$k1" -e "$k2" -e "$zeros" | head -3 || true)
info "$n rounds of set/wipe/set, $seen status lines read"
[ "$seen" -ge 10 ] || fail "only $seen status lines read"
[ -z "$bad" ] || fail "status printed a torn or stale key: $bad"

dmsetup message vt 0 key wipe
expect_fail dmsetup resume vt
dmsetup message vt 0 key set "$k1"
dmsetup resume vt || fail "resume after key set"

# Resume against "key wipe", 30 rounds: whichever wins, a resumed device
# never gives data under a random key. A wipe that slips in between
# resume's key check and the I/O being let in leaves it running with no
# key, and then every read fails.
dmsetup suspend vt
resumed=0 wiped=0
for ((n = 0; n < 30; n++)); do
	dmsetup message vt 0 key set "$k1"
	dmsetup resume vt 2>/dev/null &
	rp=$!
	dmsetup message vt 0 key wipe 2>/dev/null || true
	wait $rp || true
	if dmsetup info vt | grep -q '^State: *ACTIVE'; then
		resumed=$((resumed + 1))
		key=$(dmsetup table --showkeys vt | cut -d' ' -f5)
		if [ "$key" = "$zeros" ]; then
			wiped=$((wiped + 1))
			dd if=/dev/mapper/vt of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null &&
				fail "round $n: resumed with the key wiped, and a read succeeded"
		else
			[ "$key" = "$k1" ] || fail "round $n: resumed, running with key $key"
		fi
		dmsetup suspend vt
	fi
done
info "resume against wipe: resume won $resumed of 30 rounds ($wiped with the key wiped)"
dmsetup message vt 0 key set "$k1"
dmsetup resume vt
