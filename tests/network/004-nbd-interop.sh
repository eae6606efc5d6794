#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Through the network device: for the specs of tests/interop/specs.txt
# that bring a mode not seen before (seven: XTS with both key sizes, CBC
# with ESSIV, CTR, the plain "aes" and both capi: forms; interop/001 runs
# every spec on a local device, and the network carries any cipher's bytes
# alike),
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
covering=$(specs_covering mode)
while read -r -u 3 spec bytes; do
	case "$spec" in ''|'#'*) continue ;; esac
	[[ "$spec" =~ $covering ]] || continue
	interop_one "$NBD" "$spec" "$bytes" 99 ""
	n=$((n + 1))
done 3< "$SPECS"
[ "$n" -eq 7 ] || fail "$n specs checked, not the 7 that bring every mode"
for spec in "aes-xts-plain64 64" "aes-ctr-plain64 32"; do
	interop_one "$NBD" ${spec% *} ${spec#* } $((8 * 99)) "sector_size:4096 iv_large_sectors"
done
nbd_disconnect
# The server's copy: what the last write left, and never plaintext.
no_plaintext "$EXPORT"
info "$n cipher specs interoperate with dm-crypt over NBD"
