#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Keystream-ahead takes pages from the same per-target cap as the writes'
# ciphertext, but only up to half of it: a burst of CTR reads must not
# make writes wait for pages. veil (aes-ctr-plain64, keystream_ahead_max
# 1 MiB) over dm-delay, which holds every read for 4 s: four fio jobs 32
# deep of 1 MiB reads ask for about 128 MiB of keystream at a time (the
# cap is 2% of the guest's memory, 40 MiB here) while one job writes
# 1 MiB at a time. No write waits for pages (page_waits=0), and reads did
# meet the keystream's limit (keystream_skip > 0).
. "$(dirname "$0")/../lib.sh"
requires root
requires module brd
requires cmd fio
veil_load

modprobe dm_delay
rmmod brd 2>/dev/null || true
modprobe brd rd_nr=1 rd_size=262144
at_exit "rmmod brd"
# The reads are held only while fio runs: udev's probe of the new device
# and the clean-up read through it too. udev leaves the reloaded table
# alone (its probe would read through the delay, and dmsetup would wait
# for it).
delay_reads() {
	dmsetup suspend vdelay
	echo "0 524288 delay /dev/ram0 0 $1 /dev/ram0 0 0" | dmsetup load vdelay
	dmsetup resume --noudevrules --noudevsync vdelay
}
dm_create vdelay "0 524288 delay /dev/ram0 0 0 /dev/ram0 0 0"
dm_create vt "0 524288 veil aes-ctr-plain64 $(randhex 32) 0 /dev/mapper/vdelay 0 1 keystream_ahead_max:1048576"
udevadm settle
# fio writes through a node of its own: udev watches /dev/dm-N and would
# probe it after fio closes it, one read every 4 s, for minutes.
NODE=$WORK/vt.node
mknod "$NODE" b $(dmsetup info -c --noheadings -o major,minor --separator ' ' vt)
dmsetup message vt 0 stats reset
delay_reads 4000
timeout 180 fio --filename="$NODE" --direct=1 --ioengine=libaio \
	--time_based --runtime=30 --group_reporting --output="$WORK/fio.txt" \
	--name=reads --rw=randread --bs=1m --iodepth=32 --numjobs=4 --size=192M \
	--name=writes --rw=randwrite --bs=1m --iodepth=1 --offset=192M --size=32M ||
	{ cat "$WORK/fio.txt"; fail "fio failed or did not finish in 180 s"; }
delay_reads 0
grep -E 'WRITE:|READ:|err=' "$WORK/fio.txt"
dmsetup status vt
waits=$(status_field vt page_waits)
skips=$(status_field vt keystream_skip)
hits=$(status_field vt keystream_hit)
info "page_waits=$waits keystream_hit=$hits keystream_skip=$skips"
[ "$hits" -gt 0 ] || fail "no read had its keystream ahead"
[ "$skips" -gt 0 ] || fail "the reads never met the keystream's page limit"
[ "$waits" = 0 ] || fail "$waits writes waited for pages that keystream held"
