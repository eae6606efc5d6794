#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# veilsetup benchmark: PBKDF rows and every cipher/mode/key-size row with
# non-zero figures, JSON, filtered runs, an unknown cipher.
. "$(dirname "$0")/../lib.sh"
requires root

# PBKDF rows first, as cryptsetup's (short and small: -i, --pbkdf-memory).
"$VS" benchmark -i 100 --pbkdf-memory 65536 | tee "$WORK/table"
[ "$(grep -c 'iterations per second for 256-bit key' "$WORK/table")" = 3 ] || fail "PBKDF2 rows"
[ "$(grep -cE '^argon2id? +[0-9]+ iterations, +65536 memory' "$WORK/table")" = 2 ] || fail "Argon2 rows"
rows=$(grep -c 'MiB/s' "$WORK/table")
[ "$rows" = 24 ] || fail "$rows rows, want 24"
grep 'MiB/s' "$WORK/table" | grep -q ' 0.0 MiB/s' && fail "a zero figure"
for c in aes serpent twofish cast6 blowfish; do
	for m in cbc ctr; do grep -Eq "(^| )$c-$m " "$WORK/table" || fail "no $c-$m row"; done
done
for c in aes serpent twofish cast6; do grep -Eq "(^| )$c-xts " "$WORK/table" || fail "no $c-xts row"; done

# JSON: the same rows, PBKDF2 and AES only (the full table ran above).
"$VS" benchmark --json -i 100 --pbkdf pbkdf2 > "$WORK/json"
[ "$(grep -c '"pbkdf"' "$WORK/json")" = 3 ] || fail "JSON PBKDF rows: $(cat "$WORK/json")"
"$VS" benchmark --json -c aes > "$WORK/json"
[ "$(grep -c '"cipher"' "$WORK/json")" = 6 ] || fail "JSON cipher rows: $(cat "$WORK/json")"
grep -q '"encryption_mib_s": 0.0' "$WORK/json" && fail "zero in JSON"

"$VS" benchmark -c aes-xts -s 512 | tee "$WORK/one"
[ "$(grep -c 'MiB/s' "$WORK/one")" = 1 ] || fail "filter -c aes-xts -s 512"
if "$VS" benchmark -c nosuch-xts > "$WORK/err" 2>&1; then fail "unknown cipher accepted"; fi
grep -q 'not available' "$WORK/err" || fail "unknown cipher message"
