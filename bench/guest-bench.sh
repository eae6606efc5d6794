#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: fio over the raw device, dm-crypt (its default table and
# its best settings: no_read_workqueue,no_write_workqueue; on kernels that
# have it, high_priority too) and veil with the same cipher and key, on a
# brd ramdisk (with aes-xts and with the null cipher) and on a
# memory-backed null_blk with a completion delay (a fast SSD), and with
# authenticated encryption over dm-integrity. ROUNDS
# rounds (3 by default), each running every workload over every target
# one after the other, so that the targets interleave.
# Writes fio JSON to RESULTS/json/<cpus>-<dev>-<target>-<workload>-r<n>.json
# and the vCPUs' busy share beside it (.cpu).
#
#   guest-bench.sh RESULTS CPUS
#
# VEIL_KO names the module to load (default: the one make built for the
# running kernel); BENCH_WORKLOADS, a regex, runs only the workloads whose
# names match (all by default); BENCH_TARGETS, a regex, only those targets;
# BENCH_DEVICES, a regex over brd, nullcipher, nullblk, async, aeadj and
# aeadd, only those sections;
# BENCH_ROUNDS, BENCH_RUNTIME (seconds per run, 4).
set -eu
RES=$1
CPUS=$2
TOP=$(cd "$(dirname "$0")/.." && pwd)
export RUNTIME=${BENCH_RUNTIME:-4}
[ "$RUNTIME" -ge 2 ] || { echo "BENCH_RUNTIME must be at least 2 (s)" >&2; exit 1; }
ROUNDS=${BENCH_ROUNDS:-3}
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

# cpu_ticks: the busy and the total clock ticks of all CPUs so far, from
# /proc/stat (busy: user, nice, system, irq, softirq; not idle, iowait or
# steal).
cpu_ticks() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat
}

# veil_counters DEV: a veil device's cipher time (ns), bytes through the
# cipher (both directions) and chunks run in the submitter (map and
# completion), on the crypt queue and by helpers, so far; nothing for
# another target.
veil_counters() {
	local name=${1#/dev/mapper/}
	[ "$name" != "$1" ] && dmsetup table "$name" | grep -q ' veil ' || return 0
	dmsetup status "$name" | tr ' ' '\n' | awk -F= '
		$1 ~ /^cipher_ns_(de|en)crypt$/ { ns += $2 } $1 ~ /^bytes_(de|en)crypted$/ { b += $2 }
		$1 ~ /^chunks_(map|endio)$/ { s += $2 } $1 == "chunks_queue" { q = $2 }
		$1 == "chunks_helper" { h = $2 }
		END { printf "%.0f %.0f %.0f %.0f %.0f\n", ns, b, s, q, h }'
}

# run ROUND DEVTAG TARGET DEV WORKLOAD RW BS QD JOBS: fio's JSON, and
# beside it (.cpu) how busy the vCPUs were in the middle of the run (from
# half a second after fio's 1 s ramp to half a second before its end:
# neither fio's start nor its end), in percent of one vCPU, and for veil
# its cipher time, bytes and chunks over the whole run.
run() {
	local out="$RES/json/$CPUS-$2-$3-$5-r$1.json" t0 t1 c0 c1 pid
	[[ "$5" =~ ${BENCH_WORKLOADS:-.} ]] && [[ "$3" =~ ${BENCH_TARGETS:-.} ]] &&
		[[ "$2" =~ ${BENCH_DEVICES:-.} ]] || return 0
	c0=$(veil_counters "$4")
	DEV=$4 RW=$6 BS=$7 QD=$8 JOBS=$9 SIZE=${RUN_MB:-$SIZE_MB}M \
		fio --output-format=json --output="$out" "$TOP/bench/jobs/workload.fio" &
	pid=$!
	sleep 1.5
	t0=$(cpu_ticks)
	sleep "$((RUNTIME - 1))"
	t1=$(cpu_ticks)
	wait "$pid"
	c1=$(veil_counters "$4")
	echo "$t0 $t1 ${c0:-0 0 0 0 0} ${c1:-0 0 0 0 0}" | awk -v cpus="$CPUS" '{
		printf "busy_pct=%.1f", ($3 - $1) * 100 * cpus / ($4 - $2)
		if ($11 > $6)
			printf " cipher_ns=%.0f cipher_bytes=%.0f chunks_submitter=%.0f chunks_queue=%.0f chunks_helper=%.0f",
				$10 - $5, $11 - $6, $12 - $7, $13 - $8, $14 - $9
		print "" }' > "${out%.json}.cpu"
}

