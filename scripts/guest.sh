#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot Debian's stock kernel under QEMU (software emulation) and run one
# command in it as root. The guest sees the host's files read-only; the
# directories given with -w are writable.
#
#   scripts/guest.sh [-c cpus] [-m mem] [-w dir]... [-q qemu-opts] -- command
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cpus=2 mem=2G qopts="" rw=()
while [ $# -gt 0 ]; do
	case "$1" in
	-c) cpus=$2; shift 2 ;;
	-m) mem=$2; shift 2 ;;
	-w) rw+=(--rwdir "$2"); shift 2 ;;
	-q) qopts=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "guest.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
kver=$("$here/kver.sh") || { echo "guest.sh: no guest kernel: run 'make deps'" >&2; exit 1; }
args=(--disable-kvm --run "/boot/vmlinuz-$kver" --cpus "$cpus" --memory "$mem"
      "${rw[@]}")
[ -n "$qopts" ] && args+=(--qemu-opts="$qopts")
exec "$here/vng.sh" "${args[@]}" --exec "$*"
