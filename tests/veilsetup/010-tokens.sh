#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# LUKS2 tokens as cryptsetup 2.6 has them, with the builtin luks2-keyring
# token (a passphrase in the user keyring): veilsetup opens, resizes,
# refreshes and resumes a volume, and adds a keyslot, with nothing on
# standard input; without the key, --token-only, --token-id and
# --token-type end as cryptsetup's do on the same command line, and
# without --token-only the passphrase follows. Tokens added, imported, exported, unassigned and removed by
# veilsetup read back through cryptsetup, and the reverse. Data written
# through veil after a token open reads back through dm-crypt.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup keyctl
requires module loop dm_crypt
veil_load

fast="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
PASS=first
DESC=veil-test-token-$$
mkloop 32M
C=$LOOP
mkloop 32M
V=$LOOP

# key_in PASSPHRASE: the token's key in the user keyring; key_out: gone
key_in() { keyctl add user "$DESC" "$1" @u > /dev/null; }
key_out() { keyctl purge user "$DESC" > /dev/null 2>&1 || true; }
at_exit key_out
# libcryptsetup finds the key with request_key(2), which searches the
# session keyring: the user keyring must be linked from it.
key_in "$PASS"
if ! keyctl request user "$DESC" > /dev/null 2>&1; then
	keyctl link @u @s || skip "no session keyring to link the user keyring into"
	at_exit "keyctl unlink @u @s"
fi

