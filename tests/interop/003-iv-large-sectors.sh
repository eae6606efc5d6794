#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every mode, cipher and IV generator (interop/interop.sh: specs_covering),
# 4096-byte sectors counted in IVs as large sectors, then a 1024-byte
# sector size: veil and dm-crypt read each other's data.
. "$(dirname "$0")/../lib.sh"
requires root
requires module dm_crypt loop
veil_load
. "$TOP/tests/interop/interop.sh"
specs=$(specs_covering mode cipher iv keys)
interop_all $((8 * 777)) "sector_size:4096 iv_large_sectors" "" "$specs"
interop_all $((2 * 999)) "sector_size:1024" "" "$specs"
