#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TCRYPT (TrueCrypt, VeraCrypt), BITLK (BitLocker), FVAULT2 (FileVault2)
# and loop-AES, on cryptsetup's own test images: veilsetup checks their
# passphrases (open --test-passphrase) and dumps their headers and volume
# keys as cryptsetup does, with the same output and exit codes (TCRYPT:
# CBC, LRW and XTS, cascades, a hidden volume, key files, a VeraCrypt PIM
# asked for); a BitLocker key from --volume-key-file opens the volume. It maps
# them with veil (TrueCrypt CBC, LRW, XTS, cascades, a hidden volume, key
# files; VeraCrypt with a PIM, an XTS cascade; BitLocker; FileVault2;
# loop-AES): each image opened by cryptsetup (dm-crypt) and by
# veilsetup reads the same, every crypt target of the stack is a veil one
# with its key in no table, status says what cryptsetup's does, close
# removes every device, a wrong passphrase maps nothing; data written
# through veil reads back through dm-crypt (loop-AES). A mapping named as a
# layer (<name>_1, <name>_2) that was there before stays as it was through
# open and close of a cascade and of a BitLocker volume; an activation that
# fails (a layer's name taken, a veil table the kernel refuses) leaves
# nothing mapped and exits as cryptsetup does; close removes a device
# libcryptsetup left with dm-crypt; SIGTERM during BitLocker's key
# derivation maps nothing. Resize and refresh, run through both tools on
# copies of a volume: a loop-AES volume resizes as with cryptsetup (size,
# data), veilsetup reading the key file again and refusing other keys;
# its refresh, which cryptsetup 2.6.1 cannot do, reloads the flags;
# TCRYPT, BitLocker and FileVault2 are refused with cryptsetup's messages
# and exit codes. A busy close (a TCRYPT cascade held open, its lowest
# layer held open, a mounted loop-AES volume) ends as cryptsetup's and
# leaves the devices in use as they were.
# limit: 1800
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup
requires module loop dm_crypt dm_zero ext4
veil_load
# libcryptsetup's kernel cipher interface and the ciphers these images
# use, loaded once: module autoloading costs seconds per TCRYPT attempt in
# the guest.
modprobe algif_skcipher
crypto_preload aes serpent twofish des3_ede cast5 blowfish cbc lrw xts ecb
IMAGES=$TOP/../shared/reference/cryptsetup-test-images
[ -d "$IMAGES" ] || skip "no cryptsetup test images in $IMAGES"
for a in tcrypt bitlk fvault2; do tar -C "$WORK" -xJf "$IMAGES/$a-images.tar.xz"; done
TC=$WORK/tcrypt-images BL=$WORK/bitlk-images FV=$WORK/fvault2-images/small
PW=aaaaaaaaaaaa
state() { dmsetup ls; losetup -a; }
before=$(state)

# same WANT INPUT ARGS...: both tools, INPUT on stdin, exit with WANT and
# print the same (stdout and stderr, the tool's name aside; after a usage
# error cryptsetup adds its usage text, veilsetup does not)
same() {
	local want=$1 input=$2 rc_c=0 rc_v=0
	shift 2
	printf '%s\n' "$input" | cryptsetup "$@" > "$WORK/c" 2>&1 || rc_c=$?
	printf '%s\n' "$input" | "$VS" "$@" > "$WORK/v" 2>&1 || rc_v=$?
	sed -i 's/^cryptsetup: //' "$WORK/c"
	sed -i 's/^veilsetup: //' "$WORK/v"
	[ "$rc_c" = "$want" ] || fail "cryptsetup $*: exit $rc_c, not $want: $(cat "$WORK/c")"
	[ "$rc_v" = "$want" ] || fail "veilsetup $*: exit $rc_v, not $want: $(cat "$WORK/v")"
	if grep -q "^Usage: " "$WORK/c"; then
		[ -s "$WORK/v" ] && grep -qxFf "$WORK/v" "$WORK/c" ||
			fail "veilsetup $*: says '$(cat "$WORK/v")', not cryptsetup's"
	else
		diff -u "$WORK/c" "$WORK/v" || fail "veilsetup $*: other output than cryptsetup's"
	fi
	[ "$(state)" = "$before" ] || fail "$*: a device or loop is left behind"
	echo "ok: exit $want (${SECONDS}s): $*"
}

# TrueCrypt's modes, with TrueCrypt's iteration counts only
# (--disable-veracrypt) and the image's hash and cipher chain (each
# attempt costs seconds in the guest): legacy CBC with a 64-bit cipher,
# an LRW and an XTS three-cipher cascade (the image's name lists the
# chain backwards), a wrong passphrase (exit 2).
same 0 "$PW" tcryptOpen --test-passphrase --disable-veracrypt -h sha1 -c des3_ede \
	"$TC/tc_1-sha1-cbc-des3_ede"
same 0 "$PW" tcryptDump --disable-veracrypt -h ripemd160 "$TC/tc_2-ripemd160-lrw-aes-twofish-serpent"
grep -q "lrw-benbi" "$WORK/v" || fail "tcryptDump: not LRW: $(cat "$WORK/v")"
same 0 "$PW" tcryptOpen --test-passphrase --disable-veracrypt -h sha512 -c aes-twofish-serpent \
	"$TC/tc_5-sha512-xts-serpent-twofish-aes"
