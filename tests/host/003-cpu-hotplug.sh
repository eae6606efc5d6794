#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: CPU hotplug in a 4-vCPU guest. CPUs 1-3 go offline and come
# back, one after another and several at once, while fio writes and
# verifies (crc32c) through veil with fan-out on small chunks, XTS and CTR
# with keystream-ahead on every read size: no mismatch, no error, no hang,
# a clean kernel log, and the module unloads (tests/host/hotplug-guest.sh).
#
# A guest whose QEMU was killed by a signal runs once more
# (tests/host/host-lib.sh).
#
#   003-cpu-hotplug.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/host/host-lib.sh"
run_guest "$RESULTS" hotplug -c 4 -- hotplug-guest.sh || exit 1
echo "ok: fio verify through CPU hotplug"
