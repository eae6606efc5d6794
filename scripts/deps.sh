#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install every build and test dependency on a Debian machine (as root).
# Does nothing when all of it is there already. `deps.sh bench` adds
# what make bench needs, `deps.sh debug` what building the debug kernel
# (scripts/debug-kernel.sh) needs.
set -eu

debs="qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1
      cryptsetup-bin dmsetup fio mtd-utils e2fsprogs kmod keyutils udev busybox-static
      libdevmapper-dev libcryptsetup-dev pkg-config gcc make python3-pip"
# Kernel build tools, only for the debug kernel: stock runs need none.
if [ "${1:-}" = debug ]; then
	debs="$debs flex bison bc libelf-dev libssl-dev dwarves cpio xz-utils"
fi

missing=""
for p in $debs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done

if [ -n "$missing" ]; then
	echo "deps: installing Debian packages:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing
fi

if ! "$(dirname "$0")/vng.sh" --version >/dev/null 2>&1; then
	echo "deps: installing virtme-ng from PyPI"
	python3 -m pip install -q virtme-ng 2>&1 | grep -v 'Running pip as the' || true
fi

# Plots for make bench.
if [ "${1:-}" = bench ] && ! python3 -c 'import matplotlib' 2>/dev/null; then
	echo "deps: installing matplotlib from PyPI"
	python3 -m pip install -q matplotlib 2>&1 | grep -v 'Running pip as the' || true
fi

# Debian's kernel, whichever kernel the tests boot (the debug one is built later).
VEIL_KERNEL=stock "$(dirname "$0")/kver.sh" >/dev/null ||
	{ echo "deps: no kernel image with matching headers in /boot" >&2; exit 1; }
echo "deps: all build and test dependencies are installed"
