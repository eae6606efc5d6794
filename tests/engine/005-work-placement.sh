#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where the cipher runs, seen by the kernel's function tracer and by the
# chunks_* status counters, for dm-crypt's options and veil's defaults:
# - nothing runs in hard-IRQ context: a device that completes from a timer
#   interrupt (null_blk irqmode=2) gets its CTR keystream XORed and its
#   no_read_workqueue reads decrypted in softirq right after it; a CTR
#   read whose keystream is not ready when such a device completes it
#   (a miss) gets the XOR there and the rest of its data decrypted on the
#   crypt queue: no cipher call in softirq without no_read_workqueue;
# - no_read_workqueue, on a device that completes in the submitting task
#   (brd): the completion decrypts, in that task, with no helper;
# - no_write_workqueue: writes encrypt only in veil_map(), in the task;
# - the defaults: large writes start in veil_map() and are shared with
#   helpers; reads decrypt where they complete if that is a task (brd:
#   the reading task) and on the crypt queue if it is an interrupt
#   (null_blk), large ones shared with helpers either way;
# - same_cpu_crypt: a bio's chunks all run on one CPU: no helper on
#   another CPU (a CTR read's keystream goes to this CPU's own helper);
# - a deep queue on brd (fio, one job, 32 reads of 4 KiB in flight): its
#   reads also complete in its own submit_bio, one at a time, but it does
#   not wait for each: after the reads handed off to find that out, the
#   crypt queue decrypts a share of them on the other CPU; fio with one
#   read in flight waits for each, and only the probes (at most one read
#   in 256) go to the queue.
. "$(dirname "$0")/../lib.sh"
requires root
requires modinfo brd null_blk
requires cmd taskset fio
veil_load

FUNCS="veil_crypt_chunk veil_crypt_xor*"
# The function tracer shows which task, CPU and context ran each cipher
# call; a kernel without it (the debug kernel) is checked by the counters.
TRACER=yes
grep -qw function "$TRACEFS/available_tracers" 2>/dev/null ||
	{ mount -t tracefs nodev "$TRACEFS" 2>/dev/null; grep -qw function "$TRACEFS/available_tracers" 2>/dev/null; } ||
	{ TRACER=; info "no function tracer in this kernel: counters only"; }
CPUS=$(nproc --all)
rmmod brd 2>/dev/null || true
modprobe brd rd_nr=1 rd_size=131072
at_exit "rmmod brd"
rmmod null_blk 2>/dev/null || true
modprobe null_blk queue_mode=2 irqmode=2 completion_nsec=1000000 \
	memory_backed=1 gb=1 nr_devices=1
at_exit "rmmod null_blk"
[ -b /dev/ram0 ] && [ -b /dev/nullb0 ] || skip "no brd or null_blk device"
K64=$(randhex 64) K32=$(randhex 32)
dd if=/dev/urandom of=/dev/ram0 bs=1M count=64 oflag=direct status=none || fail "cannot fill /dev/ram0 ($(blockdev --getsize64 /dev/ram0) bytes)"
dd if=/dev/urandom of=/dev/nullb0 bs=1M count=64 oflag=direct status=none

# run NAME TABLE CMD...: map TABLE as vt, trace CMD (pinned to CPU 0), keep
# the trace in $WORK/NAME.trace and the status in $WORK/NAME.status
run() {
	local name=$1 table=$2
	shift 2
	dm_create vt "$table"
	udevadm settle
	# I/O through a node of our own: udev watches /dev/dm-N and would
	# read the device after each write, which would count here too.
	rm -f "$NODE"
	mknod "$NODE" b $(dmsetup info -c --noheadings -o major,minor --separator ' ' vt)
	dmsetup message vt 0 stats reset
	[ -z "$TRACER" ] || trace_start $FUNCS
	(taskset -pc 0 $BASHPID >/dev/null && "$@")
	if [ -n "$TRACER" ]; then
		trace_stop > "$WORK/$name.trace"
		grep -q veil_crypt "$WORK/$name.trace" || fail "$name: the tracer saw no cipher call"
	else
		: > "$WORK/$name.trace"
	fi
	dmsetup status vt > "$WORK/$name.status"
	dm_remove vt
	echo "# $name: $(trace_context "$WORK/$name.trace" 'veil_crypt_[a-z_]*')"
	trace_tasks "$WORK/$name.trace" 'veil_crypt_[a-z_]*' | sed 's/^/#   /'
	cut -d' ' -f4- "$WORK/$name.status" | tr ' ' '\n' | grep -E '^(chunks|fanout|keystream)' |
		tr '\n' ' ' | sed 's/^/#   /'
	echo
}
st() { sed -n "s/.* $2=\([0-9]*\).*/\1/p" "$WORK/$1.status"; }
ctx() { trace_context "$WORK/$1.trace" "$2"; }
NODE=$WORK/vt.node
readd() { dd if="$NODE" of=/dev/null bs="$1" count="$2" iflag=direct status=none; }
writed() { dd if=/dev/zero of="$NODE" bs="$1" count="$2" oflag=direct status=none; }
NULLB="0 131072 veil" RAM="0 131072 veil"

