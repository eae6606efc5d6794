#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernel: debug
# The write masks when their self-test fails: the debug kernel's
# fail_function makes veil_masks_selftest() return -EBADMSG, what it
# returns when a mask's ciphertext or tag differs from the AEAD's.
# capi:gcm(aes)-random integrity:28:aead sector_size:4096 over
# dm-integrity made by hand (direct mode):
#   - the table loads with the masks off and says so once ("aead write
#     masks off: self-test differs from the AEAD (-74)"); its writes count
#     no hit and no miss (every sector through the AEAD) and read back
#     through dm-crypt;
#   - `key set` of a new key while the self-test still fails: the masks
#     stay off, and the writes read back through dm-crypt with that key;
#   - the injection gone, `key set` of a third key tests them again and
#     turns them on: the writes count hits and read back through dm-crypt
#     with the third key.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_integrity dm_crypt
veil_load

DBG=/sys/kernel/debug
mount -t debugfs none $DBG 2>/dev/null || true
FF=$DBG/fail_function
[ -d $FF ] || skip "no fail_function in this kernel (the debug kernel has it)"
arch_ghash || skip "no architecture GHASH in this kernel: no write masks to test"

# The self-test returns -EBADMSG (-74) every time, in every task.
inject_on() {
	echo veil_masks_selftest > $FF/inject
	printf '%#x\n' -74 > $FF/veil_masks_selftest/retval
	echo N > $FF/task-filter
	echo 0 > $FF/interval
	echo -1 > $FF/times
	echo 0 > $FF/space
	echo 0 > $FF/verbose
	echo 100 > $FF/probability
}
inject_off() { echo '!veil_masks_selftest' > $FF/inject 2>/dev/null || true; }
at_exit inject_off

MIB=$((1024 * 1024))
BS=4096
gcm_integrity
# check N KEY WHAT: what veil wrote at MiB N reads back through dm-crypt
# with KEY
check() {
	dm_remove vt-ae
	dm_create vt-ae "0 $len crypt capi:gcm(aes)-random $2 0 $int 0 $feat"
	same_data "$WORK/p$1" /dev/mapper/vt-ae $(($1 * MIB)) ||
		fail "$3: dm-crypt does not read back what veil wrote"
	dm_remove vt-ae
}
# rekey KEY: key wipe and key set while suspended
rekey() {
	dmsetup suspend vt-ae
	dmsetup message vt-ae 0 key wipe
	dmsetup message vt-ae 0 key set "$1"
	dmsetup resume vt-ae
	dmsetup message vt-ae 0 stats reset
}
# written N WHAT HITS: 1 MiB written at MiB N in 4 KiB writes, and the
# hits counted: none (HITS=0), or some (HITS=some) and no failed mask
written() {
	local h m
	plaintext "$WORK/p$1" "$MIB"
	write_direct "$WORK/p$1" /dev/mapper/vt-ae $(($1 * MIB))
	h=$(status_field vt-ae aead_mask_hit) m=$(status_field vt-ae aead_mask_miss)
	if [ "$3" = 0 ]; then
		[ "$h" = 0 ] && [ "$m" = 0 ] ||
			fail "$2: the masks are off, yet aead_mask_hit=$h aead_mask_miss=$m"
	else
		[ "$h" -gt 0 ] || fail "$2: the masks are on, yet aead_mask_hit=$h aead_mask_miss=$m"
	fi
	echo "ok: $2: 1 MiB written, aead_mask_hit=$h aead_mask_miss=$m"
}

keya=$(randhex 32) keyb=$(randhex 32) keyc=$(randhex 32)
inject_on
kmsg_mark
dm_create vt-ae "0 $len veil capi:gcm(aes)-random $keya 0 $int 0 $feat"
kmsg_wait "aead write masks off: self-test differs from the AEAD (-74)" ||
	fail "table load with a failing self-test: no log line saying the masks are off"
[ "$(kmsg_since | grep -c 'aead write masks off')" = 1 ] ||
	fail "table load: the masks-off line more than once: $(kmsg_since | grep 'aead write masks off')"
written 1 "self-test failing at table load" 0
check 1 "$keya" "self-test failing at table load"

dm_create vt-ae "0 $len veil capi:gcm(aes)-random $keya 0 $int 0 $feat"
kmsg_mark
rekey "$keyb"
kmsg_wait "aead write masks off: self-test differs" ||
	fail "key set with a failing self-test: no log line saying the masks are off"
written 2 "self-test failing at key set" 0
check 2 "$keyb" "self-test failing at key set"

dm_create vt-ae "0 $len veil capi:gcm(aes)-random $keyb 0 $int 0 $feat"
written 3 "self-test failing at table load, again" 0
inject_off
kmsg_mark
rekey "$keyc"
! kmsg_since | grep -q "aead write masks off" ||
	fail "key set with the self-test passing: $(kmsg_since | grep 'aead write masks off')"
written 4 "self-test passing at key set" some
check 4 "$keyc" "self-test passing at key set"
dm_remove vt-int

[ -z "$(kmsg_bad)" ] || fail "kernel log: $(kmsg_bad)"
