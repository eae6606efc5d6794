#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The NBD server dies in the middle of a write stream and comes back.
# A writer on ext4 on a veil volume over NBD appends numbered 64 KiB
# records, each followed by fdatasync (a flush through veil to the
# server, which fsyncs the export file: the export has flush and fua),
# and logs a record as acknowledged only once its flush returned. The
# flushes are seen to reach the NBD device. The server is killed with SIGKILL while the writer runs: the
# writer must get an error within the client's timeout, nothing may hang,
# and the volume must close. After the server restarts and the client
# reconnects, the volume opens, fsck finds the file system clean after the
# journal's replay, and every acknowledged record reads back intact.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd mkfs.ext4 fsck.ext4
. "$TOP/tests/network/nbd.sh"
veil_load
mnt=$WORK/mnt
mkdir -p "$mnt"
nbd_setup 96M
nbd_connect
LOG=$WORK/acked

# writer FILE: records 0, 1, ... of 64 KiB, each "record N" then random
# bytes whose SHA-256 goes to $LOG with N once fdatasync returned
cat > "$WORK/writer.py" <<'PY'
import hashlib, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
log = open(sys.argv[2], "a", buffering=1)
n = 0
while n < 100000:
    rec = (b"record %d\n" % n).ljust(64, b" ") + os.urandom(65536 - 64)
    os.write(fd, rec)
    os.fdatasync(fd)
    log.write("%d %s\n" % (n, hashlib.sha256(rec).hexdigest()))
    n += 1
PY

# stop_writer MESSAGE: fail, the writer killed first so that the file
# system can be unmounted
stop_writer() {
	kill $wpid 2>/dev/null || true
	wait $wpid 2>/dev/null || true
	fail "$1"
}

for spec in aes-xts-plain64 aes-ctr-plain64; do
	# vs_open's cipher, for the first open and the reopen alike
	CIPHER=$spec KEYBITS=$([ $spec = aes-xts-plain64 ] && echo 512 || echo 256)
	vs_open "$NBD" vt
	for d in nbd0 "$(basename "$(readlink -f /dev/mapper/vt)")"; do
		[ "$(cat /sys/block/$d/queue/write_cache)" = "write back" ] ||
			fail "$spec: $d has no write cache: flushes would be dropped"
	done
	mkfs.ext4 -q /dev/mapper/vt
	mount /dev/mapper/vt "$mnt"
	track_mount "$mnt"
	: > "$LOG"
	flushes=$(nbd_flushes)
	python3 "$WORK/writer.py" "$mnt/stream" "$LOG" 2> "$WORK/writer.err" &
	wpid=$!
	# Some records in, then the crash.
	for ((i = 0; i < 300; i++)); do
		[ "$(wc -l < "$LOG")" -ge 40 ] && break
		kill -0 $wpid 2>/dev/null || fail "$spec: the writer stopped before the crash: $(cat "$WORK/writer.err")"
		sleep 0.1
	done
	[ "$(wc -l < "$LOG")" -ge 40 ] || stop_writer "$spec: 40 records took more than 30 s"
	flushed=$(($(nbd_flushes) - flushes))
	[ "$flushed" -ge 40 ] || stop_writer "$spec: $flushed flushes reached $NBD for 40 fdatasync calls"
	nbd_server_kill
	# The client sees the connection reset: errors, not a hang.
	for ((i = 0; i < 600; i++)); do
		kill -0 $wpid 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $wpid 2>/dev/null; then
		ps -o pid,stat,wchan:32,args -p $wpid >&2 || true
		stop_writer "$spec: the writer still runs 60 s after the server died"
	fi
	rc=0
	wait $wpid || rc=$?
	[ "$rc" != 0 ] || fail "$spec: the writer ended without an error"
	grep -q "Errno 5\|Input/output error\|Read-only file system" "$WORK/writer.err" ||
		fail "$spec: the writer failed otherwise: $(cat "$WORK/writer.err")"
	acked=$(wc -l < "$LOG")
	info "$spec: $acked records acknowledged ($flushed flushes on $NBD by the 40th), then: $(tail -1 "$WORK/writer.err")"
	within 60 umount "$mnt" || fail "$spec: umount after the crash did not finish"
	within 30 vs_close vt || fail "$spec: close after the crash did not finish"
	within 30 nbd_disconnect || fail "$spec: nbd-client -d did not finish"

	nbd_server_start
	nbd_connect
	vs_open "$NBD" vt
	# The journal is replayed on mount; then fsck must find nothing.
	mount /dev/mapper/vt "$mnt"
	umount "$mnt"
	fsck.ext4 -f -n /dev/mapper/vt > "$WORK/fsck" 2>&1 || {
		cat "$WORK/fsck"
		fail "$spec: fsck after the crash"
	}
	mount -o ro /dev/mapper/vt "$mnt"
	python3 - "$mnt/stream" "$LOG" <<'PY' || fail "$spec: an acknowledged record is lost or damaged"
import hashlib, sys
data = open(sys.argv[1], "rb").read()
for line in open(sys.argv[2]):
    n, digest = line.split()
    rec = data[int(n) * 65536:(int(n) + 1) * 65536]
    if hashlib.sha256(rec).hexdigest() != digest:
        sys.exit("record %s: %s" % (n, "missing" if len(rec) < 65536 else "damaged"))
PY
	umount "$mnt"
	vs_close vt
	echo "ok: $spec: the server died after $acked acknowledged records, all intact"
done
nbd_disconnect
