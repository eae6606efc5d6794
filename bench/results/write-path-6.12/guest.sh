#!/bin/bash
# Scratch measurement kept with its results: see README.md.
# 1 MiB sequential writes at QD1 on brd, aes-xts-plain64: fio's submission
# and completion times per target, then where the time of one write goes
# (function_graph on the write path's functions, global clock).
set -eu
RES=$1
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
. "$TOP/tests/lib.sh"
modprobe -a dm_mod dm_crypt
veil_load
modprobe brd rd_nr=1 rd_size=$((256 * 1024))
dd if=/dev/urandom of=/dev/ram0 bs=1M count=256 oflag=direct status=none
KEY=$(randhex 64)
S=$(blockdev --getsz /dev/ram0)
dm_create w-veil "0 $S veil aes-xts-plain64 $KEY 0 /dev/ram0 0"
dm_create w-nofan "0 $S veil aes-xts-plain64 $KEY 0 /dev/ram0 0 1 no_fanout"
dm_create w-crypt "0 $S crypt aes-xts-plain64 $KEY 0 /dev/ram0 0"
dm_create w-cryptnowq "0 $S crypt aes-xts-plain64 $KEY 0 /dev/ram0 0 2 no_read_workqueue no_write_workqueue"
: > "$RES/out.txt"
one() {
	fio --name=w --filename="$1" --rw=write --bs=1m --iodepth=1 --ioengine=libaio \
		--direct=1 --time_based --runtime="${RUNTIME:-4}" --ramp_time=1 --size=256M \
		--output-format=json > "$RES/$2.json"
	python3 -c "
import json; j=json.load(open('$RES/$2.json'))['jobs'][0]['write']
print('$2', 'MB/s', round(j['bw']/1024,1), 'slat', round(j['slat_ns']['mean']/1000), 'clat', round(j['clat_ns']['mean']/1000), 'lat', round(j['lat_ns']['mean']/1000))" | tee -a "$RES/out.txt"
}
for r in 1 2 3; do
	one /dev/ram0 raw-$r
	one /dev/mapper/w-crypt crypt-$r
	one /dev/mapper/w-cryptnowq cryptnowq-$r
	one /dev/mapper/w-veil veil-$r
	one /dev/mapper/w-nofan nofan-$r
done

T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T
want="veil_io_map veil_pages_alloc veil_job_run_chunk veil_io_finish veil_write_end_io
	brd_submit_bio crypt_map kcryptd_crypt kcryptd_crypt_write_io_submit crypt_endio
	crypt_alloc_buffer crypt_convert"
for f in $want; do
	grep -qx "$f\( \[.*\]\)\?" $T/available_filter_functions && echo "$f"
done > "$RES/traced-functions.txt"
cat "$RES/traced-functions.txt" > $T/set_ftrace_filter
echo global > $T/trace_clock
echo function_graph > $T/current_tracer
echo funcgraph-abstime > $T/trace_options
echo funcgraph-proc > $T/trace_options
echo funcgraph-tail > $T/trace_options
echo 16384 > $T/buffer_size_kb
for d in w-veil w-crypt; do
	echo > $T/trace
	echo 1 > $T/tracing_on
	RUNTIME=2 one /dev/mapper/$d traced-$d
	echo 0 > $T/tracing_on
	cat $T/trace > "$RES/trace-$d.txt"
done
echo nop > $T/current_tracer
echo finished >> "$RES/out.txt"
