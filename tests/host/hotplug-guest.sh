#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the 4-vCPU guest of 003-cpu-hotplug.sh: fio verify through veil while
# CPUs go offline and online. Writes RESULTS/hotplug.ok when all is well.
. "$(dirname "$0")/../lib.sh"
RESULTS=$1
. "$TOP/tests/guest-cache.sh"
guest_cache "$RESULTS/guest-cache.list"
requires root
requires module loop
requires cmd fio
veil_load
kmsg_mark
[ "$(nproc)" -ge 4 ] || fail "want 4 CPUs, have $(nproc)"

# churn: take CPUs 1-3 offline and back, singly and together, until told to stop
churn() {
	local i=0 cpu
	while [ ! -f "$WORK/stop" ]; do
		cpu=$((i % 3 + 1))
		echo 0 > /sys/devices/system/cpu/cpu$cpu/online
		sleep 0.3
		if [ $((i % 4)) = 3 ]; then
			echo 0 > /sys/devices/system/cpu/cpu$(((cpu % 3) + 1))/online
			sleep 0.3
			echo 1 > /sys/devices/system/cpu/cpu$(((cpu % 3) + 1))/online
		fi
		echo 1 > /sys/devices/system/cpu/cpu$cpu/online
		sleep 0.2
		i=$((i + 1))
	done
	echo "$i" > "$WORK/rounds"
}
online_all() { local c; for c in 1 2 3; do echo 1 > /sys/devices/system/cpu/cpu$c/online; done 2>/dev/null; }
at_exit online_all

mkloop 128M
for spec in "aes-xts-plain64 $(randhex 64)" "aes-ctr-plain64 $(randhex 32)"; do
	dm_create vt "0 262144 veil $spec 0 $LOOP 0 2 fanout_chunk:4096 keystream_ahead_max:1048576"
	rm -f "$WORK/stop"
	churn &
	churner=$!
	fio_verify hotplug /dev/mapper/vt 4 16 30 ||
		{ touch "$WORK/stop"; wait; online_all; fail "fio: ${spec%% *}"; }
	touch "$WORK/stop"
	wait "$churner"
	online_all
	info "${spec%% *}: $(cat "$WORK/rounds") hotplug rounds during fio"
	[ "$(cat "$WORK/rounds")" -ge 3 ] || fail "only $(cat "$WORK/rounds") hotplug rounds"
	dmsetup status vt
	# The wake rule (veil-helpers.c): one helper per 32 KiB of a bio, and
	# a keystream read may wake one whatever its size.
	woken=$(status_field vt helpers_woken)
	bound=$((($(status_field vt bytes_encrypted) + $(status_field vt bytes_decrypted)) / 32768 +
		 $(status_field vt keystream_hit) + $(status_field vt keystream_miss)))
	info "${spec%% *}: helpers_woken=$woken, at most $bound by the rule"
	[ "$woken" -le "$bound" ] || fail "${spec%% *}: $woken helpers woken, the rule allows $bound"
	bios=$(($(status_field vt reads) + $(status_field vt writes)))
	[ "$woken" -le $((bios * 3)) ] || fail "${spec%% *}: $woken helpers woken for $bios bios, more than 3 each"
	dm_remove vt
done
bad=$(kmsg_bad) && fail "kernel log: $bad"
rmmod dm_veil || fail "dm_veil does not unload"
touch "$RESULTS/hotplug.ok"
