# SPDX-License-Identifier: GPL-2.0
# Sourced by bench/run, bench/fs-run and bench/nbd-run: where a run writes
# and what it publishes.
#
# A run writes to build/bench/<release>/[KIND] (BENCH_RESULTS: elsewhere),
# so measuring leaves the tree as it was. BENCH_PUBLISH=1 then copies the
# report (the tables, the plots, the revision, the guest's environment)
# to bench/results/<series>/[KIND], replacing the one there: the tree
# keeps one current report per kernel series.

# bench_results KIND: the run's directory (KIND empty for fio's).
bench_results() {
	local rel
	rel=$("$TOP/scripts/kver.sh")
	echo "${BENCH_RESULTS:-$TOP/build/bench/$rel${1:+/$1}}"
}

# bench_revision RES SETTINGS: what was measured, in RES/revision.txt: the
# revision ("-dirty" with code changes: the results it replaces do not
# count), the module, the kernel, the date and SETTINGS.
bench_revision() {
	local rev
	rev=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
	[ -z "$(git -C "$TOP" status --porcelain -- . ':!bench/results' 2>/dev/null)" ] || rev="$rev-dirty"
	{
		echo "revision: $rev"
		echo "module: ${VEIL_KO:-the one make built}"
		echo "kernel: $("$TOP/scripts/kver.sh")"
		echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
		echo "settings: $2"
	} > "$1/revision.txt"
}

# bench_publish RES KIND: the report in RES to bench/results/<series>/KIND.
bench_publish() {
	local res=$1 kind=$2 rel series pub f
	[ "${BENCH_PUBLISH:-0}" = 1 ] || {
		echo "bench: report in $res (BENCH_PUBLISH=1 copies it to bench/results)"
		return 0
	}
	rel=$("$TOP/scripts/kver.sh")
	series=$(echo "$rel" | grep -oE '^[0-9]+\.[0-9]+')
	pub=$TOP/bench/results/$series${kind:+/$kind}
	# The report's files only: fio's folder holds fs/ and nbd/ too, and
	# $res keeps the plots of earlier runs: only those the report shows.
	mkdir -p "$pub"
	find "$pub" -maxdepth 1 -type f -delete
	for f in "$res"/*.md "$res"/*.txt $(sed -nE 's/.*\]\(([^)/]+\.png)\).*/\1/p' "$res"/*.md |
		sort -u | sed "s|^|$res/|"); do
		[ -f "$f" ] && cp "$f" "$pub/"
	done
	echo "bench: report published in bench/results/$series${kind:+/$kind}"
}
