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
		> "$console" 2>&1 || true
	cat "$RESULTS/hotplug.log" 2>/dev/null || true
	[ -f "$RESULTS/hotplug.ok" ] && break
	if grep -q 'qemu-status: QEMU was killed by signal' "$console"; then
		echo "QEMU itself died, not the guest; its console ends:"
		tail -20 "$console"
		[ "$attempt" = 1 ] || { echo "FAIL: QEMU died in both guests"; exit 1; }
		echo "once more in a new guest"
		mv "$console" "$RESULTS/hotplug-console.1.log"
		mv "$RESULTS/hotplug.log" "$RESULTS/hotplug.1.log" 2>/dev/null || true
		continue
	fi
	echo "FAIL: the hotplug guest did not finish"
	tail -20 "$console"
	exit 1
done
echo "ok: fio verify through CPU hotplug"
