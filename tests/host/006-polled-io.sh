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
. "$TOP/tests/host/host-lib.sh"
img=$RESULTS/polled-nvme.img
truncate -s 64M "$img"
trap 'rm -f "$img"' EXIT
run_guest "$RESULTS" polled -a "nvme.poll_queues=1 nvme_core.io_timeout=10" \
	-q "-drive if=none,id=nvm,format=raw,file=$img -device nvme,serial=veilpoll,drive=nvm" \
	-- polled-guest.sh || exit 1
echo "ok: polled I/O through veil on NVMe"
