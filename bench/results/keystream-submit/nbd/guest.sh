#!/bin/bash
# Scratch: CPU busy share of the guest during 1 MiB QD1 random reads over
# NBD with 2 ms netem, raw and through veil/dm-crypt CTR.
set -eu
RES=$1
TOP=$(cd "$(dirname "$0")/../../../.." && pwd)
. "$TOP/tests/lib.sh"
. "$TOP/tests/network/nbd.sh"
modprobe -a dm_mod dm_crypt
veil_load
nbd_setup 128M
nbd_connect
dd if=/dev/urandom of="$NBD" bs=1M count=128 oflag=direct status=none
KEY=$(randhex 32)
dm_create c-veil "0 $(blockdev --getsz "$NBD") veil aes-ctr-plain64 $KEY 0 $NBD 0"
dm_create c-ahead "0 $(blockdev --getsz "$NBD") veil aes-ctr-plain64 $KEY 0 $NBD 0 1 keystream_ahead_max:1048576"
dm_create c-crypt "0 $(blockdev --getsz "$NBD") crypt aes-ctr-plain64 $KEY 0 $NBD 0"
netem "delay 2ms"
# busy DEV: fio for 8 s; print the share of both CPUs not idle
busy() {
	local a b
	a=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
	fio --name=r --filename="$1" --rw=randread --bs=1m --iodepth=1 --ioengine=libaio \
		--direct=1 --time_based --runtime=8 --size=128M --output-format=json > "$RES/$2.json"
	b=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
	echo "$2: $(python3 -c "
a=[int(x) for x in '$a'.split()]; b=[int(x) for x in '$b'.split()]
busy=b[0]-a[0]; idle=b[1]-a[1]; print(f'busy {100*busy/(busy+idle):.0f}% of 2 CPUs')") p50 $(python3 -c "
import json; j=json.load(open('$RES/$2.json'))['jobs'][0]['read']
print(j['clat_ns']['percentile']['50.000000']//1000, 'us', round(j['bw']/1024,1), 'MB/s')")" | tee -a "$RES/out.txt"
}
for r in 1 2; do
	busy "$NBD" raw-$r
	busy /dev/mapper/c-crypt dm-crypt-$r
	busy /dev/mapper/c-veil veil-$r
	busy /dev/mapper/c-ahead veil-ahead-1m-$r
done
dmsetup status c-ahead | tr ' ' '\n' | grep keystream >> "$RES/out.txt"
netem ""
echo finished >> "$RES/out.txt"