same 2 wrong tcryptOpen --test-passphrase --disable-veracrypt -h sha512 -c aes "$TC/tc_5-sha512-xts-aes"
grep -q "No device header detected with this passphrase." "$WORK/v" ||
	fail "a wrong TCRYPT passphrase without cryptsetup's message"
# The hidden volume: its own passphrase, not the outer one.
same 0 bbbbbbbbbbbb tcryptOpen --test-passphrase --tcrypt-hidden --disable-veracrypt -h sha512 \
	-c aes "$TC/tc_5-sha512-xts-aes-hidden"
# Key files, both needed; a second -d for another type is refused.
same 0 "$PW" tcryptOpen --test-passphrase --disable-veracrypt -h sha512 -c aes \
	-d "$TC/keyfile1" -d "$TC/keyfile2" "$TC/tck_5-sha512-xts-aes"
same 1 "$PW" open --type luks -d "$TC/keyfile1" -d "$TC/keyfile2" "$TC/tck_5-sha512-xts-aes" vt
same 1 "$PW" tcryptOpen --veracrypt-pim 1 --disable-veracrypt "$TC/vc_1-sha256-xts-aes"
# VeraCrypt's PIM, asked for: a bad one is refused before any KDF runs
# (the test image's PIM costs 1249000 iterations, minutes in the guest).
same 1 "$PW"$'\n'0 tcryptOpen --test-passphrase --veracrypt-query-pim "$TC/vcpim_1-sha256-xts-aes"
grep -q "Invalid PIM value: 0." "$WORK/v" || fail "--veracrypt-query-pim: no message for PIM 0"
same 1 "$PW"$'\n'12x tcryptOpen --test-passphrase --veracrypt-query-pim "$TC/vcpim_1-sha256-xts-aes"

# BitLocker: a wrong passphrase (a key derivation of about 30 s in the
# guest) maps nothing; the right one is tried by the mapping below.
rc=0
echo wrong | "$VS" bitlkOpen "$BL/bitlk-aes-cbc-128.img" vt > "$WORK/v" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -qx "No key available with this passphrase." "$WORK/v" ||
	fail "veilsetup bitlkOpen with a wrong passphrase: exit $rc: $(cat "$WORK/v")"
[ "$(state)" = "$before" ] || fail "bitlkOpen with a wrong passphrase left a device or loop"
echo "ok: a wrong BitLocker passphrase maps nothing (${SECONDS}s)"
same 0 "" bitlkDump "$BL/bitlk-aes-cbc-elephant-128.img"
same 0 heslo123 fvault2Open --test-passphrase "$FV"
same 0 "" fvault2Dump "$FV"
# The volume keys: --dump-volume-key prints them as cryptsetup does (a
# TCRYPT key with the header the passphrase opened), a wrong passphrase
# is exit 2; BitLocker's key goes to --volume-key-file and opens the
# volume in place of the passphrase.
same 0 "$PW" tcryptDump --dump-volume-key --disable-veracrypt -h ripemd160 \
	"$TC/tc_2-ripemd160-lrw-aes-twofish-serpent"
grep -q '^MK dump:' "$WORK/v" || fail "tcryptDump --dump-volume-key: $(cat "$WORK/v")"
same 0 heslo123 fvault2Dump --dump-volume-key "$FV"
grep -q '^Volume key: ' "$WORK/v" || fail "fvault2Dump --dump-volume-key: $(cat "$WORK/v")"
same 2 wrong fvault2Dump --dump-volume-key "$FV"
same 0 anaconda bitlkDump --dump-volume-key "$BL/bitlk-aes-cbc-elephant-128.img"
echo anaconda | cryptsetup bitlkDump --dump-volume-key --volume-key-file "$WORK/bvk-c" \
	"$BL/bitlk-aes-cbc-elephant-128.img" > /dev/null
echo anaconda | "$VS" bitlkDump --dump-volume-key --volume-key-file "$WORK/bvk-v" \
	"$BL/bitlk-aes-cbc-elephant-128.img" > "$WORK/v"
cmp -s "$WORK/bvk-c" "$WORK/bvk-v" && grep -qx "Key stored to file $WORK/bvk-v." "$WORK/v" ||
	fail "bitlkDump --volume-key-file: another key than cryptsetup's: $(cat "$WORK/v")"
# libcryptsetup 2.6.1 crashes checking a BITLK volume key with nothing
# mapped (cryptsetup exits 139): veilsetup refuses it instead.
rc=0
"$VS" bitlkOpen --test-passphrase --volume-key-file "$WORK/bvk-v" "$BL/bitlk-aes-cbc-elephant-128.img" > "$WORK/v" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q 'not supported for BITLK' "$WORK/v" ||
	fail "bitlkOpen --test-passphrase --volume-key-file: exit $rc: $(cat "$WORK/v")"
# The *Close forms are close: nothing of that name is mapped.
for a in tcryptClose loopaesClose; do
	rc=0
	"$VS" "$a" vt > "$WORK/v" 2>&1 || rc=$?
	[ "$rc" = 4 ] && grep -qx "Device vt is not active." "$WORK/v" ||
		fail "veilsetup $a vt: exit $rc: $(cat "$WORK/v")"
done

