#!/bin/bash
# Issue 9, keystream misses finished in softirq: db38fd6 (before the
# hardening), 4c15a10 (misses' rest queued on the crypt queue) and the fix,
# alternating guest boots, null_blk CTR rows only (100 us completions).
#   ab.sh OUT FIX_KO PRE_KO OLD_KO
set -u
cd "$(dirname "$0")/../../.."
OUT=$1
declare -A ko=([fix]=$2 [queued]=$3 [db38fd6]=$4)
mkdir -p "$OUT"
for r in 1 2; do
	for v in db38fd6 queued fix; do
		BENCH_RESULTS=$OUT/$v-$r VEIL_KO=${ko[$v]} BENCH_CPUS=2 \
		BENCH_WORKLOADS='^(rand-read-64k-qd1|rand-read-256k-qd1)$' \
		BENCH_TARGETS='^(raw|dm-crypt|dm-crypt-nowq|veil|veil-no-ahead)$' \
			bench/run > "$OUT/$v-$r.log" 2>&1
		echo "$v-$r rc=$? $(date)" >> "$OUT/done.log"
	done
done
