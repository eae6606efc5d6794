#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: a QEMU USB mass-storage stick (xHCI + usb-storage over an image
# file). First boot: veilsetup luksFormat, ext2, files, close. Second boot
# of the same image: reopen and verify every file. The image file on the
# host holds no plaintext.
#
#   001-usb-stick.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
img=$RESULTS/usb-stick.img
rm -f "$img" "$RESULTS"/usb-*.ok
truncate -s 64M "$img"
qopts="-device qemu-xhci,id=xhci -drive if=none,id=stick,format=raw,file=$img"
qopts="$qopts -device usb-storage,id=stick0,bus=xhci.0,drive=stick,removable=on"

. "$TOP/tests/host/host-lib.sh"
for phase in write read; do
	echo "# boot: $phase"
	run_guest "$RESULTS" "usb-$phase" -q "$qopts" -- usb-guest.sh "$phase" || exit 1
done
if grep -qa VEIL-PLAINTEXT-MARKER "$img"; then echo "FAIL: plaintext on the stick"; exit 1; fi
rm -f "$img"
echo "ok: written in one boot, verified in the next"
