#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Key messages against status: while the device is suspended, 40 rounds of
# "key set" (two keys in turn) and "key wipe" race with "dmsetup table --showkeys"
# from two other processes. Every key status prints is whole: one of the
# two keys or all zeros, never a mix or freed memory (KASAN on the debug
# kernel). Then resume is refused after a wipe and works after a set, and
# resume races "key wipe": a resumed device always runs with its key.
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
# runs with the key it was resumed with (a wipe that slipped in between
# the key check and the I/O being let in would leave it running on a
# random key: 53e53ed checked in preresume and opened in resume).
dmsetup suspend vt
resumed=0
for ((n = 0; n < 30; n++)); do
	dmsetup message vt 0 key set "$k1"
	dmsetup resume vt 2>/dev/null &
	rp=$!
	dmsetup message vt 0 key wipe 2>/dev/null || true
	wait $rp || true
	if dmsetup info vt | grep -q '^State: *ACTIVE'; then
		resumed=$((resumed + 1))
		key=$(dmsetup table --showkeys vt | cut -d' ' -f5)
		[ "$key" = "$k1" ] || fail "round $n: resumed, but running with key $key"
		dmsetup suspend vt
	fi
done
info "resume against wipe: resume won $resumed of 30 rounds"
dmsetup message vt 0 key set "$k1"
dmsetup resume vt
