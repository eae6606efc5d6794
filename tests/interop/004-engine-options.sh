#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The engine's options change where the cipher runs, never the bytes: with
# fan-out forced onto 4 KiB chunks, with fan-out off, without keystream-ahead,
# and with dm-crypt's workqueue options, veil and dm-crypt read each other's
# data (1 MiB requests, so that large bios are split). CTR keystream-ahead:
# 64 KiB reads with the defaults and with same_cpu_crypt, and 1 MiB reads
# in 4 KiB chunks. high_priority where dm-crypt has it (6.10 on).
. "$(dirname "$0")/../lib.sh"
requires root
requires module dm_crypt loop
veil_load
. "$TOP/tests/interop/interop.sh"
BS=1048576
specs='^(aes-xts-plain64|aes-ctr-plain64|blowfish-ctr-plain64|serpent-cbc-essiv:sha256)$'
interop_all 12345 "" "fanout_chunk:4096" "$specs"
interop_all 12345 "" "no_fanout" "$specs"
interop_all 12345 "" "no_keystream_ahead fanout_chunk:8192" "$specs"
interop_all 12345 "" "keystream_ahead_max:1048576 fanout_chunk:4096" "$specs"
BS=65536 interop_all 12345 "" "" '^(aes-ctr-plain64|blowfish-ctr-plain64)$'
BS=65536 interop_all 12345 "same_cpu_crypt" "" '^aes-ctr-plain64$'
interop_all 12345 "same_cpu_crypt no_read_workqueue" "" "$specs"
interop_all 12345 "no_write_workqueue submit_from_crypt_cpus" "fanout_chunk:4096" "$specs"
interop_all $((8 * 1543)) "sector_size:4096 iv_large_sectors no_read_workqueue" "fanout_chunk:4096" "$specs"
# dm-crypt's high_priority, from 6.10 on (6.1's dm-crypt refuses it).
if kernel_at_least 6.10; then
	interop_all 12345 "high_priority" "" "$specs"
	interop_all 12345 "high_priority no_read_workqueue no_write_workqueue" "fanout_chunk:4096" "$specs"
fi
