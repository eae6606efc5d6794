#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Plain mode: the same passphrase, hash, cipher and key size give the same
# key as cryptsetup open --type plain, with passphrases and key files.
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
	write_direct "$WORK/a" /dev/mapper/vt
	"$VS" close vt
	printf '%s' "$input" | cryptsetup open --type plain $opts "$LOOP" vt-c
	_devs+=(vt-c)
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
check "-c aes-xts-plain64 -s 512 -h sha256 --allow-discards" $'engine opts\n' "--hex-key --fanout-chunk 8192 --no-keystream-ahead"
echo x | "$VS" open --type plain -h sha256 --fanout-chunk 8192 --keystream-ahead-max 262144 \
	--no-fanout "$LOOP" vt
dmsetup table vt | grep -q ' 3 fanout_chunk:8192 keystream_ahead_max:262144 no_fanout$' ||
	fail "engine options not in the table: $(dmsetup table vt)"
"$VS" close vt

# CTR is refused nowhere but warned about.
echo x | "$VS" open --type plain -c aes-ctr-plain64 -h sha256 "$LOOP" vt 2> "$WORK/warn"
grep -q 'WARNING: aes-ctr-plain64 is CTR mode' "$WORK/warn" || fail "no CTR warning"
"$VS" close vt

# As cryptsetup: a plain key is in the table (hex), 256 bits by default.
echo secret | "$VS" open --type plain -h sha256 -c aes-xts-plain64 "$LOOP" vt
dmsetup table --showkeys vt | grep -Eq ' [0-9a-f]{64} ' || fail "plain: no hex key in the table"
"$VS" status vt | grep -q 'key location: dm-veil' || fail "status: key location"
"$VS" close vt
