#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# LUKS2 both ways: a volume made by cryptsetup luksFormat opens with
# veilsetup and the data reads back through cryptsetup; a volume made by
# veilsetup luksFormat opens with cryptsetup. The key travels through the
# keyring: no key bytes in the table (dmsetup table --showkeys), for a
# LUKS1 volume too. status says what cryptsetup's says of the same volume,
# line by line (lib.sh's status_same).
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup
requires module loop dm_crypt
veil_load
PASS="correct horse battery staple"
fast="--pbkdf argon2id --pbkdf-memory 32768 --iter-time 100"
mkloop 64M
plaintext "$WORK/a" $((1024 * 1024))
plaintext "$WORK/b" $((1024 * 1024))

# roundtrip FORMAT-TOOL SECTOR-SIZE
roundtrip() {
	echo "$PASS" | "$VS" open --type luks2 "$LOOP" vt
	_devs+=(vt)
	table=$(dmsetup table --showkeys vt)
	echo "$table"
	echo "$table" | grep -q ' :64:logon:veil:VEIL-LUKS2-[-0-9a-f]*-vt ' || fail "key not from the keyring"
	# The key field (the fifth word) is the reference, never key bytes.
	echo "$table" | cut -d' ' -f5 | grep -q '^:64:logon:' || fail "key bytes in the table"
	key_hidden vt
	udevadm settle 2>/dev/null || true
	"$VS" status vt | tee "$WORK/status"
	grep -q 'type:    LUKS2' "$WORK/status" || fail "status type"
	grep -q "sector size:  $2" "$WORK/status" || fail "status sector size"
	write_direct "$WORK/a" /dev/mapper/vt
	"$VS" status vt | grep -q "writes=" || fail "no counters in status"
	"$VS" close vt
	grep -q 'logon.*veil:' /proc/keys && fail "key left in a keyring: $(grep veil: /proc/keys)"

	echo "$PASS" | cryptsetup open --type luks2 "$LOOP" vt-c
	_devs+=(vt-c)
	udevadm settle 2>/dev/null || true
	cryptsetup status vt-c > "$WORK/status-cs"
	status_same "$WORK/status-cs" "$WORK/status" "$1-formatted, $2-byte sectors"
	same_data "$WORK/a" /dev/mapper/vt-c || fail "$1-formatted: cryptsetup reads other data than veilsetup wrote"
	write_direct "$WORK/b" /dev/mapper/vt-c
	cryptsetup close vt-c

	echo "$PASS" | "$VS" open "$LOOP" vt
	same_data "$WORK/b" /dev/mapper/vt || fail "$1-formatted: veilsetup reads other data than cryptsetup wrote"
	"$VS" close vt
	no_plaintext "$LOOP"
}

echo "$PASS" | cryptsetup luksFormat -q --type luks2 $fast "$LOOP"
roundtrip cryptsetup 512
echo "$PASS" | cryptsetup luksFormat -q --type luks2 $fast --sector-size 4096 "$LOOP"
roundtrip cryptsetup 4096
echo "$PASS" | "$VS" luksFormat -q $fast "$LOOP"
cryptsetup luksDump "$LOOP" | grep 'argon2id' >/dev/null || fail "veilsetup luksFormat: not argon2id"
roundtrip veilsetup 512
echo "$PASS" | "$VS" luksFormat -q $fast --sector-size 4096 -c serpent-xts-plain64 "$LOOP"
roundtrip veilsetup 4096

# Key slots through libcryptsetup.
printf '%s\n%s\n' "$PASS" "second secret" | "$VS" luksAddKey "$LOOP"
echo "second secret" | cryptsetup open --test-passphrase "$LOOP" || fail "luksAddKey"
echo "second secret" | "$VS" luksRemoveKey "$LOOP"
echo "second secret" | cryptsetup open --test-passphrase "$LOOP" 2>/dev/null && fail "luksRemoveKey"
"$VS" luksDump "$LOOP" | grep '^LUKS header information' >/dev/null || fail "luksDump"

# resize
echo "$PASS" | "$VS" open "$LOOP" vt
full=$(sectors /dev/mapper/vt)
# As cryptsetup: the key is in no keyring after open, so resize asks.
echo "$PASS" | "$VS" resize --size 8192 vt
[ "$(sectors /dev/mapper/vt)" = 8192 ] || fail "resize to 8192"
echo "$PASS" | "$VS" resize vt
[ "$(sectors /dev/mapper/vt)" = "$full" ] || fail "resize to the device: $(sectors /dev/mapper/vt), want $full"
"$VS" close vt

# The null cipher (what cryptsetup's reencryption starts from): no key in
# the table ("-", as libcryptsetup maps it), the data as written on the
# device, both ways.
for tool in cryptsetup "$VS"; do
	echo "$PASS" | "$tool" luksFormat -q --type luks2 $fast -c cipher_null-ecb "$LOOP"
	echo "$PASS" | "$VS" open "$LOOP" vt
	[ "$(dmsetup table --showkeys vt | cut -d' ' -f5)" = - ] ||
		fail "cipher_null-ecb by ${tool##*/}: $(dmsetup table --showkeys vt)"
	write_direct "$WORK/a" /dev/mapper/vt
	"$VS" close vt
	echo "$PASS" | cryptsetup open "$LOOP" vt-c
	same_data "$WORK/a" /dev/mapper/vt-c ||
		fail "cipher_null-ecb by ${tool##*/}: cryptsetup reads other data than veilsetup wrote"
	write_direct "$WORK/b" /dev/mapper/vt-c
	cryptsetup close vt-c
	echo "$PASS" | "$VS" open "$LOOP" vt
	same_data "$WORK/b" /dev/mapper/vt ||
		fail "cipher_null-ecb by ${tool##*/}: veilsetup reads other data than cryptsetup wrote"
	"$VS" close vt
	grep -qa "$PLAIN_MARKER" "$LOOP" || fail "cipher_null-ecb: the device does not hold the data"
	echo "ok: LUKS2 cipher_null-ecb made by ${tool##*/}"
done

# LUKS1 (cryptsetup's): its key through the keyring as well, none in the
# table; the data both ways.
echo "$PASS" | cryptsetup luksFormat -q --type luks1 --pbkdf-force-iterations 1000 "$LOOP"
echo "$PASS" | "$VS" open "$LOOP" vt
dmsetup table --showkeys vt
key_hidden vt
dmsetup table --showkeys vt | grep -q ' :64:logon:veil:VEIL-LUKS1-[-0-9a-f]*-vt ' ||
	fail "LUKS1: key not from the keyring: $(dmsetup table vt)"
udevadm settle 2>/dev/null || true
"$VS" status vt | tee "$WORK/status"
grep -q 'type:    LUKS1' "$WORK/status" || fail "LUKS1: status type"
write_direct "$WORK/a" /dev/mapper/vt
"$VS" close vt
grep -q 'logon.*veil:' /proc/keys && fail "LUKS1: key left in a keyring: $(grep veil: /proc/keys)"
echo "$PASS" | cryptsetup open "$LOOP" vt-c
udevadm settle 2>/dev/null || true
cryptsetup status vt-c > "$WORK/status-cs"
status_same "$WORK/status-cs" "$WORK/status" "LUKS1"
same_data "$WORK/a" /dev/mapper/vt-c || fail "LUKS1: cryptsetup reads other data than veilsetup wrote"
cryptsetup close vt-c
echo "ok: LUKS1 key in the keyring, not in the table"
