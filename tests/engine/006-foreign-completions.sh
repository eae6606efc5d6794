#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# No cipher time in another driver's thread: a read that completes in a
# task other than its submitter (here dm-delay's worker, which submits to
# a ramdisk that completes inline; threaded IRQ handlers, loop, nbd, md
# and kintegrityd workers are the same case) is decrypted on veil's crypt
# queue and by its helpers, never in that task. XTS reads of 4 KiB and
# 1 MiB, and CTR reads of 64 KiB with keystream-ahead (what no helper
# made before the completion goes to the queue too): chunks_endio stays 0
# and the data reads back. A read that completes in its submitter's own
# submit_bio (the ramdisk without dm-delay) is still decrypted there. On
# 6.12 a few reads through dm-delay complete in the reader's own
# submit_bio too (the function tracer shows veil's completion called from
# dm_submit_bio in dd), and on the debug kernel: where the tracer is
# there, chunks_endio may count the chunks of those reads and no more.
. "$(dirname "$0")/../lib.sh"
requires root
requires modinfo brd
requires module dm_delay
veil_load
rmmod brd 2>/dev/null || true
modprobe brd rd_nr=1 rd_size=65536
at_exit "rmmod brd"
[ -b /dev/ram0 ] || skip "no brd device"
dm_create vdelay "0 131072 delay /dev/ram0 0 1"
head -c 8M /dev/urandom > "$WORK/data"
TRACER=yes
[ -d "$TRACEFS/events" ] || mount -t tracefs nodev "$TRACEFS" 2>/dev/null || true
grep -qw function "$TRACEFS/available_tracers" 2>/dev/null || TRACER=

# check NAME SPEC KEY: write, then read back through veil over dm-delay
check() {
	local name=$1
	dm_create vt "0 131072 veil $2 $3 0 /dev/mapper/vdelay 0"
	udevadm settle
	BS=1048576 write_direct "$WORK/data" /dev/mapper/vt
	# Closing a written device makes udev probe it: not during the count.
	udevadm settle
	dmsetup message vt 0 stats reset
	[ -z "$TRACER" ] || trace_start veil_read_end_io
	BS=1048576 same_data "$WORK/data" /dev/mapper/vt || fail "$name: 1 MiB reads differ"
	BS=65536 same_data "$WORK/data" /dev/mapper/vt || fail "$name: 64 KiB reads differ"
	BS=4096 read_direct /dev/mapper/vt 1048576 | cmp -s - <(head -c 1M "$WORK/data") ||
		fail "$name: 4 KiB reads differ"
	info "$name: $(dmsetup status vt | cut -d' ' -f4-)"
	# Reads completed in the reader itself: at most 256 chunks each. A
	# kernel without the function tracer cannot show them: there a tenth
	# of all chunks is allowed (043565f: 1391 of 1551 in dm-delay's
	# worker).
	if [ -n "$TRACER" ]; then
		trace_stop > "$WORK/$name.trace"
		# Completions in a reading task (dd, or a udev probe), not
		# in dm-delay's worker or kthread.
		own=$(grep ': veil_read_end_io <-' "$WORK/$name.trace" |
			grep -cvE '^ *(kworker/|dm-delay)' || true)
		info "$name: $own reads completed in a reader's own submit_bio"
		allowed=$((own * 256))
	else
		allowed=$((($(status_field vt chunks_endio) + $(status_field vt chunks_queue) +
			    $(status_field vt chunks_helper)) / 10))
	fi
	[ "$(status_field vt chunks_endio)" -le "$allowed" ] ||
		fail "$name: chunks_endio=$(status_field vt chunks_endio): cipher work in dm-delay's worker"
	[ "$(status_field vt chunks_queue)" -gt 0 ] || fail "$name: nothing decrypted on the crypt queue"
	dm_remove vt
}
check xts aes-xts-plain64 "$(randhex 64)"
check ctr aes-ctr-plain64 "$(randhex 32)"

# The submitter's own completion still decrypts where it is.
dm_create vt "0 131072 veil aes-xts-plain64 $(randhex 64) 0 /dev/ram0 0"
udevadm settle
dmsetup message vt 0 stats reset
dd if=/dev/mapper/vt of=/dev/null bs=4k count=64 iflag=direct status=none
[ "$(status_field vt chunks_endio)" = 64 ] ||
	fail "ramdisk: chunks_endio=$(status_field vt chunks_endio), want 64 (the reader decrypts its own reads)"
dm_remove vt
