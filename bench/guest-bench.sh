#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: fio over the raw device, dm-crypt and veil with the same
# cipher and key, on a brd ramdisk and on a memory-backed null_blk with a
# completion delay (a fast SSD). Writes fio JSON to RESULTS/json/.
#
#   guest-bench.sh RESULTS CPUS
#
# VEIL_KO names the module to load (default: the one make built for the
# running kernel); BENCH_WORKLOADS, a regex, runs only the workloads whose
# names match (all by default).
set -eu
RES=$1
CPUS=$2
TOP=$(cd "$(dirname "$0")/.." && pwd)
export RUNTIME=${BENCH_RUNTIME:-5}
SIZE_MB=256
mkdir -p "$RES/json"
log() { echo "bench[$CPUS cpu]: $*" | tee -a "$RES/bench.log"; }

modprobe -a dm_mod dm_crypt
VEIL_KO=${VEIL_KO:-$TOP/build/modules/$(uname -r)/dm-veil.ko}
[ -f "$VEIL_KO" ] || VEIL_KO=$TOP/dm-target/dm-veil.ko
insmod "$VEIL_KO"
echo "module: $VEIL_KO ($(modinfo -F srcversion "$VEIL_KO"))" >> "$RES/env-$CPUS.txt"
modprobe brd rd_nr=1 rd_size=$((SIZE_MB * 1024))
modprobe null_blk queue_mode=2 irqmode=2 completion_nsec=${BENCH_NULLBLK_NS:-100000} \
	memory_backed=1 gb=1 nr_devices=1
KEY64=$(head -c 64 /dev/urandom | od -An -v -tx1 | tr -d ' \n')
KEY32=${KEY64:0:64}
{
	echo "cpus=$CPUS kernel=$(uname -r)"
	grep -A2 -E '^name +: (xts|ctr)\(aes\)' /proc/crypto | grep -E 'name|driver' | paste - - || true
} >> "$RES/env-$CPUS.txt"

# map DEV NAME TARGET SPEC KEY [FEATURES]: the whole device through TARGET
map() {
	dmsetup create "$2" --table "0 $(blockdev --getsz "$1") $3 $4 $5 0 $1 0${6:+ $6}"
}

# Fill so that reads touch real pages.
dd if=/dev/urandom of=/dev/ram0 bs=1M count=$SIZE_MB oflag=direct status=none
dd if=/dev/urandom of=/dev/nullb0 bs=1M count=$SIZE_MB oflag=direct status=none

# run DEVTAG TARGET DEV WORKLOAD RW BS QD JOBS
run() {
	local out="$RES/json/$CPUS-$1-$2-$4.json"
	[[ "$4" =~ ${BENCH_WORKLOADS:-.} ]] || return 0
	DEV=$3 RW=$5 BS=$6 QD=$7 JOBS=$8 SIZE=${SIZE_MB}M \
		fio --output-format=json --output="$out" "$TOP/bench/jobs/workload.fio"
	log "$1 $2 $4 done"
}

workloads="seq-read-1m-qd1 read 1m 1 1
seq-write-1m-qd1 write 1m 1 1
seq-read-1m-qd8 read 1m 8 1
seq-write-1m-qd8 write 1m 8 1
rand-read-4k-qd1 randread 4k 1 1
rand-write-4k-qd1 randwrite 4k 1 1
rand-read-4k-qd32 randread 4k 32 2
rand-write-4k-qd32 randwrite 4k 32 2"

# Ramdisk, aes-xts-plain64: the full matrix.
map /dev/ram0 b-crypt crypt aes-xts-plain64 "$KEY64"
map /dev/ram0 b-veil veil aes-xts-plain64 "$KEY64"
while read -r wl rw bs qd jobs; do
	for t in raw:/dev/ram0 dm-crypt:/dev/mapper/b-crypt veil:/dev/mapper/b-veil; do
		run brd "${t%%:*}" "${t#*:}" "$wl" "$rw" "$bs" "$qd" "$jobs"
	done
done <<< "$workloads"
dmsetup status b-veil >> "$RES/env-$CPUS.txt"
dmsetup remove b-crypt
dmsetup remove b-veil

# Delayed null_blk, aes-ctr-plain64: 64 KiB random reads at QD1, where
# keystream-ahead hides cipher time behind the device's latency; larger
# reads, and keystream-ahead off and on for every size, for its size limit.
map /dev/nullb0 n-crypt crypt aes-ctr-plain64 "$KEY32"
map /dev/nullb0 n-veil veil aes-ctr-plain64 "$KEY32"
map /dev/nullb0 n-noahead veil aes-ctr-plain64 "$KEY32" "1 no_keystream_ahead"
map /dev/nullb0 n-ahead1m veil aes-ctr-plain64 "$KEY32" "1 keystream_ahead_max:1048576"
for t in raw:/dev/nullb0 dm-crypt:/dev/mapper/n-crypt veil:/dev/mapper/n-veil \
	 veil-no-ahead:/dev/mapper/n-noahead veil-ahead-1m:/dev/mapper/n-ahead1m; do
	run nullblk "${t%%:*}" "${t#*:}" rand-read-64k-qd1 randread 64k 1 1
	run nullblk "${t%%:*}" "${t#*:}" rand-read-256k-qd1 randread 256k 1 1
	run nullblk "${t%%:*}" "${t#*:}" seq-read-1m-qd1 read 1m 1 1
done
dmsetup status n-veil >> "$RES/env-$CPUS.txt"
for d in n-crypt n-veil n-noahead n-ahead1m; do dmsetup remove $d; done
rmmod dm_veil
log "finished"
