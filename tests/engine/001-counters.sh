#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Status counters: bytes and requests match the I/O done, large requests
# fan out over more than one CPU, CTR reads count keystream hits and
# misses (their keystream counts as decryption), "stats reset" zeroes
# every counter, and the measured costs that decide helper wake-ups are
# shown (and kept across a reset: they are not counters).
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
veil_load

field() { dmsetup status "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
chunk_cpus() { field "$1" cpu_chunks | tr ',' '\n' | awk -F: '$2 > 0' | wc -l; }
chunk_sum() { field "$1" cpu_chunks | tr ',' '\n' | awk -F: '{ s += $2 } END { print s }'; }

mkloop 64M
dm_create vt "0 131072 veil aes-xts-plain64 $(randhex 64) 0 $LOOP 0"
# udev and blkid read a new device; start counting after them.
udevadm settle
dmsetup message vt 0 stats reset
dmsetup status vt
for f in reads writes bytes_decrypted bytes_encrypted cipher_ns_decrypt \
	 cipher_ns_encrypt fanout keystream_hit keystream_miss keystream_skip; do
	[ "$(field vt $f)" = 0 ] || fail "$f not zero on a new device"
done

# 32 writes of 1 MiB: 32 MiB encrypted, each split into 16 chunks of 64 KiB.
dd if=/dev/urandom of=/dev/mapper/vt bs=1M count=32 oflag=direct status=none
# Closing a written device makes udev probe it again: let that finish.
udevadm settle
dmsetup status vt
[ "$(field vt writes)" = 32 ] || fail "writes=$(field vt writes), want 32"
[ "$(field vt bytes_encrypted)" = $((32 << 20)) ] || fail "bytes_encrypted=$(field vt bytes_encrypted)"
[ "$(field vt fanout)" -ge 1 ] || fail "no request fanned out"
# 16 chunks of 64 KiB per write; udev's probe reads may add a few.
[ "$(chunk_sum vt)" -ge $((32 * 16)) ] || fail "chunks=$(chunk_sum vt), want 512 or more"
[ "$(field vt cipher_ns_encrypt)" -gt 0 ] || fail "no cipher time counted"
if [ "$(nproc)" -gt 1 ]; then
	[ "$(chunk_cpus vt)" -gt 1 ] || fail "all chunks ran on one CPU"
	[ "$(field vt helper_delay_ns)" -gt 0 ] || fail "helpers woken, no helper delay measured"
fi
# 1 MiB writes measure the cipher's cost per KiB: a running average over
# their first chunks, so near the whole run's mean (the bound checks the
# unit: per byte or per MiB would be 1024 times off).
per_kib=$(field vt cipher_ns_kib_encrypt)
mean=$(($(field vt cipher_ns_encrypt) * 1024 / $(field vt bytes_encrypted)))
info "cipher_ns_kib_encrypt=$per_kib, mean over the writes $mean"
[ "$per_kib" -gt 0 ] || fail "split writes measured no cipher cost"
[ "$per_kib" -le $((mean * 64)) ] && [ "$per_kib" -ge $((mean / 64)) ] ||
	fail "cipher_ns_kib_encrypt=$per_kib, far from the mean $mean"

# Reads: 4 KiB at a time, no fan-out.
dmsetup message vt 0 stats reset
[ "$(field vt writes)" = 0 ] && [ "$(chunk_sum vt)" = 0 ] || fail "stats reset left counts"
[ "$(field vt cipher_ns_kib_encrypt)" = "$per_kib" ] || fail "stats reset changed the measured cost"
kib_decrypt=$(field vt cipher_ns_kib_decrypt)
dd if=/dev/mapper/vt of=/dev/null bs=4k count=64 iflag=direct status=none
# Small bios give no cost sample: they never touch the shared average.
[ "$(field vt cipher_ns_kib_decrypt)" = "$kib_decrypt" ] ||
	fail "4 KiB reads changed cipher_ns_kib_decrypt"
[ "$(field vt reads)" = 64 ] || fail "reads=$(field vt reads), want 64"
[ "$(field vt bytes_decrypted)" = $((64 * 4096)) ] || fail "bytes_decrypted=$(field vt bytes_decrypted)"
[ "$(field vt fanout)" = 0 ] || fail "4 KiB reads fanned out"
dm_remove vt

# CTR reads compute their keystream ahead: every read is a hit or a miss.
dm_create vt "0 131072 veil aes-ctr-plain64 $(randhex 32) 0 $LOOP 0"
udevadm settle
dmsetup message vt 0 stats reset
dd if=/dev/mapper/vt of=/dev/null bs=64k count=100 iflag=direct status=none
dmsetup status vt
hit=$(field vt keystream_hit) miss=$(field vt keystream_miss) skip=$(field vt keystream_skip)
[ $((hit + miss + skip)) = 100 ] || fail "keystream hit $hit + miss $miss + skip $skip != 100 reads"
[ $((hit + miss)) -gt 0 ] || fail "keystream-ahead never used"
# Keystream serves reads: it counts as decryption, reads encrypt nothing.
[ "$(field vt bytes_decrypted)" = $((100 << 16)) ] ||
	fail "CTR reads: bytes_decrypted=$(field vt bytes_decrypted), want $((100 << 16))"
[ "$(field vt bytes_encrypted)" = 0 ] ||
	fail "CTR reads: bytes_encrypted=$(field vt bytes_encrypted), want 0 (keystream counted as writes)"
dm_remove vt

# Turned off, it is not used.
dm_create vt "0 131072 veil aes-ctr-plain64 $(randhex 32) 0 $LOOP 0 1 no_keystream_ahead"
udevadm settle
dmsetup message vt 0 stats reset
dd if=/dev/mapper/vt of=/dev/null bs=64k count=10 iflag=direct status=none
[ "$(field vt keystream_hit)" = 0 ] && [ "$(field vt keystream_miss)" = 0 ] ||
	fail "keystream-ahead used with no_keystream_ahead"
[ "$(field vt reads)" = 10 ] || fail "reads=$(field vt reads)"
dm_remove vt
