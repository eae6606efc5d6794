#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for the in-guest tests. A test sources this file, says what it
# needs with `requires`, registers nothing itself for cleanup: every device
# and loop file made through these helpers is removed on exit, pass or fail.
# Exit status: 0 pass, 77 skip, anything else fail.

set -eu -o pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The module for the running kernel (make module puts it there).
VEIL_KO=${VEIL_KO:-$TOP/build/modules/$(uname -r)/dm-veil.ko}
[ -f "$VEIL_KO" ] || VEIL_KO=$TOP/dm-target/dm-veil.ko
WORK=$(mktemp -d /tmp/veiltest.XXXXXX)
_devs=() _loops=() _mounts=() _atexit=()

# at_exit CMD: run CMD (a string) on exit, after unmounting, before devices
# are removed: for modules such as block2mtd that hold a volume.
at_exit() { _atexit+=("$1"); }

cleanup() {
	local i
	set +e
	for ((i = ${#_mounts[@]} - 1; i >= 0; i--)); do
		umount "${_mounts[i]}" 2>/dev/null
	done
	for ((i = ${#_atexit[@]} - 1; i >= 0; i--)); do
		eval "${_atexit[i]}" >/dev/null 2>&1
	done
	for ((i = ${#_devs[@]} - 1; i >= 0; i--)); do
		dmsetup info "${_devs[i]}" >/dev/null 2>&1 &&
			dmsetup remove --retry "${_devs[i]}" >/dev/null 2>&1
	done
	for l in "${_loops[@]}"; do losetup -d "$l" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
info() { echo "# $*"; }

# requires root | module NAME... | modinfo NAME... | cmd NAME...
# (module loads it with default parameters; modinfo only checks that it
# exists, for modules the test loads with parameters of its own)
requires() {
	case "$1" in
	root) [ "$(id -u)" = 0 ] || skip "needs root" ;;
	module) shift; for m; do modprobe "$m" 2>/dev/null || skip "no module $m"; done ;;
	modinfo) shift; for m; do modinfo "$m" >/dev/null 2>&1 || skip "no module $m"; done ;;
	cmd) shift; for c; do command -v "$c" >/dev/null || skip "no command $c"; done ;;
	esac
}

# module_loaded NAME: NAME is a loaded module (not built in). Not
# `lsmod | grep -q`: grep leaves at the first match, lsmod then dies of
# SIGPIPE and, under pipefail, the pipeline fails although the module is
# there.
module_loaded() { [ -e "/sys/module/$1/initstate" ]; }

veil_load() {
	modprobe dm_mod
	module_loaded dm_veil || insmod "$VEIL_KO"
}

# randhex BYTES: a random key in hex
randhex() { head -c "$1" /dev/urandom | od -An -v -tx1 | tr -d ' \n'; }

# mkloop SIZE: a loop device over a new sparse file in $WORK, in $LOOP
mkloop() {
	local f
	modprobe loop
	f=$(mktemp "$WORK/loop.XXXXXX")
	truncate -s "$1" "$f"
	LOOP=$(losetup -f --show "$f")
	LOOP_FILE=$f
	_loops+=("$LOOP")
}

# dm_create NAME TABLE: create a device (TABLE may have several lines),
# remembered for cleanup
dm_create() {
	_devs+=("$1")
	printf '%s\n' "$2" | dmsetup create "$1"
}

# majmin DEV: "major:minor", as tables print devices
majmin() { lsblk -dno MAJ:MIN "$1" | tr -d ' '; }

# dm_remove NAME
dm_remove() { dmsetup remove --retry "$1"; }

# track_mount DIR: unmount DIR on exit
track_mount() { _mounts+=("$1"); }

# expect_fail CMD...: CMD must fail
expect_fail() {
	if "$@" >/dev/null 2>&1; then fail "expected failure: $*"; fi
}

# crypto_preload NAME...: load the ciphers and templates a test's tables
# name, then turn module autoloading off until the test ends: a name
# nothing provides then fails at once instead of running modprobe, several
# times per name at ~0.3 s each in the guest (far more on the debug kernel)
crypto_preload() {
	local m path
	for m; do modprobe -q "crypto-$m" || true; done
	path=$(cat /proc/sys/kernel/modprobe)
	at_exit "echo '$path' > /proc/sys/kernel/modprobe"
	echo > /proc/sys/kernel/modprobe
}

# udev_off: stop udevd until the test ends. udev works through each
# device's uevents in order, running dmsetup and blkid for each: under
# emulation a test that maps hundreds of tables keeps it busy long after,
# and every dmsetup call waits for it. With no listener uevents are
# dropped; dmsetup makes the /dev/mapper nodes itself (DM_DISABLE_UDEV)
# rather than wait for a udev that no longer answers. A udevd still
# alive would answer `udevadm settle` and keep a queue it never empties
# (memory/002 timed out so on the debug kernel): udevd must be gone, or
# the test fails here.
udev_off() {
	local udevd i
	udevd=$(command -v /usr/lib/systemd/systemd-udevd /lib/systemd/systemd-udevd | head -1 || true)
	if [ -n "$udevd" ] && pgrep -x systemd-udevd >/dev/null; then
		udevadm settle --timeout=60 || true
		udevadm control --exit 2>/dev/null || pkill -x systemd-udevd || true
		# A loaded debug guest may take over 20 s to let it go.
		for i in $(seq 300); do
			pgrep -x systemd-udevd >/dev/null || break
			[ "$i" != 50 ] || pkill -x systemd-udevd || true
			[ "$i" != 200 ] || pkill -KILL -x systemd-udevd || true
			sleep 0.2
		done
		! pgrep -x systemd-udevd >/dev/null || fail "udevd does not stop"
		at_exit "$udevd --daemon >/dev/null 2>&1; udevadm settle --timeout=60"
	fi
	export DM_DISABLE_UDEV=1
}

# kmsg_mark / kmsg_since: kernel messages logged after the mark. Under
# the runner they come from its copy of /dev/kmsg (KMSG_FILE), which misses
# nothing when the ring buffer wraps; elsewhere from dmesg. The mark is a
# byte offset into that copy, so a check costs what was logged since the
# mark, not the whole run's log (fault injection logs megabytes).
kmsg_mark() {
	if [ -n "${KMSG_FILE:-}" ]; then
		sleep 0.2
		_kmsg=$(stat -c %s "$KMSG_FILE")
	else
		_kmsg=$(dmesg | wc -l)
	fi
}
kmsg_since() {
	if [ -n "${KMSG_FILE:-}" ]; then
		sleep 0.2
		tail -c +"$((${_kmsg:-0} + 1))" "$KMSG_FILE" | grep -v '^ ' | sed 's/^[^;]*;//'
	else
		dmesg | tail -n +"$((${_kmsg:-0} + 1))"
	fi
}

# kmsg_wait REGEX: a kernel message since kmsg_mark matches REGEX, within
# 30 s (the runner's copy of the log may lag behind a busy guest)
kmsg_wait() {
	local i
	for i in $(seq 30); do
		kmsg_since | grep -q "$1" && return 0
		sleep 1
	done
	return 1
}

# kmsg_bad: the lines of the kernel log since kmsg_mark (or boot) that
# show a kernel bug: WARN, BUG, oops, leaks, hung tasks (tests/bad-kmsg.re),
# but for the debug kernel's boot lines of tests/benign-kmsg.re
kmsg_bad() {
	kmsg_since | grep -E -f "$TOP/tests/bad-kmsg.re" |
		grep -v -E -f "$TOP/tests/benign-kmsg.re"
}

# kmsg_allow REGEX...: kernel messages this test causes on purpose (fault
# injection), not to be taken for bugs by the runner
kmsg_allow() { [ -n "${KMSG_ALLOW:-}" ] && printf '%s\n' "$@" >> "$KMSG_ALLOW"; return 0; }

# usb_stick: the removable USB disk QEMU gives the guest (/dev/sdX), or
# nothing if none is attached
usb_stick() {
	local b
	for b in /sys/block/sd*; do
		[ -e "$b" ] || continue
		if [ "$(cat "$b/removable")" = 1 ] && readlink -f "$b/device" | grep -q usb; then
			echo "/dev/$(basename "$b")"
		fi
	done
}

# sectors DEV: size in 512-byte sectors
sectors() { blockdev --getsz "$1"; }

# plaintext FILE BYTES: random data with a known marker every 64 KiB, so a
# test can look for plaintext on the raw device
PLAIN_MARKER=VEIL-PLAINTEXT-MARKER-3f9a1c
plaintext() {
	head -c "$2" /dev/urandom > "$1"
	perl -e 'open(my $f, "+<", $ARGV[0]) or die "$ARGV[0]: $!";
		for (my $i = 0; $i < $ARGV[1]; $i += 65536) { seek($f, $i, 0); print $f $ARGV[2]; }
		close($f) or die "$ARGV[0]: $!";' "$1" "$2" "$PLAIN_MARKER"
}

# no_plaintext DEV: the marker must not appear anywhere on DEV
no_plaintext() {
	if grep -qa "$PLAIN_MARKER" "$1"; then fail "plaintext found on $1"; fi
}

# fio_verify NAME DEV JOBS QD SECONDS: random reads and writes of 4 KiB to
# 1 MiB, crc32c-verified, JOBS jobs each in its own part of DEV at queue
# depth QD, for at most SECONDS; prints fio's summary lines. Fails (return
# 1, fio's output printed) on a verify error or any I/O error.
fio_verify() {
	local part=$(($(blockdev --getsize64 "$2") / $3 / 1048576))
	fio --name="$1" --filename="$2" --direct=1 --ioengine=libaio \
	    --rw=randrw --bsrange=4k-1m --iodepth="$4" --numjobs="$3" \
	    --size=$((part * 3 / 4))M --offset_increment="${part}M" \
	    --verify=crc32c --verify_backlog="$4" --verify_fatal=1 --verify_state_save=0 \
	    --runtime="$5" --time_based=0 --group_reporting \
	    --output="$WORK/fio.txt" || { cat "$WORK/fio.txt"; return 1; }
	grep -E 'READ:|WRITE:|err=' "$WORK/fio.txt"
	grep -q 'err= 0' "$WORK/fio.txt" || { cat "$WORK/fio.txt"; return 1; }
}

# write_direct FILE DEV [SEEK_BYTES]; read_direct DEV BYTES [SKIP_BYTES] > out
# Direct I/O in $BS blocks (256 KiB unless set): large enough for fan-out.
# Sizes and offsets must be multiples of $BS.
BS=${BS:-262144}
write_direct() {
	dd if="$1" of="$2" bs="$BS" seek="$((${3:-0} / BS))" oflag=direct conv=notrunc status=none
}
read_direct() {
	dd if="$1" bs="$BS" count="$(($2 / BS))" skip="$((${3:-0} / BS))" iflag=direct status=none
}

# same_data FILE DEV [SKIP_BYTES]: DEV holds FILE's bytes at SKIP_BYTES
same_data() {
	local n
	n=$(stat -c %s "$1")
	read_direct "$2" "$n" "${3:-0}" | cmp -s - "$1"
}

# vs_open DEV NAME [VEILSETUP OPTIONS]: a plain veil volume keyed by this
# test's key file (no PBKDF: fast in the guest); CIPHER picks the cipher
VS=$TOP/userspace/veilsetup
vs_open() {
	local dev=$1 name=$2
	shift 2
	[ -f "$WORK/vs.key" ] || head -c 64 /dev/urandom > "$WORK/vs.key"
	_devs+=("$name")
	"$VS" open --type plain -c "${CIPHER:-aes-xts-plain64}" -s "${KEYBITS:-512}" \
		-d "$WORK/vs.key" "$@" "$dev" "$name"
}
vs_close() { "$VS" close "$1"; }

# status_same CS-FILE VS-FILE WHAT: the output of `cryptsetup status` of a
# mapping (in CS-FILE) and of `veilsetup status` of the same volume mapped
# by veilsetup (VS-FILE) agree line by line, the mapping's name aside, but
# for the lines that differ because the target is veil (docs/veilsetup.md,
# "Status"): veilsetup's engine: and counters: lines (veil's own options
# and counters: dm-crypt has neither), and the key location: "dm-veil"
# where cryptsetup says "dm-crypt" (a key in the table), but "keyring"
# for any volume but LUKS2, whose key cryptsetup 2.6 puts into the
# dm-crypt table and veilsetup, like every key, through the keyring
# (dmsetup hides the keys of crypt tables only), unless VS_KEY_LOCATION
# says otherwise (dm-veil: --disable-keyring, the null cipher).
status_same() {
	local cs=$1 vs=$2 what=$3 type
	type=$(sed -n 's/^  type: *//p' "$cs")
	sed -e '1s|^/dev/mapper/[^ ]* is |/dev/mapper/NAME is |' \
	    -e 's/^\(  key location: \)dm-crypt$/\1dm-veil/' "$cs" > "$cs.want"
	case $type in
	LUKS2) ;;
	*)
		sed -i "s/^\(  key location: \)dm-veil\$/\1${VS_KEY_LOCATION:-keyring}/" "$cs.want" ;;
	esac
	sed -e '1s|^/dev/mapper/[^ ]* is |/dev/mapper/NAME is |' \
	    -e '/^  engine:  /d' -e '/^  counters:$/,$d' "$vs" > "$vs.got"
	diff -u --label "cryptsetup status" --label "veilsetup status" "$cs.want" "$vs.got" ||
		fail "$what: veilsetup status differs from cryptsetup's (above)"
}

# key_hidden NAME: the key field of NAME's table is a keyring reference,
# even with --showkeys (dmsetup masks the keys of crypt tables only)
key_hidden() {
	local key
	key=$(dmsetup table --showkeys "$1" | cut -d' ' -f5)
	case $key in
	:[0-9]*:logon:*) ;;
	*) fail "$1: the table's key field is '$key', not a keyring reference" ;;
	esac
}

# fill_files DIR: a small tree (1 MiB and 256 KiB of data, 20 small files,
# a file named with the plaintext marker); checksums in $WORK/sums
fill_files() {
	local i
	mkdir -p "$1/sub/deeper"
	plaintext "$1/big" $((1024 * 1024))
	plaintext "$1/sub/medium" $((256 * 1024))
	echo "named so that metadata leaks show" > "$1/sub/deeper/$PLAIN_MARKER.txt"
	for ((i = 0; i < 20; i++)); do
		head -c $((1000 + i * 150)) /dev/urandom > "$1/sub/small$i"
	done
	(cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$WORK/sums"
}

# verify_files DIR: every file of the last fill_files is intact
verify_files() {
	(cd "$1" && sha256sum --quiet -c "$WORK/sums") || fail "files in $1 changed"
}

# integrity NAME DEV TAG MODE SECTOR [HASH]: dm-integrity by hand, whole
# device, external tags (with HASH, its internal hash); dm-integrity
# formats it on first load. Its length goes to INT_LEN.
integrity() {
	local opts=() len
	[ "$5" = 512 ] || opts+=("block_size:$5")
	[ -z "${6:-}" ] || opts+=("internal_hash:$6")
	opts="${#opts[@]} ${opts[*]}"
	dm_create "$1" "0 8 integrity $2 0 $3 $4 $opts"
	len=$(dmsetup status "$1" | awk '{print $5}')
	dmsetup reload "$1" --table "0 $len integrity $2 0 $3 $4 $opts"
	dmsetup resume "$1"
	INT_LEN=$len
}

# gcm_integrity: a 16 MiB loop device under dm-integrity vt-int (direct
# mode, 28-byte tuples, 4096-byte sectors), as capi:gcm(aes)-random
# integrity:28:aead needs it: sets $len (its sectors), $int (its
# major:minor) and $feat (the feature arguments of a table over it)
gcm_integrity() {
	mkloop 16M
	integrity vt-int "$LOOP" 28 D 4096
	len=$INT_LEN
	int=$(majmin /dev/mapper/vt-int)
	feat="2 integrity:28:aead sector_size:4096"
}

# arch_ghash: the kernel has the architecture's GHASH (x86's __ghash, in
# the module that offers "ghash"), which veil's write masks need
arch_ghash() {
	modprobe ghash-clmulni-intel 2>/dev/null || true
	grep -q '^name *: __ghash$' /proc/crypto
}

# status_field NAME FIELD: one key=value field of a veil device's status
status_field() { dmsetup status "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# Where the kernel ran functions: the function tracer, limited to FUNCS.
# trace_start FUNC...; ...I/O...; trace_stop > FILE. Each line of the
# output: "<task>-<pid> [<cpu>] <flags> <time>: <function> <- <caller>";
# flags[2] is 'h' (hard IRQ), 's' (softirq), 'H' (hard IRQ in softirq) or
# '.' (process context).
TRACEFS=/sys/kernel/tracing
trace_start() {
	local f
	[ -d "$TRACEFS/events" ] || mount -t tracefs nodev "$TRACEFS" 2>/dev/null ||
		skip "no tracefs"
	[ -f "$TRACEFS/set_ftrace_filter" ] || skip "no function tracer"
	echo nop > "$TRACEFS/current_tracer"
	: > "$TRACEFS/set_ftrace_filter"
	for f; do echo "$f" >> "$TRACEFS/set_ftrace_filter" || fail "cannot trace $f"; done
	grep -q . "$TRACEFS/set_ftrace_filter" || fail "the tracer knows none of: $*"
	echo 8192 > "$TRACEFS/buffer_size_kb"
	echo > "$TRACEFS/trace"
	echo function > "$TRACEFS/current_tracer"
	echo 1 > "$TRACEFS/tracing_on"
	at_exit "echo nop > $TRACEFS/current_tracer; : > $TRACEFS/set_ftrace_filter"
}
trace_stop() {
	# Stop recording, read, then drop the tracer (which empties the buffer).
	echo 0 > "$TRACEFS/tracing_on"
	grep -v '^#' "$TRACEFS/trace" || true
	echo nop > "$TRACEFS/current_tracer"
	echo 1 > "$TRACEFS/tracing_on"
	: > "$TRACEFS/set_ftrace_filter"
}
# trace_context FILE FUNC-REGEX: how many calls of functions whose name
# matches FUNC-REGEX ran in each context, as "hardirq=N softirq=N task=N"
trace_context() {
	awk -v fn="$2" '$0 ~ (": " fn " <-") {
		for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) { fl = $(i + 1); break }
		c = substr(fl, 3, 1)
		if (c == "h" || c == "H") h++; else if (c == "s") s++; else t++
	} END { printf "hardirq=%d softirq=%d task=%d\n", h, s, t }' "$1"
}
# trace_tasks FILE FUNC-REGEX: the tasks (name without pid) and CPUs that
# ran matching functions, one "task cpu" pair per line, with counts
trace_tasks() {
	awk -v fn="$2" '$0 ~ (": " fn " <-") {
		task = $1; sub(/-[0-9]+$/, "", task)
		for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) { cpu = $i; break }
		n[task " " cpu]++
	} END { for (k in n) print k, n[k] }' "$1" | sort
}

# kernel_at_least VERSION: the running kernel is VERSION (e.g. 6.10) or later
kernel_at_least() {
	[ "$(printf '%s\n' "$1" "$(uname -r)" | sort -V | head -1)" = "$1" ]
}

# within SECS CMD...: run CMD in the background and wait at most SECS for
# it; 0 if it finished in time and succeeded, 124 if still running (it is
# left running: the caller must make it finish), else its exit status
within() {
	local secs=$1 pid i
	shift
	"$@" &
	pid=$!
	for ((i = 0; i < secs * 10; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			return
		fi
		sleep 0.1
	done
	return 124
}
