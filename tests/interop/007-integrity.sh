#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Authenticated encryption and random IVs over dm-integrity, with dm-crypt:
#   (a) the stacks cryptsetup makes for LUKS2 --integrity (hmac-sha256
#       under aes-xts-plain64, and aes-gcm-random with aead; journal and
#       --integrity-no-journal; 512- and 4096-byte sectors): cryptsetup's
#       dm-crypt layer is swapped for veil with the same table line; veil
#       reads what dm-crypt wrote and the reverse, so data, tags and stored
#       IVs are dm-crypt's; the table prints back as dm-crypt's; the
#       dm-integrity table cryptsetup made is logged;
#   (b) dm-integrity made by hand with dmsetup (external tags, no other
#       options; journal and direct mode) under capi:gcm(aes)-random
#       integrity:28:aead, under authenc, and under a random IV alone
#       (capi:xts(aes)-random integrity:16:none): the same both ways,
#       every 1 MiB O_DIRECT write finishing, veil printing the table as
#       dm-crypt prints it; on 6.12, authenc with integrity_key_size (an
#       HMAC key shorter and longer than the digest); and bitmap mode,
#       which dm-integrity allows only with its own hash, under
#       aes-xts-plain64; capi:ccm(aes)-random written by veil (whose
#       random IVs are ones ccm takes) and read by dm-crypt;
#   (c) a wrong key: reads fail with EILSEQ through veil as through
#       dm-crypt, and the log names the sector; unwritten sectors fail
#       the same way; one O_DIRECT read of three 4 KiB blocks, the first
#       two into one buffer (the second block's ciphertext lands over the
#       first's before either is decrypted), succeeds through both, as a
#       read whose tags fail is read again into the target's own pages;
#   (d) table lines both refuse (no metadata below, a tag size the device
#       does not have, an AEAD in the old format, an unknown kind, a
#       sector size that is not the device's, a tag size the AEAD does not
#       take, a tuple too small for the IV), and the one veil alone
#       refuses: a stream AEAD whose IV is not random.
# Every read and write through a stack runs in the background, polled: one
# that has not finished after 120 s (VEIL_STALL) fails the test with its
# task's state and stack, and sysrq w's dump of blocked tasks in the log.
. "$(dirname "$0")/../lib.sh"
requires root
requires module dm_crypt dm_integrity loop
requires cmd cryptsetup
veil_load
udev_off

MIB=$((1024 * 1024))
plaintext "$WORK/a" "$MIB"
plaintext "$WORK/b" "$MIB"
head -c 32 /dev/urandom > "$WORK/pass"

