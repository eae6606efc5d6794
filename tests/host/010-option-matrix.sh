#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side, no guest: veilsetup's command line against the host's
# cryptsetup 2.6, the reference:
# - every option both know, with every action veilsetup has: veilsetup
#   refuses it ("Option --X is not allowed with Y action.") exactly where
#   cryptsetup does;
# - every option and action of cryptsetup's that veilsetup does not take
#   is named in veilsetup(8)'s DIFFERENCES FROM CRYPTSETUP;
# - every option of veilsetup's own is described in veilsetup(8)'s OPTIONS.
# Nothing is opened or written: the device named does not exist, and each
# command ends at its checks or at that device, in the results folder. A benchmark is kept to a
# cipher that does not exist.
#
#   010-option-matrix.sh RESULTS
set -eu
RESULTS=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
VS=$TOP/userspace/veilsetup
MAN=$TOP/docs/veilsetup.8
W=$RESULTS/option-matrix
rm -rf "$W"
mkdir -p "$W"

[ -x "$VS" ] || { echo "FAIL: $VS is not built (make -C userspace)"; exit 1; }
command -v cryptsetup >/dev/null || { echo "SKIP: no cryptsetup on the host"; exit 77; }
ver=$(cryptsetup --version | awk '{ print $2 }')
case $ver in
2.6.*) ;;
*) echo "SKIP: cryptsetup $ver here; veilsetup follows 2.6"; exit 77 ;;
esac

# Options as "name" or "name=" (takes a value): cryptsetup's from its
# --usage (hidden ones too), veilsetup's from its --help; actions from
# each --help.
cryptsetup --usage 2>&1 | tr -s ' \n' '\n\n' | tr -d '[]' | tr '|' '\n' |
	sed -n 's/^--\([a-zA-Z0-9_-]*\)\(=.*\)\{0,1\}$/\1\2/p' |
	sed 's/=.*/=/' | grep -vx -e help -e usage -e version | sort -u > "$W/cs-opts"
"$VS" --help | sed -n 's/^  \(-., \|    \)--\([a-z0-9_-]*\)\(=\)\{0,1\}.*/\2\3/p' |
	grep -vx -e help -e version | sort -u > "$W/vs-opts"
# the actions: the tab-indented lines after "<action> is one of:"
actions() { sed -n '/^<action> is one of:/,/^$/s/^\t\([A-Za-z0-9]*\) .*/\1/p'; }
cryptsetup --help | actions | sort -u > "$W/cs-actions"
"$VS" --help | actions > "$W/vs-actions"
[ "$(wc -l < "$W/cs-opts")" -gt 50 ] && [ "$(wc -l < "$W/vs-opts")" -gt 50 ] &&
	[ "$(wc -l < "$W/vs-actions")" -gt 20 ] ||
	{ echo "FAIL: could not read the option and action lists"; exit 1; }

# Whether veilsetup knows an option that its --help leaves out (an older
# spelling): it says "unknown option" for one it does not.
vs_knows() {
	! "$VS" "--$1" luksUUID /nonexistent/veil-matrix 2>&1 </dev/null |
		grep -q 'unknown option'
}

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# 1. The matrix. One line per pair: "option action cryptsetup veilsetup",
# 1 where the tool refused the option for the action.
refused() {
	local tool=$1 opt=$2 action=$3 arg=(--${2%=}) extra=()
	[ "${opt%=}" = "$opt" ] || arg=(--${opt%=}=1)
	[ "$action" != benchmark ] || [ "${opt%=}" = cipher ] || extra=(--cipher=veil-none-xts)
	timeout 20 "$tool" "${arg[@]}" "${extra[@]}" "$action" /nonexistent/veil-matrix vm \
		</dev/null 2>&1 | grep -c "is not allowed with $action action" || true
}
pair() {
	echo "$1 $2 $(refused cryptsetup "$1" "$2") $(refused "$VS" "$1" "$2")"
}
export -f refused pair
export VS
# A value of 1 may name a file (--header=1): made here if at all.
cd "$W"
comm -12 "$W/cs-opts" <(sed 's/=$//' "$W/vs-opts" | while read -r o; do
	grep -x -e "$o" -e "$o=" "$W/cs-opts" || true; done | sort -u) > "$W/both-opts"
while read -r o; do
	while read -r a; do
		echo "$o $a"
	done < "$W/vs-actions"
done < "$W/both-opts" | xargs -P 4 -n 2 bash -c 'pair "$0" "$1"' > "$W/matrix"
pairs=$(wc -l < "$W/matrix")
differ=$(awk '$3 != $4' "$W/matrix" | sort)
refusals=$(awk '$3 == 1' "$W/matrix" | wc -l)
echo "# $pairs option-action pairs of $(wc -l < "$W/both-opts") options and $(wc -l < "$W/vs-actions") actions; cryptsetup $ver refuses $refusals"
[ "$refusals" -gt 100 ] || fail "cryptsetup refused only $refusals pairs: the matrix did not run"
[ -z "$differ" ] || fail "veilsetup and cryptsetup $ver differ (option action cryptsetup veilsetup, 1 = refused):
$differ"

# 2. What veilsetup does not take is named in DIFFERENCES FROM CRYPTSETUP.
diffs=$(awk '/^\.SH "DIFFERENCES FROM CRYPTSETUP"/ { on = 1; next } /^\.SH / { on = 0 } on' "$MAN" |
	sed 's/\\//g')
[ -n "$diffs" ] || fail "no DIFFERENCES FROM CRYPTSETUP section in $MAN"
missing=""
while read -r o; do
	o=${o%=}
	grep -qx -e "$o" -e "$o=" "$W/vs-opts" && continue
	vs_knows "$o" && continue
	grep -q -- "--$o\b" <<<"$diffs" || missing="$missing --$o"
done < "$W/cs-opts"
while read -r a; do
	grep -qx "$a" "$W/vs-actions" && continue
	grep -qw -- "$a" <<<"$diffs" || missing="$missing $a"
done < "$W/cs-actions"
[ -z "$missing" ] || fail "cryptsetup's, not veilsetup's, and not in veilsetup(8)'s DIFFERENCES:$missing"

# 3. veilsetup's own options are described in its OPTIONS.
options=$(awk '/^\.SH OPTIONS/ { on = 1; next } /^\.SH / { on = 0 } on' "$MAN" | sed 's/\\//g')
own=""
while read -r o; do
	o=${o%=}
	grep -qx -e "$o" -e "$o=" "$W/cs-opts" && continue
	grep -q -- "--$o\b" <<<"$options" || own="$own --$o"
done < "$W/vs-opts"
[ -z "$own" ] || fail "veilsetup's own options not in veilsetup(8)'s OPTIONS:$own"

[ "$fails" = 0 ] || exit 1
echo "# the same refusals; cryptsetup's other options and actions are in DIFFERENCES"
