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
rm -f "$img" "$RESULTS"/unplug.* "$RESULTS"/unplugged "$RESULTS"/replug*
truncate -s 64M "$img"
# -blockdev, not -drive: the image stays attached to QEMU across device_del.
qopts="-qmp unix:$sock,server=on,wait=off -device qemu-xhci,id=xhci"
qopts="$qopts -blockdev driver=file,filename=$img,node-name=stickfile"
qopts="$qopts -blockdev driver=raw,file=stickfile,node-name=stick"
qopts="$qopts -device usb-storage,id=stick0,bus=xhci.0,drive=stick,removable=on"

"$TOP/scripts/guest.sh" -w "$RESULTS" -q "$qopts" -- \
	"bash $TOP/tests/host/usb-unplug-guest.sh $RESULTS > $RESULTS/usb-unplug.log 2>&1" \
	> "$RESULTS/usb-unplug-console.log" 2>&1 &
vm=$!

qmp() { python3 "$TOP/tests/host/qmp.py" "$sock" "$@"; }
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
wait "$vm" || true
cat "$RESULTS/usb-unplug.log" 2>/dev/null || true
[ -f "$RESULTS/unplug.ok" ] || { echo "FAIL: the guest did not finish (state $state)"; exit 1; }
if grep -qa VEIL-PLAINTEXT-MARKER "$img"; then echo "FAIL: plaintext on the stick"; exit 1; fi
rm -f "$img"
echo "ok: unplugged mid-write, errors reported, re-plugged, synced data intact"
