#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Table and status lines asked for with every buffer size, as libdevmapper
# does before it retries with a larger one (tests/tools/status-buffer.c):
# an answer the kernel does not flag as full must be the whole line. A hex
# key that does not fit must fill the buffer, not vanish from the line.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd cc keyctl
veil_load

cc -O2 -Wall -o "$WORK/status-buffer" "$TOP/tests/tools/status-buffer.c" ||
	fail "cannot build status-buffer"
mkloop 16M
head -c 64 /dev/urandom | keyctl padd logon veiltest:status @u >/dev/null
at_exit "keyctl purge logon veiltest:status"

# Two targets: the last line of the answer is where a dropped key shows.
for key in "$(randhex 64)" ":64:logon:veiltest:status"; do
	for opts in "" " 2 sector_size:4096 no_read_workqueue"; do
		dm_create vt "0 16384 veil aes-xts-plain64 $key 0 $LOOP 0$opts
16384 16384 veil aes-xts-plain64 $key 8 $LOOP 16384$opts"
		for what in table status; do
			"$WORK/status-buffer" $what vt ||
				fail "$what, key ${key:0:12}..., options '$opts': short buffer not flagged full"
		done
		dm_remove vt
	done
done
