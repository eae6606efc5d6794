#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: boot the guest and run the demo there (scripts/demo-guest.sh).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d /tmp/veil-demo.XXXXXX)
echo "demo: booting Debian's kernel $("$TOP/scripts/kver.sh") under QEMU (2 vCPUs, ~15 s) ..."
"$TOP/scripts/guest.sh" -w "$out" -- "bash $TOP/scripts/demo-guest.sh $out" > "$out/console.log" 2>&1 || true
if [ -f "$out/demo.log" ]; then
	cat "$out/demo.log"
fi
if ! grep -q '^demo: done' "$out/demo.log" 2>/dev/null; then
	echo "demo: did not finish; guest console:"
	tail -30 "$out/console.log"
	exit 1
fi
rm -rf "$out"
