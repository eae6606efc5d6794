#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# LUKS2 with integrity protection (luksFormat --integrity): veilsetup opens
# the volumes cryptsetup makes as the same stack, dm-integrity (<name>_dif)
# below veil in place of dm-crypt; files written through one read back
# through the other; status of the volume (and of its <name>_dif) says
# what cryptsetup's says of the same volume opened by cryptsetup, line by
# line, with and without --integrity-no-journal, the veil-only lines
# aside (lib.sh's status_same), and the dm-integrity tables below are
# the same; close removes both devices; a wrong passphrase leaves nothing
# behind.
# veilsetup luksFormat --integrity (hmac-sha512, hmac-sha256, aes-gcm-random
# with aead) makes volumes cryptsetup opens, every tag written, and data
# goes both ways, files too (ext2). luksFormat and luksDump take
# --integrity-no-journal and --veracrypt-query-pim, as cryptsetup 2.6.1's,
# and --integrity-legacy-padding, whose superblock is cryptsetup's; the
# wipe's progress (--progress-json, --progress-frequency) and its
# interruption by SIGINT, as cryptsetup's; the signatures on the device
# named and wiped, as cryptsetup's.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup
requires module loop dm_crypt dm_integrity
requires cmd mkfs.ext2
veil_load
PASS="correct horse battery staple"
fast="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
plaintext "$WORK/a" $((512 * 1024))
plaintext "$WORK/b" $((512 * 1024))

# stack_gone NAME: neither NAME nor NAME_dif is mapped
stack_gone() {
	! dmsetup info "$1" > /dev/null 2>&1 || fail "$1 left mapped"
	! dmsetup info "$1_dif" > /dev/null 2>&1 || fail "$1_dif left mapped"
}

# layers TOOL NAME TAG: TOOL's status of NAME and of NAME_dif (with the
# exit code) and NAME_dif's table into $WORK/*-TAG
layers() {
	local rc=0
	udevadm settle 2>/dev/null || true
	"$1" status "$2" > "$WORK/status-$3" || fail "${1##*/} status $2: exit $?"
	"$1" status "$2_dif" > "$WORK/status-dif-$3" 2>&1 || rc=$?
	echo "exit code $rc" >> "$WORK/status-dif-$3"
	cat "$WORK/status-$3" "$WORK/status-dif-$3"
	dmsetup table "$2_dif" > "$WORK/dif-$3"
}
# same_layers TAG WHAT: veilsetup's stack and cryptsetup's, as layers
# saved them, agree: status of the volume and of its dm-integrity device,
# and that device's table
same_layers() {
	status_same "$WORK/status-cs-$1" "$WORK/status-vs-$1" "$2"
	status_same "$WORK/status-dif-cs-$1" "$WORK/status-dif-vs-$1" "$2: the _dif device"
	diff -u "$WORK/dif-cs-$1" "$WORK/dif-vs-$1" ||
		fail "$2: veilsetup's dm-integrity table is not cryptsetup's"
}

