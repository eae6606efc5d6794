#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest of 008-threadirqs.sh (threadirqs, an NVMe disk): reads
# complete in the disk's IRQ thread (SCHED_FIFO 50), never the reader's
# own submit_bio. veil runs no cipher chunk there: chunks_endio stays 0
# for XTS reads of 4 KiB and 1 MiB and for CTR reads with keystream-ahead
# (which may XOR at most keystream_ahead_max bytes there, no cipher).
# Then cyclictest at SCHED_FIFO 40, below the IRQ threads, on both CPUs
# beside 4 MiB reads: its worst latency with veil may not exceed twice
# dm-crypt's plus 10 ms (both measured here; the emulator is noisy).
# Writes RESULTS/threadirqs.ok when all is well.
. "$(dirname "$0")/../lib.sh"
RESULTS=$1
. "$TOP/tests/guest-cache.sh"
guest_cache "$RESULTS/guest-cache.list"
requires root
requires cmd fio cyclictest
veil_load
kmsg_mark
grep -qw threadirqs /proc/cmdline || fail "booted without threadirqs"
modprobe nvme 2>/dev/null || true
modprobe dm_crypt
udevadm settle
dev=
for d in /sys/block/nvme*; do
	[[ "$(cat "$d/device/serial" 2>/dev/null)" == veilirq* ]] && dev=/dev/${d##*/}
done
[ -b "$dev" ] || fail "no NVMe disk"
ps -eo comm | grep -q '^irq/.*nvme' || fail "no NVMe IRQ thread: threadirqs did not take"
size=$(blockdev --getsz "$dev")

for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	name=${spec%% *}
	dm_create vt "0 $size veil $spec 0 $dev 0"
	udevadm settle
	dd if=/dev/urandom of=/dev/mapper/vt bs=1M count=32 oflag=direct status=none
	dmsetup message vt 0 stats reset
	dd if=/dev/mapper/vt of=/dev/null bs=1M count=32 iflag=direct status=none
	dd if=/dev/mapper/vt of=/dev/null bs=64k count=128 iflag=direct status=none
	dd if=/dev/mapper/vt of=/dev/null bs=4k count=256 iflag=direct status=none
	info "$name: $(dmsetup status vt | cut -d' ' -f4-)"
	[ "$(status_field vt chunks_endio)" = 0 ] ||
		fail "$name: chunks_endio=$(status_field vt chunks_endio): cipher work in the IRQ thread"
	[ "$(status_field vt chunks_queue)" -gt 0 ] || fail "$name: nothing on the crypt queue"
	dm_remove vt
done

# latency TARGET: cyclictest's worst latency (us) beside 4 MiB reads
latency() {
	local key=$(randhex 64)
	dm_create vl "0 $size $1 aes-xts-plain64 $key 0 $dev 0"
	udevadm settle
	fio --name=load --filename=/dev/mapper/vl --direct=1 --rw=read --bs=4m \
	    --iodepth=1 --runtime=12 --time_based --output=/dev/null &
	local load=$!
	sleep 1
	cyclictest -q -m -p 40 -t 2 -a -i 2000 -D 10 > "$WORK/cyclictest-$1.txt"
	wait "$load"
	dm_remove vl
	awk '/Max:/ { for (i = 1; i <= NF; i++) if ($i == "Max:") m = ($(i + 1) > m ? $(i + 1) : m) } END { print m + 0 }' \
		"$WORK/cyclictest-$1.txt"
}
crypt=$(latency crypt)
veil=$(latency veil)
info "cyclictest at FIFO 40 beside 4 MiB reads, worst latency: dm-crypt $crypt us, veil $veil us"
[ "$veil" -le $((2 * crypt + 10000)) ] ||
	fail "veil's worst latency $veil us against dm-crypt's $crypt us"
bad=$(kmsg_bad) && fail "kernel log: $bad"
touch "$RESULTS/threadirqs.ok"
