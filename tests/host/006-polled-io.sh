#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: polled I/O (io_uring with IORING_SETUP_IOPOLL, fio --hipri)
# through veil on an NVMe disk with a poll queue (nvme.poll_queues=1). A
# polled bio completes only when someone polls for it: device-mapper polls
# the clone it handed to the target, so the bios veil makes itself must
# not ask for polling, or each write waits for the NVMe timeout.
# tests/host/polled-guest.sh runs fio verify, with a time limit, for XTS
# and CTR. VEIL_KO: another module to try.
#
#   006-polled-io.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
rm -f "$RESULTS/polled.ok"
img=$RESULTS/polled-nvme.img
truncate -s 64M "$img"
"$TOP/scripts/guest.sh" -a "nvme.poll_queues=1 nvme_core.io_timeout=10" -w "$RESULTS" \
	-q "-drive if=none,id=nvm,format=raw,file=$img -device nvme,serial=veilpoll,drive=nvm" -- \
	"VEIL_KO=${VEIL_KO:-} bash $TOP/tests/host/polled-guest.sh $RESULTS > $RESULTS/polled.log 2>&1" \
	> "$RESULTS/polled-console.log" 2>&1 || true
rm -f "$img"
cat "$RESULTS/polled.log" 2>/dev/null || true
[ -f "$RESULTS/polled.ok" ] || { echo "FAIL: the polled-I/O guest did not finish"; tail -20 "$RESULTS/polled-console.log"; exit 1; }
echo "ok: polled I/O through veil on NVMe"
