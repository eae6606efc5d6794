#!/bin/bash
set -eu
RES=$1
# VEIL_KO: a module built with idle-helpers.patch applied
export VEIL_KO=${VEIL_KO:?}
TOP=$(cd "$(dirname "$0")/../../../.." && pwd)
. "$TOP/tests/lib.sh"
modprobe -a dm_mod dm_crypt
veil_load
modprobe null_blk queue_mode=2 irqmode=2 completion_nsec=100000 memory_backed=1 gb=1 nr_devices=1
dd if=/dev/urandom of=/dev/nullb0 bs=1M count=256 oflag=direct status=none
KEY=$(randhex 32)
S=$(blockdev --getsz /dev/nullb0)
dm_create n-veil "0 $S veil aes-ctr-plain64 $KEY 0 /dev/nullb0 0"
dm_create n-noahead "0 $S veil aes-ctr-plain64 $KEY 0 /dev/nullb0 0 1 no_keystream_ahead"
P=/sys/module/dm_veil/parameters/exp_idle_helpers
one() {
	fio --name=r --filename="$1" --rw=randread --bs=64k --iodepth=1 --ioengine=libaio \
		--direct=1 --time_based --runtime=4 --ramp_time=1 --size=256M --output-format=json > "$RES/$2.json"
	python3 -c "
import json; j=json.load(open('$RES/$2.json'))['jobs'][0]['read']
print('$2', 'slat', round(j['slat_ns']['mean']/1000), 'clat', round(j['clat_ns']['mean']/1000), 'lat', round(j['lat_ns']['mean']/1000))" | tee -a "$RES/out.txt"
}
for r in 1 2 3; do
	echo 0 > $P; one /dev/mapper/n-veil veil-$r
	echo 1 > $P; one /dev/mapper/n-veil veil-idlehelpers-$r
	echo 0 > $P; one /dev/mapper/n-noahead noahead-$r
done
echo "$(dmsetup status n-veil)" >> "$RES/out.txt"
echo finished >> "$RES/out.txt"
