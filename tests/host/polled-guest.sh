#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest of 006-polled-io.sh (an NVMe disk with one poll queue):
# polled writes and reads (fio io_uring --hipri) through veil must finish
# as fast as unpolled ones, not one NVMe timeout (10 s here) per write.
# Writes RESULTS/polled.ok when all is well.
. "$(dirname "$0")/../lib.sh"
RESULTS=$1
requires root
requires cmd fio
veil_load
info "module: $VEIL_KO"
kmsg_mark
modprobe nvme 2>/dev/null || true
udevadm settle
dev=$(for d in /sys/block/nvme*; do
	[ "$(cat "$d/device/serial" 2>/dev/null)" = veilpoll ] && echo "/dev/${d##*/}"; done | head -1)
[ -b "$dev" ] || fail "no NVMe disk with serial veilpoll"
[ "$(cat "/sys/block/${dev#/dev/}/queue/io_poll")" = 1 ] || fail "$dev has no poll queue"
for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	dm_create vp "0 131072 veil $spec 0 $dev 0"
	dm=$(basename "$(readlink -f /dev/mapper/vp)")
	[ "$(cat "/sys/block/$dm/queue/io_poll")" = 1 ] ||
		fail "${spec%% *}: the veil device does not take polled I/O"
	info "${spec%% *}: 512 polled 4 KiB writes, then verified with polled reads"
	start=$(date +%s)
	timeout 240 fio --name=polled --filename=/dev/mapper/vp --ioengine=io_uring \
		--hipri=1 --direct=1 --rw=randwrite --bs=4k --size=2M --iodepth=4 \
		--verify=crc32c --verify_fatal=1 --output="$WORK/fio.txt" ||
		{ cat "$WORK/fio.txt"; fail "${spec%% *}: polled fio failed or did not finish in 240 s"; }
	secs=$(($(date +%s) - start))
	grep -E 'READ:|WRITE:|err=' "$WORK/fio.txt"
	grep -q 'err= 0' "$WORK/fio.txt" || { cat "$WORK/fio.txt"; fail "${spec%% *}: fio errors"; }
	info "${spec%% *}: ${secs}s"
	# 1024 I/Os of 4 KiB; one NVMe timeout alone would take 10 s.
	[ "$secs" -lt 60 ] || fail "${spec%% *}: polled I/O took ${secs}s"
	dm_remove vp
done
late=$(kmsg_all | tail -n +"$((_kmsg + 1))" | grep -E 'nvme.*timeout' | head -3) &&
	fail "NVMe timeouts: $late"
bad=$(kmsg_bad) && fail "kernel log: $bad"
touch "$RESULTS/polled.ok"
echo "ok: polled I/O through veil finished without NVMe timeouts"
