#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every cipher spec, 512-byte sectors: veil and dm-crypt read each other's data.
# VEIL_INTEROP_COVERING=1 (make check and CI's sets) checks only the specs that
# bring a mode, cipher or IV generator not seen before, as interop/002.
. "$(dirname "$0")/../lib.sh"
requires root
requires module dm_crypt loop
veil_load
. "$TOP/tests/interop/interop.sh"
if [ "${VEIL_INTEROP_COVERING:-0}" = 1 ]; then
	interop_all 12345 "" "" "$(specs_covering mode cipher iv keys)"
else
	interop_all 12345 ""
fi
