#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The in-guest test runner. Runs each tests/<area>/NNN-*.sh as root, one
# after another, and writes TAP to $RESULTS/results.tap and each test's
# output to $RESULTS/logs/. After every test it checks the kernel log for
# WARN/BUG/oops/leaks and that no device-mapper device or loop device was
# left behind. The host reads the results; the guest's exit status and
# console are not part of the protocol.
#
#   guest-run.sh RESULTS_DIR [PATTERN]

RESULTS=$1
PATTERN=${2:-}
TOP=$(cd "$(dirname "$0")/.." && pwd)
TAP=$RESULTS/results.tap
TIMEOUT=${VEIL_TEST_TIMEOUT:-900}

mkdir -p "$RESULTS/logs"
echo "TAP version 13" > "$TAP"

modprobe dm_mod
insmod "$TOP/dm-target/dm-veil.ko" || echo "# insmod dm-veil.ko failed" >> "$TAP"

mapfile -t tests < <(cd "$TOP/tests" && ls -1 */[0-9][0-9][0-9]-*.sh | grep -v "^host/" | sort)
n=0
for t in "${tests[@]}"; do
	name=${t%.sh}
	if [ -n "$PATTERN" ] && [[ "$name" != *$PATTERN* ]]; then
		continue
	fi
	n=$((n + 1))
	log=$RESULTS/logs/${name//\//-}.log
	before=$(dmesg | wc -l)
	start=$(date +%s)
	timeout -k 10 "$TIMEOUT" bash "$TOP/tests/$t" > "$log" 2>&1 < /dev/null
	rc=$?
	secs=$(($(date +%s) - start))
	new=$(dmesg | tail -n +"$((before + 1))")
	bad=$(echo "$new" | grep -E -f "$TOP/tests/bad-kmsg.re" | head -3)
	left=$(dmsetup ls 2>/dev/null | grep -v '^No devices found' | awk '{print $1}' | tr '\n' ' ')
	{
		echo "--- kernel log during the test ---"
		echo "$new"
	} >> "$log"

	why=""
	[ "$rc" = 124 ] && why="timed out after ${TIMEOUT}s"
	[ -n "$bad" ] && why="kernel log: $(echo "$bad" | head -1)"
	if [ -n "$left" ]; then
		why="${why:+$why; }left devices behind: $left"
		dmsetup remove_all --force >/dev/null 2>&1
	fi
	losetup -D 2>/dev/null
	lsmod | grep -q '^dm_veil ' || insmod "$TOP/dm-target/dm-veil.ko"

	if [ "$rc" = 77 ] && [ -z "$why" ]; then
		reason=$(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: *//')
		echo "ok $n - $name # SKIP ${reason:-skipped}" >> "$TAP"
	elif [ "$rc" = 0 ] && [ -z "$why" ]; then
		echo "ok $n - $name # time=${secs}s" >> "$TAP"
	else
		[ -z "$why" ] && why="exit status $rc: $(grep -m1 '^FAIL:' "$log" || tail -1 "$log")"
		echo "not ok $n - $name # time=${secs}s $why" >> "$TAP"
	fi
done

# The module must unload once every test has cleaned up after itself.
n=$((n + 1))
if rmmod dm_veil 2>> "$RESULTS/logs/module-unload.log"; then
	echo "ok $n - runner/module-unload" >> "$TAP"
else
	echo "not ok $n - runner/module-unload # rmmod dm_veil failed" >> "$TAP"
fi
echo "1..$n" >> "$TAP"
echo "# done" >> "$TAP"
