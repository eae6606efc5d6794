#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Plain mode: the same passphrase, hash, cipher and key size give the same
# key as cryptsetup open --type plain, with passphrases and key files;
# status says what cryptsetup's says of the same volume, line by line
# (lib.sh's status_same).
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup
requires module loop dm_crypt
veil_load
mkloop 32M
plaintext "$WORK/a" $((1024 * 1024))
head -c 4096 /dev/urandom > "$WORK/keyfile"

# check "COMMON OPTIONS..." [PASSPHRASE ["VEILSETUP-ONLY OPTIONS"]]:
# veil writes, cryptsetup reads, and the reverse
check() {
	local opts=$1 input=${2:-} vopts=${3:-}
	printf '%s' "$input" | "$VS" open --type plain $opts $vopts "$LOOP" vt
	_devs+=(vt)
	udevadm settle 2>/dev/null || true
	"$VS" status vt > "$WORK/status-vs"
	write_direct "$WORK/a" /dev/mapper/vt
	"$VS" close vt
	printf '%s' "$input" | cryptsetup open --type plain $opts "$LOOP" vt-c
	_devs+=(vt-c)
	udevadm settle 2>/dev/null || true
	cryptsetup status vt-c > "$WORK/status-cs"
	cat "$WORK/status-vs"
	status_same "$WORK/status-cs" "$WORK/status-vs" "plain $opts $vopts"
	same_data "$WORK/a" /dev/mapper/vt-c || fail "plain $opts: cryptsetup reads other data"
	dd if=/dev/urandom of="$WORK/b" bs=1M count=1 status=none
	write_direct "$WORK/b" /dev/mapper/vt-c
	cryptsetup close vt-c
	printf '%s' "$input" | "$VS" open --type plain $opts $vopts "$LOOP" vt
	same_data "$WORK/b" /dev/mapper/vt || fail "plain $opts: veilsetup reads other data"
	"$VS" close vt
	echo "ok: plain $opts"
}

check "-c aes-xts-plain64 -s 512 -h sha256" $'pass phrase one\n'
check "-c aes-xts-plain64" $'default hash ripemd160, 256 bits\n'
check "-c aes-cbc-essiv:sha256 -s 256 -h sha512 --offset 2048 --skip 1000" $'offsets\n'
check "-c serpent-xts-plain64 -s 512 -h sha256 --sector-size 4096" $'big sectors\n'
check "-c twofish-ctr-plain64 -s 256 -h sha256" $'ctr\n'
check "-c aes-xts-plain64 -s 512 -d $WORK/keyfile --keyfile-offset 100"
check "-c aes-xts-plain64 -s 256 -d $WORK/keyfile"
check "-c serpent-xts-plain64 -s 512 --sector-size 4096 --iv-large-sectors" $'large IVs\n'
VS_KEY_LOCATION=dm-veil check "-c aes-xts-plain64 -s 512 -h sha256 --allow-discards" $'engine opts\n' \
	"--hex-key --fanout-chunk 8192 --no-keystream-ahead"
grep -qx '  engine:  fanout_chunk:8192 no_keystream_ahead' "$WORK/status-vs" ||
	fail "status: veil's engine options not on their line: $(cat "$WORK/status-vs")"
# The null cipher: no key in the table ("-"), as libcryptsetup maps it,
# and the device holds the data as written.
VS_KEY_LOCATION=dm-veil check "-c cipher_null-ecb -h sha256" $'null cipher\n'
same_data "$WORK/b" "$LOOP" || fail "cipher_null-ecb: the device does not hold the data"
echo x | "$VS" open --type plain -h sha256 --fanout-chunk 8192 --keystream-ahead-max 262144 \
	--no-fanout "$LOOP" vt
dmsetup table vt | grep -q ' 3 fanout_chunk:8192 keystream_ahead_max:262144 no_fanout$' ||
	fail "engine options not in the table: $(dmsetup table vt)"
"$VS" close vt

