#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# veilsetup's header maintenance as cryptsetup 2.6.1's: convert, repair,
# config (luksConfig), luksConvertKey, luksFormat --subsystem, unbound
# keyslots and tokens (luksAddKey, luksDump, luksChangeKey, open
# --test-passphrase, token add --unbound), --test-args, --disable-locks,
# --debug-json and --usage. The same command lines run through
# cryptsetup (on device C) and veilsetup (on device V) and must end with
# the same exit code; the headers they leave must say the same (luksDump,
# random values left out); the common refusals (no LUKS header, wrong
# passphrase, keyslot not given or not active, a header the other format
# cannot hold) must say the same words. A volume each tool converted
# opens with the other one and reads the data the other wrote; an
# unbound keyslot is never mapped.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup
requires module loop dm_crypt
veil_load
modprobe loop

fast="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
printf 'first' > "$WORK/k1"
printf 'wrong' > "$WORK/kw"
mkloop 40M
C=$LOOP
mkloop 40M
V=$LOOP

# both STDIN ARGS...: ARGS with @DEV@ (the tool's device) filled in, run
# through both tools; the exit codes must be equal, and equal to $want.
both() {
	local input=$1 rc_c=0 rc_v=0
	shift
	printf '%s' "$input" | cryptsetup "${@//@DEV@/$C}" > "$WORK/out-c" 2>&1 || rc_c=$?
	printf '%s' "$input" | "$VS" "${@//@DEV@/$V}" > "$WORK/out-v" 2>&1 || rc_v=$?
	if [ "$rc_c" != "$rc_v" ] || [ "$rc_v" != "$want" ]; then
		echo "--- cryptsetup:"; cat "$WORK/out-c"; echo "--- veilsetup:"; cat "$WORK/out-v"
		fail "$*: exit codes cryptsetup $rc_c, veilsetup $rc_v, want $want"
	fi
	echo "ok: [$rc_v] $*"
}
# same_out: both printed the same, but for the device, the tool's name
# and the usage cryptsetup prints after a refused command line.
words() {
	sed -e "s#$2#@DEV@#g" -e 's/^\(cryptsetup\|veilsetup\): //' -e 's/^UUID:.*/UUID:/' -e '/^Usage: cryptsetup/,/<action-specific>$/d' "$1"
}
same_out() {
	[ "$(words "$WORK/out-c" "$C")" = "$(words "$WORK/out-v" "$V")" ] || {
		diff <(words "$WORK/out-c" "$C") <(words "$WORK/out-v" "$V")
		fail "messages differ after: $*"
	}
	[ -s "$WORK/out-v" ] || fail "no message after: $*"
}
dump() {
	cryptsetup luksDump "$1" | grep -vE 'UUID|[Ss]alt|[Dd]igest|^\s+[0-9a-f]{2} |Area offset|Time cost|Memory|Threads|Iterations|header information for' |
		sed 's/[[:space:]]\+/ /g'
}
same_header() {
	[ "$(dump "$C")" = "$(dump "$V")" ] || {
		diff <(dump "$C") <(dump "$V")
		fail "headers differ after: $*"
	}
}
# has_header PATTERN: V's luksDump shows it (that the change was made)
has_header() { dump "$V" | grep -q -- "$1" || fail "luksDump of $V lacks '$1'"; }

# No LUKS header at all (the devices are zeroes).
want=1 both "" convert --type luks2 -q @DEV@; same_out convert of zeroes
want=1 both "" config --label x @DEV@; same_out config of zeroes
want=1 both "" luksConvertKey -d "$WORK/k1" @DEV@; same_out luksConvertKey of zeroes
want=1 both "" repair -q @DEV@

# luksFormat --subsystem, with --label and alone.
want=0 both "" luksFormat -q $fast --sector-size 512 --label lab --subsystem sub @DEV@ "$WORK/k1"
same_header luksFormat --subsystem; has_header "Subsystem: sub"

