#!/bin/bash
# The stash of free pages (veil-pages.c): the module before it (ae9e78d)
# and with it, alternating guest boots on 6.12, the write rows and the
# CTR keystream row, raw, dm-crypt's default and veil, 3 interleaved
# rounds per boot.
#   ab.sh OUT NEW_KO OLD_KO
set -u
cd "$(dirname "$0")/../../.."
OUT=$1
declare -A ko=([new]=$2 [old]=$3)
mkdir -p "$OUT"
for r in 1 2; do
	for v in old new; do
		BENCH_RESULTS=$OUT/$v-$r VEIL_KO=${ko[$v]} BENCH_CPUS=2 VEIL_KVER=6.12 \
		BENCH_WORKLOADS='^(seq-write-1m-qd1|seq-write-512k-qd1|seq-write-1m-qd8|rand-write-4k-qd1|rand-write-4k-qd32|rand-read-64k-qd1)$' \
		BENCH_TARGETS='^(raw|dm-crypt|veil)$' \
			bench/run > "$OUT/$v-$r.log" 2>&1
		echo "$v-$r rc=$? $(date)" >> "$OUT/done.log"
	done
done
