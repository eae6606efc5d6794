#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the version of the guest kernel: the newest Debian kernel image in
# /boot that has matching headers in /usr/src. Never the build machine's
# own `uname -r`, which may be a kernel without modules.
for img in $(ls /boot/vmlinuz-* 2>/dev/null | sort -rV); do
	ver=${img#/boot/vmlinuz-}
	if [ -d "/usr/src/linux-headers-$ver" ]; then
		echo "$ver"
		exit 0
	fi
done
exit 1
