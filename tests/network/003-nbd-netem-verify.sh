#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A lossy, slow link: tc netem adds 1 ms of delay and drops 1% of the
# packets each way between client and server while fio writes and reads
# back crc32c-verified blocks of 4 KiB to 1 MiB through veil over NBD, two
# jobs at queue depth 4, for XTS and for CTR with keystream-ahead. TCP
# resends what is lost: no mismatch, no I/O error, at least 100 reads
# verified, and for CTR keystream computed ahead of a slow completion
# (keystream hits).
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
	# fio stops at its time limit: enough must have been verified.
	[ "$(status_field vt reads)" -ge 100 ] || fail "${spec% *}: only $(status_field vt reads) reads verified"
	[ "${spec% *}" != aes-ctr-plain64 ] || [ "$(status_field vt keystream_hit)" -gt 0 ] ||
		fail "CTR: no read had its keystream ready when the network delivered it"
	vs_close vt
done
# Packets were really lost and resent.
drops=$(tc -s qdisc show dev veil-c | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -1)
info "netem dropped $drops packets on the client's side"
[ "${drops:-0}" -gt 0 ] || fail "netem dropped nothing: the loss was not exercised"
netem ""
nbd_disconnect
