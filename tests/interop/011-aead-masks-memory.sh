#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What the write masks hold in memory, over capi:gcm(aes)-random
# integrity:28:aead sector_size:4096 on dm-integrity made by hand:
#
# - The pool's size is what docs/table-line.md says: aead_masks:4096
#   takes at most 4096 times a sector plus 64 bytes (the kernel's
#   unreclaimable slab, against the same table with aead_masks:0, with
#   a MiB to spare for the rest of the kernel; not under KASAN, which
#   pads every allocation).
# - A hibernation: a slot made ahead is a random IV and its keystream,
#   and an image that held ready slots would hand them to the restored
#   kernel while the kernel that wrote the image may have used them
#   already. Between the PM notifier's prepare (before the image is made)
#   and its post (after the restore, tasks already thawed), the masks
#   make no slot and hold none. The kernel's hibernation test mode
#   (pm_test=freezer: the notifiers, the freezing of tasks and kernel
#   threads, then the way back, no image written) with the pool full; the
#   function tracer records veil_masks_pm() and veil_masks_refill() in
#   order: no refill runs between the prepare and the post; after the
#   post the refill runs, writes take masks again (hits), and dm-crypt
#   reads back what veil wrote before and after.
#
# Every check runs; the test fails at the end with each one that failed.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_integrity dm_crypt
veil_load
kmsg_mark

[ -f /sys/power/pm_test ] || skip "no /sys/power/pm_test (CONFIG_PM_DEBUG)"
grep -qw disk /sys/power/state || skip "hibernation not available in this kernel"
arch_ghash || skip "no architecture GHASH in this kernel: no write masks to test"
bad=""
# broken WHAT: a failed check, reported at the end
broken() { echo "not ok: $1"; bad="$bad
$1"; }

MIB=$((1024 * 1024))
BS=4096
gcm_integrity
key=$(randhex 32)

# slab_with MASKS: unreclaimable slab (kB) a table with aead_masks:MASKS
# adds while it is loaded
sunreclaim() { awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo; }
slab_with() {
	local before after
	before=$(sunreclaim)
	dm_create vt-ae "0 $len veil capi:gcm(aes)-random $key 0 $int 0 3 integrity:28:aead sector_size:4096 aead_masks:$1"
	after=$(sunreclaim)
	dm_remove vt-ae
	echo $((after - before))
}
# KASAN pads every allocation (a 4096-byte one takes 8 KiB there).
if grep -qs "KernelAddressSanitizer initialized" "${KMSG_FILE:-/dev/null}" ||
	dmesg | grep -q "KernelAddressSanitizer initialized"; then
	info "KASAN: the pool's size is checked on kernels without it"
else
	slab_with 0 > /dev/null
	none=$(slab_with 0)
	full=$(slab_with 4096)
	pool=$(((full - none) * 1024))
	# (and a MiB for what the rest of the kernel allocates meanwhile)
	limit=$((4096 * (4096 + 64) + 1024 * 1024))
	info "aead_masks:0 adds $none kB of slab, aead_masks:4096 $full kB: the pool takes $pool bytes"
	if [ "$pool" -gt "$limit" ]; then
		broken "aead_masks:4096 takes $pool bytes, more than 4096 sectors, 64 bytes a slot and a MiB ($limit)"
	else
		echo "ok: aead_masks:4096 takes $pool bytes, at most $limit"
	fi
fi

dm_create vt-ae "0 $len veil capi:gcm(aes)-random $key 0 $int 0 $feat"

plaintext "$WORK/p1" "$MIB"
write_direct "$WORK/p1" /dev/mapper/vt-ae "$MIB"
[ "$(status_field vt-ae aead_mask_hit)" -gt 0 ] ||
	fail "no mask used before the hibernation test: aead_mask_hit=0"
# Let the refill fill the pool again before the test.
sleep 2
dmsetup message vt-ae 0 stats reset

trace_start veil_masks_pm veil_masks_refill
echo freezer > /sys/power/pm_test
at_exit "echo none > /sys/power/pm_test"
rc=0
echo disk > /sys/power/state || rc=$?
echo none > /sys/power/pm_test
[ "$rc" = 0 ] || fail "the hibernation test (pm_test=freezer) failed: exit $rc"
# The refill the post queues, on its way
sleep 2
trace_stop > "$WORK/trace"
grep -E ': veil_masks_(pm|refill) <-' "$WORK/trace" |
	sed -E 's/.*: (veil_masks_[a-z]+) <-.*/\1/' > "$WORK/order"
info "order of the calls: $(tr '\n' ' ' < "$WORK/order")"
[ "$(grep -c veil_masks_pm "$WORK/order")" = 2 ] ||
	fail "veil_masks_pm ran $(grep -c veil_masks_pm "$WORK/order") times, not 2 (prepare, post)"
between=$(awk '/veil_masks_pm/ { n++; next } n == 1 && /veil_masks_refill/ { r++ }
	END { print r + 0 }' "$WORK/order")
if [ "$between" != 0 ]; then
	broken "the refill ran between the hibernation's prepare and its post: the image would hold ready masks"
else
	echo "ok: no mask made between the hibernation's prepare and post"
fi
tail -1 "$WORK/order" | grep -q veil_masks_refill ||
	fail "no refill after the hibernation's post: the masks were not resumed"

plaintext "$WORK/p2" "$MIB"
write_direct "$WORK/p2" /dev/mapper/vt-ae $((2 * MIB))
h=$(status_field vt-ae aead_mask_hit)
[ "$h" -gt 0 ] || fail "no mask used after the hibernation test: aead_mask_hit=0"
dm_remove vt-ae
dm_create vt-ae "0 $len crypt capi:gcm(aes)-random $key 0 $int 0 $feat"
same_data "$WORK/p1" /dev/mapper/vt-ae "$MIB" && same_data "$WORK/p2" /dev/mapper/vt-ae $((2 * MIB)) ||
	fail "dm-crypt does not read back what veil wrote around the hibernation test"
dm_remove vt-ae
dm_remove vt-int
echo "ok: masks used again after it (aead_mask_hit=$h), dm-crypt reads back both writes"

[ -z "$(kmsg_bad)" ] || fail "kernel log: $(kmsg_bad)"
[ -z "$bad" ] || fail "$bad"
