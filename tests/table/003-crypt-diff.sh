#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dm-crypt against veil, line by line (tests/tools/crypt-diff.c):
# VEIL_DIFF_COUNT (default 3000) seeded table lines drawn from dm-crypt's
# whole grammar (every cipher form, chain mode and IV generator, key
# counts, hex and keyring keys of right and wrong sizes, devices by path
# and major:minor, every optional parameter, integrity:<bytes>:<type>
# over dm-integrity devices with 16-, 28- and 48-byte tuples), some
# mutated at the token level, are each loaded as crypt and as veil on
# this kernel. Shows that where both accept, both print the same table
# and 4 KiB written through either reads back through the other; and
# that every line dm-crypt accepts and veil refuses is one of the
# refusals docs/table-line.md lists ("What dm-crypt takes and veil does
# not", read from the doc itself). The report lists those lines and the
# ones veil accepts and dm-crypt refuses, with the kernel's messages.
# Lines that oops dm-crypt are given to veil alone (crypt-diff.c says
# which).
# The seed (VEIL_DIFF_SEED) is printed: the same seed and count give the
# same lines.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_crypt dm_integrity
requires cmd keyctl cc
veil_load

t0=$(date +%s)
seed=${VEIL_DIFF_SEED:-20251128}
count=${VEIL_DIFF_COUNT:-3000}
info "seed $seed, $count cases (reproduce: VEIL_DIFF_SEED=$seed VEIL_DIFF_COUNT=$count)"

[ -f /usr/include/libdevmapper.h ] || skip "no libdevmapper.h (libdevmapper-dev)"
# -O0: the time goes to the kernel, and -O2 builds several times slower
# under emulation.
cc -O0 -Wall -o "$WORK/crypt-diff" "$TOP/tests/tools/crypt-diff.c" -ldevmapper ||
	fail "cannot build crypt-diff"
info "crypt-diff built in $(($(date +%s) - t0))s"

# The documented refusals, from the doc's table: "<veil's message>\t<regex>"
# for each message of each row (the regex, `\|` being a literal |, may be
# empty: any line).
awk '
	/^## What dm-crypt takes and veil does not/ { on = 1; next }
	on && /^## / { exit }
	on && /^\| / && !/^\| table line/ {
		row = $0
		gsub(/\\\|/, "\001", row)
		split(row, col, "|")
		re = col[4]
		gsub(/^ *`?|`? *$/, "", re)
		gsub("\001", "|", re)
		msgs = col[3]
		while (match(msgs, /`[^`]+`/)) {
			print substr(msgs, RSTART + 1, RLENGTH - 2) "\t" re
			msgs = substr(msgs, RSTART + RLENGTH)
		}
	}' "$TOP/docs/table-line.md" > "$WORK/refusals"
[ "$(wc -l < "$WORK/refusals")" -ge 5 ] ||
	fail "docs/table-line.md: no table of refusals found under 'What dm-crypt takes and veil does not'"
info "$(wc -l < "$WORK/refusals") documented refusals (message, line pattern):"
sed 's/^/#   /' "$WORK/refusals"

# Every algorithm the lines name, loaded now; then no module autoloading,
# and no udev (each table makes uevents that udev would work through).
crypto_preload aes serpent twofish cast6 blowfish des3_ede cipher_null \
	xts ctr cbc ecb lrw pcbc cfb ofb essiv sha1 sha256 sha512 md5 crc32 \
	gcm ccm rfc4106 rfc7539 authenc hmac cryptd rfc3686 chacha20 xctr \
	xchacha12 adiantum hctr2
udev_off
info "algorithms loaded, udev stopped at $(($(date +%s) - t0))s"

# The keys the lines name, in the keyring; encrypted ones under a user key.
keyctl add user veiltest-cdkmk "$(randhex 32)" @u >/dev/null
at_exit "keyctl purge user veiltest-cdkmk"
while read -r type desc bytes; do
	if [ "$type" = encrypted ]; then
		keyctl add encrypted "$desc" "new default user:veiltest-cdkmk $bytes" @u >/dev/null ||
			fail "cannot make the encrypted key $desc"
	else
		head -c "$bytes" /dev/urandom | keyctl padd "$type" "$desc" @u >/dev/null
	fi
	at_exit "keyctl purge $type $desc"
done < <("$WORK/crypt-diff" --keys)

# dm-integrity by hand, external tags, direct mode, each over its own
# loop file in $WORK: TUPLE BLOCK; it formats on first load and then
# says how many sectors it provides (dmsetup status, field 5).
ints=()
for shape in "16 512" "28 512" "48 4096"; do
	set -- $shape
	mkloop 6M
	name=vd-int$1 opts=0
	[ "$2" = 512 ] || opts="1 block_size:$2"
	dm_create "$name" "0 8 integrity $LOOP 0 $1 D $opts"
	len=$(dmsetup status "$name" | awk '{print $5}')
	dmsetup reload "$name" --table "0 $len integrity $LOOP 0 $1 D $opts"
	dmsetup resume "$name"
	ints+=(--integrity "/dev/mapper/$name:$1:$2")
done
mkloop 8M

# Its devices, if it dies before it removes them.
at_exit "dmsetup remove vdiff-crypt; dmsetup remove vdiff-veil"
start=$(date +%s)
info "set up in $((start - t0))s"
rc=0
"$WORK/crypt-diff" --seed "$seed" --count "$count" --dev "$LOOP" "${ints[@]}" \
	--refusals "$WORK/refusals" || rc=$?
info "$count cases in $(($(date +%s) - start))s"
[ "$rc" = 0 ] || fail "crypt-diff exit status $rc (seed $seed): see the report above (PROBLEM, NOT DOCUMENTED)"
