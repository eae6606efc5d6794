#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Which kernel. VEIL_KERNEL=stock (default) is an installed kernel, chosen
# by VEIL_KVER (make's KVER): a full release with headers
# (6.12.111+deb12-amd64, or the running kernel's, which make passes for a
# plain build) or a series (6.1, 6.12: the newest release of it in /boot);
# 6.1 unless set, the lab's guest kernel. VEIL_KERNEL=debug is
# the tree scripts/debug-kernel.sh builds in build/linux-debug. Fails with
# one line naming what to install if that kernel is not there.
#
#   kver.sh         its release, what `uname -r` says in the guest
#   kver.sh kdir    the tree to build modules against
#   kver.sh boot    what `vng --run` boots: an image, or the build tree
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-release}
die() { echo "kver.sh: $*" >&2; exit 1; }

case "${VEIL_KERNEL:-stock}" in
stock)
	want=${VEIL_KVER:-6.1}
	[[ "$want" =~ ^[0-9]+\.[0-9]+ ]] || die "KVER must be a kernel release or series such as 6.1 or 6.12, not '$want'"
	series=${BASH_REMATCH[0]}
	# Older than 6.1: the module's API floor.
	[ "$(printf '%s\n6.1\n' "$series" | sort -V | head -1)" = 6.1 ] ||
		die "kernel $want is older than 6.1, which dm-veil needs at least"
	ver=""
	if [ -f "/boot/vmlinuz-$want" ] || [ -e "/lib/modules/$want/build" ]; then
		ver=$want
	elif [[ "$want" =~ ^[0-9]+\.[0-9]+\.[0-9] ]]; then
		# A full release (make's default: the running kernel's).
		die "no headers for kernel $want: install linux-headers-$want"
	else
		# 6.1 must not match 6.12: the series ends at '.' or '-'.
		ver=$(ls /boot/ 2>/dev/null | sed -n 's/^vmlinuz-//p' |
		      grep -E "^${want//./\\.}[.-]" | sort -V | tail -1 || true)
	fi
	[ -n "$ver" ] || die "no Debian kernel $want in /boot: install linux-image-$want* and its headers"
	kdir=/usr/src/linux-headers-$ver
	[ -d "$kdir" ] || kdir=/lib/modules/$ver/build
	[ -d "$kdir" ] || die "no headers for kernel $ver: install linux-headers-$ver"
	case "$what" in
	kdir) echo "$kdir" ;;
	boot)
		[ -f "/boot/vmlinuz-$ver" ] || die "no /boot/vmlinuz-$ver to boot: install linux-image-$ver"
		echo "/boot/vmlinuz-$ver"
		;;
	*) echo "$ver" ;;
	esac
	;;
debug)
	tree=$TOP/build/linux-debug
	# debug-kernel.sh writes the stamp once bzImage and modules are built,
	# and removes it while it rebuilds.
	[ -f "$tree/.veil-stamp" ] || die "no debug kernel in build/linux-debug: run 'make debug-kernel'"
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
