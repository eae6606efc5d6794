#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Debian's kernel is built without cramfs: build cramfs.ko for the guest
# kernel from Debian's linux-source package (only fs/cramfs), with the block
# device backend on, into build/cramfs/. Nothing of it is committed.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
KVER=$("$TOP/scripts/kver.sh")
OUT=$TOP/build/cramfs
SRC=$(ls /usr/src/linux-source-*.tar.xz | sort -V | tail -1)
[ -f "$OUT/cramfs.ko" ] && [ "$OUT/cramfs.ko" -nt "$SRC" ] && exit 0
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
[ -f "$OUT/cramfs.ko" ] || { echo "build-cramfs: cramfs.ko was not built" >&2; exit 1; }