# 1. Hard IRQ completions: CTR keystream-ahead, small reads that are hits.
run ks-irq "$NULLB aes-ctr-plain64 $K32 0 /dev/nullb0 0" readd 4k 200
[ "$(st ks-irq keystream_hit)" -gt 0 ] || fail "ks-irq: no keystream hit to look at"
ctx ks-irq 'veil_crypt_[a-z_]*' | grep -q '^hardirq=0 ' ||
	fail "ks-irq: cipher or XOR ran in hard IRQ: $(ctx ks-irq 'veil_crypt_[a-z_]*')"

# 2. Hard IRQ completions with no_read_workqueue: decrypted in softirq
# right after the interrupt, as dm-crypt 6.1's tasklet does, not on a queue.
run nrw-irq "$NULLB aes-xts-plain64 $K64 0 /dev/nullb0 0 1 no_read_workqueue" readd 64k 50
[ -z "$TRACER" ] || ctx nrw-irq veil_crypt_chunk | grep -qE '^hardirq=0 softirq=[1-9]' ||
	fail "nrw-irq: want decryption in softirq only: $(ctx nrw-irq veil_crypt_chunk)"
[ "$(st nrw-irq chunks_endio)" = 50 ] && [ "$(st nrw-irq chunks_queue)" = 0 ] ||
	fail "nrw-irq: chunks_endio=$(st nrw-irq chunks_endio) chunks_queue=$(st nrw-irq chunks_queue), want 50 and 0"

# 3. no_read_workqueue, completion in the task: decrypted there, no helper.
for bs in 4k 1M; do
	run nrw-$bs "$RAM aes-xts-plain64 $K64 0 /dev/ram0 0 1 no_read_workqueue" readd $bs 16
	[ "$(st nrw-$bs chunks_endio)" = 16 ] || fail "nrw-$bs: chunks_endio=$(st nrw-$bs chunks_endio), want 16"
	for f in chunks_queue chunks_helper fanout; do
		[ "$(st nrw-$bs $f)" = 0 ] || fail "nrw-$bs: $f=$(st nrw-$bs $f), want 0"
	done
	trace_tasks "$WORK/nrw-$bs.trace" veil_crypt_chunk | grep -qv '^dd ' &&
		fail "nrw-$bs: decryption outside the reading task"
done

# 4. no_write_workqueue: encrypted in veil_map(), in the writing task.
run nww "$RAM aes-xts-plain64 $K64 0 /dev/ram0 0 1 no_write_workqueue" writed 1M 16
[ "$(st nww chunks_map)" = 16 ] || fail "nww: chunks_map=$(st nww chunks_map), want 16"
[ "$(st nww chunks_helper)" = 0 ] || fail "nww: chunks_helper=$(st nww chunks_helper)"
trace_tasks "$WORK/nww.trace" veil_crypt_chunk | grep -qv '^dd ' &&
	fail "nww: encryption outside the writing task"

# 5. Defaults: writes start in veil_map(); reads in a completion that runs
# in a task (brd), on the crypt queue after an interrupt (null_blk); large
# ones are shared with helpers when there is more than one CPU.
run def-w "$RAM aes-xts-plain64 $K64 0 /dev/ram0 0" writed 1M 32
run def-r "$RAM aes-xts-plain64 $K64 0 /dev/ram0 0" readd 1M 32
run def-r4k "$RAM aes-xts-plain64 $K64 0 /dev/ram0 0" readd 4k 64
run def-irq "$NULLB aes-xts-plain64 $K64 0 /dev/nullb0 0" readd 1M 16
[ "$(st def-w chunks_map)" -gt 0 ] || fail "def-w: nothing encrypted in veil_map()"
[ "$(st def-w chunks_endio)" = 0 ] || fail "def-w: chunks_endio=$(st def-w chunks_endio)"
[ "$(st def-r chunks_endio)" -gt 0 ] || fail "def-r: nothing decrypted in the completion"
[ "$(st def-r4k chunks_endio)" = 64 ] && [ "$(st def-r4k chunks_queue)" = 0 ] ||
	fail "def-r4k: chunks_endio=$(st def-r4k chunks_endio) chunks_queue=$(st def-r4k chunks_queue), want 64 and 0"
