# SPDX-License-Identifier: GPL-2.0
# Sourced by host-side scenarios (tests/host/0*.sh).
#
# run_guest RESULTS NAME [guest.sh options] -- GUEST_SCRIPT [ARGS]: boot a
# guest that runs tests/host/GUEST_SCRIPT RESULTS ARGS (with VEIL_KO, the
# module to load, passed on), its output in
# RESULTS/NAME.log and its console in RESULTS/NAME-console.log; the script
# writes RESULTS/NAME.ok when all is well. A guest whose QEMU was killed
# by a signal (scripts/qemu-status.sh says so on the console) says nothing
# about veil: as tests/run does for the suite's guest, the scenario runs
# once more in a new guest, the first attempt's logs kept as *.1.log.
# Returns 1, with the console's end printed, if the guest did not finish.
run_guest() {
	local results=$1 name=$2 opts=() attempt console script
	shift 2
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	script="$1 $results ${*:2}"
	console=$results/$name-console.log
	for attempt in 1 2; do
		rm -f "$results/$name.ok"
		"$TOP/scripts/guest.sh" "${opts[@]}" -w "$results" -- \
			"VEIL_KO=${VEIL_KO:-} bash $TOP/tests/host/$script > $results/$name.log 2>&1" \
			> "$console" 2>&1 || echo "guest.sh: exit $?" >> "$console"
		cat "$results/$name.log" 2>/dev/null || true
		[ -f "$results/$name.ok" ] && return 0
		again_after_qemu_death "$console" "$results/$name.log" "$attempt" \
			"the $name guest did not finish (its console ends above)" || return 1
	done
}

# again_after_qemu_death CONSOLE LOG ATTEMPT WHY: after a guest that did
# not finish, whether to boot it once more: only if QEMU itself was killed
# by a signal and this was the first attempt (the first attempt's console
# and log are kept as *.1.log). Otherwise prints FAIL: WHY and returns 1.
again_after_qemu_death() {
	local console=$1 log=$2 attempt=$3 why=$4
	tail -20 "$console"
	grep -q 'qemu-status: QEMU was killed by signal' "$console" ||
		{ echo "FAIL: $why"; return 1; }
	[ "$attempt" = 1 ] || { echo "FAIL: QEMU died in both guests (above)"; return 1; }
	echo "QEMU itself died, not the guest (above): once more in a new guest"
	mv "$console" "${console%.log}.1.log"
	mv "$log" "${log%.log}.1.log" 2>/dev/null || true
}