# mapped NAME INPUT ARGS...: the device cryptsetup ARGS NAME mapped, as
# veilsetup maps it: the same bytes (sha256 of the whole device), veil
# targets only, on every layer, with keyring keys; status as cryptsetup's
# (type, cipher, key size, offset, size, mode, loop); close (the *Close
# alias of the type) removes every device and loop. INPUT on stdin.
mapped() {
	local name=$1 input=$2 c_sum v_sum dev f
	shift 2
	printf '%s\n' "$input" | cryptsetup "$@" fc
	_devs+=(fc_2 fc_1 fc)
	c_sum=$(sha256sum < /dev/mapper/fc)
	cryptsetup status fc > "$WORK/c-status"
	cryptsetup close fc
	printf '%s\n' "$input" | "$VS" "$@" fv
	_devs+=(fv_2 fv_1 fv)
	v_sum=$(sha256sum < /dev/mapper/fv)
	[ "$c_sum" = "$v_sum" ] || fail "$name: veil reads other data than dm-crypt"
	for dev in fv fv_1 fv_2; do
		dmsetup info "$dev" > /dev/null 2>&1 || continue
		dmsetup table --showkeys "$dev" > "$WORK/table"
		cat "$WORK/table"
		! grep -q " crypt " "$WORK/table" || fail "$name: $dev still has a crypt target"
		grep -q " veil " "$WORK/table" || fail "$name: $dev has no veil target"
		awk '$3 == "veil" { print $5 }' "$WORK/table" | grep -qv '^:[0-9]*:logon:veil:' &&
			fail "$name: $dev: a key in the table: $(cat "$WORK/table")"
		[ "$(grep -c .  "$WORK/table")" = 1 ] && key_hidden "$dev"
		dmsetup info -c --noheadings -o uuid "$dev" | grep -q "^CRYPT-$(echo "${1%Open}" | tr a-z A-Z)-" ||
			fail "$name: $dev has dm uuid $(dmsetup info -c --noheadings -o uuid "$dev")"
	done
	"$VS" status fv > "$WORK/v-status"
	for f in type cipher keysize offset size mode loop; do
		diff <(grep "^  $f: " "$WORK/c-status") <(grep "^  $f: " "$WORK/v-status") ||
			fail "$name: status '$f' is not cryptsetup's: $(cat "$WORK/c-status" "$WORK/v-status")"
	done
	# cryptsetup knows the type by the dm uuid, not the veil target.
	cryptsetup status fv > "$WORK/cv-status" 2>&1 || true
	head -2 "$WORK/cv-status" | sed 's/^/# cryptsetup status: /'
	"$VS" "${1%Open}Close" fv
	[ "$(state)" = "$before" ] || fail "$name: close left a device or loop: $(state)"
	echo "ok: $name maps with veil, reads as with dm-crypt (${SECONDS}s)"
}

# TrueCrypt legacy CBC (tcw IVs) and LRW, an XTS cascade of three ciphers
# (three devices), a hidden volume, a volume with key files.
mapped "TrueCrypt CBC des3_ede" "$PW" tcryptOpen --disable-veracrypt -h sha1 -c des3_ede \
	"$TC/tc_1-sha1-cbc-des3_ede"
mapped "TrueCrypt LRW aes" "$PW" tcryptOpen --disable-veracrypt -h ripemd160 -c aes \
	"$TC/tc_2-ripemd160-lrw-aes"
mapped "TrueCrypt XTS cascade" "$PW" tcryptOpen --disable-veracrypt -h sha512 \
	-c aes-twofish-serpent "$TC/tc_5-sha512-xts-serpent-twofish-aes"
grep -q "cipher:  aes-twofish-serpent-xts-plain64" "$WORK/v-status" ||
	fail "the cascade's status: $(cat "$WORK/v-status")"
mapped "TrueCrypt hidden volume" bbbbbbbbbbbb tcryptOpen --tcrypt-hidden --disable-veracrypt \
	-h sha512 -c aes "$TC/tc_5-sha512-xts-aes-hidden"
mapped "TrueCrypt key files" "$PW" tcryptOpen --disable-veracrypt -h sha512 -c aes \
	-d "$TC/keyfile1" -d "$TC/keyfile2" "$TC/tck_5-sha512-xts-aes"
# VeraCrypt (its iteration counts, tried after TrueCrypt's): a PIM
# (cryptsetup's tcrypt-compat-test gives vcpim_* PIM 1234, 1249000
# iterations), and XTS in the cascade serpent-twofish-aes (three devices).
mapped "VeraCrypt with a PIM" "$PW" tcryptOpen --veracrypt-pim 1234 -h sha256 -c aes \
	"$TC/vcpim_1-sha256-xts-aes"
mapped "VeraCrypt XTS cascade" "$PW" tcryptOpen -h sha512 -c aes-twofish-serpent \
	"$TC/vc_1-sha512-xts-serpent-twofish-aes"
grep -q "cipher:  aes-twofish-serpent-xts-plain64" "$WORK/v-status" ||
	fail "the VeraCrypt cascade's status: $(cat "$WORK/v-status")"
rc=0
echo wrong | "$VS" tcryptOpen --disable-veracrypt -h sha512 -c aes "$TC/tc_5-sha512-xts-aes" vt \
	> "$WORK/v" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "tcryptOpen with a wrong passphrase: exit $rc: $(cat "$WORK/v")"
[ "$(state)" = "$before" ] || fail "tcryptOpen with a wrong passphrase left a device or loop"

# BitLocker with the Elephant diffuser: zero segments between veil ones.
mapped "BitLocker AES-CBC Elephant" anaconda bitlkOpen "$BL/bitlk-aes-cbc-elephant-128.img"
mapped "BitLocker AES-CBC Elephant, --volume-key-file" "" bitlkOpen --volume-key-file "$WORK/bvk-v" \
	"$BL/bitlk-aes-cbc-elephant-128.img"
