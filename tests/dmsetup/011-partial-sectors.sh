#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bios that are not whole encryption sectors, sent by the test module
# tests/kmod/veil_bio_test (user space cannot make them): 256 and 768
# bytes, and with sector_size:4096 a 512-byte bio and a 4 KiB bio at
# sector 1. veil and dm-crypt, same key,
# each over its own zeroed device, must answer every bio alike (status,
# and how many bytes of a read's page changed), the two devices below must
# end up identical, and no marker byte of a write may reach a device
# below in the clear. What the dm core does before a target sees such a
# bio is in docs/table-line.md ("Bios that are not whole sectors").
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_crypt
veil_load

ko=$TOP/build/test-modules/$(uname -r)/veil_bio_test.ko
[ -f "$ko" ] || skip "no $ko (scripts/build-test-modules.sh)"

# send TARGET OP BYTES SECTOR: one bio; prints what the module logged
send() {
	kmsg_mark
	insmod "$ko" dev=/dev/mapper/$1 op=$2 bytes=$3 sector=$4 || fail "$1: $2 $3 at $4: the test module failed"
	rmmod veil_bio_test
	kmsg_since | sed -n "s/.*veil_bio_test: \($2 $3 at $4\) on [^:]*: /\1: /p" | tail -1
}
# the longest run of marker bytes (0x5a) on a device
marker_run() { od -An -v -tx1 "$1" | tr -s ' \n' '\n\n' | awk '$1 == "5a" { n++; if (n > m) m = n; next } { n = 0 } END { print m + 0 }'; }

mkloop 1M
LV=$LOOP
mkloop 1M
LC=$LOOP
# Each bio is one load of the test module (seconds under emulation): the
# cases are the shapes, once each. CTR at 512 bytes, where a part of a
# sector could be decrypted; XTS at 4096, where 512-byte sectors are whole
# to the dm core but not to the cipher.
for ss in 512 4096; do
	opts= cases="256:0 768:0" specs="aes-ctr-plain64 $(randhex 32)"
	[ $ss = 4096 ] && opts=" 1 sector_size:4096" cases="512:0 4096:1" specs="aes-xts-plain64 $(randhex 64)"
	for spec in "$specs"; do
		name="${spec%% *} sector_size $ss"
		dd if=/dev/zero of=$LV bs=1M count=1 oflag=direct status=none
		dd if=/dev/zero of=$LC bs=1M count=1 oflag=direct status=none
		dm_create vv "0 2048 veil $spec 0 $LV 0$opts"
		dm_create vc "0 2048 crypt $spec 0 $LC 0$opts"
		for c in $cases; do
			for op in read write; do
				v=$(send vv $op ${c%:*} ${c#*:}) c2=$(send vc $op ${c%:*} ${c#*:})
				info "$name: veil $v | crypt $c2"
				[ -n "$v" ] && [ "${v#*: }" = "${c2#*: }" ] ||
					fail "$name: veil answered '$v', dm-crypt '$c2'"
			done
		done
		dm_remove vv
		dm_remove vc
		cmp -s $LV $LC || fail "$name: the devices below veil and dm-crypt differ"
		[ "$(marker_run $LV)" -lt 16 ] || fail "$name: marker bytes reached the device below veil in the clear"
	done
done
