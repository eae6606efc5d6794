#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: CPU hotplug in a 4-vCPU guest. CPUs 1-3 go offline and come
# back, one after another and several at once, while fio writes and
# verifies (crc32c) through veil with fan-out on small chunks, XTS and CTR
# with keystream-ahead on every read size: no mismatch, no error, no hang,
# a clean kernel log, and the module unloads (tests/host/hotplug-guest.sh).
#
#   003-cpu-hotplug.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
rm -f "$RESULTS/hotplug.ok"
"$TOP/scripts/guest.sh" -c 4 -w "$RESULTS" -- \
	"bash $TOP/tests/host/hotplug-guest.sh $RESULTS > $RESULTS/hotplug.log 2>&1" \
	> "$RESULTS/hotplug-console.log" 2>&1 || true
cat "$RESULTS/hotplug.log" 2>/dev/null || true
[ -f "$RESULTS/hotplug.ok" ] || { echo "FAIL: the hotplug guest did not finish"; tail -20 "$RESULTS/hotplug-console.log"; exit 1; }
echo "ok: fio verify through CPU hotplug"