# BitLocker AES-XTS with 4096-byte sectors (sector_size:4096 in the table).
mapped "BitLocker AES-XTS, 4096-byte sectors" anaconda bitlkOpen "$BL/bitlk-aes-xts-128-4k.img"
mapped "FileVault2" heslo123 fvault2Open "$FV"

# Mappings named as layers that were there before: dm-crypt devices over
# a zero device, with the dm uuid libcryptsetup gives a layer of that name
# (or one that begins with the volume's). Each difference is listed, then
# the test fails.
bad=()
miss() { bad+=("$*"); echo "MISS: $*"; }
dm_create vz "0 2048 zero"
# decoy NAME UUID: a dm-crypt device, its table (key included) kept
decoy() {
	_devs+=("$1")
	dmsetup create "$1" --uuid "$2" \
		--table "0 2048 crypt aes-xts-plain64 $(randhex 64) 0 /dev/mapper/vz 0"
	dmsetup table --showkeys "$1" > "$WORK/decoy-$1"
}
# decoy_same NAME WHEN: NAME is still there, with the same table and uuid
decoy_same() {
	dmsetup table --showkeys "$1" 2>&1 | cmp -s - "$WORK/decoy-$1" ||
		miss "$2: $1 changed: $(dmsetup table "$1" 2>&1)"
}
gone() { ! dmsetup info "$1" > /dev/null 2>&1 || miss "$2: $1 is left: $(dmsetup table "$1")"; }

# A three-cipher cascade whose middle layer's name is taken, with the very
# dm uuid libcryptsetup would give it: libcryptsetup 2.6 makes <name>_2,
# fails on <name>_1 (exit 5) and leaves <name>_2 with dm-crypt, which
# veilsetup close removes; veilsetup exits as cryptsetup and leaves
# nothing of its own.
CASCADE=(tcryptOpen --disable-veracrypt -h sha512 -c aes-twofish-serpent
	"$TC/tc_5-sha512-xts-serpent-twofish-aes")
decoy fc_1 CRYPT-TCRYPT-fc_1
decoy fv_1 CRYPT-TCRYPT-fv_1
before=$(state)
rc_c=0
echo "$PW" | cryptsetup "${CASCADE[@]}" fc > "$WORK/c" 2>&1 || rc_c=$?
_devs+=(fc_2 fv_2)
[ "$rc_c" = 5 ] || miss "cryptsetup over a taken fc_1: exit $rc_c: $(cat "$WORK/c")"
if dmsetup table fc_2 2>/dev/null | grep -q " crypt "; then
	rc=0
	"$VS" close fc_2 > "$WORK/v" 2>&1 || rc=$?
	[ "$rc" = 0 ] || miss "veilsetup close of libcryptsetup's leftover fc_2: exit $rc: $(cat "$WORK/v")"
	gone fc_2 "veilsetup close fc_2"
	dmsetup remove fc_2 2>/dev/null || true
else
	info "libcryptsetup left no fc_2 after a failed cascade"
fi
rc=0
echo "$PW" | "$VS" "${CASCADE[@]}" fv > "$WORK/v" 2>&1 || rc=$?
[ "$rc" = "$rc_c" ] || miss "veilsetup over a taken fv_1: exit $rc, cryptsetup's $rc_c: $(cat "$WORK/v")"
gone fv_2 "a failed cascade"
gone fv "a failed cascade"
decoy_same fv_1 "a failed cascade"
dmsetup remove fv_2 2>/dev/null || true
[ "$(state)" = "$before" ] || miss "a failed cascade: $(state)"
dmsetup remove fc_1 fv_1
echo "ok: a cascade over a taken layer name (${SECONDS}s)"

# A two-cipher cascade (<name> over <name>_1) beside another <name>_2.
decoy fv_2 CRYPT-TCRYPT-fv_2
before=$(state)
echo "$PW" | "$VS" tcryptOpen --disable-veracrypt -h sha512 -c aes-serpent \
	"$TC/tc_5-sha512-xts-serpent-aes" fv
_devs+=(fv_1 fv)
decoy_same fv_2 "tcryptOpen of a two-cipher cascade"
dmsetup table fv_1 | grep -q " veil " || miss "the two-cipher cascade's fv_1 is not veil"
"$VS" close fv
decoy_same fv_2 "close of a two-cipher cascade"
gone fv_1 "close of a two-cipher cascade"
[ "$(state)" = "$before" ] || miss "a two-cipher cascade: $(state)"
dmsetup remove fv_2 2>/dev/null || true
echo "ok: a two-cipher cascade beside fv_2 (${SECONDS}s)"

# BitLocker (dm uuid CRYPT-BITLK-<name>) beside <name>_1, whose uuid
# begins with the volume's.
decoy fv_1 CRYPT-BITLK-fv_1
before=$(state)
echo anaconda | "$VS" bitlkOpen "$BL/bitlk-aes-cbc-elephant-128.img" fv
_devs+=(fv)
uuid=$(dmsetup info -c --noheadings -o uuid fv)
[[ CRYPT-BITLK-fv_1 == "$uuid"* ]] || miss "BitLocker's dm uuid is $uuid"
decoy_same fv_1 "bitlkOpen"
"$VS" close fv
decoy_same fv_1 "close of a BitLocker volume"
[ "$(state)" = "$before" ] || miss "BitLocker beside fv_1: $(state)"
dmsetup remove fv_1 2>/dev/null || true
echo "ok: BitLocker beside fv_1 (${SECONDS}s)"

