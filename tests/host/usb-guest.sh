#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of 001-usb-stick.sh: PHASE "write" makes a LUKS2 veil volume on
# the USB stick and fills it; PHASE "read" (after a reboot) reopens and
# verifies it. Writes RESULTS/usb-PHASE.ok on success.
#
#   usb-guest.sh RESULTS PHASE
. "$(dirname "$0")/usb-lib.sh"
RESULTS=$1
. "$TOP/tests/guest-cache.sh"
guest_cache "$RESULTS/guest-cache.list"
PHASE=$2
PASS="usb stick passphrase"
veil_load
udevadm settle
stick=$(usb_stick)
[ -n "$stick" ] || fail "no removable USB disk in the guest"
info "USB stick: $stick ($(sectors "$stick") sectors)"
mnt=$WORK/mnt
mkdir -p "$mnt"

if [ "$PHASE" = write ]; then
	stick_make "$stick" "$mnt"
	cp "$WORK/sums" "$RESULTS/usb-sums"
	umount "$mnt"
	"$VS" close stick
else
	cp "$RESULTS/usb-sums" "$WORK/sums"
	stick_open "$stick"
	mount -o ro /dev/mapper/stick "$mnt"
	track_mount "$mnt"
	verify_files "$mnt"
	umount "$mnt"
	"$VS" close stick
fi
bad=$(kmsg_bad) && fail "kernel log: $bad"
touch "$RESULTS/usb-$PHASE.ok"
