#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cap on a target's ciphertext pages in flight (2% of memory), reached
# on purpose: veil over dm-delay, which holds every write for 3 s, with
# 8 fio jobs 32 deep of 4 KiB-1 MiB writes, ~128 MiB asked for at a time
# (with one second, a guest sharing the machine encrypted too slowly to
# have the cap's 40 MiB in flight). Writes that find the cap reached wait
# in order on the page-wait queue; small writes that arrive later must not
# keep taking the pages a waiting 1 MiB write needs, nor leave it asleep
# once writes drain. fio finishes, verifies with no error, and no write
# waits more than 60 s (about ten times a full queue's drain time here).
. "$(dirname "$0")/../lib.sh"
requires root
requires module brd
requires cmd fio
veil_load

modprobe dm_delay
rmmod brd 2>/dev/null || true
modprobe brd rd_nr=1 rd_size=262144
at_exit "rmmod brd"
dm_create vdelay "0 524288 delay /dev/ram0 0 0 /dev/ram0 0 3000"
dm_create vt "0 524288 veil aes-xts-plain64 $(randhex 64) 0 /dev/mapper/vdelay 0"
udevadm settle
dmsetup message vt 0 stats reset
timeout 300 fio --name=cap --filename=/dev/mapper/vt --direct=1 --ioengine=libaio \
	--rw=randwrite --bsrange=4k-1m --iodepth=32 --numjobs=8 --size=24M \
	--offset_increment=32M --verify=crc32c --verify_fatal=1 --verify_state_save=0 \
	--group_reporting --output="$WORK/fio.txt" ||
	{ cat "$WORK/fio.txt"; fail "fio failed or did not finish in 300 s"; }
grep -E 'WRITE:|READ:|err=| clat .*max=' "$WORK/fio.txt"
grep -q 'err= 0' "$WORK/fio.txt" || fail "fio errors"
dmsetup status vt
waits=$(status_field vt page_waits)
[ "$waits" -gt 0 ] || fail "no write reached the page cap (page_waits=0)"
# fio's completion latency of the writes, worst case, in ms.
max=$(awk '/^  write:/ { w = 1 } w && / clat \(/ {
	unit = $2; sub(/.*max=/, "", $0); sub(/,.*/, "", $0)
	m = $0 + 0; if (unit ~ /usec/) m /= 1000; if (unit ~ /nsec/) m /= 1000000
	print int(m); exit }' "$WORK/fio.txt")
info "page_waits=$waits, slowest write ${max} ms"
[ -n "$max" ] || fail "no write latency in fio's output"
[ "$max" -lt 60000 ] || fail "a write waited ${max} ms at the page cap"
