#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of 002-usb-unplug.sh. Makes a LUKS2 veil volume with ext2 on
# the USB stick, fills it, then keeps writing files (each one synced and
# recorded once the sync succeeded) while the host pulls the stick out.
# The writes must fail with I/O errors, not hang; the dead volume must
# unmount and close. Once the host plugs the stick back in, the volume must
# open, fsck and mount, and every file synced before the unplug must be
# intact. Talks to the host through files in RESULTS:
#   guest: unplug.req  -> host: device_del,  then unplugged
#   guest: replug.req  -> host: device_add,  then replugged
# Writes RESULTS/unplug.ok on success.
#
#   usb-unplug-guest.sh RESULTS
. "$(dirname "$0")/usb-lib.sh"
RESULTS=$1
. "$TOP/tests/guest-cache.sh"
guest_cache "$RESULTS/guest-cache.list"
PASS="usb unplug passphrase"

# wait_for FILE SECONDS
wait_for() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	fail "timed out waiting for $(basename "$1")"
}

veil_load
udevadm settle
stick=$(usb_stick)
[ -n "$stick" ] || fail "no removable USB disk in the guest"
info "USB stick: $stick"
mnt=$WORK/mnt
stick_make "$stick" "$mnt"
sync -f "$mnt"

# The writer: 2 MiB files, each followed by syncfs; a file is listed in
# $WORK/synced only once its data and the directory are on the stick.
plaintext "$WORK/src" $((2 * 1024 * 1024))
kmsg_mark
(
	i=0
	while cp "$WORK/src" "$mnt/stream$i" && sync -f "$mnt"; do
		echo "stream$i" >> "$WORK/synced"
		i=$((i + 1))
	done
) > "$WORK/writer.log" 2>&1 &
writer=$!
wait_for "$WORK/synced" 120
info "writing; asking the host to pull the stick"
touch "$RESULTS/unplug.req"
wait_for "$RESULTS/unplugged" 120

# The writer must stop on its own: an error, not a hang.
for ((i = 0; i < 1200; i++)); do
	kill -0 "$writer" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$writer" 2>/dev/null && fail "the writer still runs 120 s after the unplug"
wait "$writer" || true
info "writer: $(wc -l < "$WORK/synced") files synced before the unplug; then: $(tail -1 "$WORK/writer.log")"
grep -qi "error" "$WORK/writer.log" || fail "the writer saw no error: $(cat "$WORK/writer.log")"
kmsg_since | grep -E "I/O error|EXT[24]-fs.*error" > "$WORK/kerr" || fail "no I/O error in the kernel log"
info "kernel: $(wc -l < "$WORK/kerr") I/O error lines, the first:"
head -3 "$WORK/kerr" | sed 's/^/#   /'

# The dead volume unmounts and closes.
umount "$mnt"
"$VS" close stick
dmsetup info stick >/dev/null 2>&1 && fail "stick still mapped after close"

info "asking the host to plug the stick back in"
touch "$RESULTS/replug.req"
wait_for "$RESULTS/replugged" 120
stick=""
for ((i = 0; i < 600; i++)); do
	udevadm settle
	stick=$(usb_stick)
	[ -n "$stick" ] && break
	sleep 0.1
done
[ -n "$stick" ] || fail "the stick did not come back"
info "USB stick back as $stick"

stick_open "$stick"
rc=0
e2fsck -fy /dev/mapper/stick > "$WORK/fsck.log" 2>&1 || rc=$?
info "e2fsck exit $rc"
[ "$rc" -le 1 ] || fail "e2fsck exit $rc: $(tail -5 "$WORK/fsck.log")"
mount /dev/mapper/stick "$mnt"
verify_files "$mnt"
while read -r f; do
	cmp -s "$WORK/src" "$mnt/$f" || fail "$f was synced before the unplug but changed"
done < "$WORK/synced"
info "all files synced before the unplug are intact"
umount "$mnt"
"$VS" close stick
_kmsg=0
bad=$(kmsg_bad) && fail "kernel log: $bad"
touch "$RESULTS/unplug.ok"
