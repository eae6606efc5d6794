#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest of 007-rt-preempt.sh (preempt=full, 2 vCPUs): 1 MiB O_DIRECT
# writes and reads from CPU 0 while a SCHED_FIFO busy loop takes CPU 1 for
# 6 s at a random moment, with real-time throttling off, six times per
# spec. A helper caught in a chunk on CPU 1 must finish elsewhere: every
# request ends within 3 s and the data reads back. Then `dmsetup remove`
# with CPU 1 held: it may wait for CPU 1 only outside veil's code (the
# device-mapper core's own teardown flushes every CPU, for dm-crypt too).
# Writes RESULTS/rt-preempt.ok when all is well.
. "$(dirname "$0")/../lib.sh"
RESULTS=$1
. "$TOP/tests/guest-cache.sh"
guest_cache "$RESULTS/guest-cache.list"
requires root
requires modinfo brd
requires cmd chrt
veil_load
kmsg_mark
[ "$(nproc)" = 2 ] || fail "want 2 CPUs, have $(nproc)"
grep -q 'preempt=full' /proc/cmdline || fail "the guest was not booted with preempt=full"

rt_runtime=$(cat /proc/sys/kernel/sched_rt_runtime_us)
at_exit "echo $rt_runtime > /proc/sys/kernel/sched_rt_runtime_us"
echo -1 > /proc/sys/kernel/sched_rt_runtime_us

# hog SECONDS: a SCHED_FIFO busy loop on CPU 1, ended from CPU 0
hog() { taskset -c 0 timeout "$1" taskset -c 1 chrt -f 50 bash -c 'while :; do :; done'; }

# io_rounds: 1 MiB writes then reads of slot k on CPU 0 until $WORK/stop;
# a request that takes more than 3 s is written to $WORK/late
io_rounds() {
	local n=0 k
	while [ ! -f "$WORK/stop" ]; do
		k=$((n % 16))
		timeout 3 dd if="$WORK/data" of=/dev/mapper/vt bs=1M seek=$k oflag=direct \
			conv=notrunc status=none || echo "write of MiB $k: exit $?" >> "$WORK/late"
		timeout 3 dd if=/dev/mapper/vt of=/dev/null bs=1M count=1 skip=$k iflag=direct \
			status=none || echo "read of MiB $k: exit $?" >> "$WORK/late"
		n=$((n + 1))
	done
	echo "$n" > "$WORK/rounds"
}

head -c 1M /dev/urandom > "$WORK/data"
# A ramdisk: its bios stay 1 MiB (a loop device cuts reads into small
# ones, which rarely fan out), and reads complete in the reading task,
# which shares them with helpers as writes are.
rmmod brd 2>/dev/null || true
modprobe brd rd_nr=1 rd_size=65536
at_exit "rmmod brd"
[ -b /dev/ram0 ] || fail "no brd device"
for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	name=${spec%% *}
	dm_create vt "0 32768 veil $spec 0 /dev/ram0 0 1 fanout_chunk:16384"
	rm -f "$WORK/stop" "$WORK/late"
	taskset -c 0 bash -c "$(declare -f io_rounds); WORK=$WORK io_rounds" &
	io=$!
	for i in 1 2 3 4 5 6; do
		sleep "0.$((RANDOM % 10))"
		hog 6 || true
	done
	touch "$WORK/stop"
	wait "$io"
	[ -f "$WORK/late" ] && fail "$name: requests late with CPU 1 held: $(tr '\n' ';' < "$WORK/late")"
	info "$name: $(cat "$WORK/rounds") rounds of writes and reads; $(dmsetup status vt)"
	for k in $(seq 0 15); do
		dd if=/dev/mapper/vt bs=1M count=1 skip="$k" iflag=direct status=none |
			cmp -s - "$WORK/data" || fail "$name: MiB $k does not read back"
	done

	udevadm settle --timeout=30 2>/dev/null || true
	hog 8 &
	hogpid=$!
	sleep 1
	dmsetup remove --retry vt &
	rm_pid=$!
	sleep 3
	if kill -0 "$rm_pid" 2>/dev/null; then
		stack=$(cat /proc/$rm_pid/task/*/stack 2>/dev/null || true)
		grep -q '\[dm_veil\]' <<< "$stack" &&
			fail "$name: dmsetup remove waits in veil with CPU 1 held: $stack"
		info "$name: dmsetup remove waits for CPU 1 outside veil: $(grep -m3 -o '[a-z_]*+0x' <<< "$stack" | tr '\n' ' ')"
	fi
	wait "$hogpid" || true
	wait "$rm_pid" || fail "$name: dmsetup remove failed"
	_devs=()
done
bad=$(kmsg_bad) && fail "kernel log: $bad"
touch "$RESULTS/rt-preempt.ok"
