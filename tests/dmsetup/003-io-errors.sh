#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# I/O errors of the device below reach the caller, for reads and writes.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
veil_load

mkloop 8M
dm_create vt-under "0 4096 linear $LOOP 0
4096 4096 error"
dm_create vt "0 8192 veil aes-xts-plain64 $(randhex 64) 0 /dev/mapper/vt-under 0"

dd if=/dev/mapper/vt of=/dev/null bs=4096 count=16 iflag=direct status=none ||
	fail "read of the good half failed"
expect_fail dd if=/dev/mapper/vt of=/dev/null bs=4096 skip=600 count=4 iflag=direct
expect_fail dd if=/dev/zero of=/dev/mapper/vt bs=4096 seek=600 count=4 oflag=direct
# A request that spans good and bad sectors fails as a whole.
expect_fail dd if=/dev/zero of=/dev/mapper/vt bs=1M seek=1 count=2 oflag=direct
dd if=/dev/zero of=/dev/mapper/vt bs=4096 count=16 oflag=direct status=none ||
	fail "write to the good half failed"

dm_remove vt
dm_remove vt-under
