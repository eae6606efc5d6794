#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# cramfs.ko for the guest kernel (VEIL_KERNEL, see kver.sh), at
# build/cramfs/<release>/cramfs.ko. Nothing of it is committed.
#
# stock: Debian's kernel is built without cramfs: build it from Debian's
#   linux-source package (only fs/cramfs), with the block device backend
#   on.
# debug: the debug kernel has CRAMFS=m in-tree (modprobe cramfs works in
#   the guest); its module is copied to the same per-release place so
#   tests can load build/cramfs/$(uname -r)/cramfs.ko on either kernel.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "build-cramfs: $*" >&2; exit 1; }

if [ "${VEIL_KERNEL:-stock}" = debug ]; then
	KVER=$("$TOP/scripts/kver.sh") || die "no debug kernel in build/linux-debug: run 'make debug-kernel'"
	ko=$("$TOP/scripts/kver.sh" kdir)/fs/cramfs/cramfs.ko
	[ -f "$ko" ] || die "no $ko: the debug kernel was configured without CRAMFS=m"
	install -D -m 0644 "$ko" "$TOP/build/cramfs/$KVER/cramfs.ko"
	exit 0
fi

KVER=$("$TOP/scripts/kver.sh") || die "no Debian kernel with headers: run 'make deps'"
OUT=$TOP/build/cramfs/$KVER
# The source package of the kernel's own series (6.1, 6.12).
series=$(echo "$KVER" | grep -oE '^[0-9]+\.[0-9]+')
SRC=/usr/src/linux-source-$series.tar.xz
[ -f "$SRC" ] || die "no $SRC: install linux-source-$series (make deps)"
if ! [ -f "$OUT/cramfs.ko" ] || ! [ "$OUT/cramfs.ko" -nt "$SRC" ]; then
	rm -rf "$OUT"
	mkdir -p "$OUT"
	dir=$(basename "$SRC" .tar.xz)
	tar -C "$OUT" -xf "$SRC" "$dir/fs/cramfs/inode.c" "$dir/fs/cramfs/uncompress.c" \
		"$dir/fs/cramfs/internal.h"
	mv "$OUT/$dir/fs/cramfs/"* "$OUT/"
	rm -rf "${OUT:?}/$dir"
	cat > "$OUT/Kbuild" <<'KBUILD'
obj-m := cramfs.o
cramfs-objs := inode.o uncompress.o
ccflags-y += -DCONFIG_CRAMFS_BLOCKDEV=1
KBUILD
	make -s -C "/usr/src/linux-headers-$KVER" M="$OUT" modules 2>&1 | grep -v 'Skipping BTF' || true
	[ -f "$OUT/cramfs.ko" ] || die "cramfs.ko was not built"
fi
# The flat layout before per-release directories goes.
find "$TOP/build/cramfs" -maxdepth 1 -type f -delete
