#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run virtme-ng's vng, wherever pip put it (pyenv shims, ~/.local/bin, or
# the scripts directory of the python3 that installed it).
if command -v vng >/dev/null 2>&1; then
	exec vng "$@"
fi
dir=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null)
if [ -x "$dir/vng" ]; then
	exec "$dir/vng" "$@"
fi
echo "vng (virtme-ng) not found: run 'make deps'" >&2
exit 127
