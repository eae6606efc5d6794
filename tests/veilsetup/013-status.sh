#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# status as cryptsetup's, line by line (lib.sh's status_same: veil's
# counters, engine options and key location aside), in the states that
# veilsetup/001, 002 and 009 do not open both tools in: held open by a
# process ("is in use"), suspended, read-only with every flag, on an
# image file (loop:), a detached header (status --header), the key in
# the table (--disable-keyring), plain with offset, skip, 4096-byte
# sectors and large IVs; and an inactive name. One tool's mapping at a
# time, under the same name.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup
requires module loop dm_crypt
veil_load
fast="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
printf 'status secret' > "$WORK/key"
head -c 64 /dev/urandom > "$WORK/plain.key"
mkloop 40M
L=$LOOP
_devs+=(st)

# compare WHAT STATUS-OPTIONS OPEN-ARGS...: each tool in turn opens "st"
# (open OPEN-ARGS st), runs "$HOOK TOOL on" if HOOK is set, prints its
# status (status STATUS-OPTIONS st), runs "$HOOK TOOL off" and closes;
# the two outputs agree.
compare() {
	local what=$1 sopts=$2 tool t last
	shift 2
	last=${*: -1}
	for tool in cryptsetup "$VS"; do
		t=${tool##*/}
		"$tool" open "$@" st
		udevadm settle 2>/dev/null || true
		[ -z "${HOOK:-}" ] || "$HOOK" "$tool" on
		# shellcheck disable=SC2086 # $sopts is a list of words
		"$tool" status $sopts st > "$WORK/status-$t" || fail "$what: $t status: exit $?"
		[ -z "${HOOK:-}" ] || "$HOOK" "$tool" off
		"$tool" close st
		# An image file's loop goes with the mapping (autoclear): the
		# next tool's is the same /dev/loopN.
		if [ -f "$last" ]; then
			for _ in $(seq 50); do [ -z "$(losetup -j "$last")" ] && break; sleep 0.1; done
		fi
	done
	cat "$WORK/status-veilsetup"
	status_same "$WORK/status-cryptsetup" "$WORK/status-veilsetup" "$what"
	echo "ok: status, $what"
}

# hold TOOL on|off: a process holds st open (dm's open count), as a
# mount or a mapping above would
hold() {
	case $2 in
	on) exec 7< /dev/mapper/st ;;
	off) exec 7<&- ;;
	esac
}
# suspend TOOL on|off: luksSuspend, luksResume
suspend() {
	case $2 in
	on) "$1" luksSuspend st ;;
	off) "$1" luksResume -d "$WORK/key" st ;;
	esac
}