# both WANT INPUT ARGS...: cryptsetup on $C and veilsetup on $V run ARGS,
# @DEV@ and @NAME@ standing for each tool's device and mapping, with INPUT
# on standard input; both must exit with WANT.
both() {
	local want=$1 input=$2 arg arg_c arg_v rc_c=0 rc_v=0 args_c=() args_v=()
	shift 2
	for arg; do
		arg=${arg//@NAME@/@TOOL@-tok}
		arg_c=${arg//@DEV@/$C}
		arg_v=${arg//@DEV@/$V}
		args_c+=("${arg_c//@TOOL@/cs}")
		args_v+=("${arg_v//@TOOL@/vs}")
	done
	printf '%s' "$input" | cryptsetup "${args_c[@]}" > "$WORK/out-c" 2>&1 || rc_c=$?
	printf '%s' "$input" | "$VS" "${args_v[@]}" > "$WORK/out-v" 2>&1 || rc_v=$?
	if [ "$rc_c" != "$want" ] || [ "$rc_v" != "$want" ]; then
		echo "--- cryptsetup:"; cat "$WORK/out-c"; echo "--- veilsetup:"; cat "$WORK/out-v"
		fail "$*: exit codes cryptsetup $rc_c, veilsetup $rc_v, want $want"
	fi
	echo "ok: [$want] $*"
}
# tokens DEV: the Tokens part of cryptsetup's luksDump
tokens() { cryptsetup luksDump "$1" | sed -n '/^Tokens:/,/^Digests:/p'; }
same_tokens() {
	[ "$(tokens "$C")" = "$(tokens "$V")" ] || {
		diff <(tokens "$C") <(tokens "$V")
		fail "the tokens differ after: $*"
	}
}
_devs+=(cs-tok vs-tok)

printf '%s' "$PASS" > "$WORK/k1"
cryptsetup luksFormat -q $fast "$C" "$WORK/k1"
cryptsetup luksFormat -q $fast "$V" "$WORK/k1"
# token add by each tool: the same token in both headers
both 0 "" token add --key-description "$DESC" @DEV@
same_tokens "token add"
[ "$(cryptsetup token export --token-id 0 "$V")" = \
  "{\"type\":\"luks2-keyring\",\"keyslots\":[\"0\"],\"key_description\":\"$DESC\"}" ] ||
	fail "veilsetup's token: $(cryptsetup token export --token-id 0 "$V")"

# With the key in the keyring: no passphrase read, from the keyring to veil.
both 0 "" open @DEV@ @NAME@
dmsetup table vs-tok | grep -q ' :64:logon:veil:VEIL-LUKS2-[-0-9a-f]*-vs-tok ' ||
	fail "token open: not a veil table with a keyring key: $(dmsetup table vs-tok | cut -d' ' -f1-4)"
key_hidden vs-tok
plaintext "$WORK/a" $((1024 * 1024))
write_direct "$WORK/a" /dev/mapper/vs-tok
both 0 "" resize --size 8192 @NAME@
[ "$(sectors /dev/mapper/vs-tok)" = 8192 ] || fail "resize by token: $(sectors /dev/mapper/vs-tok) sectors"
both 0 "" resize @NAME@
both 0 "" refresh --allow-discards @NAME@
dmsetup table vs-tok | grep -q ' allow_discards' || fail "refresh by token: $(dmsetup table vs-tok)"
both 0 "" luksSuspend @NAME@
both 0 "" -v luksResume @NAME@
grep -q '^Key slot 0 unlocked.$' "$WORK/out-v" || fail "luksResume -v: $(cat "$WORK/out-v")"
same_data "$WORK/a" /dev/mapper/vs-tok || fail "data changed over resize, refresh and resume"
both 0 "" close @NAME@
grep -q 'logon.*veil:' /proc/keys && fail "key left in a keyring: $(grep veil: /proc/keys)"
# veil wrote it, dm-crypt reads it: the token gave the right key.
cryptsetup open --token-only "$V" cs-check < /dev/null
_devs+=(cs-check)
same_data "$WORK/a" /dev/mapper/cs-check || fail "cryptsetup reads other data than veil wrote after a token open"
cryptsetup close cs-check
both 0 "" open --test-passphrase --token-only --token-id 0 --token-type luks2-keyring \
	--disable-external-tokens @DEV@
# luksAddKey --token-*: the token opens the old keyslot
printf second > "$WORK/k2"
both 0 "" luksAddKey $fast --token-only @DEV@ "$WORK/k2"
both 0 "" open --test-passphrase -d "$WORK/k2" -S 1 @DEV@

# Without the key: --token-only ends there, anything else asks.
key_out
both 2 "" open --token-only @DEV@ @NAME@
dmsetup info vs-tok > /dev/null 2>&1 && fail "open --token-only failed but left vs-tok mapped"
both 0 "$PASS" open @DEV@ @NAME@
both 2 "$PASS" resize --token-only --size 8192 @NAME@
both 0 "$PASS" resize --size 8192 @NAME@
both 0 "" luksSuspend @NAME@
both 2 "" luksResume --token-only @NAME@
both 0 "$PASS" luksResume @NAME@
both 0 "" close @NAME@
both 2 "wrong" open --test-passphrase @DEV@
both 2 "" luksAddKey $fast --token-only @DEV@ "$WORK/k2"
# a token that does not exist, a type none has
both 1 "" open --token-only --token-id 5 @DEV@ @NAME@
both 0 "$PASS" open --test-passphrase --token-id 5 @DEV@
both 1 "" open --test-passphrase --token-only --token-type systemd-tpm2 @DEV@
# a token whose passphrase opens no keyslot
key_in wrong
both 2 "" open --test-passphrase --token-only @DEV@
both 0 "$PASS" open --test-passphrase @DEV@
key_out
key_in "$PASS"

# The token action, both tools on the same command lines.
both 0 "" token add --key-description other --token-id 3 --key-slot 0 @DEV@
same_tokens "token add --token-id 3"
both 1 "" token add --key-description other --token-id 3 @DEV@
both 0 "" token add --key-description third --token-id 3 --token-replace @DEV@
same_tokens "token add --token-replace"
both 1 "" token add --key-description other --key-slot 5 @DEV@
both 1 "" token add @DEV@
both 1 "" token remove @DEV@
both 1 "" token frobnicate @DEV@
both 1 "" token remove --token-id 9 @DEV@
both 1 "" token export --token-id 9 @DEV@
both 1 "" token unassign --token-id 3 @DEV@
both 0 "" token unassign --token-id 3 --key-slot 0 @DEV@
both 1 "" token unassign --token-id 3 --key-slot 0 @DEV@
same_tokens "token unassign"
json='{"type":"veil-test","keyslots":["0"],"note":"imported"}'
both 0 "$json" token import --token-id 6 @DEV@
same_tokens "token import"
both 1 "" open --test-passphrase --token-replace @DEV@
both 0 "" token remove --token-id 3 @DEV@
same_tokens "token remove"

# One tool writes, the other reads: export, import through files.
"$VS" token export --token-id 6 "$C" --json-file "$WORK/t6.json"
[ "$(cat "$WORK/t6.json")" = "$json" ] || fail "veilsetup token export: $(cat "$WORK/t6.json")"
[ "$("$VS" token export --token-id 0 "$C")" = "$(cryptsetup token export --token-id 0 "$C")" ] ||
	fail "token export: veilsetup and cryptsetup print different JSON"
cryptsetup token export --token-id 0 "$C" --json-file "$WORK/t0.json"
"$VS" token import --token-id 7 --json-file "$WORK/t0.json" "$V"
[ "$(cryptsetup token export --token-id 7 "$V")" = "$(cat "$WORK/t0.json")" ] ||
	fail "veilsetup token import, cryptsetup export: $(cryptsetup token export --token-id 7 "$V")"
"$VS" token remove --token-id 7 "$V"
expect_fail cryptsetup token export --token-id 7 "$V"
cryptsetup token remove --token-id 6 "$V"
expect_fail "$VS" token export --token-id 6 "$V"
"$VS" luksDump "$V" | grep -q "Key description: $DESC" || fail "veilsetup luksDump shows no token"
# The first token still opens both.
both 0 "" open --test-passphrase --token-only @DEV@
no_plaintext "$V"
