#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The in-guest test runner. Runs each tests/<area>/NNN-*.sh as root, one
# after another, and writes TAP to $RESULTS/results.tap and each test's
# output to $RESULTS/logs/. The host reads the results; the guest's exit
# status and console are not part of the protocol.
#
# After every test: the kernel log lines the test caused are checked for
# WARN, BUG, oops, KASAN, lockdep, RCU stalls, hung tasks, sleeping in
# atomic context, allocation failures (tests/bad-kmsg.re); no
# device-mapper or loop device may be left behind. The log is read from
# /dev/kmsg from boot on, so nothing is missed when the ring buffer wraps.
# After the last test of each area, on a kernel with kmemleak, a scan
# reports leaks as a test of its own ("kmemleak/<area>").
#
#   guest-run.sh RESULTS_DIR [PATTERN]    PATTERN: extended regex on names
#
# Each test is announced in the TAP ("# running <name>") before it starts.
# With VEIL_RESUME=1 the runner goes on with the TAP a guest that died left
# behind (tests/run boots a new one): tests that have a result line there
# are not run again, and the numbering goes on.
#
# A test may name kernel messages it expects (fault injection) as extended
# regexes, one per line, in the file $KMSG_ALLOW (lib.sh: kmsg_allow). A
# test with a line "# kernel: debug" in its head runs only on the debug
# kernel (its release ends in -veildebug): it needs fault injection.

RESULTS=$1
PATTERN=${2:-}
TOP=$(cd "$(dirname "$0")/.." && pwd)
TAP=$RESULTS/results.tap
# Per test; KASAN, lockdep and kmemleak make the debug kernel 2-3 times
# slower (the 10,000-case fuzz needs more than 900 s there).
TIMEOUT=900
case "$(uname -r)" in *-veildebug) TIMEOUT=2400 ;; esac
TIMEOUT=${VEIL_TEST_TIMEOUT:-$TIMEOUT}
VEIL_KO=${VEIL_KO:-$TOP/build/modules/$(uname -r)/dm-veil.ko}
[ -f "$VEIL_KO" ] || VEIL_KO=$TOP/dm-target/dm-veil.ko
KMSG=$RESULTS/kmsg.log
KMEMLEAK=/sys/kernel/debug/kmemleak
export VEIL_KO KMSG_ALLOW=$RESULTS/kmsg-allow KMSG_FILE=$KMSG

mkdir -p "$RESULTS/logs"
# done_tests: the names with a result line in the TAP, one per line
done_tests() { sed -nE 's/^(not )?ok [0-9]+ - ([^ ]+).*/\2/p' "$TAP"; }
n=0
if [ "${VEIL_RESUME:-0}" = 1 ] && [ -f "$TAP" ]; then
	n=$(done_tests | wc -l)
	echo "# resumed in a new guest after test $n" >> "$TAP"
else
	echo "TAP version 13" > "$TAP"
fi

# Every kernel message since boot, as "prio,seq,time,flags;text" records;
# a reader that falls behind gets EPIPE once and goes on after the gap.
(exec 3< /dev/kmsg; while :; do cat <&3 2>/dev/null; sleep 0.1; done) > "$KMSG" &
kmsg_reader=$!
# kmsg_lines OFFSET: the messages after byte OFFSET of $KMSG, text only
kmsg_lines() { tail -c +"$(($1 + 1))" "$KMSG" | grep -v '^ ' | sed 's/^[^;]*;//'; }

# The programs the tests start most and their libraries, from memory
# (tests/guest-cache.sh; tests/run made the list).
. "$TOP/tests/guest-cache.sh"
t0=$(date +%s)
guest_cache "$RESULTS/guest-cache.list" 2>> "$RESULTS/logs/guest-cache.log"
echo "copied in $(($(date +%s) - t0)) s" >> "$RESULTS/logs/guest-cache.log"

mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -w "$KMEMLEAK" ]; then
	# The runner scans after each area (kmemleak_check); kmemleak's own
	# scan every 10 minutes would only take a CPU from the tests.
	echo scan=off > "$KMEMLEAK"
	# Leaks from before the suite (boot) are not ours.
	t0=$(date +%s)
	echo scan > "$KMEMLEAK"
	echo clear > "$KMEMLEAK"
	echo "boot scan: $(($(date +%s) - t0)) s" >> "$RESULTS/logs/kmemleak.log"
fi

modprobe dm_mod
insmod "$VEIL_KO" || echo "# insmod $VEIL_KO failed" >> "$TAP"

