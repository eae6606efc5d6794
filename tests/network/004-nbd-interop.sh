#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Through the network device: for the specs of tests/interop/specs.txt
# that bring a mode or a cipher not seen before (ten: every mode, the
# plain "aes" and capi: forms, every cipher; interop/001 runs all of them
# on a local device, and the network carries any cipher's bytes alike),
# data veil writes over NBD reads back through dm-crypt with the same
# table line and the reverse, and the server's export file never holds the
# plaintext; then XTS and CTR again with 4096-byte sectors.
. "$(dirname "$0")/../lib.sh"
requires root
requires module dm_crypt
. "$TOP/tests/network/nbd.sh"
. "$TOP/tests/interop/interop.sh"
veil_load
nbd_setup 8M
nbd_connect
plaintext "$WORK/a" "$DATA"
plaintext "$WORK/b" "$DATA"
n=0
declare -A seen
while read -r -u 3 spec bytes; do
	case "$spec" in ''|'#'*) continue ;; esac
	# aes-xts-plain64: mode xts, cipher aes; capi:cbc(aes)-...: capi:cbc, aes
	mode=$(echo "$spec" | sed -E 's/^capi:([a-z0-9]+)\(.*/capi:\1/; t; s/^[a-z0-9]+(:[0-9]+)?-?([a-z0-9]*).*/\2/')
	cipher=$(echo "$spec" | sed -E 's/^capi:[a-z0-9]+\(([a-z0-9]+)\).*/\1/; t; s/^([a-z0-9]+).*/\1/')
	[ -z "${seen[m$mode]:-}" ] || [ -z "${seen[c$cipher]:-}" ] || continue
	seen[m$mode]=1 seen[c$cipher]=1
	interop_one "$NBD" "$spec" "$bytes" 99 ""
	n=$((n + 1))
done 3< "$SPECS"
[ "$n" -eq 10 ] || fail "$n specs checked, not the 10 of every mode and cipher"
for spec in "aes-xts-plain64 64" "aes-ctr-plain64 32"; do
	interop_one "$NBD" ${spec% *} ${spec#* } $((8 * 99)) "sector_size:4096 iv_large_sectors"
done
nbd_disconnect
# The server's copy: what the last write left, and never plaintext.
no_plaintext "$EXPORT"
info "$n cipher specs interoperate with dm-crypt over NBD"
