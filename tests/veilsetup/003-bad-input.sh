#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad input: each gets its own message and a non-zero exit, and nothing
# changes: no new mapping, the device's first 4 MiB unchanged.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup
requires module loop
veil_load
PASS="the right one"
fast="--pbkdf pbkdf2 --iter-time 10"
mkloop 32M
echo "$PASS" | "$VS" luksFormat -q $fast "$LOOP"
mkloop 32M
RAND=$LOOP
dd if=/dev/urandom of="$RAND" bs=1M count=4 status=none
LOOP=${_loops[0]}

snap() { head -c 4M "$1" | sha256sum | cut -d' ' -f1; }
# bad WANT-MESSAGE CMD...: fails, says WANT-MESSAGE, changes nothing
bad() {
	local want=$1 before_luks before_rand devs
	shift
	before_luks=$(snap "$LOOP") before_rand=$(snap "$RAND")
	devs=$(dmsetup ls | sort)
	if "$@" > "$WORK/out" 2>&1; then fail "accepted: $*"; fi
	grep -qF "$want" "$WORK/out" || fail "$*: want '$want', got: $(cat "$WORK/out")"
	[ "$(dmsetup ls | sort)" = "$devs" ] || fail "$*: device-mapper table changed"
	[ "$(snap "$LOOP")" = "$before_luks" ] && [ "$(snap "$RAND")" = "$before_rand" ] ||
		fail "$*: data on disk changed"
	echo "ok: $want"
}
opn() { local input=$1; shift; printf '%s\n' "$input" | "$VS" "$@"; }

bad "No key available with this passphrase." opn wrong open "$LOOP" vt
bad "does not exist or access denied" opn "$PASS" open /dev/veil-nosuch vt
bad "is not a valid LUKS device" opn "$PASS" open "$RAND" vt
bad "Cipher nosuch-xts-plain64 is not available" opn x open --type plain -c nosuch-xts-plain64 "$RAND" vt
bad "Key size 128 bits is not valid for cipher aes-xts-plain64" opn x open --type plain -c aes-xts-plain64 -s 128 "$RAND" vt
bad "No known cipher specification pattern detected" opn x open --type plain -c aes "$RAND" vt
head -c 10 /dev/urandom > "$WORK/short"
bad "Cannot read requested amount of data" opn x open --type plain -s 256 -d "$WORK/short" "$RAND" vt
bad "Unknown action" "$VS" frobnicate
bad "Command requires device and mapped name as arguments." "$VS" open "$LOOP"
bad "No device header detected with this passphrase." opn x open --type tcrypt --disable-veracrypt "$LOOP" vt
bad "Invalid offset: 12x" "$VS" open --type plain --offset 12x "$LOOP" vt
bad "Invalid --keystream-ahead-max: 64k" "$VS" open --type plain --keystream-ahead-max 64k "$LOOP" vt

# Name in use, device in use.
dm_create vt "0 8 zero"
bad "Device vt already exists." opn "$PASS" open "$LOOP" vt
dm_remove vt
dm_create vt-hold "0 8 linear $RAND 0"
bad "which is in use" opn x open --type plain "$RAND" vt
dm_remove vt-hold
bad "Device vt is not active." "$VS" close vt

# Corrupt header: both LUKS2 JSON areas (primary and secondary) damaged.
cp_hdr=$WORK/hdr
dd if="$LOOP" of="$cp_hdr" bs=1M count=4 status=none
printf 'garbage' | dd of="$LOOP" bs=1 seek=$((4096 + 10)) conv=notrunc status=none
printf 'garbage' | dd of="$LOOP" bs=1 seek=$((16384 + 4096 + 10)) conv=notrunc status=none
bad "is not a valid LUKS device" opn "$PASS" open "$LOOP" vt
dd if="$cp_hdr" of="$LOOP" bs=1M conv=notrunc status=none
opn "$PASS" open "$LOOP" vt && "$VS" close vt || fail "restored header does not open"

# Missing module.
rmmod dm_veil
bad "the kernel has no veil target and could not load the dm-veil module" opn "$PASS" open "$LOOP" vt
veil_load
