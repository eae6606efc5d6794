#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: reads at QD1 over NBD, the server and the client in two
# network namespaces joined by a veth link (tests/network/nbd.sh, the
# commands of docs/walkthrough-network.md), with tc netem adding DELAY on
# both ends (each round trip grows by twice DELAY). Targets: the raw NBD
# device, dm-crypt (its default table, no_read_workqueue +
# no_write_workqueue, and high_priority where the kernel has it) and veil,
# each with aes-ctr-plain64 and aes-xts-plain64 and the same key. ROUNDS
# rounds interleave every target of every delay, in reverse order every
# other round. CTR has one more veil target: keystream_ahead_max at 1 MiB
# (veil-ahead-1m). fio JSON goes to
# RESULTS/json/<cpus>-nbd<delay>_<cipher>-<target>-<workload>-r<n>.json;
# veil's keystream counters per delay and cipher to RESULTS/counters.txt.
#
#   nbd-guest.sh RESULTS CPUS
#
# BENCH_NBD_DELAYS (netem delays, "200us 2ms"), BENCH_ROUNDS (3),
# BENCH_RUNTIME (seconds per run, 4), VEIL_KO as for guest-bench.sh.
set -eu
RES=$1
CPUS=$2
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/tests/lib.sh"
. "$TOP/tests/network/nbd.sh"
export RUNTIME=${BENCH_RUNTIME:-4}
ROUNDS=${BENCH_ROUNDS:-3}
DELAYS=${BENCH_NBD_DELAYS:-200us 2ms}
SIZE_MB=128
mkdir -p "$RES/json"
log() { echo "bench-nbd[$CPUS cpu]: $*" | tee -a "$RES/bench.log"; }

modprobe -a dm_mod dm_crypt
veil_load
echo "module: $VEIL_KO ($(modinfo -F srcversion "$VEIL_KO"))" >> "$RES/env-$CPUS.txt"
nbd_setup ${SIZE_MB}M
nbd_connect
dd if=/dev/urandom of="$NBD" bs=1M count=$SIZE_MB oflag=direct status=none
KEY64=$(randhex 64)
{
	echo "cpus=$CPUS kernel=$(uname -r) export=${SIZE_MB}M netem delays: $DELAYS"
	grep -A2 -E '^name +: (xts|ctr)\(aes\)' /proc/crypto | grep -E 'name|driver' | paste - - || true
} >> "$RES/env-$CPUS.txt"

# map NAME TARGET SPEC KEY [FEATURES]: the whole export through TARGET
map() {
	dm_create "$1" "0 $(blockdev --getsz "$NBD") $2 $3 $4 0 $NBD 0${5:+ $5}"
}
# targets CIPHER SPEC KEY [VEIL-ONLY...]: map one cipher's targets and
# set the variable named CIPHER to their "name:/dev/mapper/..." words;
# VEIL-ONLY are extra veil targets as "name:features"
targets() {
	local c=$1 spec=$2 key=$3 list extra
	shift 3
	map "$c-crypt" crypt "$spec" "$key"
	map "$c-nowq" crypt "$spec" "$key" "2 no_read_workqueue no_write_workqueue"
	list="dm-crypt:/dev/mapper/$c-crypt dm-crypt-nowq:/dev/mapper/$c-nowq"
	if map "$c-hipri" crypt "$spec" "$key" "1 high_priority" 2> /dev/null; then
		list="$list dm-crypt-hipri:/dev/mapper/$c-hipri"
	fi
	map "$c-veil" veil "$spec" "$key"
	list="$list veil:/dev/mapper/$c-veil"
	for extra; do
		map "$c-${extra%%:*}" veil "$spec" "$key" "${extra#*:}"
		list="$list ${extra%%:*}:/dev/mapper/$c-${extra%%:*}"
	done
	printf -v "$c" '%s' "$list"
}
# On a network, a CTR read's wait is long enough to compute the keystream
# of larger reads too: keystream_ahead_max at 1 MiB for comparison.
targets ctr aes-ctr-plain64 "${KEY64:0:64}" "veil-ahead-1m:1 keystream_ahead_max:1048576"
targets xts aes-xts-plain64 "$KEY64"
log "targets: ctr: $ctr; xts: $xts"

# run ROUND DEVTAG TARGET DEV BS
run() {
	DEV=$4 RW=randread BS=$5 QD=1 JOBS=1 SIZE=${SIZE_MB}M \
		fio --output-format=json \
		--output="$RES/json/$CPUS-$2-$3-rand-read-$5-qd1-r$1.json" \
		"$TOP/bench/jobs/workload.fio" < /dev/null
}
# Every run of a round, in order: "devtag target dev"; even rounds run
# them backwards, so that no target always comes first or last.
order() {
	local c t
	echo "raw raw $NBD"
	for c in ctr xts; do
		for t in ${!c}; do echo "$c ${t%%:*} ${t#*:}"; done
	done
}
for round in $(seq 1 "$ROUNDS"); do
	for delay in $DELAYS; do
		netem "delay $delay"
		dmsetup message ctr-veil 0 stats reset
		for bs in 4k 64k 1m; do
			if ((round % 2)); then order; else order | tac; fi > "$WORK/order"
			while read -r c t dev; do
				run "$round" "nbd${delay}_$c" "$t" "$dev" $bs
			done < "$WORK/order"
		done
		echo "round $round delay $delay ctr-veil: $(dmsetup status ctr-veil |
			tr ' ' '\n' | grep -E '^(reads|keystream_(hit|miss|skip))=' | tr '\n' ' ')" >> "$RES/counters.txt"
	done
	log "round $round done"
done
netem ""
log "finished"
