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
# - failslab fails a tenth of the slab allocations of the writing and
#   reading tasks, waiting or not: each 64 KiB write or read either fails
#   or succeeds, and every one that succeeded has the right data.
# Nothing hangs, nothing crashes, the kernel log has no bug.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd fio
veil_load

DBG=/sys/kernel/debug
mount -t debugfs none $DBG 2>/dev/null || true
[ -d $DBG/fail_page_alloc ] && [ -d $DBG/failslab ] || skip "no fault injection in this kernel"
# What injected failures print on purpose.
kmsg_allow 'FAULT_INJECTION' 'page allocation failure' 'Call Trace:' 'Buffer I/O error' \
	'I/O error' 'blk_update_request' 'fail_page_alloc' 'failslab' 'veil: .*' 'warn_alloc'

# inject KIND PROBABILITY GFP_WAIT_TOO TASK_FILTER / inject_off KIND
inject() {
	local d=$DBG/$1
	echo "$2" > $d/probability
	echo 1 > $d/interval
	echo -1 > $d/times
	echo 0 > $d/space
	echo 0 > $d/verbose
	# fail_page_alloc leaves order-0 pages alone unless told (min-order 1).
	[ ! -e $d/min-order ] || echo 0 > $d/min-order
	echo "$4" > $d/task-filter
	if [ "$3" = Y ]; then echo N > $d/ignore-gfp-wait; else echo Y > $d/ignore-gfp-wait; fi
}
inject_off() { echo 0 > "$DBG/$1/probability"; }
at_exit "inject_off fail_page_alloc; inject_off failslab"

mkloop 64M
for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	name=${spec%% *}
	dm_create vt "0 131072 veil $spec 0 $LOOP 0 1 keystream_ahead_max:1048576"
	udevadm settle

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

	# 2. Slab allocations of the I/O tasks fail, waiting ones too.
	plaintext "$WORK/new" $((64 * 65536))
	dd if=/dev/urandom of=/dev/mapper/vt bs=64k count=64 oflag=direct status=none
	dd if=/dev/mapper/vt of="$WORK/old" bs=64k count=64 iflag=direct status=none
	inject failslab 10 Y Y
	ok_w=() ok_r=()
	for ((i = 0; i < 64; i++)); do
		if (echo 1 > /proc/self/make-it-fail; exec dd if="$WORK/new" of=/dev/mapper/vt \
			bs=64k skip=$i seek=$i count=1 oflag=direct status=none) 2>/dev/null; then
			ok_w+=($i)
		fi
	done
	for ((i = 0; i < 64; i++)); do
		if (echo 1 > /proc/self/make-it-fail; exec dd if=/dev/mapper/vt of="$WORK/r$i" \
			bs=64k skip=$i count=1 iflag=direct status=none) 2>/dev/null; then
			ok_r+=($i)
		fi
	done
	inject_off failslab
	info "$name under failslab: ${#ok_w[@]}/64 writes and ${#ok_r[@]}/64 reads succeeded"
	dd if=/dev/mapper/vt of="$WORK/after" bs=64k count=64 iflag=direct status=none
	for i in "${ok_w[@]}"; do
		cmp -s <(dd if="$WORK/new" bs=64k skip=$i count=1 status=none) \
		       <(dd if="$WORK/after" bs=64k skip=$i count=1 status=none) ||
			fail "$name: block $i: write succeeded under failslab, data differs"
	done
	for i in "${ok_r[@]}"; do
		cmp -s "$WORK/r$i" <(dd if="$WORK/after" bs=64k skip=$i count=1 status=none) ||
			fail "$name: block $i: read succeeded under failslab with wrong data"
	done
	dm_remove vt
done
