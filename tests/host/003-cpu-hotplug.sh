#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: CPU hotplug in a 4-vCPU guest. CPUs 1-3 go offline and come
# back, one after another and several at once, while fio writes and
# verifies (crc32c) through veil with fan-out on small chunks, XTS and CTR
# with keystream-ahead on every read size: no mismatch, no error, no hang,
# a clean kernel log, and the module unloads (tests/host/hotplug-guest.sh).
#
# A guest whose QEMU was killed by a signal (scripts/qemu-status.sh says so
# on the console) says nothing about veil: as tests/run does for the
# suite's guest, the scenario runs once more in a new guest and fails if
# QEMU dies there again. The first attempt's logs are kept (*.1.log).
#
#   003-cpu-hotplug.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
console=$RESULTS/hotplug-console.log
for attempt in 1 2; do
	rm -f "$RESULTS/hotplug.ok"
	"$TOP/scripts/guest.sh" -c 4 -w "$RESULTS" -- \
		"bash $TOP/tests/host/hotplug-guest.sh $RESULTS > $RESULTS/hotplug.log 2>&1" \
		> "$console" 2>&1 || echo "guest.sh: exit $?" >> "$console"
	cat "$RESULTS/hotplug.log" 2>/dev/null || true
	[ -f "$RESULTS/hotplug.ok" ] && break
	tail -20 "$console"
	grep -q 'qemu-status: QEMU was killed by signal' "$console" ||
		{ echo "FAIL: the hotplug guest did not finish (its console ends above)"; exit 1; }
	[ "$attempt" = 1 ] || { echo "FAIL: QEMU died in both guests (above)"; exit 1; }
	echo "QEMU itself died, not the guest (above): once more in a new guest"
	mv "$console" "$RESULTS/hotplug-console.1.log"
	mv "$RESULTS/hotplug.log" "$RESULTS/hotplug.1.log" 2>/dev/null || true
done
echo "ok: fio verify through CPU hotplug"
