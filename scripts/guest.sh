#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the guest kernel under QEMU (software emulation) and run one
# command in it as root. The guest sees the host's files read-only; the
# directories given with -w are writable. VEIL_KERNEL picks the kernel:
# stock (default, Debian's) or debug (build/linux-debug, booted from its
# build tree so vng serves the tree's modules to modprobe in the guest);
# -k sets it too; VEIL_KVER picks which of Debian's kernels (kver.sh).
# -w gives the guest a host directory to write; -o a directory the guest
# may write to an overlay of, leaving the host's as it is; -a adds to the
# kernel command line. VEIL_GUEST_VERBOSE=1 shows the guest's console
# (kernel messages as they come, a panic's last words).
#
#   scripts/guest.sh [-k stock|debug] [-c cpus] [-m mem] [-w dir]... [-o dir]...
#                    [-a kernel-args] [-q qemu-opts] -- command
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cpus=2 mem=2G qopts="" rw=()
while [ $# -gt 0 ]; do
	case "$1" in
	-k) export VEIL_KERNEL=$2; shift 2 ;;
	-c) cpus=$2; shift 2 ;;
	-m) mem=$2; shift 2 ;;
	-w) rw+=(--rwdir "$2"); shift 2 ;;
	-o) rw+=(--overlay-rwdir "$2"); shift 2 ;;
	-a) rw+=(--append "$2"); shift 2 ;;
	-q) qopts=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "guest.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
boot=$("$here/kver.sh" boot) || exit 1
args=(--disable-kvm --qemu "$here/qemu-status.sh" --run "$boot" --cpus "$cpus" --memory "$mem" "${rw[@]}")
[ -n "$qopts" ] && args+=(--qemu-opts="$qopts")
[ "${VEIL_GUEST_VERBOSE:-0}" = 1 ] && args+=(--verbose)
exec "$here/vng.sh" "${args[@]}" --exec "$*"
