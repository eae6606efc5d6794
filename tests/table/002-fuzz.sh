#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Seeded fuzz of table lines and target messages (tests/tools/table-fuzz.c):
# VEIL_FUZZ_COUNT (default 10000) valid veil table lines, most of them
# mutated at the token and byte level, are each mapped, used and removed.
# Shows that every refused line fails with an ordinary errno, that every
# accepted one does I/O without hanging, reads back what it wrote, prints a
# table that loads again unchanged and takes (or refuses) messages as
# documented, that nothing is left mapped, the module's reference count
# comes back to 0 and the module unloads. The seed (VEIL_FUZZ_SEED) is
# printed: the same seed and count give the same cases on any machine.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd keyctl cc
veil_load

seed=${VEIL_FUZZ_SEED:-20251123}
count=${VEIL_FUZZ_COUNT:-10000}
info "seed $seed, $count cases (reproduce: VEIL_FUZZ_SEED=$seed VEIL_FUZZ_COUNT=$count)"

[ -f /usr/include/libdevmapper.h ] || skip "no libdevmapper.h (libdevmapper-dev)"
t=$(date +%s)
cc -O2 -Wall -o "$WORK/table-fuzz" "$TOP/tests/tools/table-fuzz.c" -ldevmapper ||
	fail "cannot build table-fuzz"
info "table-fuzz built in $(($(date +%s) - t))s"

mkloop 8M
head -c 32 /dev/urandom | keyctl padd logon veiltest:fuzz @u >/dev/null
at_exit "keyctl purge logon veiltest:fuzz"

# The ciphers and templates the seeds name, loaded now. Module autoloading
# is then off for the run: a mangled cipher or device name fails at once
# instead of running modprobe, several times per name at ~0.3 s each in
# the guest. VEIL_FUZZ_AUTOLOAD=1 keeps it on.
for m in aes serpent twofish blowfish cast6 xts ctr cbc ecb essiv sha256; do
	modprobe -q "crypto-$m" || true
done
if [ "${VEIL_FUZZ_AUTOLOAD:-0}" != 1 ]; then
	modprobe_path=$(cat /proc/sys/kernel/modprobe)
	at_exit "echo '$modprobe_path' > /proc/sys/kernel/modprobe"
	echo > /proc/sys/kernel/modprobe
fi

# udev works through a device's uevents in order, running dmsetup and
# blkid for each: under emulation the 30,000 uevents of 10,000 tables
# keep it busy for half an hour after the run, and every later dmsetup
# or veilsetup call that waits for udev waits that long. udevd stays off
# for the run (uevents with no listener are dropped) and starts again
# after it.
udevd=$(command -v /usr/lib/systemd/systemd-udevd /lib/systemd/systemd-udevd | head -1 || true)
if [ -n "$udevd" ] && udevadm control --ping 2>/dev/null; then
	udevadm settle --timeout=60 || true
	udevadm control --exit
	at_exit "$udevd --daemon >/dev/null 2>&1; udevadm settle --timeout=60"
fi

start=$(date +%s)
rc=0
"$WORK/table-fuzz" --seed "$seed" --count "$count" --dev "$LOOP" || rc=$?
info "$count cases in $(($(date +%s) - start))s"
[ "$rc" = 0 ] || fail "table-fuzz exit status $rc (seed $seed)"

left=$(dmsetup ls 2>/dev/null | grep -v '^No devices found' || true)
[ -z "$left" ] || fail "devices left behind: $left"
refcnt=$(cat /sys/module/dm_veil/refcnt)
[ "$refcnt" = 0 ] || fail "module reference count $refcnt after the fuzz run"
rmmod dm_veil || fail "dm_veil does not unload after the fuzz run"
veil_load
module_loaded dm_veil || fail "dm_veil does not load again"
