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
rm -f "$RESULTS/async.ok"
"$TOP/scripts/guest.sh" -a "cryptd.cryptd_max_cpu_qlen=1" -w "$RESULTS" -- \
	"VEIL_KO=${VEIL_KO:-} bash $TOP/tests/host/async-guest.sh $RESULTS > $RESULTS/async.log 2>&1" \
	> "$RESULTS/async-console.log" 2>&1 || true
cat "$RESULTS/async.log" 2>/dev/null || true
[ -f "$RESULTS/async.ok" ] || { echo "FAIL: the async-cipher guest did not finish"; tail -20 "$RESULTS/async-console.log"; exit 1; }
echo "ok: reads through a full cryptd queue: no error"
