#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers of the USB stick guest scripts, on top of tests/lib.sh: a LUKS2
# veil volume named "stick" with ext2 on it, passphrase $PASS.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# stick_open DEV: open the volume on DEV as /dev/mapper/stick
stick_open() {
	echo "$PASS" | "$VS" open "$1" stick
	_devs+=(stick)
}

# stick_make DEV MNT: a new volume on DEV with ext2 mounted on MNT,
# filled by fill_files
stick_make() {
	echo "$PASS" | "$VS" luksFormat -q --pbkdf pbkdf2 --iter-time 50 "$1"
	stick_open "$1"
	mkfs.ext2 -q /dev/mapper/stick
	mkdir -p "$2"
	mount /dev/mapper/stick "$2"
	track_mount "$2"
	fill_files "$2"
}
