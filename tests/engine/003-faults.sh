#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Faults under the engine: with dm-flakey failing every I/O below veil,
# small and fanned-out reads and writes (XTS and CTR with keystream-ahead)
# end with errors, nothing hangs; once the device below is healthy again,
# data written reads back through veil and dm-crypt and fio verifies; and
# everything unloads afterwards.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_flakey dm_crypt
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
	# fio prints "err= 0" when nothing failed: want a real error number.
	grep -E 'err= *[1-9]' "$WORK/fio.txt" || { cat "$WORK/fio.txt"; fail "fio reported no errors"; }
	# Switch the device below to healthy: I/O works again, and what is
	# written now reads back, through veil and through dm-crypt.
	dmsetup reload vt-flakey --table "0 65536 linear $LOOP 0"
	dmsetup resume vt-flakey
	plaintext "$WORK/data" $((4 << 20))
	dd if="$WORK/data" of=/dev/mapper/vt bs=1M oflag=direct status=none ||
		fail "write after the device recovered"
	cmp -s "$WORK/data" <(dd if=/dev/mapper/vt bs=1M count=4 iflag=direct status=none) ||
		fail "data written after the recovery does not read back"
	dm_create vt-crypt "0 65536 crypt $spec 0 /dev/mapper/vt-flakey 0"
	cmp -s "$WORK/data" <(dd if=/dev/mapper/vt-crypt bs=1M count=4 iflag=direct status=none) ||
		fail "dm-crypt reads other data after the recovery"
	dm_remove vt-crypt
	fio --name=recovered --filename=/dev/mapper/vt --direct=1 --ioengine=libaio \
	    --rw=randwrite --bsrange=4k-1m --iodepth=16 --size=8M --verify=crc32c \
	    --verify_fatal=1 --output="$WORK/fio2.txt" ||
		{ cat "$WORK/fio2.txt"; fail "fio verify after the recovery"; }
	grep -q 'err= 0' "$WORK/fio2.txt" || fail "fio errors after the recovery"
	dm_remove vt
	dm_remove vt-flakey
done
rmmod dm_flakey
rmmod dm_veil || fail "dm_veil does not unload"
veil_load