# SIGTERM during BitLocker's key derivation (about 10 s in the guest) ends
# veilsetup there, with nothing mapped: the key is derived before
# termination is held for the activation. (SIGTERM: a script's
# background job ignores SIGINT.)
before=$(state)
echo anaconda | "$VS" bitlkOpen "$BL/bitlk-aes-cbc-elephant-128.img" fv > "$WORK/v" 2>&1 &
pid=$!
sleep 2
kill -TERM "$pid" 2>/dev/null || true
rc=0
wait "$pid" || rc=$?
[ "$rc" = 143 ] || miss "SIGTERM during bitlkOpen's key derivation: exit $rc: $(cat "$WORK/v")"
[ "$(state)" = "$before" ] || miss "SIGTERM during bitlkOpen's key derivation left $(state)"
dmsetup remove fv 2>/dev/null || true
echo "ok: SIGTERM during BitLocker's key derivation (${SECONDS}s)"

# A cascade veil's module refuses (a fanout chunk that is no power of
# two): exit 1, as libcryptsetup's refused table, and nothing mapped: no
# device, no dm-crypt table with its key.
before=$(state)
rc=0
echo "$PW" | "$VS" "${CASCADE[@]}" --fanout-chunk 1000 fv > "$WORK/v" 2>&1 || rc=$?
cat "$WORK/v"
[ "$rc" = 1 ] || miss "a cascade veil refuses: exit $rc: $(cat "$WORK/v")"
grep -q "^Cannot map fv with veil" "$WORK/v" || miss "a cascade veil refuses: no message"
[ "$(state)" = "$before" ] || miss "a cascade veil refuses: left $(state)"
! dmsetup table --showkeys | grep " crypt " ||
	miss "a cascade veil refuses: a dm-crypt table is left, its key in it"
