#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest of 007-rt-preempt.sh (preempt=full, 2 vCPUs): 1 MiB O_DIRECT
# writes and reads from CPU 0 while a SCHED_FIFO busy loop takes CPU 1 for
# 6 s at a random moment, with real-time throttling off, four times per
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
requires cmd chrt fio python3
veil_load
kmsg_mark
[ "$(nproc)" = 2 ] || fail "want 2 CPUs, have $(nproc)"
grep -q 'preempt=full' /proc/cmdline || fail "the guest was not booted with preempt=full"

rt_runtime=$(cat /proc/sys/kernel/sched_rt_runtime_us)
at_exit "echo $rt_runtime > /proc/sys/kernel/sched_rt_runtime_us"
echo -1 > /proc/sys/kernel/sched_rt_runtime_us

# hog SECONDS: a SCHED_FIFO busy loop on CPU 1, ended from CPU 0
hog() { taskset -c 0 timeout "$1" taskset -c 1 chrt -f 50 bash -c 'while :; do :; done'; }

# io SECONDS: 1 MiB O_DIRECT writes and reads at queue depth 1 from CPU 0,
# crc32c-verified, without a pause for SECONDS; fio's JSON in $WORK/io.json
io() {
	fio --name=rt --filename=/dev/mapper/vt --direct=1 --ioengine=psync \
	    --rw=randrw --bs=1m --size=16M --cpus_allowed=0 \
	    --verify=crc32c --verify_backlog=1 --verify_fatal=1 --verify_state_save=0 \
	    --runtime="$1" --time_based --output-format=json --output="$WORK/io.json"
}
# slowest: the longest write and read in $WORK/io.json, in ms
slowest() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(" ".join("%s=%d" % (d, j[d]["lat_ns"]["max"] // 1000000) for d in ("write", "read")))' "$WORK/io.json"
}

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
	io 32 &
	io=$!
	sleep 2
	for i in 1 2 3 4; do
		sleep "0.$((RANDOM % 10))"
		hog 6 || true
	done
	wait "$io" || fail "$name: fio failed: $(tail -5 "$WORK/io.json")"
	info "$name: slowest ms: $(slowest); $(dmsetup status vt)"
	for d in $(slowest); do
		[ "${d#*=}" -le 3000 ] || fail "$name: a ${d%=*} took ${d#*=} ms with CPU 1 held (limit 3000)"
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
