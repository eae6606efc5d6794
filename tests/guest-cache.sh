#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Sourced in a guest, once per boot (tests/guest-run.sh, the guest sides
# of the host scenarios): guest_cache LIST copies the programs and
# libraries LIST names (scripts/guest-cache.sh made it, on the host) into
# a tmpfs, binds each program's copy over its own path and puts the
# libraries first on LD_LIBRARY_PATH for this shell and its children.
#
# The guest's root is the host's over 9p without a cache, so a process
# start reads its program, the loader and each library through 9p under
# emulation; from memory it starts about five times faster. The same
# files at the same paths: nothing else changes. A missing or empty LIST
# changes nothing.
guest_cache() {
	local list=$1 dir=/run/veil-cache kind path
	[ -s "$list" ] && [ ! -d "$dir" ] || return 0
	mkdir -p "$dir/lib" "$dir/bin" &&
		sed -n 's/^lib //p' "$list" | xargs -r cp -L -t "$dir/lib" &&
		sed -n 's/^bin //p' "$list" | xargs -r cp --parents -t "$dir/bin" || {
		echo "guest-cache: cannot copy the programs in $list" >&2
		return 0
	}
	export LD_LIBRARY_PATH=$dir/lib
	while read -r kind path; do
		[ "$kind" = bin ] || continue
		mount --bind "$dir/bin$path" "$path" ||
			echo "guest-cache: cannot bind a copy of $path" >&2
	done < "$list"
}
