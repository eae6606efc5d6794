#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A LUKS2 volume enrolled with a PKCS#11 token (SoftHSM, an RSA key and
# its certificate) by systemd-cryptenroll --pkcs11-token-uri opens with
# veilsetup open --token-only and the token's PIN on standard input, no
# passphrase, through libcryptsetup's systemd-pkcs11 plugin, as with
# cryptsetup: veil maps it, the key in no table, and reads what dm-crypt
# wrote after cryptsetup's open of the same volume. resize takes the token
# again. A wrong PIN ends both as cryptsetup ends (exit code 1; with -v,
# "No token could be unlocked with this PIN."), mapping nothing.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup systemd-cryptenroll softhsm2-util p11tool openssl
requires module loop dm_crypt
veil_load
PLUGIN=/usr/lib/x86_64-linux-gnu/cryptsetup/libcryptsetup-token-systemd-pkcs11.so
[ -f "$PLUGIN" ] || skip "no $PLUGIN"

# A SoftHSM token of this test's own, in $WORK.
mkdir "$WORK/tokens"
printf '%s\n' "directories.tokendir = $WORK/tokens" "objectstore.backend = file" \
	"log.level = ERROR" > "$WORK/softhsm2.conf"
export SOFTHSM2_CONF=$WORK/softhsm2.conf
PIN=1234
softhsm2-util --init-token --free --label veiltest --pin "$PIN" --so-pin 0000 > /dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
	-subj /CN=veiltest -days 3650 2> /dev/null
openssl pkcs8 -topk8 -nocrypt -in "$WORK/key.pem" -out "$WORK/key8.pem"
softhsm2-util --import "$WORK/key8.pem" --token veiltest --label veilkey --id 01 \
	--pin "$PIN" > /dev/null
GNUTLS_PIN=$PIN p11tool --login --write --load-certificate "$WORK/cert.pem" --label veilkey \
	--id 01 "pkcs11:token=veiltest" > /dev/null
URI="pkcs11:token=veiltest"

mkloop 32M
echo -n pw | cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
	"$LOOP" -
# PIN: the token login systemd-cryptenroll needs (else it asks, and waits)
PASSWORD=pw PIN=$PIN timeout 300 systemd-cryptenroll --pkcs11-token-uri="$URI" "$LOOP" < /dev/null
cryptsetup luksDump "$LOOP" | grep -q "systemd-pkcs11" || fail "no systemd-pkcs11 token enrolled"
before=$(dmsetup ls)

# cryptsetup writes through dm-crypt, veilsetup reads it through veil;
# neither reads a passphrase.
plaintext "$WORK/a" $((1024 * 1024))
echo "$PIN" | cryptsetup open --token-only "$LOOP" fc
_devs+=(fc)
write_direct "$WORK/a" /dev/mapper/fc
cryptsetup close fc
rc=0
echo "$PIN" | "$VS" -v open --token-only "$LOOP" fv > "$WORK/v" 2>&1 || rc=$?
cat "$WORK/v"
_devs+=(fv)
[ "$rc" = 0 ] || fail "veilsetup open --token-only with the PIN: exit $rc"
grep -qx "Key slot 1 unlocked." "$WORK/v" || fail "veilsetup: not the token's keyslot"
dmsetup table fv | grep -q " veil " || fail "fv is not veil: $(dmsetup table fv)"
key_hidden fv
same_data "$WORK/a" /dev/mapper/fv || fail "veil reads other data than dm-crypt wrote"
# resize takes the token again (its PIN with --token-only)
echo "$PIN" | "$VS" resize --token-only --size 8192 fv
[ "$(sectors /dev/mapper/fv)" = 8192 ] || fail "resize with the token: $(sectors /dev/mapper/fv)"
same_data "$WORK/a" /dev/mapper/fv || fail "veil reads other data after resize"
key_hidden fv
# a wrong PIN: refused, the mapping as it was
table=$(dmsetup table --showkeys fv)
rc=0
echo 9999 | "$VS" resize --token-only --size 4096 fv > "$WORK/v" 2>&1 || rc=$?
# (systemd's plugin says why on the terminal; veilsetup's own message
# comes with -v only, as cryptsetup's)
[ "$rc" = 1 ] || fail "resize --token-only, a wrong PIN: exit $rc: $(cat "$WORK/v")"
[ "$(dmsetup table --showkeys fv)" = "$table" ] || fail "a resize with a wrong PIN changed fv: $(dmsetup table fv)"
"$VS" close fv
echo "ok: the PKCS#11 token opens the volume for both (${SECONDS}s)"

# A wrong PIN: both fail as cryptsetup does (the plugin's messages come
# twice from veilsetup: libcryptsetup 2.6's keyslot context opens the
# token twice, docs/veilsetup.md), nothing is mapped.
for tool in cryptsetup "$VS"; do
	rc=0
	echo 9999 | "$tool" -v open --token-only "$LOOP" fw > "$WORK/out" 2>&1 || rc=$?
	_devs+=(fw)
	[ "$rc" = 1 ] && grep -qx "No token could be unlocked with this PIN." "$WORK/out" ||
		fail "$tool open --token-only, a wrong PIN: exit $rc: $(cat "$WORK/out")"
done
[ "$(dmsetup ls)" = "$before" ] || fail "a wrong PIN left $(dmsetup ls)"
echo "ok: a wrong PIN fails as with cryptsetup (${SECONDS}s)"
