#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Keys from the kernel keyring (logon, user, and encrypted where the kernel
# has that type): the table never shows the key, the data equals that of
# the same key in hex, and dm-crypt agrees both ways: what veil writes
# dm-crypt reads with the same reference, and what dm-crypt writes veil
# reads. Trusted keys: on a kernel without CONFIG_TRUSTED_KEYS (its config
# read from /proc/config.gz, /boot or the module build tree) both targets
# refuse a :trusted: reference with the same error (EINVAL); on one with
# it, a trusted key is used both ways when one can be made (a TPM), and
# a reference to one that does not exist is refused alike.
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

# crypt_writes_veil_reads REF WHAT: dm-crypt writes new data with the key
# reference REF, veil reads it with the same reference
crypt_writes_veil_reads() {
	plaintext "$WORK/rev" $((512 * 1024))
	dm_create vt-crypt "0 8192 crypt aes-xts-plain64 $1 0 $dev 0"
	write_direct "$WORK/rev" /dev/mapper/vt-crypt
	dm_remove vt-crypt
	dm_create vt "0 8192 veil aes-xts-plain64 $1 0 $dev 0"
	dmsetup table vt | grep -q " $1 " || fail "$2: veil's table: $(dmsetup table vt)"
	same_data "$WORK/rev" /dev/mapper/vt || fail "$2: written by dm-crypt, veil reads other data"
	dm_remove vt
	info "$2: written by dm-crypt, read by veil"
}
# veil_writes_crypt_reads REF WHAT: the reverse, with $WORK/data
veil_writes_crypt_reads() {
	dm_create vt "0 8192 veil aes-xts-plain64 $1 0 $dev 0"
	dmsetup table vt | grep -q " $1 " || fail "$2: veil's table: $(dmsetup table vt)"
	write_direct "$WORK/data" /dev/mapper/vt
	dm_remove vt
	dm_create vt-crypt "0 8192 crypt aes-xts-plain64 $1 0 $dev 0"
	same_data "$WORK/data" /dev/mapper/vt-crypt || fail "$2: written by veil, dm-crypt reads other data"
	dm_remove vt-crypt
}
crypt_writes_veil_reads :64:logon:veiltest:k1 "logon key"
crypt_writes_veil_reads :64:user:veiltest-user "user key"

# refused_alike REF WHAT: neither target takes REF; dmsetup reports the
# same error for both and the kernel logs the same errno
refused_alike() {
	local target out errs=() errnos=() i
	for target in veil crypt; do
		kmsg_mark
		if out=$(dm_create vt-refused "0 8192 $target aes-xts-plain64 $1 0 $dev 0" 2>&1); then
			dmsetup remove vt-refused
			fail "$2: $target takes $1"
		fi
		errs+=("$(echo "$out" | sed -n 's/.*failed: //p')")
		for i in 1 2 3 4 5 6 7 8 9 10; do
			out=$(kmsg_since | grep -o " $target: .*" || true)
			[ -z "$out" ] || break
			sleep 1
		done
		[ -n "$out" ] || fail "$2: $target logged no reason"
		info "$2:$out"
		errnos+=("${out##* }")
	done
	[ -n "${errs[0]}" ] && [ "${errs[0]}" = "${errs[1]}" ] ||
		fail "$2: dmsetup says '${errs[0]}' for veil, '${errs[1]}' for dm-crypt"
	[ "${errnos[0]}" = "${errnos[1]}" ] ||
		fail "$2: veil fails with ${errnos[0]}, dm-crypt with ${errnos[1]}"
	info "$2: refused by both, '${errs[0]}' ${errnos[0]}"
}

# An encrypted key (its bytes known only to the kernel): written through
# veil, read through dm-crypt with the same reference.
if keyctl add user veiltest-kmk "$(randhex 32)" @u >/dev/null &&
   keyctl add encrypted veiltest:enc "new default user:veiltest-kmk 64" @u >/dev/null 2>&1; then
	veil_writes_crypt_reads :64:encrypted:veiltest:enc "encrypted key"
	crypt_writes_veil_reads :64:encrypted:veiltest:enc "encrypted key"
	expect_fail dmsetup create vt --table "0 8192 veil aes-xts-plain64 :32:encrypted:veiltest:enc 0 $dev 0"
	keyctl purge encrypted veiltest:enc >/dev/null
	info "encrypted key: veil and dm-crypt agree"
else
	info "no encrypted key type in this kernel"
fi
keyctl purge user veiltest-kmk >/dev/null 2>&1 || true

# kconfig: the running kernel's configuration, if it can be found
kconfig() {
	local f
	if [ -r /proc/config.gz ]; then
		zcat /proc/config.gz
		return
	fi
	for f in "/boot/config-$(uname -r)" "/lib/modules/$(uname -r)/build/.config"; do
		if [ -r "$f" ]; then
			cat "$f"
			return
		fi
	done
	return 1
}
if ! kconfig > "$WORK/config"; then
	info "trusted keys: no configuration found for $(uname -r), not checked"
elif ! grep -Eq '^CONFIG_TRUSTED_KEYS=(y|m)$' "$WORK/config"; then
	refused_alike :64:trusted:veiltest:tk "trusted key, no CONFIG_TRUSTED_KEYS"
elif modprobe -q trusted 2>/dev/null; keyctl add trusted veiltest:tk "new 64" @u >/dev/null 2>&1; then
	veil_writes_crypt_reads :64:trusted:veiltest:tk "trusted key"
	crypt_writes_veil_reads :64:trusted:veiltest:tk "trusted key"
	keyctl purge trusted veiltest:tk >/dev/null
else
	info "trusted keys: the kernel has them, but none can be made here (no TPM)"
	refused_alike :64:trusted:veiltest:none "trusted key that does not exist"
fi

# A key that is gone is refused.
keyctl purge logon veiltest:k1 >/dev/null
expect_fail dmsetup create vt --table "0 8192 veil aes-xts-plain64 :64:logon:veiltest:k1 0 $dev 0"
keyctl purge user veiltest-user >/dev/null