# CTR is refused nowhere but warned about.
echo x | "$VS" open --type plain -c aes-ctr-plain64 -h sha256 "$LOOP" vt 2> "$WORK/warn"
grep -q 'WARNING: aes-ctr-plain64 is CTR mode' "$WORK/warn" || fail "no CTR warning"
"$VS" close vt

# A plain key goes through the keyring, 256 bits by default: dmsetup
# prints the hex key of any table but crypt's. --disable-keyring puts it
# in the table, with a warning.
echo secret | "$VS" open --type plain -h sha256 -c aes-xts-plain64 "$LOOP" vt
key_hidden vt
dmsetup table vt | grep -q ' :32:logon:veil:' || fail "plain: not a 256-bit key: $(dmsetup table vt)"
"$VS" status vt | grep -q 'key location: keyring' || fail "status: key location"
"$VS" close vt
echo secret | "$VS" open --type plain -h sha256 --disable-keyring "$LOOP" vt 2> "$WORK/warn"
dmsetup table --showkeys vt | grep -Eq ' [0-9a-f]{64} ' || fail "--disable-keyring: no hex key"
grep -q 'dmsetup table' "$WORK/warn" || fail "--disable-keyring: no warning: $(cat "$WORK/warn")"
"$VS" status vt | grep -q 'key location: dm-veil' || fail "status: key location dm-veil"
"$VS" close vt

# Resize of a plain volume whose key is in no keyring: the passphrase and
# plain options again, the key checked against the mapping's data; a wrong
# one changes nothing (exit 2, as a wrong LUKS passphrase).
echo secret | "$VS" open --type plain -h sha256 --size 16384 "$LOOP" vt
write_direct "$WORK/a" /dev/mapper/vt
rc=0
echo wrong | "$VS" resize -h sha256 vt 2> "$WORK/err" || rc=$?
[ "$rc" = 2 ] || fail "resize, wrong passphrase: exit $rc: $(cat "$WORK/err")"
grep -q 'No key available with this passphrase' "$WORK/err" || fail "resize, wrong passphrase: $(cat "$WORK/err")"
rc=0
echo secret | "$VS" resize vt 2> "$WORK/err" || rc=$?
[ "$rc" = 2 ] || fail "resize, other hash: exit $rc: $(cat "$WORK/err")"
[ "$(sectors /dev/mapper/vt)" = 16384 ] || fail "a refused resize changed the size: $(sectors /dev/mapper/vt)"
echo secret | "$VS" resize -h sha256 vt || fail "resize with the passphrase"
[ "$(sectors /dev/mapper/vt)" = "$(sectors "$LOOP")" ] || fail "resize: $(sectors /dev/mapper/vt) sectors"
key_hidden vt
same_data "$WORK/a" /dev/mapper/vt || fail "resize: other data"
echo secret | "$VS" refresh -h sha256 --allow-discards vt || fail "refresh with the passphrase"
dmsetup table vt | grep -q ' allow_discards' || fail "refresh --allow-discards: $(dmsetup table vt)"
same_data "$WORK/a" /dev/mapper/vt || fail "refresh: other data"
"$VS" close vt
# On a disk of 4096-byte blocks, 512-byte sectors: the check reads a block.
losetup -d "$LOOP"
LOOP=$(losetup -f --show -b 4096 "$LOOP_FILE")
_loops+=("$LOOP")
echo secret | "$VS" open --type plain -h sha256 --size 16384 "$LOOP" vt
write_direct "$WORK/a" /dev/mapper/vt
echo secret | "$VS" resize -h sha256 vt || fail "resize on 4096-byte blocks"
[ "$(sectors /dev/mapper/vt)" = "$(sectors "$LOOP")" ] || fail "resize on 4096-byte blocks: $(sectors /dev/mapper/vt) sectors"
same_data "$WORK/a" /dev/mapper/vt || fail "resize on 4096-byte blocks: other data"
"$VS" close vt
