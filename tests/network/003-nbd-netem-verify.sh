#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A lossy, slow link: tc netem adds 1 ms of delay and drops 1% of the
# packets each way between client and server while fio writes and reads
# back crc32c-verified blocks of 4 KiB to 1 MiB through veil over NBD, two
# jobs at queue depth 4, for XTS and for CTR with keystream-ahead. TCP
# resends what is lost: no mismatch, no I/O error, and the keystream
# counters show CTR reads computed ahead of slow completions.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd fio
. "$TOP/tests/network/nbd.sh"
veil_load
nbd_setup 64M
nbd_connect
netem "delay 1ms loss 1%"
tc qdisc show dev veil-c | grep -q "netem.*delay 1ms loss 1%" ||
	fail "netem is not on the link: $(tc qdisc show dev veil-c)"

for spec in "aes-xts-plain64 512" "aes-ctr-plain64 256"; do
	CIPHER=${spec% *} KEYBITS=${spec#* } vs_open "$NBD" vt
	fio_verify "nbd-${spec% *}" /dev/mapper/vt 2 4 30 || fail "${spec% *}: fio verify over a lossy link"
	info "${spec% *}: $(dmsetup status vt | tr ' ' '\n' | grep -E '^(reads|writes|keystream_(hit|miss|skip))=' | tr '\n' ' ')"
	[ "$(status_field vt reads)" -gt 0 ] || fail "${spec% *}: no read went through veil"
	vs_close vt
done
# Packets were really lost and resent.
drops=$(tc -s qdisc show dev veil-c | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -1)
info "netem dropped $drops packets on the client's side"
[ "${drops:-0}" -gt 0 ] || fail "netem dropped nothing: the loss was not exercised"
netem ""
nbd_disconnect
