#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: LUKS2 unlocked by a TPM2. swtpm, a software TPM 2.0, runs
# here and QEMU gives it to the guest as a tpm-tis device; in the guest
# (tests/host/tpm2-guest.sh) systemd-cryptenroll --tpm2-device=auto binds
# a keyslot to PCR 16, veilsetup opens the volume with no passphrase
# through libcryptsetup's systemd-tpm2 plugin, --token-only fails as
# cryptsetup's does once the PCR changed, open then takes the passphrase,
# and veiltab's tpm2-device= opens by the TPM2 or falls back, also when
# run at boot as veiltab.service runs it. The guest's systemd tools,
# plugin and libtss2 are the host's.
#
# swtpm ends when its QEMU does: a loop here starts it again for the
# second guest that host-lib.sh boots if QEMU itself was killed.
#
#   009-tpm2.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/host/host-lib.sh"

# What this needs, by Debian package (scripts/deps.sh installs them).
missing=""
for need in swtpm:/usr/bin/swtpm tpm2-tools:/usr/bin/tpm2_pcrextend \
	systemd:/usr/bin/systemd-cryptenroll \
	systemd:/usr/lib/x86_64-linux-gnu/cryptsetup/libcryptsetup-token-systemd-tpm2.so \
	libtss2-esys-3.0.2-0:/usr/lib/x86_64-linux-gnu/libtss2-esys.so.0 \
	libtss2-rc0:/usr/lib/x86_64-linux-gnu/libtss2-rc.so.0 \
	libtss2-mu0:/usr/lib/x86_64-linux-gnu/libtss2-mu.so.0 \
	libtss2-tcti-device0:/usr/lib/x86_64-linux-gnu/libtss2-tcti-device.so.0; do
	[ -e "${need#*:}" ] || missing="$missing ${need%%:*} (${need#*:})"
done
if [ -n "$missing" ]; then
	echo "SKIP: not installed:$missing; scripts/deps.sh installs them"
	exit 77
fi

# A short path: a unix socket's path is at most 107 bytes.
dir=$(mktemp -d /tmp/veil-swtpm.XXXXXX)
mkdir "$dir/state"
sup=""
# The loop first, then the swtpm it started (by their PIDs only).
stop_swtpm() {
	set +e
	touch "$dir/stop"
	if [ -n "$sup" ]; then
		kill "$sup" 2>/dev/null
		wait "$sup" 2>/dev/null
	fi
	pid=$(cat "$dir/pid" 2>/dev/null)
	if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
		for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	fi
	rm -rf "$dir"
}
trap stop_swtpm EXIT
trap 'exit 143' TERM INT
(
	while [ ! -e "$dir/stop" ]; do
		rm -f "$dir/sock"
		swtpm socket --tpm2 --tpmstate dir="$dir/state" \
			--ctrl type=unixio,path="$dir/sock" --flags startup-clear \
			--log file="$RESULTS/tpm2-swtpm.log" &
		echo $! > "$dir/pid"
		wait $! || true
		sleep 0.2
	done
) &
sup=$!
for _ in $(seq 50); do [ -S "$dir/sock" ] && break; sleep 0.1; done
[ -S "$dir/sock" ] || { cat "$RESULTS/tpm2-swtpm.log" 2>/dev/null; echo "FAIL: swtpm did not start"; exit 1; }

# /etc and /usr/sbin writable overlays: veiltab at boot needs /etc/veiltab
# and the package's /usr/sbin/veiltab and veilsetup; the host's stay as
# they are.
run_guest "$RESULTS" tpm2 -o /etc -o /usr/sbin \
	-q "-chardev socket,id=chrtpm,path=$dir/sock -tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-tis,tpmdev=tpm0" \
	-- tpm2-guest.sh || exit 1
echo "ok: a TPM2-enrolled LUKS2 volume opened by veilsetup and veiltab, and refused once its PCR changed"
