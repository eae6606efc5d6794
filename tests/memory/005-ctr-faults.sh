#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernel: debug
# Every allocation of a table load failed in turn (tests/tools/ctr-faults.c,
# the task's fail-nth: each fault-injection point the load passes, slab
# and page allocations, waiting or not, fails once: about 700 loads per
# spec), for XTS, for CTR with a key from the keyring, and for an async
# cipher (cryptd: the cipher request pool). Each failed load fails with
# ENOMEM or a constructor's EINVAL and leaves no table; for the async
# spec one of them is the request pool's ("Cannot allocate cipher request
# pool"). The runner's kmemleak scan after the area finds no leak, and the
# module unloads at the end. Over half an hour on the debug kernel beside
# another guest: run by make test on that kernel, not in CI.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
requires cmd keyctl
[ -f /usr/include/libdevmapper.h ] || skip "no libdevmapper.h (libdevmapper-dev)"
veil_load

DBG=/sys/kernel/debug
mount -t debugfs none $DBG 2>/dev/null || true
[ -e /proc/thread-self/fail-nth ] && [ -d $DBG/failslab ] && [ -d $DBG/fail_page_alloc ] ||
	skip "no fault injection in this kernel"
cc -O2 -Wall -o "$WORK/ctr-faults" "$TOP/tests/tools/ctr-faults.c" -ldevmapper ||
	fail "cannot build ctr-faults"
# A failed page allocation may print its warning (warn_alloc).
kmsg_allow 'page allocation failure'

# fail-nth counts every point of both; neither may skip waiting
# allocations or order-0 pages, and neither prints a stack per failure.
# Their probabilities stay 0: only this task's N-th point fails.
setup() {
	local d=$DBG/$1
	echo N > $d/ignore-gfp-wait
	[ ! -e $d/min-order ] || echo 0 > $d/min-order
	[ ! -e $d/cache-filter ] || echo N > $d/cache-filter
	echo 0 > $d/verbose
}
restore() {
	local d=$DBG/$1
	echo Y > $d/ignore-gfp-wait
	[ ! -e $d/min-order ] || echo 1 > $d/min-order
	echo 2 > $d/verbose
}
setup failslab
setup fail_page_alloc
at_exit "restore failslab; restore fail_page_alloc"
modprobe dm_zero
crypto_preload aes aes-generic ecb xts ctr cryptd

mkloop 16M
head -c 32 /dev/urandom > "$WORK/key"
keyctl padd logon veil:faults @u < "$WORK/key" > /dev/null
at_exit "keyctl purge logon veil:faults > /dev/null"
dmsetup create vfault --notable
at_exit "dmsetup remove --retry vfault"
for spec in "aes-xts-plain64 $(randhex 64)" \
	    "aes-ctr-plain64 :32:logon:veil:faults" \
	    "capi:cryptd(xts(ecb(aes-generic)))-plain64 $(randhex 64)"; do
	info "spec: ${spec%% *}"
	kmsg_mark
	"$WORK/ctr-faults" vfault 32768 "$spec 0 $LOOP 0" > "$WORK/out.txt" ||
		{ cat "$WORK/out.txt"; fail "${spec%% *}: a load with a failed allocation misbehaved"; }
	cat "$WORK/out.txt"
	grep -Eq 'loads failed: [1-9]' "$WORK/out.txt" || fail "${spec%% *}: no fault failed the load"
	case "$spec" in
	capi:cryptd*)
		kmsg_since | grep -q 'Cannot allocate cipher request pool' ||
			fail "cryptd: no load failed on the cipher request pool"
		;;
	esac
	# The same table loads and works once nothing fails.
	dmsetup load vfault --table "0 32768 veil $spec 0 $LOOP 0"
	dmsetup resume vfault
	dd if=/dev/urandom of="$WORK/data" bs=64k count=4 status=none
	dd if="$WORK/data" of=/dev/mapper/vfault bs=64k oflag=direct status=none
	same_data "$WORK/data" /dev/mapper/vfault || fail "${spec%% *}: data does not read back"
	# Back to a table without veil: its destructor runs.
	dmsetup load vfault --table "0 32768 zero"
	dmsetup resume vfault
done
