#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install every build and test dependency on a Debian 12 machine:
# Debian's packages, both guest kernels (6.1 from bookworm, 6.12 from
# bookworm-backports or bookworm-security, with their headers) and
# virtme-ng in a virtual environment under build/venv. Does nothing when
# all of it is there already (as any user); installing needs root; fails
# loudly when something cannot be installed.
#
#   deps.sh          build and test dependencies
#   deps.sh bench    and what make bench needs (plots)
#   deps.sh debug    and what building the debug kernel needs
#   deps.sh deb      and what make deb needs (debhelper, dh-dkms)
# (several at once: deps.sh debug deb)
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
VENV=$TOP/build/venv
die() { echo "deps: $*" >&2; exit 1; }

# The TPM2 test (host/009): swtpm, QEMU's software TPM; systemd's
# systemd-cryptenroll and token plugin, which dlopen libtss2-esys, -rc,
# -mu and the device TCTI; tpm2-tools to extend a PCR.
# The PKCS#11 token test (veilsetup/012): SoftHSM, openssl for its key and
# certificate, gnutls-bin's p11tool to write the certificate to it.
debs="qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1 linux-source-6.12
      cryptsetup-bin dmsetup fio mtd-utils e2fsprogs kmod keyutils udev busybox-static
      nbd-client nbd-server iproute2 rt-tests
      systemd swtpm swtpm-tools tpm2-tools libtss2-esys-3.0.2-0 libtss2-rc0 libtss2-mu0
      libtss2-tcti-device0 softhsm2 openssl gnutls-bin
      libdevmapper-dev libcryptsetup-dev libjson-c-dev libblkid-dev pkg-config gcc make perl dkms python3-venv"
for what in "$@"; do
	case "$what" in
	bench) debs="$debs python3-matplotlib" ;;
	# Kernel build tools, only for the debug kernel: stock runs need none.
	debug) debs="$debs flex bison bc libelf-dev libssl-dev dwarves cpio xz-utils" ;;
	deb) debs="$debs debhelper dh-dkms dpkg-dev fakeroot" ;;
	*) die "unknown set '$what' (bench, debug, deb)" ;;
	esac
done

export DEBIAN_FRONTEND=noninteractive
updated=""
# Only installing needs root: a user with everything in place runs the
# tests without it.
apt_update() {
	[ -n "$updated" ] && return
	[ "$(id -u)" = 0 ] || die "missing: $1; run as root (sudo make deps) to install it"
	apt-get update -qq || die "apt-get update failed"
	updated=yes
}
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
apt_install() {
	apt_update "Debian packages $*"
	echo "deps: installing Debian packages: $*"
	apt-get install -y -qq --no-install-recommends "$@" ||
		die "apt-get install $* failed"
}

# Debian's 6.12 for bookworm: bookworm-backports, or bookworm-security's
# linux-6.12; the newest release either has, with its headers.
newest_612() {
	apt-cache pkgnames linux-image-6.12. 2>/dev/null |
		grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' | sort -V | tail -1 |
		sed 's/^linux-image-//'
}
have_612() {
	local img
	for img in /boot/vmlinuz-6.12.*+deb12-amd64; do
		[ -f "$img" ] && [ -d "/usr/src/linux-headers-${img#/boot/vmlinuz-}" ] && return 0
	done
	return 1
}
if ! have_612; then
	apt_update "Debian's 6.12 kernel and its headers"
	rel=$(newest_612)
	if [ -z "$rel" ]; then
		echo "deps: adding bookworm-backports to apt's sources for Debian's 6.12 kernel"
		cat > /etc/apt/sources.list.d/bookworm-backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
		updated=""
		apt_update "Debian's 6.12 kernel and its headers"
		rel=$(newest_612)
	fi
	[ -n "$rel" ] || die "no linux-image-6.12.*+deb12-amd64 in apt's sources (bookworm-backports)"
	apt_install "linux-image-$rel" "linux-headers-$rel"
fi

missing=""
for p in $debs; do
	installed "$p" || missing="$missing $p"
done
# shellcheck disable=SC2086
[ -z "$missing" ] || apt_install $missing

# virtme-ng: a real Debian 12's system Python refuses pip installs
# (externally managed), so it goes into a virtual environment of its own.
if ! "$VENV/bin/vng" --version >/dev/null 2>&1; then
	echo "deps: installing virtme-ng from PyPI into build/venv"
	rm -rf "$VENV"
	/usr/bin/python3 -m venv "$VENV" || die "python3 -m venv failed (python3-venv)"
	"$VENV/bin/pip" install -q virtme-ng || die "pip install virtme-ng failed"
	"$VENV/bin/vng" --version >/dev/null || die "virtme-ng installed but vng does not run"
fi

# Both of Debian's kernels the tests boot (the debug one is built later).
for k in 6.1 6.12; do
	VEIL_KERNEL=stock VEIL_KVER=$k "$TOP/scripts/kver.sh" >/dev/null ||
		die "kernel $k: no image with matching headers in /boot after installing"
done
echo "deps: all build and test dependencies are installed"