# The workload matrix (bench/jobs/workloads.txt, without its comments).
workloads=$(grep -v '^#' "$TOP/bench/jobs/workloads.txt")

# dm-crypt's configurations: the default, its best settings for latency
# (no_read_workqueue,no_write_workqueue, cryptsetup's --perf-* flags), and
# high_priority where the kernel has it (6.10 on).
# crypt_targets DEV PREFIX SPEC KEY [OPTION]: "name:/dev/mapper/..." words;
# OPTION (integrity:...) goes into every table.
crypt_targets() {
	local o=${5:+ $5} n=0
	[ -z "${5:-}" ] || n=$(wc -w <<< "$5")
	map "$1" "$2-crypt" crypt "$3" "$4" "${5:+$n $5}"
	map "$1" "$2-nowq" crypt "$3" "$4" "$((2 + n))$o no_read_workqueue no_write_workqueue"
	echo "dm-crypt:/dev/mapper/$2-crypt dm-crypt-nowq:/dev/mapper/$2-nowq"
	if map "$1" "$2-hipri" crypt "$3" "$4" "$((1 + n))$o high_priority" 2> /dev/null; then
		echo "dm-crypt-hipri:/dev/mapper/$2-hipri"
	fi
}

# rotate ROUND WORD...: the words, starting from the ROUNDth (cyclic), so
# that no target always runs first or right after the same one in a round.
rotate() {
	local k=$((($1 - 1) % ($# - 1)))
	shift
	echo "${@:k+1}" "${@:1:k}"
}

# Ramdisk, aes-xts-plain64: the full matrix.
brd_targets="raw:/dev/ram0 $(crypt_targets /dev/ram0 b aes-xts-plain64 "$KEY64")"
map /dev/ram0 b-veil veil aes-xts-plain64 "$KEY64"
brd_targets="$brd_targets veil:/dev/mapper/b-veil"
log "brd targets: $brd_targets"
for round in $(seq 1 "$ROUNDS"); do
	while read -r wl rw bs qd jobs; do
		for t in $(rotate "$round" $brd_targets); do
			run "$round" brd "${t%%:*}" "${t#*:}" "$wl" "$rw" "$bs" "$qd" "$jobs"
		done
	done <<< "$workloads"
	log "brd round $round done"
done
dmsetup status b-veil >> "$RES/env-$CPUS.txt"
for d in $(dmsetup ls | awk '/^b-/ { print $1 }'); do dmsetup remove "$d"; done

# section DEVTAG PREFIX TARGETS "NAME RW BS"...: ROUNDS rounds of the
# workloads at QD1, each on every one of TARGETS ("name:device" words) in
# turn, then the status of PREFIX-veil into the environment file and every
# PREFIX- device removed.
section() {
	local dev=$1 prefix=$2 targets=$3 round t w name rw bs d
	shift 3
	for round in $(seq 1 "$ROUNDS"); do
		for w in "$@"; do
			read -r name rw bs <<< "$w"
			for t in $(rotate "$round" $targets); do
				run "$round" "$dev" "${t%%:*}" "${t#*:}" "$name" "$rw" "$bs" 1 1
			done
		done
		log "$dev round $round done"
	done
	dmsetup status "$prefix-veil" >> "$RES/env-$CPUS.txt"
	for d in $(dmsetup ls | awk -v p="^$prefix-" '$1 ~ p { print $1 }'); do
		dmsetup remove "$d"
	done
}

# Ramdisk, the null cipher (cipher_null-ecb, no key): no cipher time at
# all, so what is left is each target's own machinery (bio clones, pages,
# queues, wake-ups), the part of the cost that a fast cipher on real
# hardware leaves visible.
# veil-nofan: one CPU per request (no_fanout), the machinery per sector
# without the split over CPUs.
map /dev/ram0 c-veil veil cipher_null-ecb -
map /dev/ram0 c-nofan veil cipher_null-ecb - "1 no_fanout"
section nullcipher c "$(crypt_targets /dev/ram0 c cipher_null-ecb -) veil:/dev/mapper/c-veil
	veil-nofan:/dev/mapper/c-nofan" \
	"rand-read-4k-qd1 randread 4k" "rand-write-4k-qd1 randwrite 4k" \
	"seq-read-1m-qd1 read 1m" "seq-write-1m-qd1 write 1m"

# Delayed null_blk, aes-ctr-plain64: reads at QD1, where keystream-ahead
# hides cipher time behind the device's latency (and without it).
map /dev/nullb0 n-veil veil aes-ctr-plain64 "$KEY32"
map /dev/nullb0 n-noahead veil aes-ctr-plain64 "$KEY32" "1 no_keystream_ahead"
section nullblk n "raw:/dev/nullb0 $(crypt_targets /dev/nullb0 n aes-ctr-plain64 "$KEY32")
	veil:/dev/mapper/n-veil veil-no-ahead:/dev/mapper/n-noahead" \
	"rand-read-64k-qd1 randread 64k" "rand-read-256k-qd1 randread 256k" \
	"seq-read-1m-qd1 read 1m"

# Ramdisk through an async cipher driver (cryptd: every request is queued
# and completed by a worker), as a hardware engine would be: how many
# requests each target keeps in flight decides the throughput.
ASYNC=capi:cryptd\(xts\(ecb\(aes-generic\)\)\)-plain64
map /dev/ram0 a-veil veil "$ASYNC" "$KEY64"
section async a "$(crypt_targets /dev/ram0 a "$ASYNC" "$KEY64") veil:/dev/mapper/a-veil" \
	"seq-write-1m-qd1 write 1m" "seq-read-1m-qd1 read 1m" "rand-read-4k-qd1 randread 4k"

# Authenticated encryption over dm-integrity, as cryptsetup's --cipher
# aes-gcm-random --integrity aead makes it on this ramdisk
# (capi:gcm(aes)-random, 4096-byte sectors as its 4096-byte physical
# blocks make cryptsetup choose, 16 bytes of tag and 12 of IV per
# sector), dm-integrity in journal (J) and direct (D) mode over a part of
# the ramdisk, fio over its first AEAD_MB MiB: every target over the
# same dm-integrity device, written through once before the rounds (a
# sector never written fails its tag check). veil-nomask is veil with
# aead_masks:0 (no write masks).
AEAD_MB=128
AEAD_OPTS="integrity:28:aead sector_size:4096"
dd if=/dev/zero of=/dev/ram0 bs=1M count=1 oflag=direct status=none
dmsetup create i-part --table "0 $(((AEAD_MB + 16) * 2048)) linear /dev/ram0 0"
for mode in J D; do
	dev=aead${mode,,}
	itable="integrity /dev/mapper/i-part 0 28 $mode 1 block_size:4096"
	dmsetup create i-$mode --table "0 8 $itable"
	len=$(dmsetup status i-$mode | awk '{ print $5 }')
	dmsetup reload i-$mode --table "0 $len $itable"
	dmsetup resume i-$mode
	ae_targets="$(crypt_targets /dev/mapper/i-$mode i$mode 'capi:gcm(aes)-random' \
		"$KEY32" "$AEAD_OPTS")"
	map /dev/mapper/i-$mode i$mode-veil veil 'capi:gcm(aes)-random' "$KEY32" \
		"2 $AEAD_OPTS"
	# and veil decrypting in dm-integrity's completion, as dm-crypt's
	# no_read_workqueue does (by default veil hands such a read to its
	# crypt queue rather than use another driver's thread)
	map /dev/mapper/i-$mode i$mode-vnowq veil 'capi:gcm(aes)-random' "$KEY32" \
		"4 $AEAD_OPTS no_read_workqueue no_write_workqueue"
	map /dev/mapper/i-$mode i$mode-vnomask veil 'capi:gcm(aes)-random' "$KEY32" \
		"3 $AEAD_OPTS aead_masks:0"
	ae_targets="$ae_targets veil:/dev/mapper/i$mode-veil veil-nowq:/dev/mapper/i$mode-vnowq"
	ae_targets="$ae_targets veil-nomask:/dev/mapper/i$mode-vnomask"
	head -c $((len * 512)) /dev/zero | dd of=/dev/mapper/i$mode-crypt bs=1M \
		iflag=fullblock oflag=direct status=none
	for round in $(seq 1 "$ROUNDS"); do
		for t in $ae_targets; do
			for w in "seq-write-1m-qd1 write 1m" "seq-read-1m-qd1 read 1m" \
				 "rand-write-4k-qd1 randwrite 4k" "rand-read-4k-qd1 randread 4k"; do
				set -- $w
				RUN_MB=$AEAD_MB run "$round" "$dev" "${t%%:*}" "${t#*:}" \
					"$1" "$2" "$3" 1 1
			done
		done
		log "$dev round $round done"
	done
	echo "$dev veil: $(dmsetup status i$mode-veil)" >> "$RES/env-$CPUS.txt"
	for d in $(dmsetup ls | awk -v p="^i$mode-" '$1 ~ p { print $1 }'); do
		dmsetup remove --retry "$d"
	done
	dmsetup remove --retry i-$mode
done
dmsetup remove --retry i-part
rmmod dm_veil
log "finished"
