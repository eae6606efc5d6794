#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run virtme-ng's vng from the virtual environment scripts/deps.sh made.
VENV=$(cd "$(dirname "$0")/.." && pwd)/build/venv
[ -x "$VENV/bin/vng" ] || { echo "vng (virtme-ng) not found in build/venv: run 'make deps'" >&2; exit 127; }
# Its helpers (virtme-configkernel, virtme-prep-kdir-mods) sit next to it.
PATH=$VENV/bin:$PATH exec "$VENV/bin/vng" "$@"
