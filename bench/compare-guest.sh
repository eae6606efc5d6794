#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest, for bench/compare: ROUNDS rounds, each loading every
# module in turn (in a rotated order) over the same brd ramdisk
# (aes-xts-plain64, one key; BENCH_CIPHER=null: cipher_null-ecb, no key)
# and running the workloads, then dm-crypt with no_read_workqueue and
# no_write_workqueue. fio JSON to RES/json/<label>-<workload>-r<n>.json.
#
#   compare-guest.sh RES LABEL...   (modules in RES/mod-<label>/)
set -eu
RES=$1
shift
TOP=$(cd "$(dirname "$0")/.." && pwd)
export RUNTIME=${BENCH_RUNTIME:-4}
SIZE_MB=256
modprobe -a dm_mod dm_crypt
modprobe brd rd_nr=1 rd_size=$((SIZE_MB * 1024))
dd if=/dev/urandom of=/dev/ram0 bs=1M count=$SIZE_MB oflag=direct status=none
if [ "${BENCH_CIPHER:-}" = null ]; then
	SPEC="cipher_null-ecb -"
else
	SPEC="aes-xts-plain64 $(head -c 64 /dev/urandom | od -An -v -tx1 | tr -d ' \n')"
fi
LEN=$(blockdev --getsz /dev/ram0)
dmsetup create c-nowq --table \
	"0 $LEN crypt $SPEC 0 /dev/ram0 0 2 no_read_workqueue no_write_workqueue"
workloads=$(grep -v '^#' "$TOP/bench/jobs/workloads.txt" |
	    awk -v re="${BENCH_WORKLOADS:-qd1\$}" '$1 ~ re')

# run LABEL DEV ROUND: every workload on DEV
run() {
	local wl rw bs qd jobs
	while read -r wl rw bs qd jobs; do
		DEV=$2 RW=$rw BS=$bs QD=$qd JOBS=$jobs SIZE=${SIZE_MB}M \
			fio --output-format=json --output="$RES/json/$1-$wl-r$3.json" \
			"$TOP/bench/jobs/workload.fio"
	done <<< "$workloads"
}

# Each round starts one module further on, so that no module always runs
# first or last in a round (where the host's and the guest's drift within
# a round would favour one).
labels=("$@")
for round in $(seq 1 "${BENCH_ROUNDS:-5}"); do
	for i in "${!labels[@]}"; do
		label=${labels[$(((i + round - 1) % ${#labels[@]}))]}
		insmod "$RES/mod-$label/dm-veil.ko"
		dmsetup create c-veil --table "0 $LEN veil $SPEC 0 /dev/ram0 0"
		run "$label" /dev/mapper/c-veil "$round"
		udevadm settle
		dmsetup remove --retry c-veil
		rmmod dm_veil
	done
	run dm-crypt-nowq /dev/mapper/c-nowq "$round"
	echo "compare: round $round done"
done
dmsetup remove --retry c-nowq
echo "compare: finished"
