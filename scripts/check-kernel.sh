#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Whether the module can be built for kernel RELEASE with the build tree
# KDIR: one line naming what to install when not, never a kbuild error wall.
#
#   check-kernel.sh RELEASE KDIR
set -u
rel=${1:-} kdir=${2:-}
die() { echo "$*" >&2; exit 1; }

[ -n "$rel" ] || die "No kernel to build for: run 'make deps' (Debian's kernels and headers)."
series=$(echo "$rel" | grep -oE '^[0-9]+\.[0-9]+')
[ -n "$series" ] && [ "$(printf '%s\n6.1\n' "$series" | sort -V | head -1)" = 6.1 ] ||
	die "Kernel $rel is older than 6.1, the oldest dm-veil builds for."
[ -f "$kdir/Makefile" ] || die "No headers for kernel $rel ($kdir): install linux-headers-$rel."
command -v make >/dev/null || die "No make: install make."
# The compiler the kernel was built with (Debian: gcc-12 on 6.1 and 6.12).
cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$kdir/include/config/auto.conf" 2>/dev/null)
case "$cc" in
x86_64-linux-gnu-gcc-*|gcc-*) want=${cc#x86_64-linux-gnu-} ;;
*) want=gcc ;;
esac
command -v "$want" >/dev/null || command -v "x86_64-linux-gnu-$want" >/dev/null ||
	die "No $want, the compiler kernel $rel was built with: install $want."
exit 0
