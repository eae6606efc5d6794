#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernel: debug
# Allocation failures aimed at the I/O path (the debug kernel's fault
# injection), XTS and CTR:
# - fail_page_alloc fails 90% of the page allocations that may not wait
#   (veil's fast path for ciphertext and keystream pages): writes fall back
#   to the reserve and, once 32 writes of up to 1 MiB have drained it, to
#   the page-wait queue; keystream reads go without keystream-ahead; fio
#   verifies with no error at all.
# - failslab fails every allocation from the bio and bio_vec slab caches
#   (marked at boot: tests/run gives the debug kernel
#   slub_debug=A,bio-*,biovec-*), waiting or not, for every task: dm's
#   clones and veil's ciphertext bios come from their bio_sets' reserves
#   alone, and fio verifies with no error at all.
# Nothing hangs, nothing crashes, the kernel log has no bug.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd fio
veil_load
# udev is not under test: on the debug kernel its rules take seconds per
# event, and each create, resume and remove would wait for them.
udev_off

DBG=/sys/kernel/debug
mount -t debugfs none $DBG 2>/dev/null || true
[ -d $DBG/fail_page_alloc ] && [ -d $DBG/failslab ] || skip "no fault injection in this kernel"
# failslab's cache filter needs the bio caches marked (boot parameter).
marked=$(cat /sys/kernel/slab/bio-*/failslab /sys/kernel/slab/biovec-*/failslab 2>/dev/null | grep -c '^1')
[ "$marked" -gt 0 ] || fail "no bio slab cache is marked for failslab: boot with slub_debug=A,bio-*,biovec-*"
# What injected failures print on purpose.
kmsg_allow 'FAULT_INJECTION' 'page allocation failure' 'Call Trace:' 'Buffer I/O error' \
	'I/O error' 'blk_update_request' 'fail_page_alloc' 'failslab' 'veil: .*' 'warn_alloc'

# inject KIND PROBABILITY GFP_WAIT_TOO TASK_FILTER [CACHE_FILTER [TIMES]]
# The probability is written last: until the filters are in place, a
# nonzero probability would fail every allocation of every task.
inject() {
	local d=$DBG/$1
	echo 0 > $d/probability
	echo 1 > $d/interval
	echo "${6:--1}" > $d/times
	echo 0 > $d/space
	echo 0 > $d/verbose
	# fail_page_alloc leaves order-0 pages alone unless told (min-order 1).
	[ ! -e $d/min-order ] || echo 0 > $d/min-order
	[ ! -e $d/cache-filter ] || echo "${5:-N}" > $d/cache-filter
	echo "$4" > $d/task-filter
	if [ "$3" = Y ]; then echo N > $d/ignore-gfp-wait; else echo Y > $d/ignore-gfp-wait; fi
	echo "$2" > $d/probability
}
inject_off() { echo 0 > "$DBG/$1/probability"; [ ! -e "$DBG/$1/cache-filter" ] || echo N > "$DBG/$1/cache-filter"; }
at_exit "inject_off fail_page_alloc; inject_off failslab"

mkloop 64M
for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	name=${spec%% *}
	dm_create vt "0 131072 veil $spec 0 $LOOP 0 1 keystream_ahead_max:1048576"

	# 1. Non-waiting page allocations fail, everywhere: no error allowed.
	dmsetup message vt 0 stats reset
	inject fail_page_alloc 90 N N
	fio --name=nowait --filename=/dev/mapper/vt --direct=1 --ioengine=libaio \
	    --rw=randrw --bsrange=4k-1m --iodepth=16 --numjobs=2 --size=16M \
	    --offset_increment=24M --verify=crc32c --verify_fatal=1 --runtime=20 \
	    --time_based=0 --group_reporting --output="$WORK/fio.txt" ||
		{ inject_off fail_page_alloc; cat "$WORK/fio.txt"; fail "$name: fio under fail_page_alloc"; }
	inject_off fail_page_alloc
	grep -E 'READ:|WRITE:|err=' "$WORK/fio.txt"
	grep -q 'err= 0' "$WORK/fio.txt" || fail "$name: fio errors under fail_page_alloc"
	dmsetup status vt
	if [ "$name" = aes-xts-plain64 ]; then
		[ "$(status_field vt page_waits)" -gt 0 ] || fail "$name: no write went to the page-wait path"
	else
		[ "$(status_field vt keystream_skip)" -gt 0 ] || fail "$name: no keystream read was skipped"
	fi

	# 2. Every slab allocation of a bio or a bio_vec fails, waiting ones
	#    too, for every task: dm's clones and veil's ciphertext bios come
	#    from their bio_sets' reserves only. fio verifies with no error.
	times=1000000000
	inject failslab 100 Y N Y $times
	fio --name=slab --filename=/dev/mapper/vt --direct=1 --ioengine=libaio \
	    --rw=randrw --bsrange=4k-2m --iodepth=16 --numjobs=2 --size=16M \
	    --offset_increment=24M --verify=crc32c --verify_fatal=1 \
	    --group_reporting --output="$WORK/fio.txt" ||
		{ inject_off failslab; cat "$WORK/fio.txt"; fail "$name: fio under failslab"; }
	failed=$((times - $(cat $DBG/failslab/times)))
	inject_off failslab
	grep -E 'READ:|WRITE:|err=' "$WORK/fio.txt"
	grep -q 'err= 0' "$WORK/fio.txt" || fail "$name: fio errors under failslab"
	info "$name under failslab: $failed bio and bio_vec allocations failed"
	[ "$failed" -gt 0 ] || fail "$name: failslab failed no allocation"
	dm_remove vt
done
