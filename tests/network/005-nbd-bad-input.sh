#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Network faults and bad input, each a clear error:
# - a server that refuses the connection: nbd-client fails, and veilsetup
#   on the device that was never connected says it has no export;
# - an export smaller than a LUKS2 header: luksFormat fails or warns, as
#   cryptsetup does, and nothing opens;
# - a read-only export: luksFormat fails, writes nothing and does not say
#   it may have;
# - the server dies during luksFormat, after a few writes: veilsetup fails,
#   says the header may be partly written, the export did change, and
#   after a reconnect it is not taken for a usable volume.
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
grep -q -i "refused" "$WORK/out" || fail "nbd-client, port closed: $(cat "$WORK/out")"
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
# And a read-only export, where luksFormat writes nothing.
truncate -s 16K "$WORK/tiny.img"
truncate -s 32M "$WORK/ro.img"
cat >> "$WORK/nbd-server.conf" <<-CONF
[tiny]
exportname = $WORK/tiny.img
[ro]
exportname = $WORK/ro.img
readonly = true
CONF
nbd_server_kill
nbd_server_start
nbd-client "$NBD_SRV" "$NBD_PORT" /dev/nbd2 -N tiny >/dev/null
udevadm settle
[ "$(blockdev --getsize64 /dev/nbd2)" = 16384 ] || fail "tiny export: $(blockdev --getsize64 /dev/nbd2) bytes"
rc=0
"$VS" luksFormat -q --type luks2 $LUKS_FAST -d "$WORK/pass" /dev/nbd2 > "$WORK/out" 2>&1 || rc=$?
info "16 KiB export: luksFormat exit $rc: $(head -1 "$WORK/out")"
[ "$rc" = 1 ] && grep -q -i "too small" "$WORK/out" || fail "16 KiB export: exit $rc: $(cat "$WORK/out")"
grep -q "partly written" "$WORK/out" && fail "16 KiB export: nothing was written, yet: $(cat "$WORK/out")"
rc=0
"$VS" open -d "$WORK/pass" /dev/nbd2 vt > "$WORK/out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a volume opened on a 16 KiB export"
dmsetup info vt >/dev/null 2>&1 && fail "vt mapped on a 16 KiB export"
nbd_disconnect /dev/nbd2
nbd-client "$NBD_SRV" "$NBD_PORT" /dev/nbd3 -N ro >/dev/null
udevadm settle
rc=0
"$VS" luksFormat -q --type luks2 $LUKS_FAST -d "$WORK/pass" /dev/nbd3 > "$WORK/out" 2>&1 || rc=$?
info "read-only export: luksFormat exit $rc: $(head -1 "$WORK/out")"
[ "$rc" != 0 ] || fail "luksFormat succeeded on a read-only export"
grep -q "partly written" "$WORK/out" && fail "read-only export: nothing was written, yet: $(cat "$WORK/out")"
cmp -s "$WORK/ro.img" <(head -c 32M /dev/zero) || fail "the read-only export changed"
nbd_disconnect /dev/nbd3

# 3. The server dies in the middle of luksFormat: netem's delay makes the
# header writes take seconds; the server is killed once a few of them
# are done (the device's count of completed writes).
nbd_connect
dd if=/dev/urandom of="$NBD" bs=1M count=4 oflag=direct status=none
cp "$EXPORT" "$WORK/before.img"
netem "delay 100ms"
writes=$(awk '{ print $5 }' /sys/block/nbd0/stat)
"$VS" luksFormat -q --type luks2 $LUKS_FAST -d "$WORK/pass" "$NBD" > "$WORK/format.out" 2>&1 &
fpid=$!
for ((i = 0; i < 600; i++)); do
	[ "$(awk '{ print $5 }' /sys/block/nbd0/stat)" -ge $((writes + 3)) ] && break
	kill -0 $fpid 2>/dev/null || fail "luksFormat finished before 3 writes: $(cat "$WORK/format.out")"
	sleep 0.1
done
kill -0 $fpid 2>/dev/null || fail "luksFormat finished before the server was killed: $(cat "$WORK/format.out")"
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
# The dead connection: a header that cannot be read is not "not LUKS".
rc=0
"$VS" luksDump "$NBD" > "$WORK/out" 2>&1 || rc=$?
info "luksDump over the dead connection: exit $rc: $(head -1 "$WORK/out")"
grep -q "Cannot read the header of $NBD: input/output error" "$WORK/out" ||
	fail "luksDump over a dead connection: $(cat "$WORK/out")"
netem ""
within 30 nbd_disconnect || fail "nbd-client -d after the crash"
nbd_server_start
nbd_connect
cmp -s "$EXPORT" "$WORK/before.img" && fail "the export is as before: the crash came before any write"
rc=0
"$VS" open -d "$WORK/pass" "$NBD" vt > "$WORK/out" 2>&1 || rc=$?
info "open after the broken luksFormat: exit $rc: $(head -1 "$WORK/out")"
[ "$rc" != 0 ] || fail "a half-formatted export opened"
nbd_disconnect
