#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dmsetup scripting on a loop file: create, table, status, suspend, resume,
# reload with a new length, key wipe/set messages, remove, module unload.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
veil_load

mkloop 16M
dev=$LOOP
key=$(randhex 64)
line="0 16384 veil aes-xts-plain64 $key 7 $(majmin "$dev") 0"
dm_create vt "$line"

[ "$(dmsetup table --showkeys vt)" = "$line" ] || fail "table: $(dmsetup table --showkeys vt)"
# The printed line is accepted unchanged.
dmsetup reload vt --table "$(dmsetup table --showkeys vt)"
dmsetup resume vt
dmsetup status vt | grep -q '^0 16384 veil' || fail "status: $(dmsetup status vt)"

plaintext "$WORK/data" $((1024 * 1024))
write_direct "$WORK/data" /dev/mapper/vt
same_data "$WORK/data" /dev/mapper/vt || fail "data does not read back"

dmsetup suspend vt
dmsetup info vt | grep -q SUSPENDED || fail "not suspended"
dmsetup resume vt
same_data "$WORK/data" /dev/mapper/vt || fail "data lost over suspend/resume"

# Reload with a new length, then back.
dmsetup reload vt --table "0 8192 veil aes-xts-plain64 $key 7 $dev 0"
dmsetup resume vt
[ "$(sectors /dev/mapper/vt)" = 8192 ] || fail "length after shrink: $(sectors /dev/mapper/vt)"
same_data "$WORK/data" /dev/mapper/vt || fail "data lost over shrink"
dmsetup reload vt --table "$line"
dmsetup resume vt
[ "$(sectors /dev/mapper/vt)" = 16384 ] || fail "length after grow"

# Key messages need a suspended device.
expect_fail dmsetup message vt 0 key wipe
dmsetup suspend vt
expect_fail dmsetup message vt 0 key set "$(randhex 32)"	# wrong size
expect_fail dmsetup message vt 0 key frobnicate
expect_fail dmsetup message vt 0 frobnicate
dmsetup message vt 0 key wipe
zeros=$(printf '0%.0s' $(seq 128))
dmsetup table --showkeys vt | grep -q " $zeros " || fail "key not wiped in table"
expect_fail dmsetup resume vt
dmsetup info vt | grep -q SUSPENDED || fail "resumed without a key"
dmsetup message vt 0 key set "$(randhex 64)"
dmsetup resume vt
same_data "$WORK/data" /dev/mapper/vt && fail "wrong key gave the plaintext"
dmsetup suspend vt
dmsetup message vt 0 key set "$key"
dmsetup resume vt
same_data "$WORK/data" /dev/mapper/vt || fail "data does not read back after key set"

dm_remove vt

# Every option of dm-target/veil-options.h, given out of order, prints back
# in the canonical order (dm-crypt's, then veil's own) and the printed
# line is accepted unchanged.
all="allow_discards same_cpu_crypt high_priority submit_from_crypt_cpus no_read_workqueue no_write_workqueue integrity:16:none sector_size:4096 iv_large_sectors integrity_key_size:32 fanout_chunk:8192 keystream_ahead_max:262144 aead_masks:16 no_fanout no_keystream_ahead"
words=$(sed -nE 's/^#define VEIL_OPTV?_[A-Z_]+[[:space:]]+"([a-z_]+)"$/\1/p' "$TOP/dm-target/veil-options.h" | sort)
[ "$(printf '%s\n' $all | sed 's/:.*//' | sort)" = "$words" ] ||
	fail "the options here are not those of dm-target/veil-options.h: $(echo $words)"
n=$(echo "$words" | wc -l)
[ "$n" = "$(sed -nE 's/^#define VEIL_MAX_OPTS[[:space:]]+([0-9]+)$/\1/p' "$TOP/dm-target/veil-options.h")" ] ||
	fail "VEIL_MAX_OPTS is not the number of options in dm-target/veil-options.h ($n)"
# integrity:16:none with plain64: nothing is kept in metadata, so no
# dm-integrity is needed below (as in dm-crypt).
dm_create vt "0 16384 veil aes-xts-plain64 $key 8 $dev 0 $n aead_masks:16 keystream_ahead_max:262144 no_keystream_ahead integrity_key_size:32 fanout_chunk:8192 iv_large_sectors no_fanout sector_size:4096 no_write_workqueue integrity:16:none no_read_workqueue submit_from_crypt_cpus high_priority same_cpu_crypt allow_discards"
want="0 16384 veil aes-xts-plain64 $key 8 $(majmin "$dev") 0 $n $all"
[ "$(dmsetup table --showkeys vt)" = "$want" ] || fail "table with options: $(dmsetup table --showkeys vt)"
dmsetup reload vt --table "$want"
dmsetup resume vt
same_data "$WORK/data" /dev/mapper/vt && fail "4096-byte sectors read the 512-byte data"
dm_remove vt
rmmod dm_veil || fail "module does not unload"
veil_load