# guarded WHAT CMD...: run CMD (a dd through the stack) in the background
# and poll it; return its exit status. One still running after $STALL
# seconds is a stalled stack: the test fails with the task's state and
# kernel stack, and every blocked task's stack (sysrq w) goes to the
# kernel log, which the runner puts in this test's log. timeout(1) could
# not end a task stuck in D state: waiting for it would hang the guest
# instead of failing the test. The stuck task is left behind.
STALL=${VEIL_STALL:-120}
guarded() {
	local what=$1 pid rc=0 state
	shift
	within "$STALL" "$@" || rc=$?
	[ "$rc" = 124 ] || return "$rc"
	pid=$!
	state=$(sed -n 's/^State:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
	echo "# stalled: $* (pid $pid, state ${state:-gone})" >&2
	sed 's/^/#   /' "/proc/$pid/stack" >&2 2>/dev/null || true
	echo w > /proc/sysrq-trigger 2>/dev/null || true
	fail "$what: not finished after $STALL s (state ${state:-gone}; blocked tasks in the kernel log)"
}

# put FILE DEV WHAT: FILE at 1 MiB of DEV in one O_DIRECT write
put() {
	guarded "$3: a 1 MiB O_DIRECT write" dd if="$1" of="$2" bs=1M seek=1 \
		oflag=direct conv=notrunc status=none ||
		fail "$3: a 1 MiB O_DIRECT write failed"
}
# has FILE DEV: DEV holds FILE at 1 MiB (one O_DIRECT read)
has() {
	rm -f "$WORK/got"
	guarded "a 1 MiB O_DIRECT read of $2" dd if="$2" of="$WORK/got" bs=1M \
		skip=1 count=1 iflag=direct status=none &&
		cmp -s "$WORK/got" "$1"
}

# swap_both NAME TABLE WHAT: NAME runs TABLE (a crypt line) and holds
# $WORK/a; the veil line of TABLE reads it, writes $WORK/b, and the crypt
# line reads that back. NAME runs the crypt line again on return.
swap_both() {
	local name=$1 crypt=$2 what=$3 veil shown
	veil=${crypt/ crypt / veil }
	dm_remove "$name"
	dm_create "$name" "$veil"
	shown=$(dmsetup table --showkeys "$name")
	[ "$shown" = "$veil" ] || fail "$what: veil prints its table as '$shown', dm-crypt as '$crypt'"
	has "$WORK/a" "/dev/mapper/$name" || fail "$what: written by dm-crypt, veil reads other data"
	put "$WORK/b" "/dev/mapper/$name" "$what (veil)"
	dm_remove "$name"
	dm_create "$name" "$crypt"
	has "$WORK/b" "/dev/mapper/$name" || fail "$what: written by veil, dm-crypt reads other data"
	echo "ok: $what"
}

# shared_buffer NAME TABLE WHAT: NAME (running TABLE, which holds $WORK/b at
# 1 MiB) takes one read of the three blocks at 1 MiB, the first two into
# one 4 KiB buffer, the third into another, for both targets: the first
# buffer ends with the second block's plaintext, the other with the third
shared_buffer() {
	local name=$1 table=$2 what=$3 target
	for target in crypt veil; do
		dm_remove "$name"
		dm_create "$name" "${table/ crypt / $target }"
		python3 - "/dev/mapper/$name" "$WORK/b" <<'PY' ||
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf, third = mmap.mmap(-1, 4096), mmap.mmap(-1, 4096)
n = os.preadv(fd, [buf, buf, third], 1 << 20)
with open(sys.argv[2], "rb") as f:
	want = f.read(3 * 4096)
sys.exit(0 if n == 3 * 4096 and buf[:] == want[4096:8192] and
	 third[:] == want[8192:] else 1)
PY
			fail "$what: $target fails a read of two blocks into one buffer"
	done
	dm_remove "$name"
	dm_create "$name" "$table"
	echo "ok: $what: two blocks read into one buffer, for both"
}

# wrong_key NAME TABLE WHAT: NAME's table with another key (of the same
# length) fails every read of written data with EILSEQ, for both targets
wrong_key() {
	local name=$1 table=$2 what=$3 key bad target t out
	key=$(echo "$table" | awk '{print $5}')
	bad=$(randhex $((${#key} / 2)))
	dm_remove "$name"
	for target in crypt veil; do
		t=${table/ crypt / $target }
		t=${t/ $key / $bad }
		dm_create "$name" "$t"
		kmsg_mark
		if out=$(dd if="/dev/mapper/$name" of=/dev/null bs=64k count=1 skip=16 \
			iflag=direct status=none 2>&1); then
			fail "$what: $target reads under a wrong key"
		fi
		case "$out" in *"multibyte"*|*"Invalid or incomplete"*) ;;
		*) fail "$what: $target's read under a wrong key failed with '$out', not EILSEQ" ;; esac
		kmsg_wait "$target: .*INTEGRITY AEAD ERROR, sector" ||
			fail "$what: $target logged no integrity error"
		dm_remove "$name"
	done
	echo "ok: $what: a wrong key fails every read, for both"
}

info "(a) the stacks of cryptsetup luksFormat --integrity"
for sector in 512 4096; do
	for spec in "aes-xts-plain64 hmac-sha256" "aes-gcm-random aead"; do
		set -- $spec
		mkloop 48M
		cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 \
			--pbkdf-force-iterations 1000 --key-file "$WORK/pass" \
			--cipher "$1" --integrity "$2" --integrity-no-wipe \
			--sector-size "$sector" "$LOOP"
		for journal in "" --integrity-no-journal; do
			what="luks2 --cipher $1 --integrity $2 ${journal:+$journal }sector $sector"
			_devs+=(vt-luks_dif vt-luks)
			cryptsetup open --disable-keyring --key-file "$WORK/pass" \
				$journal "$LOOP" vt-luks
			table=$(dmsetup table --showkeys vt-luks)
			# What cryptsetup asks of dm-integrity, on record.
			info "$what: vt-luks_dif: $(dmsetup table vt-luks_dif)"
			put "$WORK/a" /dev/mapper/vt-luks "$what (dm-crypt)"
			swap_both vt-luks "$table" "$what"
			[ -n "$journal" ] || shared_buffer vt-luks "$table" "$what"
			[ -n "$journal" ] || wrong_key vt-luks "$table" "$what"
			# Made again by dmsetup, without cryptsetup's UUID:
			# cryptsetup close would not know the stack.
			dm_remove vt-luks 2>/dev/null || true
			dm_remove vt-luks_dif
		done
	done
done

info "(b) dm-integrity by hand"
# MODE SECTOR TAG SPEC KEYBYTES KIND [FEATURE...]: KIND "-" is
# dm-integrity's own hash (crc32c) below a cipher without integrity;
# FEATUREs are more optional parameters. The table dm-crypt prints is the
# one veil must print.
shapes=("J 512 28 capi:gcm(aes)-random 32 aead"
	"D 512 28 capi:gcm(aes)-random 32 aead"
	"D 4096 28 capi:gcm(aes)-random 32 aead"
	"J 512 16 capi:xts(aes)-random 64 none"
	"D 4096 48 capi:authenc(hmac(sha256),xts(aes))-random 96 aead"
	"B 512 4 aes-xts-plain64 64 -")
# dm-crypt's integrity_key_size:<bytes> (6.12; 6.1's dm-crypt has none):
# the HMAC key is the key's last <bytes>, not the digest size (32 for
# sha256): 64 bytes of XTS key and 16 of HMAC key; 32 bytes of XTS key
# (AES-128) and 64 of HMAC key, with 4096-byte sectors and large IV
# sectors, which dm-crypt prints before it.
if kernel_at_least 6.12; then
	shapes+=("J 512 48 capi:authenc(hmac(sha256),xts(aes))-random 80 aead integrity_key_size:16"
		 "D 4096 48 capi:authenc(hmac(sha256),xts(aes))-random 96 aead integrity_key_size:64 iv_large_sectors")
else
	info "integrity_key_size: not in dm-crypt of $(uname -r)"
fi
for shape in "${shapes[@]}"; do
	set -- $shape
	mkloop 64M
	unset feat
	feat=()
	if [ "$6" = - ]; then
		integrity vt-int "$LOOP" "$3" "$1" "$2" crc32c
	else
		integrity vt-int "$LOOP" "$3" "$1" "$2"
		feat+=("integrity:$3:$6")
	fi
	[ "$2" = 512 ] || feat+=("sector_size:$2")
	feat+=("${@:7}")
	table="0 $INT_LEN crypt $4 $(randhex "$5") 0 $(majmin /dev/mapper/vt-int) 0"
	[ "${#feat[@]}" = 0 ] || table+=" ${#feat[@]} ${feat[*]}"
	what="mode $1, sector $2, $4 ${feat[*]}"
	dm_create vt-hand "$table"
	# veil must print the line as dm-crypt prints it, not as given.
	table=$(dmsetup table --showkeys vt-hand)
	put "$WORK/a" /dev/mapper/vt-hand "$what (dm-crypt)"
	swap_both vt-hand "$table" "$what"
	dm_remove vt-hand
	if [ "$6" = aead ]; then
		# Never written: no tag matches.
		dm_create vt-hand "${table/ crypt / veil }"
		if guarded "$what: a read of a sector never written" dd \
			if=/dev/mapper/vt-hand of=/dev/null bs=4k count=1 \
			skip=1000 iflag=direct status=none 2>/dev/null; then
			fail "$what: veil reads a sector never written"
		fi
		dm_remove vt-hand
	fi
	dm_remove vt-int
done

# ccm(aes)-random: ccm takes the size of its length field from the IV's
# first byte (1 to 7), which dm-crypt's random IV fills like the rest, so
# dm-crypt's own writes fail for most IVs. veil makes that byte valid;
# dm-crypt reads what veil wrote (it takes the IV from the metadata).
what="capi:ccm(aes)-random integrity:32:aead, sector 4096"
mkloop 16M
integrity vt-int "$LOOP" 32 D 4096
table="0 $INT_LEN veil capi:ccm(aes)-random $(randhex 32) 0 $(majmin /dev/mapper/vt-int) 0 2 integrity:32:aead sector_size:4096"
dm_create vt-hand "$table"
put "$WORK/b" /dev/mapper/vt-hand "$what (veil)"
dm_remove vt-hand
dm_create vt-hand "${table/ veil / crypt }"
has "$WORK/b" /dev/mapper/vt-hand || fail "$what: written by veil, dm-crypt reads other data"
dm_remove vt-hand
dm_remove vt-int
echo "ok: $what, written by veil"

info "(d) table lines"
kmsg_mark
mkloop 64M
integrity vt-int "$LOOP" 28 D 512
int=$(majmin /dev/mapper/vt-int)
# refused SPEC KEYBYTES DEV FEATURES WHO: WHO (both, or veil) refuses it
refused() {
	local target
	for target in veil crypt; do
		if dmsetup create vt-refused --table "0 2048 $target $1 $(randhex "$2") 0 $3 0 $4" 2>/dev/null; then
			dmsetup remove vt-refused
			[ "$target" = crypt ] && [ "$5" = veil ] && continue
			fail "$target takes $1 $4 on $3"
		fi
	done
	echo "ok: $1 $4 on $3 refused by $5"
}
refused "capi:gcm(aes)-random" 32 "$LOOP" "1 integrity:28:aead" both
refused "aes-xts-random" 64 "$LOOP" "" both
refused "capi:gcm(aes)-random" 32 "$int" "1 integrity:32:aead" both
refused "capi:gcm(aes)-random" 32 "$int" "1 integrity:28:hmac" both
refused "aes-gcm-random" 32 "$int" "1 integrity:28:aead" both
refused "capi:gcm(aes)-plain64" 32 "$int" "1 integrity:16:aead" veil
# dm-integrity's 512-byte sectors under 4096-byte encryption sectors; a
# GCM tag of 10 bytes (12 to 16, 8 or 4 only); a tuple too small for the
# random IV.
refused "capi:gcm(aes)-random" 32 "$int" "2 integrity:28:aead sector_size:4096" both
refused "capi:gcm(aes)-random" 32 "$int" "1 integrity:22:aead" both
refused "capi:gcm(aes)-random" 32 "$int" "1 integrity:8:aead" both
kmsg_wait "veil: AEAD stream cipher needs the random IV" ||
	fail "no message for a stream AEAD without the random IV"
kmsg_wait "veil: Integrity profile sector size mismatch" ||
	fail "no message for a sector size that is not dm-integrity's"
kmsg_wait "veil: Integrity AEAD auth tag size is not supported" ||
	fail "no message for a tag size the AEAD does not take"

[ -z "$(kmsg_bad)" ] || fail "kernel log: $(kmsg_bad)"