cryptsetup luksFormat -q --type luks2 $fast "$L" "$WORK/key"
compare "LUKS2" "" -d "$WORK/key" "$L"
grep -qx '/dev/mapper/st is active.' "$WORK/status-veilsetup" || fail "LUKS2: in use with nothing on it"
# A device path in place of the name (any node or link of the mapping):
# the lines name it as given.
for tool in cryptsetup "$VS"; do
	t=${tool##*/}
	"$tool" open -d "$WORK/key" "$L" st
	udevadm settle 2>/dev/null || true
	dm=$(readlink -f /dev/mapper/st)
	"$tool" status /dev/mapper/st > "$WORK/status-$t" || fail "$t status /dev/mapper/st: exit $?"
	"$tool" status "$dm" | sed "1s|^$dm |/dev/dm-N |" > "$WORK/dm-$t" ||
		fail "$t status $dm: exit $?"
	"$tool" close st
done
status_same "$WORK/status-cryptsetup" "$WORK/status-veilsetup" "status /dev/mapper/st"
grep -qx '/dev/mapper/st is active.' "$WORK/status-veilsetup" || fail "/dev/mapper/st: the first line"
status_same "$WORK/dm-cryptsetup" "$WORK/dm-veilsetup" "status /dev/dm-N"
grep -qx '/dev/dm-N is active.' "$WORK/dm-veilsetup" || fail "/dev/dm-N: the first line"
echo "ok: status by a device path"
HOOK=hold compare "LUKS2, held open" "" -d "$WORK/key" "$L"
grep -qx '/dev/mapper/st is active and is in use.' "$WORK/status-veilsetup" || fail "held open: not in use"
HOOK=suspend compare "LUKS2, suspended" "" -d "$WORK/key" "$L"
grep -qx '  mode:    read/write (suspended)' "$WORK/status-veilsetup" || fail "suspended: the mode"
compare "LUKS2, read-only, every flag" "" -d "$WORK/key" --readonly --allow-discards \
	--perf-same_cpu_crypt --perf-submit_from_crypt_cpus --perf-no_read_workqueue \
	--perf-no_write_workqueue "$L"
grep -qx '  flags:   discards same_cpu_crypt submit_from_crypt_cpus no_read_workqueue no_write_workqueue' \
	"$WORK/status-veilsetup" || fail "every flag: the flags line"
compare "LUKS2, --disable-keyring" "" -d "$WORK/key" --disable-keyring "$L"

truncate -s 16M "$WORK/hdr"
cryptsetup luksFormat -q --type luks2 $fast --sector-size 4096 --header "$WORK/hdr" "$L" "$WORK/key"
compare "LUKS2, 4096-byte sectors, a detached header" "--header $WORK/hdr" \
	--header "$WORK/hdr" -d "$WORK/key" "$L"
# Without --header, cryptsetup finds no header to read: type n/a, and
# libcryptsetup's sector size of a device without one (512); veilsetup
# says the dm uuid's type and the table's sector size (docs/veilsetup.8,
# DIFFERENCES FROM CRYPTSETUP).
compare_no_header() {
	"$1" open --header "$WORK/hdr" -d "$WORK/key" "$L" st
	"$1" status st > "$WORK/status-nohdr" || fail "${1##*/} status without --header: exit $?"
	"$1" close st
	cat "$WORK/status-nohdr"
	grep -qx "  type:    $2" "$WORK/status-nohdr" || fail "${1##*/}, no --header: not type $2"
	grep -qx "  sector size:  $3" "$WORK/status-nohdr" || fail "${1##*/}, no --header: not sector size $3"
}
compare_no_header cryptsetup n/a 512
compare_no_header "$VS" LUKS2 4096
echo "ok: status of a detached header's volume without --header, as documented"

truncate -s 24M "$WORK/image"
cryptsetup luksFormat -q --type luks1 --pbkdf-force-iterations 1000 "$WORK/image" "$WORK/key"
compare "LUKS1 on an image file" "" -d "$WORK/key" "$WORK/image"
grep -q "^  loop:    $WORK/image\$" "$WORK/status-veilsetup" || fail "image file: no loop: line"

compare "plain, offset, skip, 4096-byte sectors, large IVs" "" --type plain \
	-c aes-xts-plain64 -s 512 -d "$WORK/plain.key" --offset 2048 --skip 8192 \
	--sector-size 4096 --iv-large-sectors "$L"
grep -qx '  skipped: 8192 sectors' "$WORK/status-veilsetup" || fail "plain: no skipped: line"

# Inactive: the same line and exit code (4).
for tool in cryptsetup "$VS"; do
	rc=0
	"$tool" status st > "$WORK/inactive-${tool##*/}" 2>&1 || rc=$?
	[ "$rc" = 4 ] || fail "${tool##*/} status of an inactive name: exit $rc, want 4"
done
diff -u "$WORK/inactive-cryptsetup" "$WORK/inactive-veilsetup" || fail "inactive: not cryptsetup's line"
# A path with nothing there: inactive, 4; a path to something that is
# no mapping (a loop device, a file): libdevmapper's "Device X not
# found", 1; with -v, the same failure line.
for case in "/dev/mapper/st 4" "$L 1" "$WORK/key 1" "-v $L 1"; do
	set -- $case
	want=${*: -1}
	for tool in cryptsetup "$VS"; do
		rc=0
		"$tool" status "${@:1:$#-1}" > "$WORK/inactive-${tool##*/}" 2>&1 || rc=$?
		[ "$rc" = "$want" ] || fail "${tool##*/} status ${*:1:$#-1}: exit $rc, want $want"
	done
	diff -u "$WORK/inactive-cryptsetup" "$WORK/inactive-veilsetup" ||
		fail "status ${*:1:$#-1}: not cryptsetup's lines"
done
grep -qx "Device ${L##*/} not found" "$WORK/inactive-veilsetup" || fail "$L: the message"
echo "ok: status of an inactive name"
