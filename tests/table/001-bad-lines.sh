#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every malformed table line of bad-lines.txt is refused with its own
# message (as the kernel logs it), and no device is left mapped.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_zero
requires cmd keyctl
veil_load

mkloop 4M
# 2^32 + 8 sectors: an IV of 32 bits wraps inside it.
BIG=$(((1 << 32) + 8))
dm_create vt-zero "0 $BIG zero"
head -c 32 /dev/urandom | keyctl padd logon veiltest:bad @u >/dev/null
# Every cipher and template the lines name is loaded first; a name nothing
# provides is refused without modprobe, and no udev work follows each
# refused table (under the debug kernel each took seconds).
crypto_preload aes serpent twofish blowfish cast6 xts ctr cbc ecb essiv sha256 md5 crc32 \
	rfc3686 chacha20 xctr
udev_off
k16=$(randhex 16) k32=$(randhex 32) k64=$(randhex 64) kbig=$(randhex 4097)
n=0 bad=0

# The kernel log is read from /dev/kmsg by bash itself, and the lines are
# filled in with bash's own substitutions: on the debug kernel every
# process started costs about a second, and the loop starts one (dmsetup)
# per line. A refused table has logged its message before dmsetup returns.
# The loop reads nothing else with bash's read: bash keeps what a read of
# /dev/kmsg left over (it cannot seek back there) and hands it to the next
# read of any file, so a kernel message once came in as a table line.
mapfile -t entries < "$TOP/tests/table/bad-lines.txt"
exec 4< /dev/kmsg
# kmsg_new: $logged, the text of the kernel messages not read yet. read -t
# returns what it has of a line when its timeout strikes (a slow debug
# guest can pass 0.1 s between two characters of one record): that start
# is kept and the line read on to its end, a few tries at most. IFS is
# empty so that no space is lost at such a split. A failed read (EPIPE:
# records overwritten since the last one read) ends the call.
kmsg_new() {
	local rec part= rc tries=0
	logged=
	while :; do
		rec=
		IFS= read -r -t 0.1 -u 4 rec && rc=0 || rc=$?
		if [ "$rc" = 0 ]; then
			rec=$part$rec part=
			case "$rec" in ' '*) ;; *) logged+="${rec#*;}"$'\n' ;; esac
		elif [ "$rc" -gt 128 ] && [ -n "$rec$part" ] && [ $((tries += 1)) -lt 50 ]; then
			part+=$rec
		else
			break
		fi
	done
}
kmsg_new

for entry in "${entries[@]}"; do
	case "$entry" in ''|'#'*) continue ;; *'|'*) ;; *) fail "no '|' in: $entry" ;; esac
	msg=${entry%%|*} line=${entry#*|}
	msg=${msg%"${msg##*[! ]}"}
	line=${line#"${line%%[! ]*}"}
	line=${line//@K16@/$k16}; line=${line//@K32@/$k32}; line=${line//@K64@/$k64}
	line=${line//@KBIG@/$kbig}
	line=${line//@DEV@/$LOOP}; line=${line//@ZERO@//dev/mapper/vt-zero}
	n=$((n + 1))
	if dmsetup create vt-bad --table "$line" >/dev/null 2>&1; then
		echo "accepted: $line"
		dmsetup remove vt-bad
		bad=$((bad + 1))
		continue
	fi
	kmsg_new
	if [[ "$logged" != *"veil: $msg ("* ]]; then
		echo "wrong message for: $line"
		echo "  want: $msg"
		echo "  got:  $logged"
		bad=$((bad + 1))
	fi
	for name in /sys/block/dm-*/dm/name; do
		[ -e "$name" ] && [ "$(< "$name")" = vt-bad ] || continue
		echo "device left behind after: $line"
		dmsetup remove vt-bad
		bad=$((bad + 1))
	done
done
exec 4<&-

keyctl purge logon veiltest:bad >/dev/null
info "$n malformed lines tried, $bad problems"

# What the refusals above must leave alone: plain on 2^32 sectors exactly
# (every IV once), 2^32 + 8 sectors of 4096-byte IV sectors, XTS, CTR
# whose counter has the low half of the block to itself, and ecb with an
# IV named (ignored, as dm-crypt does).
for line in "0 $((1 << 32)) veil aes-ctr-plain $k32 0 /dev/mapper/vt-zero 8" \
	"0 $BIG veil aes-ctr-plain $k32 0 /dev/mapper/vt-zero 0 2 sector_size:4096 iv_large_sectors" \
	"0 $BIG veil aes-xts-plain $k64 0 /dev/mapper/vt-zero 0" \
	"0 $BIG veil aes-ctr-plain64 $k32 0 /dev/mapper/vt-zero 0" \
	"0 8192 veil aes-ecb-plain64 $k32 0 $LOOP 0" \
	"0 8192 veil capi:rfc3686(ctr(aes))-plain64 $k32${k16:0:8} 0 $LOOP 0"; do
	dmsetup create vt-good --table "$line" || fail "refused: $line"
	dmsetup remove vt-good
done
[ "$n" -ge 30 ] || fail "only $n lines"
[ "$bad" = 0 ] || fail "$bad of $n malformed lines not refused as they should be"
# Every message the constructor can give for a table-line field is covered.
refcnt=$(cat /sys/module/dm_veil/refcnt)
[ "$refcnt" = 0 ] || fail "module reference count $refcnt after refused tables"
