#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest of 006-polled-io.sh (an NVMe disk with one poll queue):
# polled writes and reads (fio io_uring --hipri) through dm-crypt, then
# through veil with the same table. Where the kernel takes polled I/O
# through a target (6.12: io_uring retries a refused non-blocking
# submission from its workers), veil's fio verify passes, fast, with no
# NVMe timeout: a write bio that asks for polling and that nobody polls
# waits for the timeout (10 s here). dm-crypt is only reported: on 6.12 it
# takes seconds per write. Where the kernel refuses polled I/O (6.1 marks
# polled bios REQ_NOWAIT, which neither target takes), both fail with
# EOPNOTSUPP and nothing hangs. Writes RESULTS/polled.ok when all is well.
. "$(dirname "$0")/../lib.sh"
RESULTS=$1
. "$TOP/tests/guest-cache.sh"
guest_cache "$RESULTS/guest-cache.list"
requires root
requires cmd fio
veil_load
info "module: $VEIL_KO"
kmsg_mark
modprobe nvme 2>/dev/null || true
modprobe dm_crypt
udevadm settle
dev=
for d in /sys/block/nvme*; do
	if [[ "$(cat "$d/device/serial" 2>/dev/null)" == veilpoll* ]]; then
		dev=/dev/${d##*/}
	fi
done
[ -b "$dev" ] || fail "no NVMe disk with serial veilpoll: $(ls /sys/block)"
[ "$(cat "/sys/block/${dev#/dev/}/queue/io_poll")" = 1 ] || fail "$dev has no poll queue"

# polled TARGET SPEC LIMIT: fio's outcome, "ok SECONDS", "refused"
# (EOPNOTSUPP) or "failed ..." (its output on stderr)
polled() {
	local start rc=0
	dm_create vp "0 131072 $1 $2 0 $dev 0"
	start=$(date +%s)
	timeout "$3" fio --name=polled --filename=/dev/mapper/vp --ioengine=io_uring \
		--hipri=1 --direct=1 --rw=randwrite --bs=4k --size=2M --iodepth=4 \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		--output="$WORK/fio-$1.txt" > "$WORK/fio-$1.err" 2>&1 || rc=$?
	dm_remove vp
	if [ "$rc" = 0 ] && grep -q 'err= 0' "$WORK/fio-$1.txt"; then
		echo "ok $(($(date +%s) - start))"
	elif [ "$rc" != 124 ] && grep -q 'Operation not supported' "$WORK/fio-$1.err"; then
		echo refused
	else
		cat "$WORK/fio-$1.txt" "$WORK/fio-$1.err" >&2
		echo "failed (fio exit $rc)"
	fi
}

for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	crypt=$(polled crypt "$spec" 60 2>/dev/null)
	veil=$(polled veil "$spec" 240)
	info "${spec%% *}, 512 polled 4 KiB writes then polled verify reads: dm-crypt $crypt, veil $veil"
	case "$crypt/$veil" in
	refused/refused) ;;
	*/ok*)
		# 1024 I/Os of 4 KiB; one NVMe timeout alone would take 10 s.
		[ "${veil#ok }" -lt 60 ] || fail "${spec%% *}: polled I/O through veil took ${veil#ok }s"
		;;
	*) fail "${spec%% *}: veil $veil (dm-crypt $crypt)" ;;
	esac
done
bad=$(kmsg_bad) && fail "kernel log: $bad"
touch "$RESULTS/polled.ok"
echo "ok: polled I/O through veil: fast where the kernel takes it, refused where dm-crypt's is"
