#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: the USB stick pulled out mid-write. The guest writes to an
# ext2 file system on a LUKS2 veil volume on a QEMU usb-storage stick; when
# it asks, this script unplugs the stick through QMP (device_del), later
# plugs it back in (device_add, same image). The guest checks the errors
# and the data (usb-unplug-guest.sh). The image holds no plaintext.
#
#   002-usb-unplug.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
img=$RESULTS/usb-unplug.img
sockdir=$(mktemp -d /tmp/veil-qmp.XXXXXX)
sock=$sockdir/qmp
trap 'rm -rf "$sockdir"' EXIT
# -blockdev, not -drive: the image stays attached to QEMU across device_del.
qopts="-qmp unix:$sock,server=on,wait=off -device qemu-xhci,id=xhci"
qopts="$qopts -blockdev driver=file,filename=$img,node-name=stickfile"
qopts="$qopts -blockdev driver=raw,file=stickfile,node-name=stick"
qopts="$qopts -device usb-storage,id=stick0,bus=xhci.0,drive=stick,removable=on"

. "$TOP/tests/host/host-lib.sh"
qmp() { python3 "$TOP/tests/host/qmp.py" "$sock" "$@"; }
console=$RESULTS/usb-unplug-console.log
# As run_guest: a QEMU killed by a signal says nothing about
# veil, so the scenario runs once more in a new guest, on a new image.
for attempt in 1 2; do
	rm -f "$img" "$RESULTS"/unplug.* "$RESULTS"/unplugged "$RESULTS"/replug* "$sock"
	truncate -s 64M "$img"
	"$TOP/scripts/guest.sh" -w "$RESULTS" -q "$qopts" -- \
		"bash $TOP/tests/host/usb-unplug-guest.sh $RESULTS > $RESULTS/usb-unplug.log 2>&1" \
		> "$console" 2>&1 &
	vm=$!
	state=wait-unplug
	while kill -0 "$vm" 2>/dev/null; do
		if [ "$state" = wait-unplug ] && [ -e "$RESULTS/unplug.req" ]; then
			if qmp unplug stick0; then
				echo "# host: stick unplugged"
				touch "$RESULTS/unplugged"
				state=wait-replug
			else
				state=unplug-failed	# the guest times out and stops
			fi
		elif [ "$state" = wait-replug ] && [ -e "$RESULTS/replug.req" ]; then
			if qmp plug usb-storage stick0 bus=xhci.0 drive=stick removable=on; then
				echo "# host: stick plugged back in"
				touch "$RESULTS/replugged"
				state=done
			else
				state=replug-failed
			fi
		fi
		sleep 0.2
	done
	wait "$vm" || echo "guest.sh: exit $?" >> "$console"
	cat "$RESULTS/usb-unplug.log" 2>/dev/null || true
	[ -f "$RESULTS/unplug.ok" ] && break
	again_after_qemu_death "$console" "$RESULTS/usb-unplug.log" "$attempt" \
		"the guest did not finish (state $state)" || exit 1
done
if grep -qa VEIL-PLAINTEXT-MARKER "$img"; then echo "FAIL: plaintext on the stick"; exit 1; fi
rm -f "$img"
echo "ok: unplugged mid-write, errors reported, re-plugged, synced data intact"
