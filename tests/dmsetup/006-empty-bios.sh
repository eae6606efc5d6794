#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Writes that carry no data (an empty REQ_FUA write, as a file system may
# send to make earlier writes durable, and a plain empty write) reach the
# target's map() and pass through to the device: status 0, no oops, and the
# device keeps working. Sent by the test module tests/kmod/veil_bio_test.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
veil_load

ko=$TOP/build/test-modules/$(uname -r)/veil_bio_test.ko
[ -f "$ko" ] || skip "no $ko (scripts/build-test-modules.sh)"

mkloop 16M
for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	for opts in "" "1 no_write_workqueue"; do
		dm_create vt "0 32768 veil $spec 0 $LOOP 0${opts:+ $opts}"
		for op in empty_fua empty_write; do
			kmsg_mark
			insmod "$ko" dev=/dev/mapper/vt op=$op || fail "$op: the test module failed"
			rmmod veil_bio_test
			kmsg_since | grep "veil_bio_test: $op on /dev/mapper/vt: status 0" >/dev/null ||
				fail "${spec%% *} $opts: $op did not complete with status 0: $(kmsg_since | tail -3)"
		done
		dd if=/dev/zero of=/dev/mapper/vt bs=64k count=4 oflag=direct,sync status=none ||
			fail "${spec%% *} $opts: writes fail after the empty bios"
		dm_remove vt
	done
done
