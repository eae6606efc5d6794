#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Faults under the engine: with dm-flakey failing every I/O below veil,
# small and fanned-out reads and writes (XTS and CTR with keystream-ahead)
# end with errors, nothing hangs, and everything unloads afterwards.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_flakey
veil_load

mkloop 32M
for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	# Up for 0 s, down for 1 s: every I/O fails.
	dm_create vt-flakey "0 65536 flakey $LOOP 0 0 1"
	dm_create vt "0 65536 veil $spec 0 /dev/mapper/vt-flakey 0"
	for bs in 4k 1M; do
		expect_fail dd if=/dev/mapper/vt of=/dev/null bs=$bs count=4 iflag=direct
		expect_fail dd if=/dev/zero of=/dev/mapper/vt bs=$bs count=4 oflag=direct
	done
	# Many at once: fio must see errors and finish.
	fio --name=faults --filename=/dev/mapper/vt --direct=1 --ioengine=libaio \
	    --rw=randrw --bsrange=4k-1m --iodepth=16 --numjobs=2 --size=8M \
	    --continue_on_error=all --runtime=5 --time_based=1 \
	    --output="$WORK/fio.txt" || true
	grep -q 'err=' "$WORK/fio.txt" || fail "fio reported no errors"
	# Switch the device below to healthy: I/O works again.
	dmsetup reload vt-flakey --table "0 65536 linear $LOOP 0"
	dmsetup resume vt-flakey
	dd if=/dev/zero of=/dev/mapper/vt bs=1M count=4 oflag=direct status=none ||
		fail "write after the device recovered"
	dd if=/dev/mapper/vt of=/dev/null bs=1M count=4 iflag=direct status=none ||
		fail "read after the device recovered"
	dm_remove vt
	dm_remove vt-flakey
done
rmmod dm_flakey
rmmod dm_veil || fail "dm_veil does not unload"
veil_load