# roundtrip FORMAT-TOOL CIPHER INTEGRITY SECTOR STATUS-LINE
roundtrip() {
	local tool=$1 what table dif rc
	shift
	what="$tool luksFormat --cipher $1 --integrity $2 sector $3"
	mkloop 24M
	# luksFormat wipes the volume through its stack: every tag is valid.
	if [ "$tool" = cryptsetup ]; then
		echo "$PASS" | cryptsetup luksFormat -q --type luks2 $fast --cipher "$1" \
			--integrity "$2" --sector-size "$3" "$LOOP"
	else
		echo "$PASS" | "$VS" luksFormat -q $fast --cipher "$1" \
			--integrity "$2" --sector-size "$3" "$LOOP"
		dmsetup ls | grep -q temporary && fail "$what: a temporary device is left"
		echo "$PASS" | cryptsetup open "$LOOP" vc
		_devs+=(vc_dif vc)
		dd if=/dev/mapper/vc of=/dev/null bs=1M iflag=direct status=none ||
			fail "$what: cryptsetup cannot read the new volume (tags not written)"
		cryptsetup close vc
	fi

	_devs+=(vt_dif vt)
	echo "$PASS" | "$VS" open "$LOOP" vt
	table=$(dmsetup table --showkeys vt)
	dif=$(dmsetup table vt_dif)
	echo "$table"
	echo "$dif"
	echo "$table" | grep -q " veil capi:.*-\(plain64\|random\) :[0-9]*:logon:veil:VEIL-LUKS2-" ||
		fail "$what: not veil with the key from the keyring"
	echo "$table" | grep -q " integrity:[0-9]*:aead" || fail "$what: no integrity option"
	[ "$(echo "$table" | awk '{print $7}')" = \
	  "$(dmsetup info -c --noheadings -o major,minor --separator : vt_dif)" ] ||
		fail "$what: veil is not on vt_dif"
	echo "$dif" | grep -q " integrity .* J " || fail "$what: dm-integrity not in journal mode"
	layers "$VS" vt vs-J
	grep -q "  integrity: $4\$" "$WORK/status-vs-J" || fail "$what: status has no 'integrity: $4'"
	grep -q "  device:  $LOOP\$" "$WORK/status-vs-J" || fail "$what: status names another device"
	write_direct "$WORK/a" /dev/mapper/vt
	"$VS" close vt
	stack_gone vt

	echo "$PASS" | cryptsetup open "$LOOP" vc
	_devs+=(vc_dif vc)
	layers cryptsetup vc cs-J
	same_layers J "$what"
	same_data "$WORK/a" /dev/mapper/vc || fail "$what: cryptsetup reads other data than veilsetup wrote"
	write_direct "$WORK/b" /dev/mapper/vc
	cryptsetup close vc
	echo "$PASS" | cryptsetup open --integrity-no-journal "$LOOP" vc
	layers cryptsetup vc cs-D
	# cryptsetup 2.6 cannot resize such a volume either (2.8 says so:
	# "Resize of LUKS2 device with integrity protection is not supported.")
	rc_cs=0
	echo "$PASS" | cryptsetup resize vc 2> "$WORK/cs-resize" || rc_cs=$?
	info "$what: cryptsetup resize: exit code $rc_cs: $(head -c 300 "$WORK/cs-resize")"
	[ "$rc_cs" != 0 ] || fail "$what: cryptsetup resized an integrity volume (exit code 0)"
	cryptsetup close vc

	echo "$PASS" | "$VS" open --integrity-no-journal "$LOOP" vt
	dmsetup table vt_dif | grep -q " integrity .* D " ||
		fail "$what: --integrity-no-journal kept the journal"
	layers "$VS" vt vs-D
	same_layers D "$what --integrity-no-journal"
	same_data "$WORK/b" /dev/mapper/vt || fail "$what: veilsetup reads other data than cryptsetup wrote"
	rc=0
	echo "$PASS" | "$VS" resize vt || rc=$?
	[ "$rc" = "$rc_cs" ] || fail "$what: resize returned $rc, not cryptsetup's $rc_cs"
	"$VS" close vt
	stack_gone vt

	rc=0
	echo "wrong passphrase" | "$VS" open "$LOOP" vt || rc=$?
	[ "$rc" = 2 ] || fail "$what: a wrong passphrase returned $rc, not 2"
	stack_gone vt
	echo "ok: $what"
}

roundtrip cryptsetup aes-xts-plain64 hmac-sha256 512 'hmac(sha256)'
roundtrip cryptsetup aes-gcm-random aead 4096 aead
roundtrip veilsetup aes-xts-plain64 hmac-sha512 4096 'hmac(sha512)'
roundtrip veilsetup aes-gcm-random aead 512 aead
roundtrip veilsetup aes-xts-plain64 hmac-sha256 512 'hmac(sha256)'

