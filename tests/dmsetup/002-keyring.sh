#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Keys from the kernel keyring (logon, user, and encrypted where the kernel
# has that type): the table never shows the key, the data equals that of
# the same key in hex, and dm-crypt agrees.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd keyctl
requires module loop dm_crypt
veil_load

mkloop 8M
dev=$LOOP
head -c 64 /dev/urandom > "$WORK/key"
hex=$(od -An -v -tx1 "$WORK/key" | tr -d ' \n')
keyctl padd logon veiltest:k1 @u < "$WORK/key" >/dev/null
keyctl padd user veiltest-user @u < "$WORK/key" >/dev/null

dm_create vt "0 8192 veil aes-xts-plain64 :64:logon:veiltest:k1 0 $dev 0"
table=$(dmsetup table --showkeys vt)
echo "$table" | grep -q ' :64:logon:veiltest:k1 ' || fail "table: $table"
echo "$table" | grep -q "$hex" && fail "key bytes in the table"
plaintext "$WORK/data" $((512 * 1024))
write_direct "$WORK/data" /dev/mapper/vt
dm_remove vt

# The same bytes as a hex key, through dm-crypt and through veil (user key).
dm_create vt-crypt "0 8192 crypt aes-xts-plain64 $hex 0 $dev 0"
same_data "$WORK/data" /dev/mapper/vt-crypt || fail "dm-crypt with the hex key reads other data"
dm_remove vt-crypt
dm_create vt "0 8192 veil aes-xts-plain64 :64:user:veiltest-user 0 $dev 0"
same_data "$WORK/data" /dev/mapper/vt || fail "user key reads other data"

# key set with a keyring reference, while suspended.
dmsetup suspend vt
dmsetup message vt 0 key wipe
dmsetup message vt 0 key set :64:logon:veiltest:k1
dmsetup table vt | grep -q ' :64:logon:veiltest:k1 ' || fail "key set did not keep the reference"
dmsetup resume vt
same_data "$WORK/data" /dev/mapper/vt || fail "data after key set from keyring"
dm_remove vt

# An encrypted key (its bytes known only to the kernel): written through
# veil, read through dm-crypt with the same reference.
if keyctl add user veiltest-kmk "$(randhex 32)" @u >/dev/null &&
   keyctl add encrypted veiltest:enc "new default user:veiltest-kmk 64" @u >/dev/null 2>&1; then
	dm_create vt "0 8192 veil aes-xts-plain64 :64:encrypted:veiltest:enc 0 $dev 0"
	dmsetup table vt | grep -q ' :64:encrypted:veiltest:enc ' || fail "encrypted key: $(dmsetup table vt)"
	write_direct "$WORK/data" /dev/mapper/vt
	dm_remove vt
	dm_create vt-crypt "0 8192 crypt aes-xts-plain64 :64:encrypted:veiltest:enc 0 $dev 0"
	same_data "$WORK/data" /dev/mapper/vt-crypt || fail "dm-crypt with the encrypted key reads other data"
	dm_remove vt-crypt
	expect_fail dmsetup create vt --table "0 8192 veil aes-xts-plain64 :32:encrypted:veiltest:enc 0 $dev 0"
	keyctl purge encrypted veiltest:enc >/dev/null
	info "encrypted key: veil and dm-crypt agree"
else
	info "no encrypted key type in this kernel"
fi
keyctl purge user veiltest-kmk >/dev/null 2>&1 || true

# A key that is gone is refused.
keyctl purge logon veiltest:k1 >/dev/null
expect_fail dmsetup create vt --table "0 8192 veil aes-xts-plain64 :64:logon:veiltest:k1 0 $dev 0"
keyctl purge user veiltest-user >/dev/null
