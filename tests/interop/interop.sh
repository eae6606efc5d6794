#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Interop with the kernel's dm-crypt, sourced by the tests of this area.
# For one cipher spec: data written through veil reads back identically
# through dm-crypt with the same table line, data written through dm-crypt
# reads back through veil, and the raw device never holds the plaintext.
# A non-zero iv_offset and device offset are used throughout.
#
# A spec both targets refuse is counted apart from those that interoperate
# and never toward the minimum of 20. Debian's stock kernels (6.1, 6.12)
# have every algorithm specs.txt names, so there a spec both refuse fails
# the test: a spec that no longer maps is lost coverage, not a pass. Only
# on another kernel (the debug kernel, release *-veildebug, has no CRC32
# for tcw) is it allowed, and reported. The lmk and tcw specs with another
# sector size, which dm-crypt refuses by its rules, are checked as refused
# (both_refuse) and counted in neither.

SPECS=$TOP/tests/interop/specs.txt
INTEROP_REFUSED=0	# specs both targets refused (interop_one)
DATA=$((1024 * 1024))	# bytes written each way
LEN=8192		# sectors mapped (4 MiB)
OFFSET=2048		# sectors skipped on the device (1 MiB)

# features "WORDS...": the optional group for a table line ("" if none)
features() {
	set -- $1
	[ $# -gt 0 ] && echo "$# $*"
	return 0
}

# interop_one DEV SPEC KEY_BYTES IV_OFFSET "FEATURES" ["VEIL-ONLY FEATURES"]
interop_one() {
	local dev=$1 spec=$2 key iv=$4 feat args vargs
	key=$(randhex "$3")
	feat=$(features "$5")
	args="$spec $key $iv $dev $OFFSET${feat:+ $feat}"
	feat=$(features "$5 ${6:-}")
	vargs="$spec $key $iv $dev $OFFSET${feat:+ $feat}"

	# Write somewhere in the middle, not only at sector 0 of the mapping.
	local at=$((DATA))

	# A kernel without one of the spec's algorithms (the debug kernel has
	# no CRC32 for tcw): dm-crypt must refuse it too, and the kernel must
	# not be a stock one (see the head). Counted in INTEROP_REFUSED.
	if ! dm_create vt-veil "0 $LEN veil $vargs" 2>/dev/null; then
		if dm_create vt-crypt "0 $LEN crypt $args" 2>/dev/null; then
			dm_remove vt-crypt
			fail "$spec: dm-crypt takes it, veil refuses it"
		fi
		case "$(uname -r)" in
		*-veildebug) ;;
		*) fail "$spec ${feat:-(no features)}: refused by both on the stock kernel $(uname -r)" ;;
		esac
		echo "refused: $spec refused by both on $(uname -r)"
		INTEROP_REFUSED=$((INTEROP_REFUSED + 1))
		return 0
	fi
	write_direct "$WORK/a" /dev/mapper/vt-veil "$at"
	same_data "$WORK/a" /dev/mapper/vt-veil "$at" || fail "$spec: veil does not read back its own data"
	dm_remove vt-veil
	no_plaintext "$dev"

	dm_create vt-crypt "0 $LEN crypt $args"
	same_data "$WORK/a" /dev/mapper/vt-crypt "$at" || fail "$spec $feat: written by veil, dm-crypt reads other data"
	write_direct "$WORK/b" /dev/mapper/vt-crypt "$at"
	dm_remove vt-crypt

	dm_create vt-veil "0 $LEN veil $vargs"
	same_data "$WORK/b" /dev/mapper/vt-veil "$at" || fail "$spec $feat: written by dm-crypt, veil reads other data"
	dm_remove vt-veil
	echo "ok: $spec ${feat:-(no features)} iv_offset=$iv"
}

# specs_covering KIND...: an extended regex matching the specs of
# specs.txt that bring a KIND (mode, cipher, iv, keys: the key count) not
# seen in the specs before them: with "mode cipher iv keys" every mode,
# cipher, IV generator and key count once. Sector sizes change how sectors are cut and numbered, which only
# these three can tell apart; interop/001 runs every spec.
specs_covering() {
	local spec bytes mode cipher iv keys kind new re=
	local -A seen=()
	while read -r spec bytes; do
		case "$spec" in ''|'#'*) continue ;; esac
		# aes-xts-plain64: xts aes plain64; capi:cbc(aes)-essiv:sha256:
		# capi:cbc aes essiv; aes: no mode or IV named
		if [[ "$spec" =~ ^capi:([a-z0-9]+)\(([a-z0-9,]+)\)-?([a-z0-9]*) ]]; then
			mode=capi:${BASH_REMATCH[1]} cipher=${BASH_REMATCH[2]} iv=${BASH_REMATCH[3]} keys=1
		elif [[ "$spec" =~ ^([a-z0-9,]+)(:[0-9]+)?-?([a-z0-9]*)-?([a-z0-9]*) ]]; then
			cipher=${BASH_REMATCH[1]} mode=${BASH_REMATCH[3]} iv=${BASH_REMATCH[4]}
			keys=${BASH_REMATCH[2]:-:1} keys=${keys#:}
		else
			fail "cannot parse the spec $spec"
		fi
		new=
		for kind; do
			[ -n "${seen[$kind:${!kind}]:-}" ] || new=1
			seen[$kind:${!kind}]=1
		done
		[ -n "$new" ] || continue
		spec=${spec//(/\\(}
		re+="${re:+|}${spec//)/\\)}"
	done < "$SPECS"
	echo "^($re)\$"
}

# both_refuse DEV SPEC KEY_BYTES IV_OFFSET "FEATURES": neither target
# takes the table line
both_refuse() {
	local target args
	args="$2 $(randhex "$3") $4 $1 $OFFSET $(features "$5")"
	for target in veil crypt; do
		if dmsetup create vt-refused --table "0 $LEN $target $args" 2>/dev/null; then
			dmsetup remove vt-refused
			fail "$target takes $2 with $5"
		fi
	done
	echo "ok: $2 with $5 refused by both"
}

# interop_all IV_OFFSET "FEATURES" ["VEIL-ONLY FEATURES" [SPEC-PATTERN]]:
# every spec of specs.txt (matching the extended regex SPEC-PATTERN)
interop_all() {
	local dev spec bytes n=0 refused refused0=$INTEROP_REFUSED
	[ -f "$WORK/a" ] || plaintext "$WORK/a" "$DATA"
	[ -f "$WORK/b" ] || plaintext "$WORK/b" "$DATA"
	mkloop $(((OFFSET + LEN) * 512))
	dev=$LOOP
	while read -r -u 3 spec bytes; do
		case "$spec" in ''|'#'*) continue ;; esac
		if [ -n "${4:-}" ] && ! [[ "$spec" =~ $4 ]]; then continue; fi
		# lmk and tcw work on 512-byte sectors: no other sector size.
		if [[ "$spec" =~ -(lmk|tcw)$ && "$2" == *sector_size* ]]; then
			both_refuse "$dev" "$spec" "$bytes" "$1" "$2"
			continue
		fi
		refused=$INTEROP_REFUSED
		interop_one "$dev" "$spec" "$bytes" "$1" "$2" "${3:-}"
		[ "$INTEROP_REFUSED" != "$refused" ] || n=$((n + 1))
	done 3< "$SPECS"
	refused=$((INTEROP_REFUSED - refused0))
	[ -n "${4:-}" ] || [ "$n" -ge 20 ] || fail "only $n specs checked ($refused refused by both)"
	info "$n cipher specs interoperate with dm-crypt, $refused refused by both"
}
