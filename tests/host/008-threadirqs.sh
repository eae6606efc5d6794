#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: interrupts in threads (the threadirqs boot option; every IRQ
# on a PREEMPT_RT kernel). An NVMe disk's reads complete in its IRQ
# thread, which runs at SCHED_FIFO 50: veil must not decrypt there
# (tests/host/threadirqs-guest.sh checks the counters and a real-time
# task's latency beside a 4 MiB read load, against dm-crypt).
#
#   008-threadirqs.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/host/host-lib.sh"
img=$RESULTS/threadirqs-nvme.img
truncate -s 128M "$img"
trap 'rm -f "$img"' EXIT
run_guest "$RESULTS" threadirqs -a threadirqs \
	-q "-drive if=none,id=nvm,format=raw,file=$img -device nvme,serial=veilirq,drive=nvm" \
	-- threadirqs-guest.sh || exit 1
echo "ok: no cipher work in the NVMe IRQ thread"
