#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Starved CPUs: a real-time busy loop (SCHED_FIFO, real-time throttling
# off) holds every CPU but CPU 0, and I/O issued on CPU 0 still finishes in
# bounded time: 1 MiB writes and reads that fan out, XTS and CTR with
# keystream-ahead, on a loop device (completed by its own unbound workers)
# and a ramdisk (brd: completed in the submitting task). A bio finishes
# when its last chunk is done, never waiting for a helper queued on a CPU
# that cannot run it.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires modinfo brd
requires cmd chrt taskset
[ "$(nproc --all)" -ge 2 ] || skip "needs at least 2 CPUs"
veil_load

# The test and all it starts stay on CPU 0; only the loops use the others.
taskset -pc 0 $$ >/dev/null
hogs=()
rt_runtime=$(cat /proc/sys/kernel/sched_rt_runtime_us)
start_hogs() {
	local cpu
	echo -1 > /proc/sys/kernel/sched_rt_runtime_us
	for ((cpu = 1; cpu < $(nproc --all); cpu++)); do
		chrt -f 50 taskset -c "$cpu" sh -c 'while :; do :; done' &
		hogs+=($!)
	done
	sleep 0.5
}
# Stop the loops, then let anything they held up finish.
stop_hogs() {
	[ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
	hogs=()
	wait
	echo "$rt_runtime" > /proc/sys/kernel/sched_rt_runtime_us
}
at_exit stop_hogs

# bounded WHAT CMD...: with the other CPUs starved, CMD must finish within
# 15 s (the loops stop after that: longer, and the kernel's RCU and
# workqueue watchdogs would report the starved CPUs themselves)
bounded() {
	local what=$1 rc=0 t0
	shift
	start_hogs
	t0=$(date +%s.%N)
	within 15 "$@" || rc=$?
	stop_hogs
	[ "$rc" = 124 ] && fail "$what: still blocked after 15 s with the other CPUs starved"
	[ "$rc" = 0 ] || fail "$what: exit status $rc"
	awk -v t0="$t0" -v t1="$(date +%s.%N)" -v w="$what" 'BEGIN { printf "# %s: %.2f s\n", w, t1 - t0 }'
}

mkloop 64M
rmmod brd 2>/dev/null || true
modprobe brd rd_nr=1 rd_size=131072
[ -b /dev/ram0 ] || skip "brd gave no /dev/ram0"
at_exit "rmmod brd"

plaintext "$WORK/data" $((8 << 20))
for dev in "$LOOP" /dev/ram0; do
	for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
		dm_create vt "0 131072 veil $spec 0 $dev 0"
		udevadm settle
		bounded "${spec%% *} on $dev: 1 MiB writes" \
			dd if="$WORK/data" of=/dev/mapper/vt bs=1M oflag=direct status=none
		bounded "${spec%% *} on $dev: 1 MiB reads" \
			dd if=/dev/mapper/vt of="$WORK/back" bs=1M count=8 iflag=direct status=none
		bounded "${spec%% *} on $dev: 64 KiB reads" \
			dd if=/dev/mapper/vt of="$WORK/back64" bs=64k count=128 iflag=direct status=none
		# Not while the loops run: with the kernel's softirq thread of a
		# starved CPU held up, RCU grace periods stop, and removing a
		# device waits for one.
		dm_remove vt
		cmp -s "$WORK/data" "$WORK/back" || fail "${spec%% *} on $dev: 1 MiB reads differ"
		cmp -s "$WORK/data" "$WORK/back64" || fail "${spec%% *} on $dev: 64 KiB reads differ"
	done
done
