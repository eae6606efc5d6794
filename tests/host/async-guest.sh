#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest of 005-async-queue-full.sh (cryptd's queue one deep): fio
# verify through veil on cryptd(xts(ecb(aes-generic))), on
# brd, whose reads complete in the submitting task where veil decrypts
# without sleeping. Writes RESULTS/async.ok when all is well.
. "$(dirname "$0")/../lib.sh"
RESULTS=$1
. "$TOP/tests/guest-cache.sh"
guest_cache "$RESULTS/guest-cache.list"
requires root
requires modinfo brd
requires cmd fio
veil_load
info "module: $VEIL_KO"
kmsg_mark
grep -q 'cryptd.cryptd_max_cpu_qlen=1' /proc/cmdline || fail "booted without cryptd.cryptd_max_cpu_qlen=1"
rmmod brd 2>/dev/null || true
modprobe brd rd_nr=1 rd_size=131072
at_exit "rmmod brd"
for spec in "capi:cryptd(xts(ecb(aes-generic)))-plain64 $(randhex 64)"; do
	dm_create va "0 262144 veil $spec 0 /dev/ram0 0"
	grep -q cryptd /proc/crypto || fail "no cryptd instance in /proc/crypto"
	info "fio verify on ${spec%% *}"
	fio_verify async /dev/mapper/va 2 32 20 || fail "fio: ${spec%% *}"
	dmsetup status va
	dm_remove va
done
bad=$(kmsg_bad) && fail "kernel log: $bad"
touch "$RESULTS/async.ok"
echo "ok: no error through a full cryptd queue"
