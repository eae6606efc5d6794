#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the debug guest kernel (KASAN, lockdep, kmemleak, fault injection)
# from Debian's linux-source-6.1: virtme-ng's minimal config +
# ../shared/kernel/debug.config + scripts/debug-extra.config, with DWARF off
# (debug info would triple the build time and is not needed for
# KASAN/lockdep reports). About 10-20 minutes on 2 cores.
#
# The tree lives outside the clone, in a cache keyed by its inputs (the
# source package, the fragments, virtme-ng's and gcc's versions):
# $VEIL_CACHE, default ~/.cache/dm-veil, holds linux-debug-<key>, and
# build/linux-debug is a link to it. Every clone on the machine reuses a
# tree built once; a changed input builds a new tree and removes the old.
#
#   scripts/debug-kernel.sh          build if needed (JOBS=n, default nproc)
#   scripts/debug-kernel.sh --check  exit 0 if built and up to date, else 1
#   VEIL_KERNEL=debug scripts/guest.sh -- cmd    boot it
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SRC=/usr/src/linux-source-6.1.tar.xz
# The platform's fragment (../shared/kernel/debug.config); a clone without
# the shared directory next to it uses the copy kept in scripts/.
SHARED=$TOP/../shared/kernel/debug.config
COPY=$TOP/scripts/debug-platform.config
if [ ! -f "$SHARED" ]; then
	SHARED=$COPY
elif ! cmp -s "$SHARED" "$COPY"; then
	echo "debug-kernel: $SHARED differs from scripts/debug-platform.config: using the first; update the copy"
fi
EXTRA=$TOP/scripts/debug-extra.config
CACHE=${VEIL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-veil}
LINK=$TOP/build/linux-debug
JOBS=${JOBS:-$(nproc)}
# vng's minimal config asks for DWARF; PLATFORM.md: turn it off.
DWARF_OFF=(-e DEBUG_INFO_NONE -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO)

die() { echo "debug-kernel: $*" >&2; exit 1; }

[ -f "$SRC" ] || die "no $SRC: install linux-source-6.1 (scripts/deps.sh debug)"
[ -f "$SHARED" ] || die "missing $SHARED, the shared debug config fragment: the debug kernel cannot be configured without it"
# virtme-ng's helpers (virtme-configkernel, virtme-prep-kdir-mods).
PATH=$TOP/build/venv/bin:$PATH

# Everything the .config and the objects depend on.
inputs() {
	sha256sum "$SRC" "$SHARED" "$EXTRA" | awk '{print $1}'
	echo "${DWARF_OFF[*]}"
	"$TOP/scripts/vng.sh" --version
	gcc --version | head -1
}
want=$(inputs)
TREE=$CACHE/linux-debug-$(echo "$want" | sha256sum | cut -c1-16)
STAMP=$TREE/.veil-stamp
built() {
	[ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] &&
		[ -f "$TREE/arch/x86/boot/bzImage" ] && [ -f "$TREE/Module.symvers" ]
}
if [ "${1:-}" = --check ]; then
	built && { echo "debug-kernel: $TREE is built"; exit 0; }
	echo "debug-kernel: not built for these inputs in $CACHE"
	exit 1
fi
mkdir -p "$CACHE" "$TOP/build"
# One build per cache at a time: a second clone waits and reuses it.
exec 9> "$CACHE/.lock"
flock 9
# A tree built in the clone before the cache existed: move it there if it
# is the one wanted.
if [ -d "$LINK" ] && [ ! -L "$LINK" ]; then
	if [ "$(cat "$LINK/.veil-stamp" 2>/dev/null)" = "$want" ] && [ ! -e "$TREE" ]; then
		mv "$LINK" "$TREE"
	else
		rm -rf "$LINK"
	fi
fi
ln -sfn "$TREE" "$LINK"
if built; then
	echo "debug-kernel: $TREE is up to date ($(cat "$TREE/include/config/kernel.release"))"
	exit 0
fi

# Say which package is missing rather than fail deep inside kbuild.
for t in flex:flex bison:bison bc:bc cpio:cpio pahole:dwarves xz:xz-utils gcc:gcc make:make; do
	command -v "${t%%:*}" >/dev/null || die "${t%%:*} not found: install ${t#*:} (scripts/deps.sh debug)"