for d in fv fv_1 fv_2; do dmsetup remove "$d" 2>/dev/null || true; done
dmsetup remove vz
[ ${#bad[@]} = 0 ] || fail "${bad[@]}"
echo "ok: failed opens leave nothing, layer names of others stay (${SECONDS}s)"

# loop-AES key files as cryptsetup's tests/loopaes-test makes them: one
# key, 64 keys (multi-key lmk), 64 keys and an IV seed.
mkloop 8M
head -c 8M /dev/urandom > "$LOOP"
before=$(state)
# (not head in the pipe: base64 would die of SIGPIPE under pipefail)
head -c 3705 /dev/urandom | base64 -w 60 > "$WORK/keys-all"
head -n 65 "$WORK/keys-all" > "$WORK/keys65"
head -n 1 "$WORK/keys65" > "$WORK/keys1"
head -n 64 "$WORK/keys65" > "$WORK/keys64"
for k in 1 64 65; do
	mapped "loop-AES, $k keys" "" loopaesOpen -d "$WORK/keys$k" "$LOOP"
done
# A write through veil reads back through dm-crypt.
plaintext "$WORK/a" $((1024 * 1024))
"$VS" loopaesOpen -d "$WORK/keys65" "$LOOP" fv
write_direct "$WORK/a" /dev/mapper/fv $((2 * 1024 * 1024))
"$VS" loopaesClose fv
cryptsetup loopaesOpen -d "$WORK/keys65" "$LOOP" fc
same_data "$WORK/a" /dev/mapper/fc $((2 * 1024 * 1024)) ||
	fail "loop-AES: dm-crypt reads other data than veil wrote"
cryptsetup close fc
no_plaintext "$LOOP"
# A name that is taken: libcryptsetup's message and exit code, nothing new.
dm_create vt "0 8 zero"
before=$(state)
rc=0
"$VS" loopaesOpen -d "$WORK/keys1" "$LOOP" vt > "$WORK/v" 2>&1 || rc=$?
[ "$rc" = 5 ] || fail "loopaesOpen over a taken name: exit $rc: $(cat "$WORK/v")"
dmsetup table vt | grep -q " zero" || fail "loopaesOpen replaced another device"
[ "$(state)" = "$before" ] || fail "loopaesOpen over a taken name left a device"
echo "ok: loop-AES write and a taken name (${SECONDS}s)"

# Resize and refresh, each command line through both tools on two copies
# of a volume, cryptsetup's mapping fc (dm-crypt), veilsetup's fv (veil).
# both WANT INPUT ARGS...: cryptsetup ARGS and veilsetup ARGS, the word
# NAME in ARGS the mapping's name, INPUT on stdin: both exit WANT and
# print the same, the names aside (and libdevmapper's line for each busy
# try of cryptsetup's close, which veilsetup's close does not print:
# veilsetup/008).
both() {
	local want=$1 input=$2 rc_c=0 rc_v=0
	shift 2
	printf '%s\n' "$input" | cryptsetup "${@/#NAME/fc}" > "$WORK/c" 2>&1 || rc_c=$?
	printf '%s\n' "$input" | "$VS" "${@/#NAME/fv}" > "$WORK/v" 2>&1 || rc_v=$?
	sed -i 's/^cryptsetup: //; s/\bfc\b/NAME/g' "$WORK/c"
	sed -i '/^device-mapper: remove ioctl on NAME  *failed: Device or resource busy$/d' "$WORK/c"
	sed -i 's/^veilsetup: //; s/\bfv\b/NAME/g' "$WORK/v"
	[ "$rc_c" = "$want" ] || fail "cryptsetup $*: exit $rc_c, not $want: $(cat "$WORK/c")"
	[ "$rc_v" = "$want" ] || fail "veilsetup $*: exit $rc_v, not $want: $(cat "$WORK/v")"
	diff -u "$WORK/c" "$WORK/v" || fail "veilsetup $*: other output than cryptsetup's"
	echo "ok: both exit $want (${SECONDS}s): $*"
}
# same_size [SECTORS]: fc and fv are as large (and SECTORS if given) and
# read the same (their first 4 MiB at most)
same_size() {
	local c v
	c=$(sectors /dev/mapper/fc) v=$(sectors /dev/mapper/fv)
	[ "$c" = "$v" ] || fail "after resize: cryptsetup's mapping has $c sectors, veilsetup's $v"
	[ -z "${1:-}" ] || [ "$v" = "$1" ] || fail "after resize: $v sectors, not $1"
	cmp -s <(head -c 4M /dev/mapper/fc) <(head -c 4M /dev/mapper/fv) ||
		fail "after resize: veil reads other data than dm-crypt"
}
# veil_only: fv's table is veil, its key in no table
veil_only() {
	dmsetup table --showkeys fv | grep -q " veil " || fail "fv is not veil: $(dmsetup table fv)"
	key_hidden fv
}

# loop-AES with 64 keys: cryptsetup resizes it with the keys in its
# table; veilsetup takes the key file again (the keys checked against the
# data, one sector per key) and maps them through the keyring.
head -c 8M /dev/urandom > "$WORK/la-c"
cp "$WORK/la-c" "$WORK/la-v"
# 64 other keys; the same first key and 63 others
sed -n 2,65p "$WORK/keys-all" > "$WORK/keys-other"
{ head -n 1 "$WORK/keys-all"; sed -n 3,65p "$WORK/keys-all"; } > "$WORK/keys-first"
before=$(state)
cryptsetup loopaesOpen -d "$WORK/keys64" "$WORK/la-c" fc
"$VS" loopaesOpen -d "$WORK/keys64" "$WORK/la-v" fv
_devs+=(fc fv)
both 0 "" resize -d "$WORK/keys64" --size 8000 NAME
same_size 8000
veil_only
both 0 "" resize -d "$WORK/keys64" --device-size 2MiB NAME
same_size 4096
truncate -s 9M "$WORK/la-c" "$WORK/la-v"
both 0 "" resize -d "$WORK/keys64" NAME
same_size $((9 * 2048))
veil_only
# Shorter than its keys (16 sectors, 64 keys): the keys are checked on the
# sectors there are, and it resizes and refreshes again.
both 0 "" resize -d "$WORK/keys64" --size 16 NAME
same_size 16
"$VS" refresh -d "$WORK/keys64" fv
rc=0
"$VS" resize -d "$WORK/keys-first" fv > "$WORK/v" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -qx "Mismatching parameters on device fv." "$WORK/v" ||
	fail "veilsetup resize of 16 sectors -d keys-first: exit $rc: $(cat "$WORK/v")"
same_size 16
both 0 "" resize -d "$WORK/keys64" NAME
same_size $((9 * 2048))
# Refresh: both want the key file, and refuse one that is no loop-AES
# key file. With one, cryptsetup 2.6.1 fails: libcryptsetup opens the
# device below exclusively, as for a new mapping, and the mapping holds
# it. veilsetup reloads the mapping with the keys checked, and refuses
# other keys (fewer, or other ones behind the first) with the message of
# libcryptsetup's reload.
both 1 "" refresh NAME
grep -qx "Option --key-file is required." "$WORK/v" || fail "refresh without -d: $(cat "$WORK/v")"
both 1 "" refresh -d "$WORK/keys-all" NAME
grep -qx "Incompatible loop-AES keyfile detected." "$WORK/v" || fail "refresh -d keys-all: $(cat "$WORK/v")"
for k in keys64 keys-other keys1; do
	rc=0
	cryptsetup refresh -d "$WORK/$k" --allow-discards fc > "$WORK/c" 2>&1 || rc=$?
	[ "$rc" = 5 ] && grep -qx "Cannot use device /dev/loop[0-9]* which is in use (already mapped or mounted)." "$WORK/c" ||
		fail "cryptsetup 2.6.1 refreshed loop-AES with $k: exit $rc: $(cat "$WORK/c"): update this test"
done
"$VS" refresh -d "$WORK/keys64" --allow-discards fv
dmsetup table fv | grep -q allow_discards || fail "refresh --allow-discards: $(dmsetup table fv)"
same_size $((9 * 2048))
"$VS" open --refresh -d "$WORK/keys64" fv
dmsetup table fv | grep -q allow_discards && fail "refresh without --allow-discards: $(dmsetup table fv)"
veil_only
for k in keys-other keys-first keys1; do
	for a in refresh resize; do
		rc=0
		"$VS" "$a" -d "$WORK/$k" fv > "$WORK/v" 2>&1 || rc=$?
		[ "$rc" = 1 ] && grep -qx "Mismatching parameters on device fv." "$WORK/v" ||
			fail "veilsetup $a -d $k: exit $rc: $(cat "$WORK/v")"
	done
done
same_size $((9 * 2048))
# Key files from standard input.
"$VS" refresh -d - fv < "$WORK/keys64"
# veilsetup needs the key file for a resize too (its keys are in no table).
rc=0
"$VS" resize --size 8000 fv > "$WORK/v" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -qx "Option --key-file is required." "$WORK/v" ||
	fail "veilsetup resize without -d: exit $rc: $(cat "$WORK/v")"
same_size $((9 * 2048))
# Written through veil after the resize, read back through dm-crypt.
plaintext "$WORK/a" $((1024 * 1024))
write_direct "$WORK/a" /dev/mapper/fv $((8 * 1024 * 1024))
cryptsetup close fc
"$VS" close fv
cryptsetup loopaesOpen -d "$WORK/keys64" "$WORK/la-v" fc
same_data "$WORK/a" /dev/mapper/fc $((8 * 1024 * 1024)) ||
	fail "loop-AES resized: dm-crypt reads other data than veil wrote"
cryptsetup close fc
# --disable-keyring: the key is in veil's table, resize needs no key file
# (as cryptsetup); a key file for a refresh must be the one.
"$VS" loopaesOpen --disable-keyring -d "$WORK/keys1" "$WORK/la-v" fv 2> /dev/null
"$VS" resize --size 4096 fv
[ "$(sectors /dev/mapper/fv)" = 4096 ] || fail "resize --disable-keyring: $(sectors /dev/mapper/fv)"
# keys-other is refused for its 64 keys; keys1-other, one other key,
# by the key comparison.
sed -n 2p "$WORK/keys-all" > "$WORK/keys1-other"
tv=$(dmsetup table --showkeys fv)
for k in keys-other keys1-other; do
	rc=0
	"$VS" refresh -d "$WORK/$k" --allow-discards fv > "$WORK/v" 2>&1 || rc=$?
	[ "$rc" = 1 ] && grep -qx "Mismatching parameters on device fv." "$WORK/v" ||
		fail "refresh of a table key with $k: exit $rc: $(cat "$WORK/v")"
	[ "$(dmsetup table --showkeys fv)" = "$tv" ] || fail "refresh of a table key with $k changed the table"
done
"$VS" refresh -d "$WORK/keys1" fv 2> /dev/null
"$VS" close fv
[ "$(state)" = "$before" ] || fail "loop-AES resize: left $(state)"
echo "ok: loop-AES resize and refresh as cryptsetup's (${SECONDS}s)"

# TCRYPT and BitLocker: libcryptsetup resizes neither; cryptsetup
# refreshes neither (nor FileVault2). A TCRYPT cascade and a BitLocker
# volume (opened with its volume key: no key derivation) stay as they
# were, every layer.
cp "$TC/tc_5-sha512-xts-serpent-twofish-aes" "$WORK/tc-c"
cp "$TC/tc_5-sha512-xts-serpent-twofish-aes" "$WORK/tc-v"
before=$(state)
echo "$PW" | cryptsetup tcryptOpen --disable-veracrypt -h sha512 -c aes-twofish-serpent "$WORK/tc-c" fc
echo "$PW" | "$VS" tcryptOpen --disable-veracrypt -h sha512 -c aes-twofish-serpent "$WORK/tc-v" fv
_devs+=(fc_2 fc_1 fc fv_2 fv_1 fv)
tables=$(dmsetup table fv_2; dmsetup table fv_1; dmsetup table fv)
both 1 "$PW" resize --size 64 NAME
grep -qx "This operation is not supported for this device type." "$WORK/v" ||
	fail "TCRYPT resize: $(cat "$WORK/v")"
both 1 "$PW" resize NAME
both 1 "$PW" refresh NAME
grep -qx "Refresh is not supported for device type TCRYPT" "$WORK/v" ||
	fail "TCRYPT refresh: $(cat "$WORK/v")"
both 1 "$PW" open --refresh --type tcrypt "$WORK/tc-c" NAME
[ "$(dmsetup table fv_2; dmsetup table fv_1; dmsetup table fv)" = "$tables" ] ||
	fail "TCRYPT: a refused resize or refresh changed the cascade"
same_size
echo "ok: TCRYPT resize and refresh refused as by cryptsetup (${SECONDS}s)"

# hold A B: a process ($holder) that holds devices A and B open until it
# is killed, at exit at the latest; returns once it has them open.
hold() {
	local want i
	(exec 3< "$1" 4< "$2"; exec sleep infinity) &
	holder=$!
	at_exit "kill $holder"
	want=$(readlink -f "$2")
	for ((i = 0; i < 100; i++)); do
		[ "$(readlink "/proc/$holder/fd/4" 2> /dev/null)" = "$want" ] && return 0
		sleep 0.1
	done
	fail "hold: $1 and $2 not open after 10 s"
}

# close of a mapping still open (held by a process): cryptsetup's message
# and exit code, and every layer of the cascade stays as it was; once it
# is closed, close removes them all.
hold /dev/mapper/fc /dev/mapper/fv
both 5 "" close NAME
grep -qx "Device NAME is still in use." "$WORK/v" || fail "busy close: $(cat "$WORK/v")"
[ "$(dmsetup table fv_2; dmsetup table fv_1; dmsetup table fv)" = "$tables" ] ||
	fail "TCRYPT: a busy close changed the cascade: $(dmsetup ls)"
for d in fc fc_1 fc_2; do dmsetup info "$d" > /dev/null || fail "cryptsetup's busy close removed $d"; done
kill "$holder"
wait "$holder" || true
# The lowest layer held open: both remove the layers above it and leave
# it; cryptsetup 2.6.1 ends with exit code 0 and no word, veilsetup names
# the device left (exit code 5).
hold /dev/mapper/fc_2 /dev/mapper/fv_2
rc=0
cryptsetup close fc > "$WORK/c" 2>&1 || rc=$?
grep -v "remove ioctl on fc_2 *failed: Device or resource busy" "$WORK/c" > "$WORK/c2" || true
[ "$rc" = 0 ] && [ ! -s "$WORK/c2" ] ||
	fail "cryptsetup 2.6.1 close with fc_2 held: exit $rc: $(cat "$WORK/c"): update this test"
rc=0
"$VS" close fv > "$WORK/v" 2>&1 || rc=$?
[ "$rc" = 5 ] && [ "$(cat "$WORK/v")" = "Device fv_2 is still in use." ] ||
	fail "veilsetup close with fv_2 held: exit $rc: $(cat "$WORK/v")"
for d in fc fc_1 fv fv_1; do
	! dmsetup info "$d" > /dev/null 2>&1 || fail "close with the lowest layer held left $d"
done
[ "$(dmsetup table fv_2)" = "$(echo "$tables" | head -1)" ] || fail "close changed the held fv_2"
kill "$holder"
wait "$holder" || true
cryptsetup close fc_2
"$VS" close fv_2
[ "$(state)" = "$before" ] || fail "TCRYPT: close after a busy close left $(state)"
echo "ok: a busy TCRYPT cascade closes as with cryptsetup (${SECONDS}s)"

# A mounted loop-AES volume: the same.
before=$(state)
cryptsetup loopaesOpen -d "$WORK/keys65" "$WORK/la-c" fc
"$VS" loopaesOpen -d "$WORK/keys65" "$WORK/la-v" fv
_devs+=(fc fv)
mkdir "$WORK/mc" "$WORK/mv"
mkfs.ext2 -q /dev/mapper/fc
mkfs.ext2 -q /dev/mapper/fv
mount /dev/mapper/fc "$WORK/mc"
track_mount "$WORK/mc"
mount /dev/mapper/fv "$WORK/mv"
track_mount "$WORK/mv"
both 5 "" loopaesClose NAME
dmsetup table fv | grep -q " veil " || fail "a busy loop-AES close changed fv: $(dmsetup table fv)"
umount "$WORK/mc" "$WORK/mv"
both 0 "" close NAME
[ "$(state)" = "$before" ] || fail "loop-AES: close after a busy close left $(state)"
echo "ok: a mounted loop-AES volume closes as with cryptsetup (${SECONDS}s)"

# BitLocker, opened with its volume key (no key derivation in the guest).
cp "$BL/bitlk-aes-cbc-elephant-128.img" "$WORK/bl-c"
cp "$BL/bitlk-aes-cbc-elephant-128.img" "$WORK/bl-v"
before=$(state)
cryptsetup bitlkOpen --volume-key-file "$WORK/bvk-v" "$WORK/bl-c" fc
"$VS" bitlkOpen --volume-key-file "$WORK/bvk-v" "$WORK/bl-v" fv
_devs+=(fc fv)
tables=$(dmsetup table fv)
both 1 "" resize --size 64 NAME
grep -qx "This operation is not supported for this device type." "$WORK/v" ||
	fail "BITLK resize: $(cat "$WORK/v")"
both 1 "" refresh NAME
grep -qx "Refresh is not supported for device type BITLK" "$WORK/v" ||
	fail "BITLK refresh: $(cat "$WORK/v")"
[ "$(dmsetup table fv)" = "$tables" ] || fail "BITLK: a refused resize or refresh changed fv"
same_size
both 0 "" close NAME
[ "$(state)" = "$before" ] || fail "BITLK: left $(state)"
echo "ok: BITLK resize and refresh refused as by cryptsetup (${SECONDS}s)"

# FileVault2: libcryptsetup 2.6 reloads no FileVault2 mapping, so
# cryptsetup's resize to another size fails (the same size is nothing to
# do) and refresh is refused; veilsetup's the same, asking for nothing.
cp --sparse=always "$FV" "$WORK/fv-c"
cp --sparse=always "$FV" "$WORK/fv-v"
before=$(state)
echo heslo123 | cryptsetup fvault2Open "$WORK/fv-c" fc
echo heslo123 | "$VS" fvault2Open "$WORK/fv-v" fv
_devs+=(fc fv)
tables=$(dmsetup table fv)
size=$(sectors /dev/mapper/fv)
both 1 "" resize --size 64 NAME
grep -qx "Mismatching parameters on device NAME." "$WORK/v" || fail "FVAULT2 resize: $(cat "$WORK/v")"
both 1 "" resize NAME
both 0 "" resize --size "$size" NAME
both 1 "" refresh NAME
grep -qx "Refresh is not supported for device type FVAULT2" "$WORK/v" ||
	fail "FVAULT2 refresh: $(cat "$WORK/v")"
[ "$(dmsetup table fv)" = "$tables" ] || fail "FVAULT2: a refused resize or refresh changed fv"
same_size "$size"
both 0 "" close NAME
[ "$(state)" = "$before" ] || fail "FVAULT2: left $(state)"
echo "ok: FVAULT2 resize and refresh as cryptsetup's (${SECONDS}s)"
