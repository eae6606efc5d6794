#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: no CPU holds a bio hostage. A 2-vCPU guest booted with
# preempt=full runs tests/host/rt-preempt-guest.sh: real-time busy loops
# take CPU 1 at random moments while 1 MiB O_DIRECT writes and reads run
# from CPU 0, and `dmsetup remove` runs with CPU 1 held.
#
# A guest whose QEMU was killed by a signal runs once more
# (tests/host/host-lib.sh).
#
#   007-rt-preempt.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/host/host-lib.sh"
run_guest "$RESULTS" rt-preempt -a preempt=full -- rt-preempt-guest.sh || exit 1
echo "ok: no request late with CPU 1 held by a real-time task"
