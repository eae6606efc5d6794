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
cc -O2 -Wall -I"$TOP/dm-target" -o "$WORK/table-fuzz" "$TOP/tests/tools/table-fuzz.c" -ldevmapper ||
	fail "cannot build table-fuzz"
info "table-fuzz built in $(($(date +%s) - t))s"

mkloop 8M
head -c 32 /dev/urandom | keyctl padd logon veiltest:fuzz @u >/dev/null
at_exit "keyctl purge logon veiltest:fuzz"

# The ciphers and templates the seeds name, loaded now; then no module
# autoloading (VEIL_FUZZ_AUTOLOAD=1 keeps it on) and no udev: 10,000
# tables send it 30,000 uevents, half an hour of work under emulation.
if [ "${VEIL_FUZZ_AUTOLOAD:-0}" != 1 ]; then
	crypto_preload aes serpent twofish blowfish cast6 xts ctr cbc ecb essiv sha256 md5 crc32
fi
udev_off

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
