#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# veilsetup as a drop-in for cryptsetup: the same command lines run through
# cryptsetup (on image C) and veilsetup (on image V) and must end with the
# same exit code, for every action and the options cryptsetup users type;
# where an action changes a header, both headers must then say the same
# (luksDump with salts, digests and uuids left out). Volumes made by one
# tool open with the other, both ways, and read the other's data. The
# LUKS2 area sizes and keyslot ciphers, --device-size, luksAddKey's
# --new-* options, close --deferred, the raw volume key
# (--volume-key-file, luksDump --dump-volume-key), plain open --shared,
# --use-random, --force-password and open --refresh give what
# cryptsetup's give, with its messages.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup
requires cmd keyctl
requires module loop dm_crypt
veil_load
modprobe loop

fast="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
printf 'first' > "$WORK/k1"
printf 'second' > "$WORK/k2"
printf 'third' > "$WORK/k3"
printf 'wrong' > "$WORK/kw"
mkloop 40M
C=$LOOP
mkloop 40M
V=$LOOP
n=0

# both STDIN ARGS...: ARGS with @DEV@ (the tool's device), @NAME@ (its
# mapping name) and @IMG@ (its device's backing file) filled in; the
# exit codes must be equal, and equal to $want when set. The two tools
# run at once: each has its own device, mapping, header and output, and
# nothing of one is read by the other until both have ended.
both() {
	local input=$1 rc_c rc_v args_c=() args_v=() a a_c a_v
	shift
	for a in "$@"; do
		a_c=${a//@DEV@/$C}; a_c=${a_c//@NAME@/cs-$n}; a_c=${a_c//@IMG@/$C_FILE}
		a_v=${a//@DEV@/$V}; a_v=${a_v//@NAME@/vs-$n}; a_v=${a_v//@IMG@/$V_FILE}
		args_c+=("$a_c")
		args_v+=("$a_v")
	done
	{
		rc_c=0
		printf '%s' "$input" | cryptsetup "${args_c[@]}" > "$WORK/out-c" 2>&1 || rc_c=$?
		echo "$rc_c" > "$WORK/rc-c"
	} &
	rc_v=0
	printf '%s' "$input" | "$VS" "${args_v[@]}" > "$WORK/out-v" 2>&1 || rc_v=$?
	wait $!
	rc_c=$(< "$WORK/rc-c")
	if [ "$rc_c" != "$rc_v" ] || { [ -n "${want:-}" ] && [ "$rc_v" != "$want" ]; }; then
		echo "--- cryptsetup:"; cat "$WORK/out-c"; echo "--- veilsetup:"; cat "$WORK/out-v"
		fail "$*: exit codes cryptsetup $rc_c, veilsetup $rc_v${want:+, want $want}"
	fi
	echo "ok: [$rc_v] $*"
}
# same_header: luksDump of both devices agrees but for random values
dump() {
	cryptsetup luksDump "$1" | grep -vE 'UUID|[Ss]alt|[Dd]igest|^\s+[0-9a-f]{2} |Area offset|Time cost|Memory|Threads|Iterations|Key:|header information for' |
		sed 's/[[:space:]]\+/ /g'
}
same_header() {
	[ "$(dump "$C")" = "$(dump "$V")" ] || {
		diff <(dump "$C") <(dump "$V")
		fail "headers differ after: $*"
	}
}
C_FILE=$(losetup -nO BACK-FILE "$C")
V_FILE=$(losetup -nO BACK-FILE "$V")

# Command line: help, version, unknown actions and options, missing args.
want=0 both "" -?
want=0 both "" --help
want=0 both "" --version
# The package's version, never a stale one a rebuild missed.
pkgver=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$TOP/debian/changelog")
[ "$("$VS" --version)" = "veilsetup $pkgver" ] ||
	fail "--version says '$("$VS" --version)', the package is $pkgver"
# The man page's .TH names the same version.
manver=$(sed -n 's/^\.TH VEILSETUP 8 [^ ]* "dm-veil \([^"]*\)".*/\1/p' "$TOP/docs/veilsetup.8")
[ "$manver" = "$pkgver" ] || fail "docs/veilsetup.8's .TH says dm-veil '$manver', the package is $pkgver"
# The man page's OPTIONS describe every option --help lists, and every
# option they describe is one veilsetup takes (a hidden older name, too).
man_opts=$(awk '/^\.SH OPTIONS/ { o = 1; next } /^\.SH/ { o = 0 } o && /^\.B/' "$TOP/docs/veilsetup.8" |
	grep -oE '\\-\\-[a-z0-9]([a-z0-9_]|\\-)*' | sed 's/\\//g; s/^--//; s/-$//' | sort -u)
help_opts=$("$VS" --help | grep -oE -- '--[a-z0-9][a-z0-9_]*(-[a-z0-9_]+)*' | sed 's/^--//' | sort -u)
for o in $help_opts; do
	grep -qx -- "$o" <<< "$man_opts" || fail "--$o is in --help but not in docs/veilsetup.8's OPTIONS"
done
for o in $man_opts; do
	case $o in verb | perf) continue ;; esac	# an abbreviation, the --perf-* glob
	taken=""
	# a flag, a number, or a word (--priority takes prefer, normal, ignore)
	for arg in "--$o" "--$o=1" "--$o=256" "--$o=4096" "--$o=normal"; do
		"$VS" "$arg" --version > /dev/null 2>&1 && taken=yes
	done
	[ -n "$taken" ] || fail "docs/veilsetup.8's OPTIONS describe --$o, which veilsetup refuses"
done
echo "ok: the man page's OPTIONS and --help list the same $(wc -w <<< "$help_opts") options"
want=1 both "" frobnicate
want=1 both "" --frobnicate open @DEV@ @NAME@
# No abbreviations, as popt: --verb is not --verbose, and --perf-no_ is no
# choice between two options.
want=1 both "" --verb status @NAME@
want=1 both "" --perf-no_ open @DEV@ @NAME@
want=1 both "" --key-f "$WORK/k1" open @DEV@ @NAME@
want=1 both "" open
want=1 both "" luksKillSlot @DEV@
want=1 both "" -s 7 luksFormat -q @DEV@
want=1 both "" isLuks @DEV@
want=4 both "" open /dev/veil-nosuch @NAME@
want=4 both "" status @NAME@

# Format: positional key file, no YES prompt without a terminal, defaults.
want=0 both "" luksFormat $fast @DEV@ "$WORK/k1"
same_header luksFormat

# Numbers over 32 bits: 2^32 + 512 and 2^32 + 256 would pass as 512 and 256
# if narrowed first. With a key file nothing else can fail: the number must
# be refused with its own message, the header left as it was.
head16() { head -c 16M "$1" | sha256sum | cut -d' ' -f1; }
hc=$(head16 "$C") hv=$(head16 "$V")
want=1 both "" --sector-size 4294967808 luksFormat -q $fast @DEV@ "$WORK/k1"
grep -q 'invalid numeric value' "$WORK/out-c" || fail "cryptsetup: $(cat "$WORK/out-c")"
grep -q '^Invalid sector size: 4294967808 ' "$WORK/out-v" || fail "--sector-size 4294967808: $(cat "$WORK/out-v")"
want=1 both "" -s 4294967552 luksFormat -q $fast @DEV@ "$WORK/k1"
grep -q 'invalid numeric value' "$WORK/out-c" || fail "cryptsetup: $(cat "$WORK/out-c")"
grep -q '^Invalid key size: 4294967552 ' "$WORK/out-v" || fail "-s 4294967552: $(cat "$WORK/out-v")"
[ "$(head16 "$C")" = "$hc" ] && [ "$(head16 "$V")" = "$hv" ] ||
	fail "a refused number changed a header"
want=0 both "" isLuks @DEV@
want=0 both "" luksUUID @DEV@
want=0 both "" luksDump @DEV@
want=0 both "" --type luks2 isLuks @DEV@
want=1 both "" --type luks1 isLuks @DEV@
want=0 both "" -M luks2 isLuks @DEV@
want=1 both "" -M luks1 isLuks @DEV@

# Format options: label, uuid, hash, PBKDF parameters, -y without a
# terminal (one read), then the plain format again for what follows.
want=0 both "" luksFormat -q -y --pbkdf argon2id --pbkdf-memory 32768 --pbkdf-parallel 1 \
	--iter-time 100 --hash sha512 --label vol --uuid 11111111-2222-3333-4444-555555555555 \
	@DEV@ "$WORK/k1"
same_header "luksFormat --label --uuid --hash --pbkdf-*"
[ "$(cryptsetup luksUUID "$V")" = 11111111-2222-3333-4444-555555555555 ] || fail "luksFormat --uuid"
want=0 both "" open --test-passphrase --tries 2 --timeout 5 -d "$WORK/k1" @DEV@

# The data offset: --offset in 512-byte sectors, --align-payload, not both;
# luksDump must name the same offset as cryptsetup's. Options cryptsetup
# does not allow with luksFormat are refused, not ignored.
want=0 both "" luksFormat -q $fast --offset 8192 @DEV@ "$WORK/k1"
same_header "luksFormat --offset 8192"
cryptsetup luksDump "$V" | grep '^[[:space:]]*offset: 4194304 \[bytes\]' >/dev/null ||
	fail "luksFormat --offset 8192: $(cryptsetup luksDump "$V" | grep 'offset:')"
want=1 both "" luksFormat -q $fast --offset 100 @DEV@ "$WORK/k1"
want=1 both "" luksFormat -q $fast --offset 8192 --align-payload 4096 @DEV@ "$WORK/k1"
want=0 both "" luksFormat -q $fast --align-payload 100 @DEV@ "$WORK/k1"
same_header "luksFormat --align-payload 100"
want=0 both "" luksFormat -q --type luks1 --pbkdf-force-iterations 1000 --offset 8192 @DEV@ "$WORK/k1"
same_header "luksFormat --type luks1 --offset 8192"
cryptsetup luksDump "$V" | grep '^Payload offset:[[:space:]]*8192$' >/dev/null ||
	fail "luksFormat --type luks1 --offset 8192: $(cryptsetup luksDump "$V" | grep 'Payload offset')"
for o in "--skip 8" "--size 1000" --iv-large-sectors --allow-discards --persistent --test-passphrase; do
	want=1 both "" luksFormat -q $fast $o @DEV@ "$WORK/k1"
	grep -q "Option ${o% *} is not allowed with luksFormat action." "$WORK/out-v" ||
		fail "luksFormat $o: $(cat "$WORK/out-v")"
done
want=0 both "" luksFormat $fast @DEV@ "$WORK/k1"

# Keyslots.
want=2 both "" luksAddKey -d "$WORK/kw" $fast @DEV@ "$WORK/k2"
want=0 both "" luksAddKey -d "$WORK/k1" $fast @DEV@ "$WORK/k2"
same_header luksAddKey
want=0 both "" luksAddKey -d "$WORK/k1" -S 5 $fast @DEV@ "$WORK/k3"
same_header "luksAddKey -S 5"
# luksRemoveKey takes no --key-slot (the passphrase picks the slot).
want=1 both "" luksRemoveKey -S 5 @DEV@ "$WORK/k3"
grep -q 'Option --key-slot is not allowed with luksRemoveKey action.' "$WORK/out-v" ||
	fail "luksRemoveKey -S: $(cat "$WORK/out-v")"
same_header "luksRemoveKey -S 5 (refused)"
want=0 both "" open --test-passphrase -d "$WORK/k3" @DEV@
want=2 both "" open --test-passphrase -d "$WORK/k3" -S 1 @DEV@
want=2 both "" open --test-passphrase -d "$WORK/kw" @DEV@
want=0 both "first" open --test-passphrase @DEV@
want=2 both "wrong" open --test-passphrase @DEV@
want=0 both "" luksChangeKey -d "$WORK/k3" $fast @DEV@ "$WORK/kw"
want=0 both "" open --test-passphrase -d "$WORK/kw" -S 5 @DEV@
want=0 both "" luksRemoveKey @DEV@ "$WORK/kw"
same_header luksRemoveKey
want=2 both "" luksRemoveKey @DEV@ "$WORK/kw"
want=1 both "" luksKillSlot -q @DEV@ 5
want=0 both "" luksKillSlot -d "$WORK/k1" @DEV@ 1
same_header luksKillSlot
want=0 both "second" luksAddKey -d "$WORK/k1" $fast @DEV@
same_header "luksAddKey from stdin"
want=0 both "" --uuid 12345678-1234-1234-1234-123456789abc luksUUID @DEV@
[ "$(cryptsetup luksUUID "$V")" = 12345678-1234-1234-1234-123456789abc ] || fail "luksUUID --uuid"

# Options cryptsetup allows only with other actions are refused, exit 1,
# before anything is read or written (veilsetup ignored them until
# 2026-11-24: "erase -S 1" erased every keyslot; these lines failed then).
want=1 both "" erase -q -S 1 @DEV@
grep -q 'Option --key-slot is not allowed with erase action.' "$WORK/out-v" ||
	fail "erase -S 1: $(cat "$WORK/out-v")"
want=1 both "" luksErase -q -S 1 @DEV@
want=0 both "" open --test-passphrase -d "$WORK/k1" @DEV@
same_header "erase -S 1 (refused)"
want=1 both "" luksDump --offset 8 @DEV@
want=1 both "" isLuks --skip 8 @DEV@
want=1 both "" isLuks --allow-discards @DEV@
want=1 both "" luksUUID --align-payload 8 @DEV@
want=1 both "" luksAddKey --persistent -d "$WORK/k1" $fast @DEV@ "$WORK/k2"
want=1 both "" luksAddKey --test-passphrase -d "$WORK/k1" $fast @DEV@ "$WORK/k2"
want=1 both "" luksKillSlot -q -S 0 @DEV@ 0
# The data's place and sector size come from the header: refused as
# cryptsetup refuses them, with its message, nothing mapped.
for o in "--offset 8" "--skip 8" "--sector-size 4096" "--iv-large-sectors"; do
	want=1 both "" open $o -d "$WORK/k1" @DEV@ @NAME@
	msg=$(sed -n 's/^cryptsetup: //p' "$WORK/out-c" | tail -1)
	[ -n "$msg" ] && grep -qxF "veilsetup: $msg" "$WORK/out-v" ||
		fail "open $o: cryptsetup says '$msg', veilsetup: $(cat "$WORK/out-v")"
done
same_header "options refused"

# Header backup and restore, erase.
want=0 both "" luksHeaderBackup @DEV@ --header-backup-file "$WORK/hdr-@NAME@"
want=0 both "" erase -q @DEV@
want=1 both "" open --test-passphrase -d "$WORK/k1" @DEV@
want=0 both "" luksHeaderRestore -q @DEV@ --header-backup-file "$WORK/hdr-@NAME@"
want=0 both "" open --test-passphrase -d "$WORK/k1" @DEV@

# Open, status, close; a name taken, a device busy, wrong passphrases.
want=2 both "wrong" open @DEV@ @NAME@
want=2 both "" open -d "$WORK/kw" @DEV@ @NAME@
want=0 both "first" open @DEV@ @NAME@
_devs+=(cs-$n vs-$n)
want=0 both "" status @NAME@
want=5 both "first" open @DEV@ @NAME@
n=$((n + 1))
want=5 both "first" open @DEV@ @NAME@
n=$((n - 1))
want=0 both "" resize --size 40000 @NAME@ -d "$WORK/k1"
[ "$(blockdev --getsz /dev/mapper/vs-$n)" = 40000 ] || fail "resize --size"
want=0 both "" resize @NAME@ -d "$WORK/k1"
[ "$(blockdev --getsz /dev/mapper/vs-$n)" = "$(blockdev --getsz /dev/mapper/cs-$n)" ] ||
	fail "resize to the device: $(blockdev --getsz /dev/mapper/vs-$n) sectors, cryptsetup $(blockdev --getsz /dev/mapper/cs-$n)"
want=0 both "" refresh --allow-discards -d "$WORK/k1" @NAME@
dmsetup table vs-$n | grep -q ' allow_discards' || fail "refresh --allow-discards: $(dmsetup table vs-$n)"
want=0 both "" luksSuspend @NAME@
[ "$(dmsetup info -c --noheadings -o suspended vs-$n)" = Suspended ] || fail "luksSuspend"
want=2 both "wrong" luksResume @NAME@
want=0 both "first" luksResume @NAME@
want=1 both "first" luksResume @NAME@
dd if=/dev/mapper/vs-$n of=/dev/null bs=64k count=1 iflag=direct status=none || fail "read after luksResume"
want=0 both "" close @NAME@
want=4 both "" close @NAME@
want=4 both "" status @NAME@
want=0 both "" luksOpen -d "$WORK/k1" @DEV@ @NAME@
want=0 both "" luksClose @NAME@
want=0 both "" open --type luks2 --readonly --perf-no_read_workqueue --perf-same_cpu_crypt -d "$WORK/k1" @DEV@ @NAME@
dmsetup table vs-$n | grep -qw no_read_workqueue || fail "--perf-no_read_workqueue: $(dmsetup table vs-$n)"
[ "$(blockdev --getro /dev/mapper/vs-$n)" = 1 ] || fail "--readonly"
want=0 both "" remove @NAME@

# A detached header.
truncate -s 16M "$WORK/hdr-cs-$n" "$WORK/hdr-vs-$n"
want=0 both "" luksFormat -q --header "$WORK/hdr-@NAME@" $fast @DEV@ "$WORK/k1"
want=0 both "" open --header "$WORK/hdr-@NAME@" -d "$WORK/k1" @DEV@ @NAME@
[ "$(dmsetup table vs-$n | cut -d' ' -f8)" = 0 ] || fail "--header: data offset $(dmsetup table vs-$n)"
want=0 both "" -v close @NAME@
cryptsetup open --header "$WORK/hdr-vs-$n" -d "$WORK/k1" "$V" cs-hdr && _devs+=(cs-hdr)
cryptsetup close cs-hdr
want=0 both "" --debug luksFormat $fast @DEV@ "$WORK/k1"

# Persistent flags: stored by one tool, honoured by the other.
want=0 both "" open --persistent --allow-discards -d "$WORK/k1" @DEV@ @NAME@
want=0 both "" close @NAME@
same_header "open --persistent --allow-discards"
cryptsetup open -d "$WORK/k1" "$V" cs-flags && _devs+=(cs-flags)
dmsetup table cs-flags | grep -q allow_discards || fail "cryptsetup ignores veilsetup's persistent flag"
cryptsetup close cs-flags
"$VS" open -d "$WORK/k1" "$C" vs-flags && _devs+=(vs-flags)
dmsetup table vs-flags | grep -q allow_discards || fail "veilsetup ignores cryptsetup's persistent flag"
"$VS" close vs-flags

# Image files go through a loop device that goes away with the mapping.
losetup -d "$C" "$V"
_loops=()
want=0 both "" open -d "$WORK/k1" @IMG@ @NAME@
for f in "$C_FILE" "$V_FILE"; do
	[ -n "$(losetup -j "$f")" ] || fail "no loop device for $f"
done
"$VS" status vs-$n | grep -q "loop:    $V_FILE" || fail "status does not name the image: $("$VS" status vs-$n)"
want=0 both "" close @NAME@
sleep 1
for f in "$C_FILE" "$V_FILE"; do
	[ -z "$(losetup -j "$f")" ] || fail "loop device left for $f: $(losetup -j "$f")"
done
C=$(losetup -f --show "$C_FILE")
V=$(losetup -f --show "$V_FILE")
_loops=("$C" "$V")

# A keyslot that cannot be made once the header is written (LUKS1 has no
# slot 9; a LUKS2 data offset of 64 KiB leaves no room for one): the
# header is wiped again, as cryptsetup wipes it, and isLuks says no.
want=1 both "" luksFormat -q --type luks1 --pbkdf-force-iterations 1000 -S 9 @DEV@ "$WORK/k1"
want=1 both "" isLuks @DEV@
want=1 both "" luksFormat -q $fast --offset 128 @DEV@ "$WORK/k1"
want=1 both "" isLuks @DEV@

# LUKS1.
want=0 both "" luksFormat --type luks1 --pbkdf-force-iterations 1000 -q @DEV@ "$WORK/k1"
same_header "luksFormat --type luks1"
want=0 both "" luksAddKey --pbkdf-force-iterations 1000 -d "$WORK/k1" @DEV@ "$WORK/k2"
want=0 both "" open -d "$WORK/k2" @DEV@ @NAME@
key_hidden vs-$n
want=0 both "" luksSuspend @NAME@
want=0 both "second" luksResume @NAME@
key_hidden vs-$n
want=0 both "" resize --size 40000 -d "$WORK/k2" @NAME@
key_hidden vs-$n
want=0 both "" close @NAME@
want=0 both "" --type luks open -d "$WORK/k2" @DEV@ @NAME@
want=0 both "" close @NAME@

# Plain: cryptsetup's defaults, old spellings.
want=0 both "pass" open --type plain @DEV@ @NAME@
# (The keys are the same: veilsetup/002 reads each tool's data through
# the other.)
[ "$(dmsetup table vs-$n | cut -d' ' -f4)" = "$(dmsetup table cs-$n | cut -d' ' -f4)" ] ||
	fail "plain defaults differ: $(dmsetup table cs-$n | cut -d' ' -f4) vs $(dmsetup table vs-$n | cut -d' ' -f4)"
dmsetup table vs-$n | grep -q ' :32:logon:' || fail "plain: not a 256-bit keyring key: $(dmsetup table vs-$n)"
key_hidden vs-$n
want=0 both "" close @NAME@
want=0 both "pass" create @NAME@ @DEV@
want=0 both "" remove @NAME@

# Resize edges. mapsz NAME: the mapping's size in sectors; grow/shrink:
# the backing files to a size in bytes, the loop devices told.
mapsz() { blockdev --getsz "/dev/mapper/$1"; }
setsize() {
	truncate -s "$1" "$C_FILE" "$V_FILE"
	losetup -c "$C"
	losetup -c "$V"
}
same_size() {
	[ "$(mapsz cs-$n)" = "$(mapsz vs-$n)" ] ||
		fail "$1: veilsetup maps $(mapsz vs-$n) sectors, cryptsetup $(mapsz cs-$n)"
}
# both_maybe ARGS: as both (with $want); if both mapped, the sizes too
both_maybe() {
	both "$@"
	if dmsetup info vs-$n > /dev/null 2>&1; then
		same_size "${*:2}"
		echo "ok: both map $(mapsz vs-$n) sectors"
		want=0 both "" close @NAME@
	fi
}
# LUKS2 with 4096-byte sectors: an unaligned --size is refused, the size
# kept; the device grown by 3 sectors (not a multiple of 8): resize to the
# end is refused too, as cryptsetup refuses it (veilsetup rounded down
# until 2026-11-24), and so are opens there.
want=0 both "" luksFormat -q $fast --sector-size 4096 @DEV@ "$WORK/k1"
want=0 both "" open -d "$WORK/k1" @DEV@ @NAME@
want=1 both "" resize --size 40001 -d "$WORK/k1" @NAME@
grep -q 'Device size is not aligned to requested sector size.' "$WORK/out-v" ||
	fail "resize --size 40001: $(cat "$WORK/out-v")"
same_size "resize --size 40001 (refused)"
setsize $((40 * 1024 * 1024 + 3 * 512))
[ "$(sectors "$V")" = 81923 ] || fail "the loop device did not grow: $(sectors "$V")"
want=1 both "" resize -d "$WORK/k1" @NAME@
grep -q 'Device size is not aligned to requested sector size.' "$WORK/out-v" ||
	fail "resize on 81923 sectors: $(cat "$WORK/out-v")"
same_size "resize on a device of 81923 sectors (refused)"
want=0 both "" close @NAME@
want=4 both_maybe "" open -d "$WORK/k1" @DEV@ @NAME@
want=1 both_maybe "pass" open --type plain --sector-size 4096 @DEV@ @NAME@
# The whole device counts, not --size: refused with a key file too, where
# libcryptsetup does not see the plain volume.
head -c 32 /dev/urandom > "$WORK/kplain"
want=1 both_maybe "" open --type plain -d "$WORK/kplain" --sector-size 4096 --size 8192 @DEV@ @NAME@
grep -q 'Device size is not aligned to requested sector size.' "$WORK/out-v" ||
	fail "plain, key file, --size 8192 on 81923 sectors: $(cat "$WORK/out-v")"
setsize $((40 * 1024 * 1024))
# Plain with the offset at and past the device's end: open refused; a
# mapping whose device shrank under its offset: resize refused.
want=1 both_maybe "pass" open --type plain -o 81920 @DEV@ @NAME@
want=1 both_maybe "pass" open --type plain -o 81928 @DEV@ @NAME@
want=0 both "pass" open --type plain -o 40960 --size 8192 @DEV@ @NAME@
setsize $((20 * 1024 * 1024))
want=1 both "" resize @NAME@
grep -q 'too small' "$WORK/out-v" || fail "resize, offset at the end: $(cat "$WORK/out-v")"
setsize $((16 * 1024 * 1024))
want=1 both "" resize @NAME@
[ "$(mapsz vs-$n)" = 8192 ] || fail "a refused resize changed the size: $(mapsz vs-$n)"
want=0 both "" close @NAME@
setsize $((40 * 1024 * 1024))

# Each tool's volume, the other's data.
for fmt in "--type luks2" "--type luks1" "--type luks2 -c serpent-xts-plain64 --sector-size 4096" \
	   "--type luks2 -c capi:xts(aes)-plain64"; do
	for from in cryptsetup "$VS"; do
		to=$VS
		[ "$from" = "$VS" ] && to=cryptsetup
		# pbkdf2: forced iterations of argon2 would use a GiB each
		$from luksFormat -q $fmt --pbkdf pbkdf2 --pbkdf-force-iterations 1000 "$V" "$WORK/k1" ||
			fail "$from luksFormat $fmt"
		$from open -d "$WORK/k1" "$V" x-from && _devs+=(x-from)
		plaintext "$WORK/a" $((1024 * 1024))
		write_direct "$WORK/a" /dev/mapper/x-from
		$from close x-from
		$to open -d "$WORK/k1" "$V" x-to && _devs+=(x-to)
		same_data "$WORK/a" /dev/mapper/x-to || fail "$fmt: $to reads other data than $from wrote"
		$to close x-to
		echo "ok: $fmt, $(basename "$from") -> $(basename "$to")"
	done
done

# said MSG: both tools' output of the last both has the line MSG (after
# "cryptsetup: " or "veilsetup: " where the tool names itself); @NAME@
# stands for each tool's mapping.
said() {
	local m_c=${1//@NAME@/cs-$n} m_v=${1//@NAME@/vs-$n}
	sed 's/^cryptsetup: //' "$WORK/out-c" | grep -qxF "$m_c" ||
		fail "cryptsetup did not say '$m_c': $(cat "$WORK/out-c")"
	sed 's/^veilsetup: //' "$WORK/out-v" | grep -qxF "$m_v" ||
		fail "veilsetup did not say '$m_v': $(cat "$WORK/out-v")"
}

# LUKS2 metadata and keyslots areas, keyslot ciphers: the same header,
# libcryptsetup's checks of the sizes, cryptsetup's of the options.
want=0 both "" luksFormat -q $fast --luks2-metadata-size 64k --luks2-keyslots-size 2M \
	--keyslot-cipher aes-cbc-essiv:sha256 --keyslot-key-size 256 @DEV@ "$WORK/k1"
same_header "luksFormat --luks2-metadata-size 64k --luks2-keyslots-size 2M --keyslot-cipher"
cryptsetup luksDump "$V" | grep -q '^Metadata area:[[:space:]]*65536 \[bytes\]' &&
	cryptsetup luksDump "$V" | grep -q '^Keyslots area:[[:space:]]*2097152 \[bytes\]' &&
	cryptsetup luksDump "$V" | grep -q 'Cipher:[[:space:]]*aes-cbc-essiv:sha256' ||
	fail "luksFormat --luks2-*-size, --keyslot-cipher: $(cryptsetup luksDump "$V")"
want=0 both "" luksAddKey $fast -d "$WORK/k1" --keyslot-cipher aes-cbc-plain64 \
	--keyslot-key-size 128 @DEV@ "$WORK/k2"
want=0 both "" luksChangeKey $fast -d "$WORK/k2" --keyslot-cipher aes-xts-plain64 \
	--keyslot-key-size 256 @DEV@ "$WORK/k3"
same_header "luksAddKey, luksChangeKey --keyslot-cipher --keyslot-key-size"
want=0 both "" open -d "$WORK/k3" @DEV@ @NAME@
want=0 both "" close @NAME@
want=1 both "" luksFormat -q $fast --luks2-metadata-size 3k @DEV@ "$WORK/k1"
said "Unsupported LUKS2 metadata size options."
want=1 both "" luksFormat -q $fast --luks2-keyslots-size 1000 @DEV@ "$WORK/k1"
said "Unsupported LUKS2 metadata size options."
want=1 both "" luksFormat -q $fast --luks2-metadata-size 12q @DEV@ "$WORK/k1"
said "Invalid size specification in parameter --luks2-metadata-size."
want=1 both "" luksFormat -q --type luks1 --pbkdf-force-iterations 1000 --luks2-keyslots-size 2M @DEV@ "$WORK/k1"
said "Unsupported LUKS2 metadata size options."
want=1 both "" luksFormat -q $fast --keyslot-cipher aes-cbc-essiv:sha256 @DEV@ "$WORK/k1"
said "Options --keyslot-cipher and --keyslot-key-size must be used together."
want=1 both "" luksFormat -q $fast --keyslot-cipher aes-cbc-essiv:sha256 --keyslot-key-size 7 @DEV@ "$WORK/k1"
said "Key size must be a multiple of 8 bits"
want=1 both "" luksAddKey -q $fast --keyslot-key-size 256 -d "$WORK/k1" @DEV@ "$WORK/k2"
want=1 both "" luksRemoveKey --keyslot-cipher aes-cbc-essiv:sha256 --keyslot-key-size 256 @DEV@ "$WORK/k1"
said "Option --keyslot-cipher is not allowed with luksRemoveKey action."
same_header "refused metadata and keyslot options"
# (cryptsetup writes the LUKS1 header before it refuses this: last here)
want=1 both "" luksFormat -q --type luks1 --pbkdf-force-iterations 1000 \
	--keyslot-cipher aes-cbc-essiv:sha256 --keyslot-key-size 256 @DEV@ "$WORK/k1"
said "Keyslot encryption parameters can be set only for LUKS2 device."

# luksAddKey's spellings of cryptsetup 2.6: --new-keyfile, --new-key-slot
# (-S then names the keyslot that opens), --new-token-id (the new
# passphrase from a token).
want=0 both "" luksFormat -q $fast @DEV@ "$WORK/k1"
want=0 both "" luksAddKey $fast -d "$WORK/k1" --new-keyfile "$WORK/k2" --new-key-slot 3 @DEV@
same_header "luksAddKey --new-keyfile --new-key-slot 3"
want=0 both "" open --test-passphrase -d "$WORK/k2" -S 3 @DEV@
want=2 both "" luksAddKey $fast -d "$WORK/k1" -S 3 --new-key-slot 5 @DEV@ "$WORK/k3"
want=0 both "" luksAddKey $fast -d "$WORK/k1" -S 0 --new-key-slot 5 @DEV@ "$WORK/k3"
same_header "luksAddKey -S 0 --new-key-slot 5"
want=0 both "" open --test-passphrase -d "$WORK/k3" -S 5 @DEV@
want=1 both "" luksChangeKey --new-keyfile "$WORK/k2" -d "$WORK/k1" @DEV@
said "Option --new-keyfile is not allowed with luksChangeKey action."
desc=veil-005-new-token
keyctl add user "$desc" second @u > /dev/null
at_exit "keyctl purge user $desc"
if ! keyctl request user "$desc" > /dev/null 2>&1; then
	keyctl link @u @s || skip "no session keyring to link the user keyring into"
	at_exit "keyctl unlink @u @s"
fi
want=0 both "" token add --key-description "$desc" @DEV@
want=0 both "" luksAddKey $fast -d "$WORK/k1" --new-token-id 0 --new-key-slot 7 @DEV@
want=0 both "" open --test-passphrase -d "$WORK/k2" -S 7 @DEV@
want=0 both "" luksAddKey $fast --token-id 0 --new-token-id 0 --new-key-slot 8 @DEV@
want=0 both "" open --test-passphrase -d "$WORK/k2" -S 8 @DEV@
want=1 both "" luksAddKey $fast -d "$WORK/k1" --new-token-id 4 @DEV@
same_header "luksAddKey --new-token-id"

# --device-size: bytes, with cryptsetup's units, for plain open and
# resize; checked as cryptsetup checks it.
want=0 both "pass" open --type plain --device-size 8M @DEV@ @NAME@
[ "$(mapsz vs-$n)" = 16384 ] || fail "open --device-size 8M: $(mapsz vs-$n) sectors"
same_size "open --type plain --device-size 8M"
want=0 both "pass" resize --device-size 4MiB @NAME@
[ "$(mapsz vs-$n)" = 8192 ] || fail "resize --device-size 4MiB: $(mapsz vs-$n) sectors"
same_size "resize --device-size 4MiB"
want=1 both "" resize --device-size 1000 @NAME@
said "Device size must be multiple of 512 bytes sector."
want=1 both "" resize --device-size 0 @NAME@
said "invalid numeric value"
want=1 both "" resize --device-size 4M --size 8192 @NAME@
said "Options --device-size and --size cannot be combined."
want=1 both "" resize --device-size 4x @NAME@
said "Invalid size specification in parameter --device-size."
want=0 both "" close @NAME@
want=1 both "" luksFormat -q $fast --device-size 8M @DEV@ "$WORK/k1"
said "Option --device-size is not allowed with luksFormat action."
want=0 both "" luksFormat -q $fast --sector-size 4096 @DEV@ "$WORK/k1"
want=0 both "" open -d "$WORK/k1" @DEV@ @NAME@
want=0 both "" resize --device-size 16M -d "$WORK/k1" @NAME@
[ "$(mapsz vs-$n)" = 32768 ] || fail "resize --device-size 16M: $(mapsz vs-$n) sectors"
same_size "LUKS2 resize --device-size 16M"
want=1 both "" resize --device-size $((16 * 1024 * 1024 + 512)) -d "$WORK/k1" @NAME@
said "Device size is not aligned to requested sector size."
same_size "resize --device-size 16M + 512 (refused)"
want=0 both "" close @NAME@

# close --deferred: an open mapping goes when its last user closes it;
# --cancel-deferred keeps it.
want=0 both "" luksFormat -q $fast @DEV@ "$WORK/k1"
want=0 both "" open -d "$WORK/k1" @DEV@ @NAME@
deferred() { dmsetup info "$1" 2>/dev/null | grep -q 'DEFERRED REMOVE'; }
exec 7< "/dev/mapper/cs-$n" 8< "/dev/mapper/vs-$n"
want=0 both "" close --deferred @NAME@
said "Device @NAME@ is still active and scheduled for deferred removal."
deferred vs-$n && deferred cs-$n || fail "close --deferred: $(dmsetup info vs-$n)"
want=0 both "" close --cancel-deferred @NAME@
! deferred vs-$n && ! deferred cs-$n || fail "close --cancel-deferred: $(dmsetup info vs-$n)"
want=1 both "" close --deferred --cancel-deferred @NAME@
said "Options --cancel-deferred and --deferred cannot be used at the same time."
want=1 both "" open --deferred -d "$WORK/k1" @DEV@ @NAME@
said "Option --deferred is not allowed with open action."
want=0 both "" close --deferred @NAME@
exec 7<&- 8<&-
# (device-mapper removes them from a work queue after the last close)
for i in $(seq 50); do
	dmsetup info cs-$n > /dev/null 2>&1 || dmsetup info vs-$n > /dev/null 2>&1 || break
	sleep 0.1
done
for d in cs-$n vs-$n; do
	! dmsetup info "$d" > /dev/null 2>&1 || fail "$d is still there after its last close: $(dmsetup info "$d")"
done
want=4 both "" close --deferred @NAME@
want=0 both "" open -d "$WORK/k1" @DEV@ @NAME@
want=0 both "" close --deferred @NAME@
[ ! -s "$WORK/out-v" ] || fail "close --deferred of an unused mapping printed: $(cat "$WORK/out-v")"
dmsetup info vs-$n > /dev/null 2>&1 && fail "close --deferred left an unused mapping"

# The raw volume key: luksFormat, open and luksAddKey take it from
# --volume-key-file; luksDump --dump-volume-key prints it, or writes it
# to --volume-key-file; --dump-json-metadata prints the LUKS2 JSON.
head -c 64 /dev/urandom > "$WORK/vk"
head -c 64 /dev/urandom > "$WORK/vk-bad"
want=0 both "" luksFormat -q $fast --volume-key-file "$WORK/vk" @DEV@ "$WORK/k1"
same_header "luksFormat --volume-key-file"
want=0 both "" luksDump --dump-volume-key -d "$WORK/k1" @DEV@
vkdump() { sed "s|$1|DEV|" "$2" | grep -v '^UUID:'; }
[ "$(vkdump "$C" "$WORK/out-c")" = "$(vkdump "$V" "$WORK/out-v")" ] || {
	diff <(vkdump "$C" "$WORK/out-c") <(vkdump "$V" "$WORK/out-v")
	fail "luksDump --dump-volume-key differs"
}
hex=$(od -An -v -tx1 "$WORK/vk" | tr -d ' \n')
[ "$(sed -n '/^MK dump:/,$p' "$WORK/out-v" | sed 's/^MK dump://' | tr -d ' \t\n')" = "$hex" ] ||
	fail "luksDump --dump-volume-key printed another key: $(cat "$WORK/out-v")"
want=0 both "" luksDump --dump-volume-key -d "$WORK/k1" --volume-key-file "$WORK/vk-@NAME@" @DEV@
for f in "$WORK/vk-cs-$n" "$WORK/vk-vs-$n"; do
	cmp -s "$WORK/vk" "$f" || fail "luksDump --volume-key-file: $f holds another key"
	[ "$(stat -c %a "$f")" = 400 ] || fail "luksDump --volume-key-file: $f has mode $(stat -c %a "$f")"
done
grep -qx "Key stored to file $WORK/vk-vs-$n." "$WORK/out-v" || fail "luksDump --volume-key-file: $(cat "$WORK/out-v")"
want=1 both "" luksDump --dump-volume-key -d "$WORK/k1" --volume-key-file "$WORK/vk-@NAME@" @DEV@
want=2 both "" luksDump --dump-volume-key -d "$WORK/kw" @DEV@
said "No key available with this passphrase."
want=0 both "" luksDump --dump-json-metadata @DEV@
# the same JSON but for the random values (salts, digests)
json() { grep -vE '"(salt|digest)":' "$1"; }
[ "$(json "$WORK/out-v")" = "$(json "$WORK/out-c")" ] && grep -q '"segments":' "$WORK/out-v" || {
	diff <(json "$WORK/out-c") <(json "$WORK/out-v")
	fail "luksDump --dump-json-metadata: $(cat "$WORK/out-v")"
}
want=0 both "" open --test-passphrase --volume-key-file "$WORK/vk" @DEV@
want=2 both "" open --test-passphrase --volume-key-file "$WORK/vk-bad" @DEV@
said "Volume key does not match the volume."
want=1 both "" open --test-passphrase --volume-key-file "$WORK/kw" @DEV@
said "Cannot read 64 bytes from keyfile $WORK/kw."
want=0 both "" open --volume-key-file "$WORK/vk" @DEV@ @NAME@
key_hidden vs-$n
plaintext "$WORK/a" $((1024 * 1024))
write_direct "$WORK/a" "/dev/mapper/vs-$n"
want=0 both "" close @NAME@
cryptsetup open -d "$WORK/k1" "$V" x-vk && _devs+=(x-vk)
same_data "$WORK/a" /dev/mapper/x-vk || fail "open --volume-key-file: cryptsetup reads other data"
cryptsetup close x-vk
want=0 both "" luksAddKey $fast --volume-key-file "$WORK/vk" @DEV@ "$WORK/k2"
same_header "luksAddKey --volume-key-file"
want=0 both "" open --test-passphrase -d "$WORK/k2" @DEV@
want=2 both "" luksAddKey $fast --volume-key-file "$WORK/vk-bad" @DEV@ "$WORK/k3"
said "Volume key does not match the volume."
same_header "luksAddKey --volume-key-file with another key (refused)"

# Refresh unlocks as cryptsetup's: --volume-key-file is the key (a keyring
# mapping then asks for nothing); with the key in the table
# (--disable-keyring) the key unlocked now must be the table's, and a
# wrong passphrase or volume key changes nothing. Resize of such a
# mapping asks for nothing, as cryptsetup's.
info "refresh: volume key file, keys in the table"
table_of() { dmsetup table --showkeys "$1"; }
same_tables() {
	[ "$(table_of cs-$n)" = "$tc" ] && [ "$(table_of vs-$n)" = "$tv" ] ||
		fail "$1 changed a table: $(table_of vs-$n | cut -d' ' -f1-3,6-)"
}
want=0 both "" open -d "$WORK/k1" @DEV@ @NAME@
_devs+=(cs-$n vs-$n)
want=0 both "" open --refresh --allow-discards --volume-key-file "$WORK/vk" @NAME@
dmsetup table vs-$n | grep -q ' allow_discards' ||
	fail "open --refresh --volume-key-file: $(dmsetup table vs-$n)"
key_hidden vs-$n
want=2 both "" refresh --perf-same_cpu_crypt --volume-key-file "$WORK/vk-bad" @NAME@
said "Volume key does not match the volume."
dmsetup table vs-$n | grep -q ' same_cpu_crypt' && fail "refresh with a wrong volume key reloaded"
want=0 both "" close @NAME@
want=0 both "" open --disable-keyring -d "$WORK/k1" @DEV@ @NAME@
tc=$(table_of cs-$n) tv=$(table_of vs-$n)
want=2 both "" refresh --allow-discards -d "$WORK/kw" @NAME@
said "No key available with this passphrase."
same_tables "refresh with a wrong passphrase"
want=2 both "" open --refresh --allow-discards --volume-key-file "$WORK/vk-bad" @NAME@
said "Volume key does not match the volume."
same_tables "open --refresh with a wrong volume key"
want=0 both "" resize --size 8192 @NAME@
[ "$(sectors /dev/mapper/vs-$n)" = 8192 ] || fail "resize of a table key: $(sectors /dev/mapper/vs-$n)"
want=0 both "" refresh --allow-discards -d "$WORK/k2" @NAME@
dmsetup table vs-$n | grep -q ' allow_discards' || fail "refresh of a table key: $(dmsetup table vs-$n)"
want=0 both "" open --refresh --perf-same_cpu_crypt --volume-key-file "$WORK/vk" @NAME@
dmsetup table vs-$n | grep -q ' same_cpu_crypt' || fail "open --refresh --volume-key-file of a table key: $(dmsetup table vs-$n)"
want=0 both "" close @NAME@
# A plain mapping has no header: another passphrase is another key, which
# cryptsetup refuses as other parameters.
want=0 both "pass" open --type plain --disable-keyring -h sha256 --size 8192 @DEV@ @NAME@
tc=$(table_of cs-$n) tv=$(table_of vs-$n)
want=1 both "wrong" open --refresh --type plain -h sha256 --allow-discards @NAME@
said "Mismatching parameters on device @NAME@."
same_tables "plain open --refresh with another passphrase"
want=0 both "pass" open --refresh --type plain -h sha256 --allow-discards @NAME@
dmsetup table vs-$n | grep -q ' allow_discards' || fail "plain open --refresh: $(dmsetup table vs-$n)"
want=0 both "" close @NAME@

# --shared: plain mappings of parts of a device that is mapped already,
# as cryptsetup maps them (no exclusive open); only plain takes it.
want=0 both "pass" open --type plain --size 8192 @DEV@ @NAME@
_devs+=(cs-$n vs-$n)
n=$((n + 1))
want=5 both "pass" open --type plain -o 8192 --size 8192 @DEV@ @NAME@
want=0 both "pass" open --type plain --shared -o 8192 --size 8192 @DEV@ @NAME@
_devs+=(cs-$n vs-$n)
[ "$(dmsetup table vs-$n | cut -d' ' -f2,8)" = "8192 8192" ] ||
	fail "open --shared -o 8192 --size 8192: $(dmsetup table vs-$n | cut -d' ' -f1-3,6-)"
want=0 both "" close @NAME@
n=$((n - 1))
want=0 both "" close @NAME@
want=1 both "" open --shared -d "$WORK/k1" @DEV@ @NAME@
said "Option --shared is allowed only for open of plain device."
want=1 both "" close --shared @NAME@
said "Option --shared is not allowed with close action."

# --use-random, --use-urandom (luksFormat's source of the volume key),
# --force-password (no password quality check to skip) and open
# --refresh (the refresh action) as cryptsetup's.
want=0 both "" luksFormat -q $fast --use-urandom --force-password @DEV@ "$WORK/k1"
want=0 both "" luksFormat -q $fast --use-random @DEV@ "$WORK/k1"
same_header "luksFormat --use-random"
want=1 both "" luksFormat -q $fast --use-random --use-urandom @DEV@ "$WORK/k1"
said "Only one of --use-[u]random options is allowed."
want=1 both "" open --use-random -d "$WORK/k1" @DEV@ @NAME@
said "Option --use-random is not allowed with open action."
want=0 both "" luksAddKey --force-password $fast -d "$WORK/k1" @DEV@ "$WORK/k2"
want=0 both "" open -d "$WORK/k1" @DEV@ @NAME@
_devs+=(cs-$n vs-$n)
want=0 both "" open --refresh --allow-discards -d "$WORK/k1" @NAME@
dmsetup table vs-$n | grep -q ' allow_discards' || fail "open --refresh --allow-discards: $(dmsetup table vs-$n)"
want=0 both "" open --refresh --perf-same_cpu_crypt -d "$WORK/k2" @DEV@ @NAME@
dmsetup table vs-$n | grep -q ' same_cpu_crypt' || fail "open --refresh --perf-same_cpu_crypt: $(dmsetup table vs-$n)"
want=1 both "" open --refresh --test-passphrase -d "$WORK/k1" @DEV@ @NAME@
said "Options --refresh and --test-passphrase are mutually exclusive."
want=1 both "" open --persistent --test-passphrase -d "$WORK/k1" @DEV@
said "Option --persistent is not allowed with --test-passphrase."
want=0 both "" close @NAME@
echo "ok: metadata sizes, keyslot ciphers, --device-size, --new-*, --deferred, volume keys, --shared, --use-random, --refresh"