trace_tasks "$WORK/def-r4k.trace" veil_crypt_chunk | grep -qv '^dd ' &&
	fail "def-r4k: decryption outside the reading task"
[ "$(st def-irq chunks_endio)" = 0 ] && [ "$(st def-irq chunks_queue)" -gt 0 ] ||
	fail "def-irq: chunks_endio=$(st def-irq chunks_endio) chunks_queue=$(st def-irq chunks_queue): want all on the queue"
ctx def-irq veil_crypt_chunk | grep -q '^hardirq=0 ' ||
	fail "def-irq: decryption in hard IRQ: $(ctx def-irq veil_crypt_chunk)"
if [ "$CPUS" -gt 1 ]; then
	for n in def-w def-r def-irq; do
		[ "$(st $n chunks_helper)" -gt 0 ] || fail "$n: no helper took a chunk"
	done
fi

# 6. same_cpu_crypt: no helper; everything on CPU 0, where dd and brd run.
for kind in "xts-plain64 $K64" "ctr-plain64 $K32"; do
	name=same-${kind%%-*}
	run $name-w "$RAM aes-$kind 0 /dev/ram0 0 1 same_cpu_crypt" writed 1M 16
	run $name-r "$RAM aes-$kind 0 /dev/ram0 0 1 same_cpu_crypt" readd 64k 64
	for n in $name-w $name-r; do
		# CTR's keystream goes to this CPU's own helper; XTS has none.
		[ $name = same-ctr ] || [ "$(st $n chunks_helper)" = 0 ] ||
			fail "$n: chunks_helper=$(st $n chunks_helper)"
		trace_tasks "$WORK/$n.trace" 'veil_crypt_[a-z_]*' | grep -qv ' \[000\] ' &&
			fail "$n: cipher work on a CPU other than the submitting one"
	done
done
# 7. Queue depth on brd, from one fio job pinned with dd's CPU (run()).
fiod() {
	fio --name=depth --filename="$NODE" --direct=1 --ioengine=libaio \
	    --rw=randread --bs=4k --iodepth="$1" --numjobs=1 --size=64M \
	    --runtime=3 --time_based --randrepeat=0 --output=/dev/null
}
run deep "$RAM aes-xts-plain64 $K64 0 /dev/ram0 0" fiod 32
run shallow "$RAM aes-xts-plain64 $K64 0 /dev/ram0 0" fiod 1
deep_all=$(($(st deep chunks_endio) + $(st deep chunks_queue)))
shallow_all=$(($(st shallow chunks_endio) + $(st shallow chunks_queue)))
info "QD32: $(st deep chunks_queue) of $deep_all reads decrypted on the queue; QD1: $(st shallow chunks_queue) of $shallow_all"
[ "$(st shallow chunks_queue)" -le $((shallow_all / 256 + 1)) ] ||
	fail "shallow: chunks_queue=$(st shallow chunks_queue) of $shallow_all: more than the probes (at most one in 256) at QD1"
# A deep queue shows when a handed-off read has not ended by the
# submitter's next read: when the cipher outweighs the submitter's own
# path (the syscall, the map, brd's copy). fio at QD1 times that path
# alone with the null cipher, and with it the cipher. Under emulation the
# cipher is the larger; the debug kernel's checks (KASAN, lockdep) can
# make the path the larger, and then nothing is handed off but the probes,
# as designed.
qd1_iops() {
	dm_create vq "$1"
	taskset -c 0 fio --name=qd1 --filename=/dev/mapper/vq --direct=1 \
		--ioengine=libaio --rw=randread --bs=4k --iodepth=1 --size=64M \
		--runtime=2 --time_based --randrepeat=0 \
		--output-format=terse --terse-version=3 | cut -d';' -f8
	dm_remove vq
}
path_iops=$(qd1_iops "$RAM cipher_null-ecb - 0 /dev/ram0 0")
cipher_iops=$(qd1_iops "$RAM aes-xts-plain64 $K64 0 /dev/ram0 0")
info "4 KiB reads at QD1: $path_iops/s with the null cipher, $cipher_iops/s with aes-xts-plain64"
if [ "$CPUS" -gt 1 ] && [ $((cipher_iops * 2)) -gt "$path_iops" ]; then
	info "the submitter's path outweighs the cipher here: no deep queue to find"
