#!/bin/bash
# Scratch measurement kept with its results: see README.md.
# For the workloads where veil misses issue 13's goals: MB/s and how busy
# each vCPU is while fio runs (from /proc/stat, a 3 s window inside the
# 4 s run, after fio's 1 s ramp), for veil and dm-crypt's two tables on
# brd with aes-xts-plain64; for veil also where its chunks ran (the
# status counters' change over the run). 3 interleaved rounds. With
# "nullblk": 1 MiB reads at QD1 on null_blk with 100 us completions,
# aes-ctr-plain64, veil with and without keystream-ahead, 5 rounds.
#
#   guest.sh RESULTS [nullblk]
set -eu
RES=$1
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
. "$TOP/tests/lib.sh"
modprobe -a dm_mod dm_crypt
veil_load
KEY=$(randhex 64)
if [ "${2:-brd}" = nullblk ]; then
	modprobe null_blk queue_mode=2 irqmode=2 completion_nsec=100000 \
		memory_backed=1 gb=1 nr_devices=1
	DEV=/dev/nullb0 SPEC="aes-ctr-plain64 ${KEY:0:64}" ROUNDS=5
	TARGETS="crypt nowq veil noahead"
	workloads="seq-read-1m-qd1 read 1m 1 1"
else
	modprobe brd rd_nr=1 rd_size=$((256 * 1024))
	DEV=/dev/ram0 SPEC="aes-xts-plain64 $KEY" ROUNDS=3
	TARGETS="crypt nowq veil"
	workloads="rand-read-4k-qd32-1job randread 4k 32 1
rand-read-4k-qd32 randread 4k 32 2
seq-read-1m-qd8 read 1m 8 1
seq-read-1m-qd1 read 1m 1 1
seq-write-1m-qd1 write 1m 1 1
seq-read-512k-qd1 read 512k 1 1
seq-write-512k-qd1 write 512k 1 1"
fi
dd if=/dev/urandom of=$DEV bs=1M count=256 oflag=direct status=none
S=$(blockdev --getsz $DEV)
dm_create c-veil "0 $S veil $SPEC 0 $DEV 0"
dm_create c-noahead "0 $S veil $SPEC 0 $DEV 0 1 no_keystream_ahead"
dm_create c-crypt "0 $S crypt $SPEC 0 $DEV 0"
dm_create c-nowq "0 $S crypt $SPEC 0 $DEV 0 2 no_read_workqueue no_write_workqueue"
echo "kernel $(uname -r) module $VEIL_KO device $DEV" >> "$RES/out.txt"

# cpu_ticks: "cpuN busy total irq" per CPU, in ticks since boot
cpu_ticks() {
	awk '/^cpu[0-9]/ { busy = $2 + $3 + $4 + $7 + $8 + $9;
		print $1, busy, busy + $5 + $6, $7 + $8 }' /proc/stat
}
# chunk_counters NAME: veil's counters of where chunks ran
chunk_counters() {
	dmsetup status "c-$1" | tr ' ' '\n' |
		grep -E '^(reads|writes|fanout|keystream_(hit|miss)|chunks_(map|endio|queue|helper)|cpu_chunks)=' |
		tr '\n' ' '
}

# one ROUND TARGET WORKLOAD RW BS QD JOBS
one() {
	local out="$RES/$2-$3-r$1.json" before after
	fio --output-format=json --output="$out" --name=w --filename=/dev/mapper/c-"$2" \
		--direct=1 --ioengine=libaio --time_based --runtime=4 --ramp_time=1 \
		--size=256M --randrepeat=0 --group_reporting \
		--rw="$4" --bs="$5" --iodepth="$6" --numjobs="$7" &
	local fio=$!
	[[ "$2" = crypt || "$2" = nowq ]] || before=$(chunk_counters "$2")
	sleep 1.5
	cpu_ticks > "$RES/ticks0"
	sleep 3
	cpu_ticks > "$RES/ticks1"
	wait "$fio"
	[[ "$2" = crypt || "$2" = nowq ]] || after=$(chunk_counters "$2")
	python3 - "$out" "$RES/ticks0" "$RES/ticks1" "$1 $2 $3" "${before:-}" "${after:-}" <<'PY' | tee -a "$RES/out.txt"
import json, sys
j = json.load(open(sys.argv[1]))['jobs'][0]
mbs = (j['read']['bw'] + j['write']['bw']) / 1024
t0 = {l.split()[0]: list(map(int, l.split()[1:])) for l in open(sys.argv[2])}
t1 = {l.split()[0]: list(map(int, l.split()[1:])) for l in open(sys.argv[3])}
cpus = []
for c in sorted(t1):
    busy, total, irq = (b - a for a, b in zip(t0[c], t1[c]))
    cpus.append('%s %3.0f%% (irq+softirq %2.0f%%)' % (c, 100 * busy / total, 100 * irq / total))
line = '%s MB/s %.1f | %s' % (sys.argv[4], mbs, ' | '.join(cpus))
if sys.argv[5]:
    b = dict(kv.split('=', 1) for kv in sys.argv[5].split())
    a = dict(kv.split('=', 1) for kv in sys.argv[6].split())
    d = ['%s=%d' % (k, int(a[k]) - int(b[k])) for k in a if k != 'cpu_chunks']
    pc = lambda s: dict(x.split(':') for x in s.split(','))
    cb, ca = pc(b['cpu_chunks']), pc(a['cpu_chunks'])
    d.append('cpu_chunks=' + ','.join('%s:%d' % (k, int(ca[k]) - int(cb[k])) for k in ca))
    line += ' | ' + ' '.join(d)
print(line)
PY
}

for r in $(seq 1 $ROUNDS); do
	while read -r wl rw bs qd jobs; do
		for t in $TARGETS; do
			one "$r" "$t" "$wl" "$rw" "$bs" "$qd" "$jobs"
		done
	done <<< "$workloads"
done
rm -f "$RES/ticks0" "$RES/ticks1"
echo finished >> "$RES/out.txt"
