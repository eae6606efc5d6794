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
# A small read that completes in its submitter's submit_bio (brd) hands
# all its sectors to cryptd at once and ends in cryptd's callback for the
# last, as dm-crypt's does, never waking the crypt queue (one sector, then
# the rest from the queue, made 4 KiB reads 0.57x of dm-crypt's,
# 41ebcde).
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

# 512 reads of 4 KiB, eight sectors each: every sector comes back through
# the callback, eight are out at once, none goes on from the crypt queue.
head -c 2M "$WORK/data" > "$WORK/small"
trace_start crypto_enqueue_request veil_job_async_done veil_window_done veil_job_resume_work
BS=4096 same_data "$WORK/small" /dev/mapper/vt || fail "4 KiB reads differ through veil"
trace_stop > "$WORK/small.trace"
dm_remove vt
called=$(grep -c ': veil_job_async_done <' "$WORK/small.trace" || true)
resumed=$(grep -c ': veil_job_resume_work <' "$WORK/small.trace" || true)
small_peak=$(awk '/: crypto_enqueue_request </ { n++; if (n > m) m = n; next }
	/: (veil_job_async_done|veil_window_done) </ { n-- }
	END { print m + 0 }' "$WORK/small.trace")
info "512 reads of 4 KiB: $called callbacks, at most $small_peak at once, $resumed resumed on the crypt queue"
[ "$resumed" -eq 0 ] || fail "$resumed small reads went on from the crypt queue"
# Every sector through the callback (the trace's edges may miss a read).
[ "$called" -ge 4000 ] || fail "$called callbacks from cryptd for 4,096 sectors"
[ "$small_peak" -ge 8 ] || fail "at most $small_peak of a 4 KiB read's 8 sectors out at once"
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