mapfile -t tests < <(cd "$TOP/tests" && ls -1 */[0-9][0-9][0-9]-*.sh | grep -v "^host/" | sort)
# Bash builtins only: on the debug kernel every process costs about a
# second, and this loop looks at every test of the tree.
selected=()
declare -A finished=()
while read -r name; do finished[$name]=1; done < <(done_tests)
release=$(uname -r)
for t in "${tests[@]}"; do
	name=${t%.sh}
	[ -z "${finished[$name]:-}" ] || continue
	[ -z "$PATTERN" ] || [[ "$name" =~ $PATTERN ]] || continue
	# "# kernel: debug" near the top: only for the debug kernel.
	mapfile -n 5 -t head < "$TOP/tests/$t"
	only=
	for line in "${head[@]}"; do
		[[ "$line" == "# kernel:"* ]] && only=${line#"# kernel:"} only=${only# }
	done
	[ -z "$only" ] || [[ "$release" == *"$only"* ]] || continue
	selected+=("$t")
done

# kmemleak_check AREA: scan for leaks once the area's objects are old enough
kmemleak_check() {
	local leaks
	[ -w "$KMEMLEAK" ] || return 0
	n=$((n + 1))
	sleep 6
	echo scan > "$KMEMLEAK"
	leaks=$(cat "$KMEMLEAK")
	echo clear > "$KMEMLEAK"
	if [ -z "$leaks" ]; then
		echo "ok $n - kmemleak/$1" >> "$TAP"
	else
		echo "$leaks" > "$RESULTS/logs/kmemleak-$1.log"
		echo "not ok $n - kmemleak/$1 # $(echo "$leaks" | grep -c '^unreferenced object') unreferenced objects" >> "$TAP"
	fi
}

# stall_report: what a test that is about to be killed was doing: every
# process but the kernel's threads with its state and wait channel, the
# kernel stacks of all in uninterruptible sleep, the mapped devices' state.
stall_report() {
	local pid
	echo "--- processes ---"
	ps -eo pid,ppid,stat,wchan:32,etimes,args --forest | grep -v ' \[.*\]$'
	for pid in $(ps -eo pid=,stat= | awk '$2 ~ /^D/ { print $1 }'); do
		echo "--- $(cat "/proc/$pid/comm" 2>/dev/null) ($pid), uninterruptible ---"
		cat "/proc/$pid/stack" 2>/dev/null
	done
	echo "--- dmsetup info ---"
	dmsetup info -c 2>&1
	echo "--- dmsetup status ---"
	dmsetup status 2>&1
}

# stall_watch PID SECONDS FILE: if PID still runs after SECONDS, write
# stall_report to FILE (the kill at the time limit would lose it).
stall_watch() {
	local nap
	sleep "$2" &
	nap=$!
	trap 'kill $nap 2>/dev/null; exit 0' TERM
	wait "$nap"
	kill -0 "$1" 2>/dev/null || exit 0
	stall_report > "$3" 2>&1
}

for i in "${!selected[@]}"; do
	t=${selected[i]}
	name=${t%.sh}
	n=$((n + 1))
	log=$RESULTS/logs/${name//\//-}.log
	echo "# running $name" >> "$TAP"
	: > "$KMSG_ALLOW"
	sleep 0.2
	from=$(stat -c %s "$KMSG")
	start=$(date +%s)
	# "# limit: SECONDS" in its head: a test slower than the others.
	tlimit=$(sed -n 's/^# limit: \([0-9]*\)$/\1/p' "$TOP/tests/$t")
	[ -n "$tlimit" ] && [ "$tlimit" -gt "$TIMEOUT" ] || tlimit=$TIMEOUT
	# A report left by an earlier run in the same results is not this one's.
	rm -f "${log%.log}.stall.log"
	timeout -k 10 "$tlimit" bash "$TOP/tests/$t" > "$log" 2>&1 < /dev/null &
	tpid=$!
	stall_watch "$tpid" "$((tlimit > 120 ? tlimit - 30 : tlimit / 2))" "${log%.log}.stall.log" &
	watcher=$!
	wait "$tpid"
	rc=$?
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
	secs=$(($(date +%s) - start))
	sleep 0.3
	new=$(kmsg_lines "$from")
	bad=$(echo "$new" | grep -E -f "$TOP/tests/bad-kmsg.re" |
	      grep -v -E -f "$TOP/tests/benign-kmsg.re" |
	      { if [ -s "$KMSG_ALLOW" ]; then grep -v -E -f "$KMSG_ALLOW"; else cat; fi } | head -3)
	left=$(dmsetup ls 2>/dev/null | grep -v '^No devices found' | awk '{print $1}' | tr '\n' ' ')
	{
		echo "--- kernel log during the test ---"
		echo "$new"
	} >> "$log"

	why=""
	[ "$rc" = 124 ] && why="timed out after ${tlimit}s (its state then: logs/$(basename "${log%.log}").stall.log)"
	[ -n "$bad" ] && why="kernel log: $(echo "$bad" | head -1)"
	if [ -n "$left" ]; then
		why="${why:+$why; }left devices behind: $left"
		dmsetup remove_all --force >/dev/null 2>&1
	fi
	losetup -D 2>/dev/null
	[ -e /sys/module/dm_veil/initstate ] || insmod "$VEIL_KO"

	if [ "$rc" = 77 ] && [ -z "$why" ]; then
		reason=$(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: *//')
		echo "ok $n - $name # SKIP ${reason:-skipped}" >> "$TAP"
	elif [ "$rc" = 0 ] && [ -z "$why" ]; then
		echo "ok $n - $name # time=${secs}s" >> "$TAP"
	else
		[ -z "$why" ] && why="exit status $rc: $(grep -m1 '^FAIL:' "$log" || tail -1 "$log")"
		echo "not ok $n - $name # time=${secs}s $why" >> "$TAP"
	fi

	next=${selected[i + 1]:-}
	[ "${next%%/*}" = "${t%%/*}" ] || kmemleak_check "${t%%/*}"
done

# The module must unload once every test has cleaned up after itself.
n=$((n + 1))
if rmmod dm_veil 2>> "$RESULTS/logs/module-unload.log"; then
	echo "ok $n - runner/module-unload" >> "$TAP"
else
	echo "not ok $n - runner/module-unload # rmmod dm_veil failed" >> "$TAP"
fi
kmemleak_check module-unload
kill "$kmsg_reader" 2>/dev/null
echo "1..$n" >> "$TAP"
echo "# done" >> "$TAP"
