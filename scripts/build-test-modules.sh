#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Test-only kernel modules (tests/kmod/) for the guest kernel, built in
# build/test-modules/<release>/ so that the sources stay clean. The tests
# load build/test-modules/$(uname -r)/<name>.ko.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
KVER=$("$TOP/scripts/kver.sh") || { echo "build-test-modules: no guest kernel: run 'make deps'" >&2; exit 1; }
KDIR=$("$TOP/scripts/kver.sh" kdir)
OUT=$TOP/build/test-modules/$KVER
mkdir -p "$OUT"
cp "$TOP"/tests/kmod/*.c "$TOP/tests/kmod/Kbuild" "$OUT/"
make -s -C "$KDIR" M="$OUT" modules 2>&1 | grep -v 'Skipping BTF' || true
for src in "$TOP"/tests/kmod/*.c; do
	ko=$OUT/$(basename "$src" .c).ko
	[ -f "$ko" ] || { echo "build-test-modules: $ko was not built" >&2; exit 1; }
done
