#!/bin/bash
# Issue 9, CTR reads completed by an interrupt: db38fd6 (before the
# hardening) and the final code (a4d3826; dm-target as ed2bfd5), alternating guest boots,
# null_blk rows only (100 us completions), 3 interleaved rounds per boot.
#   ab.sh OUT NEW_KO OLD_KO
set -u
cd "$(dirname "$0")/../../.."
OUT=$1
declare -A ko=([new]=$2 [db38fd6]=$3)
mkdir -p "$OUT"
for r in 1 2; do
	for v in db38fd6 new; do
		BENCH_RESULTS=$OUT/$v-$r VEIL_KO=${ko[$v]} BENCH_CPUS=2 \
		BENCH_WORKLOADS='^(rand-read-64k-qd1|rand-read-256k-qd1)$' \
		BENCH_TARGETS='^(raw|dm-crypt|dm-crypt-nowq|veil)$' \
			bench/run > "$OUT/$v-$r.log" 2>&1
		echo "$v-$r rc=$? $(date)" >> "$OUT/done.log"
	done
done
