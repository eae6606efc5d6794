#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every mode, cipher and IV generator (interop/interop.sh: specs_covering),
# 4096-byte sectors: veil and dm-crypt read each other's data.
. "$(dirname "$0")/../lib.sh"
requires root
requires module dm_crypt loop
veil_load
. "$TOP/tests/interop/interop.sh"
interop_all $((8 * 1543)) "sector_size:4096" "" "$(specs_covering mode cipher iv keys)"