# config, luksConfig: the refusals, then each change.
want=1 both "" config @DEV@; same_out config without options
want=1 both "" config --priority prefer @DEV@; same_out config --priority without -S
want=1 both "" config --priority best -S 0 @DEV@; same_out config --priority best
want=1 both "" config --priority prefer -S 7 @DEV@
want=0 both "" config --label lab2 --subsystem sub2 @DEV@
same_header config --label --subsystem; has_header "Label: lab2"
want=0 both "" config --priority prefer -S 0 @DEV@
same_header config --priority prefer; has_header "Priority: prefer"
want=0 both "" luksConfig --subsystem sub3 @DEV@
same_header luksConfig --subsystem; has_header "Subsystem: sub3"
dump "$V" | grep -q "Label: lab2" && fail "config --subsystem alone kept the label (cryptsetup clears it)"

# luksConvertKey: the refusals, then a keyslot made argon2i.
want=2 both "" luksConvertKey -d "$WORK/kw" @DEV@; same_out luksConvertKey, wrong passphrase
want=1 both "" luksConvertKey -S 5 -d "$WORK/k1" @DEV@; same_out luksConvertKey -S 5, inactive
want=1 both "" luksConvertKey -S 0 -d "$WORK/k1" --keyslot-cipher aes-cbc-essiv:sha256 @DEV@
same_out luksConvertKey --keyslot-cipher alone
argon="--pbkdf argon2i --pbkdf-force-iterations 4 --pbkdf-memory 32 --pbkdf-parallel 1"
want=0 both "" luksConvertKey -S 0 -d "$WORK/k1" $argon @DEV@
same_header luksConvertKey argon2i; has_header "PBKDF: argon2i"
# As cryptsetup 2.6.1: the positional key file is not read.
want=0 both "first" luksConvertKey $argon @DEV@ "$WORK/kw"

# convert: no --type, a keyslot LUKS1 cannot hold, then both ways.
want=1 both "" convert -q @DEV@; same_out convert without --type
want=1 both "" convert --type luks2 -q @DEV@; same_out convert to its own type
want=1 both "" convert --type luks1 -q @DEV@; same_out convert of argon2i to LUKS1
want=0 both "" luksConvertKey -S 0 -d "$WORK/k1" $fast @DEV@
want=0 both "" convert --type luks1 -q @DEV@
same_header convert to LUKS1; has_header "Version: 1"
want=1 both "" config --label x @DEV@; same_out config of LUKS1
want=1 both "" luksConvertKey -d "$WORK/k1" @DEV@; same_out luksConvertKey of LUKS1
want=0 both "" repair -q @DEV@; same_header repair of LUKS1
# Each tool's converted volume opens with the other one.
head -c 1M /dev/urandom > "$WORK/data"
cross() {
	local dev=$1 writer=$2 reader=$3
	$writer open -d "$WORK/k1" "$dev" hm-w || fail "$writer open of $dev"
	dd if="$WORK/data" of=/dev/mapper/hm-w bs=1M oflag=direct status=none
	$writer close hm-w
	$reader open -d "$WORK/k1" "$dev" hm-r || fail "$reader open of $dev"
	cmp -n 1M "$WORK/data" /dev/mapper/hm-r || fail "$reader read other data from $dev"
	$reader close hm-r
}
cross "$V" "$VS" cryptsetup
cross "$C" cryptsetup "$VS"
want=0 both "" convert --type luks2 -q @DEV@
same_header convert to LUKS2; has_header "Version: 2"
cross "$V" cryptsetup "$VS"
cross "$C" "$VS" cryptsetup

# repair: a LUKS2 header whose primary copy is gone comes back from the
# secondary one.
want=0 both "" -v repair @DEV@; same_out repair of a sound header
dd if=/dev/zero of="$C" bs=4096 count=1 conv=notrunc status=none
dd if=/dev/zero of="$V" bs=4096 count=1 conv=notrunc status=none
want=0 both "" repair -q @DEV@; same_header repair
[ "$(head -c 4 "$V")" = LUKS ] || fail "repair left $V's primary header zero"

