#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: no CPU holds a bio hostage. A 2-vCPU guest booted with
# preempt=full runs tests/host/rt-preempt-guest.sh: real-time busy loops
# take CPU 1 at random moments while 1 MiB O_DIRECT writes and reads run
# from CPU 0, and `dmsetup remove` runs with CPU 1 held.
#
# A guest whose QEMU was killed by a signal says nothing about veil: the
# scenario runs once more in a new guest (as 003-cpu-hotplug.sh).
#
#   007-rt-preempt.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
console=$RESULTS/rt-preempt-console.log
for attempt in 1 2; do
	rm -f "$RESULTS/rt-preempt.ok"
	"$TOP/scripts/guest.sh" -a preempt=full -w "$RESULTS" -- \
		"bash $TOP/tests/host/rt-preempt-guest.sh $RESULTS > $RESULTS/rt-preempt.log 2>&1" \
		> "$console" 2>&1 || echo "guest.sh: exit $?" >> "$console"
	cat "$RESULTS/rt-preempt.log" 2>/dev/null || true
	[ -f "$RESULTS/rt-preempt.ok" ] && break
	tail -20 "$console"
	grep -q 'qemu-status: QEMU was killed by signal' "$console" ||
		{ echo "FAIL: the rt-preempt guest did not finish (its console ends above)"; exit 1; }
	[ "$attempt" = 1 ] || { echo "FAIL: QEMU died in both guests (above)"; exit 1; }
	echo "QEMU itself died, not the guest (above): once more in a new guest"
	mv "$console" "$RESULTS/rt-preempt-console.1.log"
	mv "$RESULTS/rt-preempt.log" "$RESULTS/rt-preempt.1.log" 2>/dev/null || true
done
echo "ok: no request late with CPU 1 held by a real-time task"
