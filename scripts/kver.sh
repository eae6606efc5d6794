#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Which guest kernel: VEIL_KERNEL=stock (default) is the newest Debian
# kernel image in /boot that has matching headers in /usr/src (never the
# build machine's own `uname -r`, which may be a kernel without modules);
# VEIL_KERNEL=debug is the tree scripts/debug-kernel.sh builds in
# build/linux-debug. Fails if that kernel is not there.
#
#   kver.sh         its release, what `uname -r` says in the guest
#   kver.sh kdir    the tree to build modules against
#   kver.sh boot    what `vng --run` boots: an image, or the build tree
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-release}

case "${VEIL_KERNEL:-stock}" in
stock)
	for img in $(ls /boot/vmlinuz-* 2>/dev/null | sort -rV); do
		ver=${img#/boot/vmlinuz-}
		[ -d "/usr/src/linux-headers-$ver" ] || continue
		case "$what" in
		kdir) echo "/usr/src/linux-headers-$ver" ;;
		boot) echo "$img" ;;
		*) echo "$ver" ;;
		esac
		exit 0
	done
	exit 1
	;;
debug)
	tree=$TOP/build/linux-debug
	# debug-kernel.sh writes the stamp once bzImage and modules are built,
	# and removes it while it rebuilds.
	[ -f "$tree/.veil-stamp" ] || exit 1
	case "$what" in
	kdir|boot) echo "$tree" ;;
	*) cat "$tree/include/config/kernel.release" ;;
	esac
	;;
*)
	echo "kver.sh: VEIL_KERNEL must be stock or debug, not '$VEIL_KERNEL'" >&2
	exit 2
	;;
esac