done
[ -f /usr/include/libelf.h ] || die "libelf.h not found: install libelf-dev (scripts/deps.sh debug)"
[ -f /usr/include/openssl/opensslv.h ] || die "openssl headers not found: install libssl-dev (scripts/deps.sh debug)"

# A different source package means a fresh tree.
srcsum=$(sha256sum "$SRC" | awk '{print $1}')
if [ "$(cat "$TREE/.veil-source" 2>/dev/null)" != "$srcsum" ]; then
	echo "debug-kernel: extracting $SRC into $TREE ..."
	rm -rf "$TREE"
	mkdir -p "$TREE"
	tar -C "$TREE" --strip-components=1 -xf "$SRC"
	echo "$srcsum" > "$TREE/.veil-source"
fi
rm -f "$STAMP"
cd "$TREE"

echo "debug-kernel: configuring (virtme-ng minimal + debug.config + debug-extra.config)"
rm -f .config
# Its "override: reassigning" warnings are the point of a fragment: log them.
"$TOP/scripts/vng.sh" --kconfig --config "$SHARED" --config "$EXTRA" > .veil-kconfig.log 2>&1 ||
	{ tail -20 .veil-kconfig.log >&2; die "vng --kconfig failed (log: $TREE/.veil-kconfig.log)"; }
scripts/config "${DWARF_OFF[@]}"
make -s olddefconfig

# olddefconfig drops silently what has an unmet dependency: report every
# fragment line that did not survive, and stop if one the suite needs is gone.
enabled() { grep -Eq "^CONFIG_$1=(y|m)$" .config; }
for frag in "$SHARED" "$EXTRA"; do
	sed -nE 's/^(CONFIG_[A-Z0-9_]+)=(.*)$/\1 \2/p' "$frag" | while read -r opt val; do
		case "$val" in
		y|m) grep -Eq "^$opt=(y|m)$" .config || echo "debug-kernel: warning: $opt=$val did not survive olddefconfig" ;;
		n) if grep -Eq "^$opt=(y|m)$" .config; then echo "debug-kernel: warning: $opt=n did not survive olddefconfig"; fi ;;
		*) grep -qxF "$opt=$val" .config || echo "debug-kernel: warning: $opt=$val is $(grep "^$opt=" .config || echo unset)" ;;
		esac
	done
done
missing=""
for o in MODULES KASAN PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_KMEMLEAK DEBUG_FS \
	FAULT_INJECTION FAULT_INJECTION_DEBUG_FS FAILSLAB FAIL_PAGE_ALLOC FAIL_MAKE_REQUEST \
	BLK_DEV_DM DM_CRYPT DM_LOG_WRITES DM_ZERO DM_FLAKEY DM_DELAY \
	BLK_DEV_NULL_BLK BLK_DEV_LOOP BLK_DEV_RAM MTD_BLOCK MTD_BLOCK2MTD JFFS2_FS \
	CRAMFS CRAMFS_BLOCKDEV HOTPLUG_CPU CGROUPS MEMCG SWAP KEYS \
	CRYPTO_XTS CRYPTO_CTR CRYPTO_CBC CRYPTO_ESSIV CRYPTO_AES CRYPTO_SERPENT \
	CRYPTO_TWOFISH CRYPTO_CAST6 CRYPTO_BLOWFISH CRYPTO_SHA256 CRYPTO_USER_API_SKCIPHER \
	EXT4_FS USB_XHCI_HCD USB_STORAGE DEBUG_INFO_NONE; do
	enabled "$o" || missing="$missing $o"
done
[ -z "$missing" ] || die "needed options lost after olddefconfig:$missing"
! enabled DEBUG_INFO || die "DEBUG_INFO is still on: the DWARF switch-off did not take"

echo "debug-kernel: building bzImage and modules with -j$JOBS (10-20 min on 2 cores) ..."
start=$(date +%s)
make -s -j"$JOBS" bzImage modules
# Module directory vng mounts in the guest (.virtme_mods); vng would do it
# on the first boot, doing it here keeps guests from racing to do it.
if command -v virtme-prep-kdir-mods >/dev/null; then
	virtme-prep-kdir-mods >/dev/null
fi
echo "$want" > "$STAMP"
# Trees of other inputs are stale.
for old in "$CACHE"/linux-debug-*; do
	[ "$old" = "$TREE" ] || rm -rf "$old"
done
echo "debug-kernel: built $(cat include/config/kernel.release) in $(($(date +%s) - start)) s: $TREE/arch/x86/boot/bzImage"