elif [ "$CPUS" -gt 1 ]; then
	[ "$(st deep chunks_queue)" -gt $((deep_all / 256 + 1)) ] ||
		fail "deep: chunks_queue=$(st deep chunks_queue) of $deep_all: no more than the probes on the queue at QD32"
	[ -z "$TRACER" ] || trace_tasks "$WORK/deep.trace" veil_crypt_chunk | grep -q '^kworker' ||
		fail "deep: no decryption in a worker at QD32"
fi

# 8. Keystream misses after hard-IRQ completions: a device that completes
# in 20 us, far sooner than the cipher makes 64 KiB of keystream under
# emulation. What no helper claimed before the completion is decrypted on
# the crypt queue, never in softirq (the cipher time would be taken from
# whatever task the interrupt came in on), and the data is right; so is
# a read larger than 64 KiB (keystream_ahead_max raised). Then readers
# and writers on both CPUs at once, verified:
# on the debug kernel, lockdep sees the job lock taken in softirq and in
# tasks.
rmmod null_blk
modprobe null_blk queue_mode=2 irqmode=2 completion_nsec=20000 \
	memory_backed=1 gb=1 nr_devices=1
[ -b /dev/nullb0 ] || fail "null_blk did not come back"
CTR="$NULLB aes-ctr-plain64 $K32 0 /dev/nullb0 0"
head -c $((100 * 65536)) /dev/urandom > "$WORK/ks.data"
dm_create vt "$CTR 1 no_keystream_ahead"
dd if="$WORK/ks.data" of=/dev/mapper/vt bs=64k oflag=direct status=none
dm_remove vt
readf() { dd if="$NODE" of="$WORK/ks.read" bs="$1" count="$2" iflag=direct status=none; }
run ks-miss "$CTR" readf 64k 100
cmp -s "$WORK/ks.data" "$WORK/ks.read" || fail "ks-miss: the data read back differs from what was written"
[ "$(st ks-miss keystream_miss)" -gt 0 ] || fail "ks-miss: no keystream miss to look at"
# The dd reads from CPU 0 and its completions come in on CPU 0's timer:
# the completion is never the submitter's own submit_bio. A miss's
# unfinished chunks go to the queue, unless a helper claimed them all
# first (both vCPUs busy at the completion): never the completion.
[ "$(st ks-miss chunks_endio)" = 0 ] &&
	[ $(($(st ks-miss chunks_queue) + $(st ks-miss chunks_helper))) -gt 0 ] ||
	fail "ks-miss: chunks_endio=$(st ks-miss chunks_endio) chunks_queue=$(st ks-miss chunks_queue) chunks_helper=$(st ks-miss chunks_helper), want the misses' rest on the queue or with helpers"
[ -z "$TRACER" ] || ctx ks-miss veil_crypt_chunk | grep -qE '^hardirq=0 softirq=0 ' ||
	fail "ks-miss: want no cipher call in interrupt context: $(ctx ks-miss veil_crypt_chunk)"
# Reads of 640 KiB: ten times the keystream of ks-miss, so that misses
# come even where softirq runs late (the debug kernel beside other
# guests: 128 KiB reads there all found their keystream ready).
# Where even they find their keystream ready (the debug kernel), up to
# three tries.
for try in 1 2 3; do
	run ks-big "$CTR 1 keystream_ahead_max:1048576" readf 640k 10
	[ "$(st ks-big keystream_miss)" = 0 ] || break
done
cmp -s "$WORK/ks.data" "$WORK/ks.read" || fail "ks-big: the data read back differs from what was written"
# As above: the misses' rest on the queue or with helpers.
[ "$(st ks-big keystream_miss)" -gt 0 ] && [ "$(st ks-big chunks_endio)" = 0 ] &&
	[ $(($(st ks-big chunks_queue) + $(st ks-big chunks_helper))) -gt 0 ] ||
	fail "ks-big: keystream_miss=$(st ks-big keystream_miss) chunks_endio=$(st ks-big chunks_endio), want 640 KiB misses finished outside the completion"
[ -z "$TRACER" ] || ctx ks-big veil_crypt_chunk | grep -qE '^hardirq=0 softirq=0 ' ||
	fail "ks-big: want no cipher call in interrupt context: $(ctx ks-big veil_crypt_chunk)"
dm_create vt "$CTR"
fio_verify ks-mixed /dev/mapper/vt 2 4 15 || fail "ks-mixed: fio verify"
info "ks-mixed: $(dmsetup status vt | tr ' ' '\n' | grep -E '^(keystream_(hit|miss)|chunks_(endio|queue|helper))=' | tr '\n' ' ')"
[ "$(status_field vt keystream_miss)" -gt 0 ] || fail "ks-mixed: no keystream miss"
dm_remove vt
exit 0
