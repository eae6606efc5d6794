#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every cipher spec, 4096-byte sectors counted in IVs as large sectors, plus
# a 1024-byte sector size: veil and dm-crypt read each other's data.
. "$(dirname "$0")/../lib.sh"
requires root
requires module dm_crypt loop
veil_load
. "$TOP/tests/interop/interop.sh"
interop_all $((8 * 777)) "sector_size:4096 iv_large_sectors"
interop_all $((2 * 999)) "sector_size:1024"
