#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: an async cipher whose queue is full. The guest boots with
# cryptd's per-CPU queue one request deep (cryptd.cryptd_max_cpu_qlen=1);
# a veil table through capi:cryptd(...) then meets -ENOSPC whenever a
# second request arrives on a CPU before cryptd ran the first. Reads that
# decrypt in their completion (no sleeping, no backlog) must go on from
# the crypt queue, never fail: fio verify with no error
# (tests/host/async-guest.sh). VEIL_KO: another module to try.
#
#   005-async-queue-full.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/host/host-lib.sh"
run_guest "$RESULTS" async -a "cryptd.cryptd_max_cpu_qlen=1" -- async-guest.sh || exit 1
echo "ok: reads through a full cryptd queue: no error"
