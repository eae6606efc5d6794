#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Data integrity under load: fio with crc32c verify over mixed random reads
# and writes (4 KiB to 1 MiB, queue depth 32, four jobs) while the table is
# suspended, resumed and reloaded over and over; for XTS and for CTR with
# keystream-ahead on reads of every size, fan-out on small chunks. No
# mismatch, no error, no hang.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd fio
veil_load
# udev is not under test: on the debug kernel its rules take seconds per
# event, and each create, resume and remove would wait for them.
udev_off

mkloop 128M
churn() {
	local table=$1
	while [ ! -f "$WORK/stop" ]; do
		dmsetup suspend vt && dmsetup resume vt
		dmsetup reload vt --table "$table" && dmsetup resume vt
		sleep 0.5
	done
}

for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	table="0 262144 veil $spec 0 $LOOP 0 2 fanout_chunk:16384 keystream_ahead_max:1048576"
	dm_create vt "$table"
	rm -f "$WORK/stop"
	churn "$table" &
	churner=$!
	fio_verify stress /dev/mapper/vt 4 32 25 ||
		{ touch "$WORK/stop"; wait; fail "fio: ${spec%% *}"; }
	touch "$WORK/stop"
	wait "$churner"
	dmsetup status vt
	# dm's accounting: every bio that started ended (iostat's busy time).
	# (Without udev /dev/mapper/vt is a node of its own, not a link.)
	dm=$(dmsetup info -c --noheadings --separator : -o major,minor vt | tr -d " ")
	read -r inr inw < "/sys/dev/block/$dm/inflight"
	[ "$inr $inw" = "0 0" ] || fail "dm counts $inr reads, $inw writes in flight after fio"
	dm_remove vt
done
