#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make deb: dm-veil-dkms and veilsetup, built with debhelper from a copy of
# the committed tree (so nothing of build/ or a local build gets in), into
# build/deb/ (DEB_OUT: elsewhere). The version is debian/changelog's.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=${DEB_OUT:-$TOP/build/deb}
die() { echo "build-deb: $*" >&2; exit 1; }

for t in dpkg-buildpackage:dpkg-dev dh:debhelper dh_dkms:dh-dkms fakeroot:fakeroot; do
	command -v "${t%%:*}" >/dev/null || die "${t%%:*} not found: apt install ${t#*:}"
done
version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$TOP/debian/changelog")
src=$OUT/src/dm-veil-$version
rm -rf "$OUT"
mkdir -p "$src"
# The files git tracks or would track, as they are in the work tree.
(cd "$TOP" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - --no-recursion) | tar -C "$src" -xf -
(cd "$src" && dpkg-buildpackage -b -us -uc > "$OUT/build.log" 2>&1) ||
	{ tail -30 "$OUT/build.log" >&2; die "dpkg-buildpackage failed (log: $OUT/build.log)"; }
mv "$OUT"/src/*.deb "$OUT/"
rm -rf "$OUT/src"
ls "$OUT"/*.deb
