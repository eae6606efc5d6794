#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Async cipher drivers get many requests at once. Through
# capi:cryptd(xts(ecb(aes-generic)))-plain64 (cryptd: every request is
# queued and completed by a cryptd worker), 1 MiB O_DIRECT writes and
# reads from one task: the function tracer counts the requests cryptd was
# given (crypto_enqueue_request) against the completions veil was called
# back with, and the most in flight at once must be at least 16 (veil
# keeps up to 32 in flight per runner or helper; one request per context
# made 7 at most here, 043565f). The data
# must read back through dm-crypt with the same spec, and the reverse.
. "$(dirname "$0")/../lib.sh"
requires root
requires modinfo brd
veil_load
rmmod brd 2>/dev/null || true
modprobe brd rd_nr=1 rd_size=65536
at_exit "rmmod brd"
[ -b /dev/ram0 ] || skip "no brd device"
modprobe dm_crypt
SPEC="capi:cryptd(xts(ecb(aes-generic)))-plain64" KEY=$(randhex 64)
TABLE="0 131072 %s $SPEC $KEY 0 /dev/ram0 0"

[ -d "$TRACEFS/events" ] || mount -t tracefs nodev "$TRACEFS" 2>/dev/null || true
[ -f "$TRACEFS/available_filter_functions" ] || skip "no function tracer"
funcs=$(grep -oE '^(crypto_enqueue_request|veil_window_done|crypto_req_done|veil_job_async_done)\b' \
	"$TRACEFS/available_filter_functions" | sort -u | tr '\n' ' ')
[[ "$funcs" == *crypto_enqueue_request* ]] || skip "crypto_enqueue_request cannot be traced"

head -c 16M /dev/urandom > "$WORK/data"
dm_create vt "$(printf "$TABLE" veil)"
udevadm settle
trace_start $funcs
BS=1048576 write_direct "$WORK/data" /dev/mapper/vt
BS=1048576 same_data "$WORK/data" /dev/mapper/vt || fail "the data does not read back through veil"
trace_stop > "$WORK/async.trace"
dm_remove vt
# Most requests out at once: +1 when cryptd queues one, -1 on a completion.
peak=$(awk '/: crypto_enqueue_request </ { n++; if (n > m) m = n; next }
	/: (veil_window_done|crypto_req_done|veil_job_async_done) </ { n-- }
	END { print m + 0 }' "$WORK/async.trace")
queued=$(grep -c ': crypto_enqueue_request <' "$WORK/async.trace" || true)
info "cryptd was given $queued requests, at most $peak at once"
[ "$queued" -ge $((32 * 2048)) ] || fail "cryptd was given $queued requests, want one per sector (65536)"
[ "$peak" -ge 16 ] || fail "at most $peak requests in flight at once"

# The same bytes as dm-crypt, both ways.
dm_create vc "$(printf "$TABLE" crypt)"
BS=1048576 same_data "$WORK/data" /dev/mapper/vc || fail "dm-crypt does not read what veil wrote"
head -c 16M /dev/urandom > "$WORK/data2"
BS=1048576 write_direct "$WORK/data2" /dev/mapper/vc
dm_remove vc
dm_create vt "$(printf "$TABLE" veil)"
BS=1048576 same_data "$WORK/data2" /dev/mapper/vt || fail "veil does not read what dm-crypt wrote"
dm_remove vt
