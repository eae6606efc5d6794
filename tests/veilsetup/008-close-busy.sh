#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# close on a device that is busy for a moment (held open for 1 s, as udev
# does after the last close) waits for it and prints nothing, as
# cryptsetup's close does; one held open for 8 s fails after its tries
# with cryptsetup's "Device vt is still in use." (exit 5) and nothing else.
# (Before 2026-11-24 libdevmapper's retry printed "remove ioctl on vt
# failed: Device or resource busy" for every busy try.)
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
veil_load
mkloop 16M

# close_held SECS: open vt, hold it open for SECS, close it meanwhile;
# close's exit code in $rc, its output in $WORK/out
close_held() {
	vs_open "$LOOP" vt
	(exec 3< /dev/mapper/vt; sleep "$1") &
	sleep 0.3
	rc=0
	"$VS" close vt > "$WORK/out" 2>&1 || rc=$?
	wait
}

close_held 1
[ "$rc" = 0 ] || fail "close of a device busy for 1 s: exit $rc: $(cat "$WORK/out")"
[ ! -s "$WORK/out" ] || fail "close of a device busy for 1 s printed: $(cat "$WORK/out")"
dmsetup info vt > /dev/null 2>&1 && fail "vt is still there after close"

close_held 8
[ "$rc" = 5 ] || fail "close of a device busy for 8 s: exit $rc, want 5: $(cat "$WORK/out")"
[ "$(cat "$WORK/out")" = "Device vt is still in use." ] ||
	fail "close of a device busy for 8 s printed: $(cat "$WORK/out")"
"$VS" close vt
echo "ok: a briefly busy device closes silently; a busy one says so once"
