#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Network faults and bad input, each a clear error:
# - a server that refuses the connection: nbd-client fails, and veilsetup
#   on the device that was never connected says it has no export;
# - an export smaller than a LUKS2 header: luksFormat fails or warns, as
#   cryptsetup does, and nothing opens;
# - the server dies during luksFormat: veilsetup fails, says the header may
#   be partly written, and after a reconnect the export is not taken for a
#   usable volume.
. "$(dirname "$0")/../lib.sh"
requires root
. "$TOP/tests/network/nbd.sh"
veil_load
nbd_setup 32M
echo -n "pass" > "$WORK/pass"
LUKS_FAST="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"

# 1. Nothing listens on this port.
rc=0
nbd-client "$NBD_SRV" 10810 /dev/nbd1 -N veil > "$WORK/out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "nbd-client connected to a port nobody listens on"
info "refused: nbd-client exit $rc: $(grep -m1 -i -E 'refused|error' "$WORK/out")"
for cmd in "luksFormat -q --type luks2 $LUKS_FAST -d $WORK/pass /dev/nbd1" \
	   "open --type plain -c aes-xts-plain64 -s 512 -d $WORK/pass /dev/nbd1 vt" \
	   "open -d $WORK/pass /dev/nbd1 vt"; do
	rc=0
	"$VS" $cmd > "$WORK/out" 2>&1 || rc=$?
	[ "$rc" != 0 ] || fail "veilsetup $cmd: succeeded on an NBD device with no export"
	grep -q "/dev/nbd1 is a network block device with no export connected" "$WORK/out" ||
		fail "veilsetup ${cmd%% *} on an unconnected NBD device: $(cat "$WORK/out")"
done
dmsetup info vt >/dev/null 2>&1 && fail "something was mapped from an unconnected device"

# 2. A 16 KiB export: smaller than a LUKS2 header's two metadata copies.
truncate -s 16K "$WORK/tiny.img"
cat >> "$WORK/nbd-server.conf" <<-CONF
[tiny]
exportname = $WORK/tiny.img
CONF
nbd_server_kill
nbd_server_start
nbd-client "$NBD_SRV" "$NBD_PORT" /dev/nbd2 -N tiny >/dev/null
udevadm settle
[ "$(blockdev --getsize64 /dev/nbd2)" = 16384 ] || fail "tiny export: $(blockdev --getsize64 /dev/nbd2) bytes"
rc=0
"$VS" luksFormat -q --type luks2 $LUKS_FAST -d "$WORK/pass" /dev/nbd2 > "$WORK/out" 2>&1 || rc=$?
info "16 KiB export: luksFormat exit $rc: $(head -1 "$WORK/out")"
grep -q -i "too small" "$WORK/out" || fail "16 KiB export: $(cat "$WORK/out")"
rc=0
"$VS" open -d "$WORK/pass" /dev/nbd2 vt > "$WORK/out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a volume opened on a 16 KiB export"
dmsetup info vt >/dev/null 2>&1 && fail "vt mapped on a 16 KiB export"
nbd_disconnect /dev/nbd2

# 3. The server dies in the middle of luksFormat: netem's delay makes the
# header writes take seconds; the server is killed after the first.
nbd_connect
netem "delay 100ms"
dd if=/dev/urandom of="$NBD" bs=1M count=4 oflag=direct status=none
"$VS" luksFormat -q --type luks2 $LUKS_FAST -d "$WORK/pass" "$NBD" > "$WORK/format.out" 2>&1 &
fpid=$!
sleep 1
kill -0 $fpid 2>/dev/null || fail "luksFormat finished in a second despite the delay: $(cat "$WORK/format.out")"
nbd_server_kill
for ((i = 0; i < 1200; i++)); do
	kill -0 $fpid 2>/dev/null || break
	sleep 0.1
done
kill -0 $fpid 2>/dev/null && fail "luksFormat still runs 2 minutes after the server died"
rc=0
wait $fpid || rc=$?
info "luksFormat during the crash: exit $rc: $(tr '\n' ' ' < "$WORK/format.out")"
[ "$rc" != 0 ] || fail "luksFormat succeeded although the server died"
grep -q "header may be partly written" "$WORK/format.out" ||
	fail "luksFormat failed without saying the header may be partly written: $(cat "$WORK/format.out")"
netem ""
within 30 nbd_disconnect || fail "nbd-client -d after the crash"
nbd_server_start
nbd_connect
rc=0
"$VS" open -d "$WORK/pass" "$NBD" vt > "$WORK/out" 2>&1 || rc=$?
info "open after the broken luksFormat: exit $rc: $(head -1 "$WORK/out")"
[ "$rc" != 0 ] || fail "a half-formatted export opened"
nbd_disconnect
