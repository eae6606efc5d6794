#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: the Debian packages as a user gets them. make deb builds
# dm-veil-dkms and veilsetup; a guest whose /etc, /usr and /var are
# overlays installs them with apt-get (DKMS builds the module for the
# guest's kernel), opens a LUKS2 volume with veilsetup and no insmod,
# writes, reopens, verifies and purges both (tests/host/package-guest.sh).
#
#   004-packages.sh RESULTS
#
# run: on request (make test T=host/004): DKMS compiles the module inside
# the emulated guest (12 minutes on 6.12 with a second guest running, more
# than 25 with two), more than CI's budget has room for.
# limit: 3000
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
rm -f "$RESULTS/packages.ok"
DEB_OUT=$RESULTS/deb "$TOP/scripts/build-deb.sh"
# The guest's programs in memory (tests/guest-cache.sh), with what DKMS
# runs to build the module: gcc's passes, binutils, make, kbuild's tools.
kdir=/usr/src/linux-headers-$("$TOP/scripts/kver.sh")
"$TOP/scripts/guest-cache.sh" "$TOP/userspace/veilsetup" \
	$(command -v gcc make as ld.bfd depmod dpkg perl xz) \
	"$(gcc -print-prog-name=cc1)" "$(gcc -print-prog-name=collect2)" \
	"$kdir/scripts/basic/fixdep" "$kdir/scripts/mod/modpost" \
	"$kdir/tools/objtool/objtool" > "$RESULTS/guest-cache-packages.list"
. "$TOP/tests/host/host-lib.sh"
run_guest "$RESULTS" packages -o /etc -o /usr -o /var -- package-guest.sh "$RESULTS/deb" || exit 1
echo "ok: dpkg -i, DKMS build, veilsetup open with no insmod, dpkg --purge"