# Files, both ways: an ext2 file system made and a file written through
# one tool's stack, mounted and read through the other's (aes-gcm-random
# with aead, 4096-byte sectors).
mkdir -p "$WORK/mnt"
for pair in "cryptsetup $VS" "$VS cryptsetup"; do
	set -- $pair
	w=${1##*/} r=${2##*/}
	echo "$PASS" | "$1" luksFormat -q --type luks2 $fast --cipher aes-gcm-random \
		--integrity aead --sector-size 4096 "$LOOP"
	echo "$PASS" | "$1" open "$LOOP" vf
	_devs+=(vf_dif vf)
	mkfs.ext2 -q /dev/mapper/vf
	mount /dev/mapper/vf "$WORK/mnt"
	cp "$WORK/a" "$WORK/mnt/file"
	umount "$WORK/mnt"
	"$1" close vf
	echo "$PASS" | "$2" open "$LOOP" vf
	mount -o ro /dev/mapper/vf "$WORK/mnt"
	cmp -s "$WORK/a" "$WORK/mnt/file" || fail "a file written through $w reads otherwise through $r"
	umount "$WORK/mnt"
	"$2" close vf
	stack_gone vf
	echo "ok: a file written through $w read through $r"
done

info "--readonly, refresh with an engine option, a device named like one below"
echo "$PASS" | "$VS" open --readonly "$LOOP" vt
dmsetup info vt_dif | grep -q 'READ-ONLY' || fail "--readonly: vt_dif is writable"
dmsetup info vt | grep -q 'READ-ONLY' || fail "--readonly: vt is writable"
"$VS" close vt
echo "$PASS" | "$VS" open "$LOOP" vt
echo "$PASS" | "$VS" refresh --no-fanout vt
dmsetup table vt | grep -q ' integrity:[0-9]*:aead.* no_fanout' ||
	dmsetup table vt | grep -q ' no_fanout.* integrity:[0-9]*:aead' ||
	fail "refresh --no-fanout: $(dmsetup table vt)"
"$VS" close vt
stack_gone vt
# Not a LUKS2 volume's: veilsetup close leaves it alone.
dm_create pv_dif "0 $(blockdev --getsz "$LOOP") linear $LOOP 0"
dmsetup rename pv_dif --setuuid CRYPT-INTEGRITY-pv_dif 2>/dev/null || true
"$VS" open --type plain --cipher aes-xts-plain64 --key-size 512 \
	--key-file "$WORK/a" --keyfile-size 64 /dev/mapper/pv_dif pv
"$VS" close pv
dmsetup info pv_dif > /dev/null 2>&1 || fail "close pv removed pv_dif, which it did not make"

rc=0
echo "$PASS" | "$VS" luksFormat -q $fast --integrity hmac-md5 "$LOOP" || rc=$?
[ "$rc" = 1 ] || fail "an unknown --integrity returned $rc, not 1"
rc=0
echo "$PASS" | "$VS" luksFormat -q $fast --integrity-no-wipe "$LOOP" || rc=$?
[ "$rc" = 1 ] || fail "--integrity-no-wipe without --integrity returned $rc, not 1"
rc=0
echo "$PASS" | "$VS" luksFormat -q --type luks1 $fast --integrity aead "$LOOP" || rc=$?
[ "$rc" = 1 ] || fail "--integrity with LUKS1 returned $rc, not 1"

# cryptsetup 2.6.1 takes --integrity-no-journal and --veracrypt-query-pim
# with every action (its cryptsetup_arg_list.h gives them no action list)
# and ignores them where they mean nothing: luksFormat wipes the new
# volume's tags without journal in any case (_wipe_data_device()). Both
# tools end with exit code 0, the volume's tags all written.
# accepted OPTION [LUKSFORMAT-OPTION...]: luksFormat and luksDump with it
accepted() {
	local o=$1 tool rc
	shift
	for tool in cryptsetup "$VS"; do
		rc=0
		echo "$PASS" | "$tool" luksFormat -q --type luks2 $fast "$@" "$o" "$LOOP" \
			> "$WORK/out" 2>&1 || rc=$?
		[ "$rc" = 0 ] || fail "${tool##*/} luksFormat $* $o: exit $rc: $(cat "$WORK/out")"
		echo "$PASS" | cryptsetup open "$LOOP" vc
		_devs+=(vc_dif vc)
		dd if=/dev/mapper/vc of=/dev/null bs=1M iflag=direct status=none ||
			fail "${tool##*/} luksFormat $* $o: cryptsetup cannot read the volume"
		cryptsetup close vc
		rc=0
		"$tool" luksDump "$o" "$LOOP" > "$WORK/out" 2>&1 || rc=$?
		[ "$rc" = 0 ] || fail "${tool##*/} luksDump $o: exit $rc: $(cat "$WORK/out")"
	done
	echo "ok: luksFormat $* $o, luksDump $o"
}
mkloop 24M
accepted --integrity-no-journal --integrity hmac-sha256

# The wipe's progress, as cryptsetup 2.6.1 prints it: --progress-json
# lines (the same fields, the device named by its image file, the last
# line the whole size); --progress-frequency's lines without a prompt
# (-q) as with one; and a SIGINT during the wipe stops it with "Wipe
# interrupted." and exit code 1, no temporary device left, the header
# kept. Numbers aside, the two tools' lines are the same.
# shape FILE: its lines with every number as N, runs of spaces as one
shape() { sed -e 's/[0-9][0-9.]*/N/g' -e 's/\x1b\[2K\r//g' -e 's/  */ /g' "$1"; }
for tool in cryptsetup "$VS"; do
	t=${tool##*/}
	echo "$PASS" | "$tool" luksFormat -q --type luks2 $fast --integrity hmac-sha256 \
		--progress-json "$LOOP" > "$WORK/json-$t" || fail "$t --progress-json: exit $?"
	tail -1 "$WORK/json-$t" | grep -q "^{\"device\":\"$LOOP_FILE\",\"device_bytes\":\"\([0-9]*\)\",\"device_size\":\"\\1\",\"speed\":\"[0-9]*\",\"eta_ms\":\"0\",\"time_ms\":\"[0-9]*\"}$" ||
		fail "$t --progress-json: the last line is $(tail -1 "$WORK/json-$t")"
	printf 'YES\n%s\n' "$PASS" | "$tool" luksFormat --type luks2 $fast --integrity hmac-sha256 \
		--progress-frequency 1 "$LOOP" > "$WORK/freq-$t" || fail "$t --progress-frequency: exit $?"
	shape "$WORK/freq-$t" | grep -v '^Progress: ' > "$WORK/freq-shape-$t"
done
cat "$WORK/json-cryptsetup" "$WORK/freq-cryptsetup"
diff <(tail -1 "$WORK/json-cryptsetup" | shape /dev/stdin) <(tail -1 "$WORK/json-veilsetup" | shape /dev/stdin) ||
	fail "--progress-json: the last lines differ"
diff -u "$WORK/freq-shape-cryptsetup" "$WORK/freq-shape-veilsetup" ||
	fail "--progress-frequency: veilsetup's output is not cryptsetup's"
# The signatures on a device luksFormat writes (a file system, swap):
# named before the question and wiped, with
# cryptsetup's lines, so that blkid then finds the LUKS header alone.
for sig in ext2 swap; do
	for tool in cryptsetup "$VS"; do
		t=${tool##*/}
		wipefs -qa "$LOOP"
		if [ $sig = ext2 ]; then
			mkfs.ext2 -q "$LOOP"
		else
			mkswap "$LOOP" > /dev/null
		fi
		printf 'YES\n%s\n' "$PASS" | "$tool" luksFormat -v --type luks2 $fast "$LOOP" \
			> "$WORK/sig-$t" || fail "$t luksFormat over $sig: exit $?"
		blkid -p -o export "$LOOP" > "$WORK/blkid-$t" || true
		grep -qx TYPE=crypto_LUKS "$WORK/blkid-$t" ||
			fail "$t luksFormat over $sig: blkid finds $(tr '\n' ' ' < "$WORK/blkid-$t")"
		wipefs "$LOOP" | grep -v -e crypto_LUKS -e '^DEVICE' &&
			fail "$t luksFormat over $sig: a signature is left"
	done
	cat "$WORK/sig-cryptsetup"
	diff -u "$WORK/sig-cryptsetup" "$WORK/sig-veilsetup" ||
		fail "luksFormat over $sig: veilsetup's lines are not cryptsetup's"
done
mkloop 256M
for tool in cryptsetup "$VS"; do
	t=${tool##*/}
	rm -f "$WORK/int-$t"
	echo "$PASS" | "$tool" luksFormat -q --type luks2 $fast --integrity hmac-sha256 \
		--progress-json "$LOOP" > "$WORK/int-$t" 2> "$WORK/int-err-$t" &
	pid=$!
	for i in $(seq 600); do
		[ -s "$WORK/int-$t" ] && break
		sleep 0.1
	done
	[ -s "$WORK/int-$t" ] || fail "$t: no progress in 60 s"
	kill -INT $pid
	rc=0
	wait $pid || rc=$?
	info "$t: interrupted at $(tail -1 "$WORK/int-$t"), exit code $rc: $(cat "$WORK/int-err-$t")"
	[ "$rc" = 1 ] || fail "$t: an interrupted wipe ended with exit code $rc, not 1"
	grep -qx "Wipe interrupted." "$WORK/int-err-$t" || fail "$t: no 'Wipe interrupted.'"
	dmsetup ls | grep -q temporary && fail "$t: a temporary device is left"
	cryptsetup isLuks "$LOOP" || fail "$t: the header is gone after the interrupted wipe"
done
mkloop 24M

# --integrity-legacy-padding: luksFormat leaves dm-integrity's superblock
# without its fixed-padding flag (SB_FLAG_FIXED_PADDING, 8, in the flags
# at byte 24), as cryptsetup's does; without it, both set the flag.
# sb_flags DEVICE: that byte, at the LUKS2 data segment's offset
sb_flags() {
	local off
	off=$(cryptsetup luksDump "$1" | awk '/^Data segments:/ { s = 1 } s && /offset:/ { print $2; exit }')
	dd if="$1" bs=1 skip=$((off + 24)) count=1 status=none | od -An -tu1 | tr -d ' '
}
for legacy in "" --integrity-legacy-padding; do
	for tool in cryptsetup "$VS"; do
		echo "$PASS" | "$tool" luksFormat -q --type luks2 $fast $legacy \
			--integrity hmac-sha256 "$LOOP" || fail "${tool##*/} luksFormat $legacy: exit $?"
		flags=$(sb_flags "$LOOP")
		info "${tool##*/} luksFormat ${legacy:-(no padding option)}: superblock flags $flags"
		if [ -n "$legacy" ]; then
			[ $((flags & 8)) = 0 ] || fail "${tool##*/} $legacy: the fixed padding flag is set ($flags)"
		else
			[ $((flags & 8)) = 8 ] || fail "${tool##*/}: no fixed padding flag ($flags)"
		fi
		echo "$PASS" | "$VS" open "$LOOP" vt
		write_direct "$WORK/a" /dev/mapper/vt
		"$VS" close vt
		echo "$PASS" | cryptsetup open "$LOOP" vc
		_devs+=(vc_dif vc)
		same_data "$WORK/a" /dev/mapper/vc ||
			fail "${tool##*/} $legacy: cryptsetup reads other data than veilsetup wrote"
		cryptsetup close vc
	done
done
accepted --veracrypt-query-pim
