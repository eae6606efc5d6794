#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What tests/guest-run.sh copies into the guest's memory at its start: the
# programs the tests run most and the shared libraries the suite's
# programs load. Prints "bin PATH" and "lib PATH" lines.
#
# The guest's root is the host's, shared over 9p without a cache, so every
# process start reads its program, the dynamic loader and each library
# through 9p under emulation. In a 6.1 guest `dmsetup version` took
# 0.65 s that way, 0.22 s with the libraries from a tmpfs on
# LD_LIBRARY_PATH, and 0.13 s with the loader and the program bound over
# their paths from tmpfs copies as well. The copies are the same files
# at the same paths: only where they are read from changes. Found on the
# host (the guest's files are the host's), where ldd is fast.
#
#   guest-cache.sh [PROGRAM...]   PROGRAM: more programs to bind (by path)
set -eu
# The guest's PATH, not the host user's (a pyenv shim is no program).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The packages whose programs the tests run: their libraries.
pkgs="bash coreutils util-linux mount grep sed mawk findutils diffutils procps
      psmisc kmod udev dmsetup cryptsetup-bin e2fsprogs fio mtd-utils keyutils
      nbd-client nbd-server iproute2 xxd python3.11-minimal libc-bin"
# The programs started most often (a test's loop, lib.sh's helpers).
hot="bash dmsetup cryptsetup losetup blockdev dd grep sed mawk cat head tail tr
     od stat sleep timeout cmp sha256sum mkdir rm mknod touch truncate date
     udevadm kmod mount umount fio mke2fs e2fsck keyctl sync cut wc sort seq
     ls cp mv ln readlink basename dirname tee find xxd nproc taskset ip tc
     python3 mktemp env id"
# Larger libraries are data (ICU's tables) or touched in few pages: a
# process maps them and reads through 9p only the pages it uses, while a
# copy reads them whole (libcrypto 4.6 MB, fio's librbd and ceph-common
# 20 MB: a third of the copy, which took 7 minutes on the debug kernel).
max_kib=4096

for p in $hot; do
	p=$(command -v "$p" 2>/dev/null) && readlink -f "$p"
done | cat - <(for p in "$@"; do readlink -f "$p"; done) <(readlink -f /lib64/ld-linux-x86-64.so.2) |
	sort -u | sed 's/^/bin /'

{
	# shellcheck disable=SC2086
	dpkg -L $pkgs 2>/dev/null | grep -E '^/(usr/)?s?bin/[^/]+$'
	printf '%s\n' "$@"
} | sort -u | while read -r bin; do
	if [ -f "$bin" ] && [ -x "$bin" ]; then ldd "$bin" 2>/dev/null || true; fi
done | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
	awk -F/ '!seen[$NF]++' | while read -r lib; do
	if [ "$(du -kL "$lib" | cut -f1)" -le "$max_kib" ]; then echo "lib $lib"; fi
done