# Unbound keyslots: add, dump, test, never mapped; unbound tokens.
want=1 both "" luksAddKey --unbound @DEV@; same_out luksAddKey --unbound without -s
head -c 32 /dev/urandom > "$WORK/uk"
want=0 both "third" luksAddKey --unbound -s 256 -S 4 --volume-key-file "$WORK/uk" $fast @DEV@
same_header luksAddKey --unbound; has_header "4: luks2 (unbound)"
want=1 both "" luksDump --unbound @DEV@; same_out luksDump --unbound without -S
want=1 both "" luksDump --unbound -S 0 @DEV@; same_out luksDump --unbound -S 0
want=2 both "wrong" luksDump --unbound -S 4 -q @DEV@; same_out luksDump --unbound, wrong passphrase
want=0 both "third" luksDump --unbound -S 4 -q @DEV@
same_out luksDump --unbound
grep -q "$(od -An -tx1 -N8 "$WORK/uk" | sed 's/^ //')" "$WORK/out-v" ||
	fail "luksDump --unbound did not print the unbound key: $(cat "$WORK/out-v")"
want=0 both "third" open --test-passphrase --unbound @DEV@
want=0 both "first" open --test-passphrase --unbound @DEV@
want=1 both "third" open --test-passphrase @DEV@; same_out open --test-passphrase, an unbound passphrase
want=1 both "third" open --unbound @DEV@ hm-x; same_out open --unbound without --test-passphrase
want=1 both "third" open --test-passphrase --unbound --type plain @DEV@; same_out open --unbound of plain
want=1 both "third" open -S 4 @DEV@ hm-x; same_out open of an unbound keyslot
[ -e /dev/mapper/hm-x ] && fail "an unbound keyslot was mapped"
printf 'third' > "$WORK/k3"
printf 'fourth' > "$WORK/k4"
want=0 both "" luksChangeKey -S 4 -d "$WORK/k3" $fast @DEV@ "$WORK/k4"
same_header luksChangeKey of an unbound keyslot; has_header "4: luks2 (unbound)"
want=0 both "fourth" open --test-passphrase --unbound -S 4 @DEV@
want=0 both "" token add --unbound --key-description hm-desc @DEV@
same_header token add --unbound; has_header "hm-desc"
want=1 both "" token remove --unbound --token-id 0 @DEV@; same_out token remove --unbound
want=1 both "" token add --unbound -S 0 --key-description x @DEV@; same_out token add --unbound -S

# --test-args: checked, nothing done.
want=0 both "" --test-args luksFormat @DEV@; same_out --test-args
same_header --test-args luksFormat
want=1 both "" --test-args -S 1 erase @DEV@
want=0 both "" --disable-locks luksDump @DEV@
want=0 both "" --debug-json luksDump @DEV@
grep -q '"keyslots"' "$WORK/out-v" || fail "--debug-json printed no JSON metadata"
want=0 both "" --usage
grep -q -- '^Usage: veilsetup .*\[--usage\]' "$WORK/out-v" || fail "--usage: $(head -2 "$WORK/out-v")"
for o in --unbound --priority=STRING --subsystem=STRING --test-args --disable-locks --debug-json; do
	grep -q -- "\[$o\]" "$WORK/out-v" || fail "--usage lacks [$o]"
done
# UUID=<uuid> in place of a device: udev's /dev/disk/by-uuid/<uuid>,
# the uuid in any case, as cryptsetup's; one with no such link fails the
# same way in both.
udevadm trigger --settle "$C" "$V" 2>/dev/null || udevadm settle
uc=$(cryptsetup luksUUID "$C") uv=$(cryptsetup luksUUID "$V")
[ -e "/dev/disk/by-uuid/$uv" ] || fail "udev made no /dev/disk/by-uuid/$uv"
[ "$(cryptsetup luksUUID "UUID=${uc^^}")" = "$uc" ] || fail "cryptsetup luksUUID UUID=: not $uc"
[ "$("$VS" luksUUID "UUID=${uv^^}")" = "$uv" ] || fail "veilsetup luksUUID UUID=${uv^^}: not $uv"
"$VS" luksDump "UUID=$uv" | grep -q "^UUID:[[:space:]]*$uv" || fail "veilsetup luksDump UUID=$uv"
want=4 both "" luksDump UUID=00000000-0000-0000-0000-000000000000; same_out luksDump of an unknown UUID=
echo "ok: convert, repair, config, luksConvertKey, unbound keyslots, UUID= as cryptsetup's"
