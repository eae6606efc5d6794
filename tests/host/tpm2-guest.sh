#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest of 009-tpm2.sh (a software TPM, swtpm on the host, as QEMU's
# tpm-tis device): a LUKS2 volume enrolled with systemd-cryptenroll
# --tpm2-device=auto --tpm2-pcrs=16 opens with veilsetup, nothing on
# standard input, through libcryptsetup's systemd-tpm2 plugin (keyslot 1,
# the TPM2's; with --disable-external-tokens it does not open). What veil
# wrote reads back through cryptsetup's dm-crypt mapping (sha256). Once PCR
# 16 is extended, --token-only fails as cryptsetup's does on the same
# command line (exit code and messages, systemd's "policy digest does not
# match" among them), and a plain open takes the passphrase from standard
# input (keyslot 0). veiltab with tpm2-device=auto: the TPM2 opens the
# entry with no question (a fake systemd-ask-password logs any); with the
# PCR extended, the key file opens it, or the question is asked. Then at
# boot: veiltab.service's ExecStart= as systemd runs it (this guest has no
# systemd as PID 1), /etc/veiltab with tpm2-device=auto: opened by the
# TPM2; with the PCR extended, refused with its reason once the real
# systemd-ask-password times out, exit 0 with nofail (exit 1 without),
# the next entry opened either way.
# Writes RESULTS/tpm2.ok when all is well.
. "$(dirname "$0")/../lib.sh"
RESULTS=$1
. "$TOP/tests/guest-cache.sh"
guest_cache "$RESULTS/guest-cache.list"
requires root
requires cmd cryptsetup systemd-cryptenroll tpm2_pcrextend tpm2_pcrreset
requires module loop dm_crypt
veil_load
kmsg_mark
# ok WHAT: a check passed, at how many seconds into the guest's script
ok() { echo "ok: $* [${SECONDS}s]"; }

# The TPM: tpm_tis (or tpm_crb) built in or a module; /dev/tpmrm0 is the
# resource manager that systemd and tpm2-tools use.
modprobe -q tpm_tis 2>/dev/null || true
modprobe -q tpm_crb 2>/dev/null || true
for _ in $(seq 50); do [ -c /dev/tpmrm0 ] && break; sleep 0.2; done
[ -c /dev/tpmrm0 ] || fail "no /dev/tpmrm0: the guest sees no TPM ($(ls /sys/class/tpm 2>&1))"
[ "$(cat /sys/class/tpm/tpm0/tpm_version_major)" = 2 ] || fail "tpm0 is not a TPM 2.0"
export TPM2TOOLS_TCTI=device:/dev/tpmrm0
info "[${SECONDS}s] TPM: $(ls /sys/class/tpm), /dev/tpmrm0"

# open_log OUT TOOL ARGS...: TOOL's output into OUT, its exit code in $rc
open_log() {
	local out=$1 start=$SECONDS
	shift
	rc=0
	"$@" > "$out" 2>&1 || rc=$?
	echo "  + ${*#"$TOP/"}: exit $rc, $((SECONDS - start)) s"
	sed 's/^/  | /' "$out"
}

PASS="tpm2 fallback passphrase"
printf '%s' "$PASS" > "$WORK/pass"
# PCR 16 (debug, resettable): the policy's PCR. pcr_good sets it to a
# known value (systemd warns that a PCR still all zero enforces nothing),
# pcr_bad extends it once more.
pcr_good() { tpm2_pcrreset 16 && tpm2_pcrextend "16:sha256=$(printf veil-good | sha256sum | cut -d' ' -f1)"; }
pcr_bad() { tpm2_pcrextend "16:sha256=$(printf veil-bad | sha256sum | cut -d' ' -f1)"; }
pcr16() { tpm2_pcrread sha256:16 | sed -n 's/^ *16 *: *//p'; }
pcr_good
good=$(pcr16)
info "PCR 16 (sha256): $good"

mkloop 32M
L=$LOOP
_devs+=(tpm-v tpm-c tpm-x tpm-tab tpm-tabkey)
open_log "$WORK/o" cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 \
	--pbkdf-force-iterations 1000 "$L" "$WORK/pass"
[ "$rc" = 0 ] || fail "luksFormat: exit $rc"
# systemd-cryptenroll takes the existing passphrase from $PASSWORD.
PASSWORD=$PASS open_log "$WORK/enrol" systemd-cryptenroll --tpm2-device=auto --tpm2-pcrs=16 "$L"
[ "$rc" = 0 ] || fail "systemd-cryptenroll: exit $rc"
grep -q 'enrolled as key slot 1' "$WORK/enrol" || fail "the TPM2 keyslot is not 1"
grep -q 'not initialized' "$WORK/enrol" && fail "systemd says the PCR policy is not enforced"
tok=$(cryptsetup token export --token-id 0 "$L")
[[ "$tok" == *'"type":"systemd-tpm2"'* && "$tok" == *'"tpm2-pcrs":[16]'* ]] ||
	fail "token 0 is not a systemd-tpm2 token on PCR 16: $tok"
ok "enrolled: keyslot 0 the passphrase, keyslot 1 the TPM2 (token 0, PCR 16)"

# 1. The TPM2 alone: no passphrase anywhere, the token's keyslot.
open_log "$WORK/o" "$VS" open -v "$L" tpm-v < /dev/null
[ "$rc" = 0 ] || fail "veilsetup open with the TPM2: exit $rc"
grep -qx 'Key slot 1 unlocked.' "$WORK/o" || fail "not opened by the TPM2's keyslot 1"
dmsetup table tpm-v | grep -q ' veil aes-xts-plain64 :64:logon:veil:VEIL-LUKS2-' ||
	fail "not a veil mapping: $(dmsetup table tpm-v)"
key_hidden tpm-v
ok "veilsetup open, nothing on standard input: the TPM2 unlocked keyslot 1, mapped by veil"
plaintext "$WORK/data" $((4 * 1024 * 1024))
sum=$(sha256sum < "$WORK/data")
write_direct "$WORK/data" /dev/mapper/tpm-v
sync
"$VS" close tpm-v
# ... and the plugin did it: without plugins nothing opens it.
open_log "$WORK/o" "$VS" open -v --disable-external-tokens "$L" tpm-x < /dev/null
[ "$rc" != 0 ] || fail "opened with --disable-external-tokens and no passphrase"
dmsetup info tpm-x > /dev/null 2>&1 && fail "tpm-x mapped"
# What veil wrote, through dm-crypt with the passphrase.
cryptsetup open --key-file "$WORK/pass" "$L" tpm-c
dmsetup table tpm-c | grep -q ' crypt aes-xts-plain64 ' || fail "tpm-c: $(dmsetup table tpm-c)"
[ "$(read_direct /dev/mapper/tpm-c $((4 * 1024 * 1024)) | sha256sum)" = "$sum" ] ||
	fail "what veil wrote after the TPM2 unlock reads back otherwise through dm-crypt"
no_plaintext "$L"
cryptsetup close tpm-c
ok "4 MiB written through veil read back through dm-crypt (sha256)"

# 2. The PCR no longer matches: --token-only fails as cryptsetup's does.
pcr_bad
[ "$(pcr16)" != "$good" ] || fail "PCR 16 did not change"
# (one command line: each costs two TPM2 attempts per tool; veiltab below
# runs --token-only --token-type systemd-tpm2)
for args in "-v --token-only"; do
	# shellcheck disable=SC2086 # $args is a list of words
	{ open_log "$WORK/oc" cryptsetup open $args "$L" tpm-c < /dev/null; rc_c=$rc; }
	# shellcheck disable=SC2086
	{ open_log "$WORK/ov" "$VS" open $args "$L" tpm-v < /dev/null; rc_v=$rc; }
	[ "$rc_c" != 0 ] || fail "cryptsetup open $args: opened with the PCR changed"
	[ "$rc_v" = "$rc_c" ] || fail "open $args: veilsetup exit $rc_v, cryptsetup $rc_c"
	diff -u "$WORK/oc" "$WORK/ov" || fail "open $args: veilsetup's messages are not cryptsetup's"
	grep -q 'policy digest does not match' "$WORK/ov" ||
		fail "open $args: not refused for the PCR policy"
	for n in tpm-c tpm-v; do
		dmsetup info "$n" > /dev/null 2>&1 && fail "open $args: $n mapped"
	done
	ok "PCR 16 changed: open $args: exit $rc_v and the messages, as cryptsetup's"
done
# A plain open goes on to the passphrase, from standard input.
open_log "$WORK/o" "$VS" open -v "$L" tpm-v < "$WORK/pass"
[ "$rc" = 0 ] || fail "veilsetup open with the passphrase after the TPM2 failed: exit $rc"
grep -q 'policy digest does not match' "$WORK/o" || fail "the TPM2 was not tried first"
grep -qx 'Key slot 0 unlocked.' "$WORK/o" || fail "not opened by the passphrase's keyslot 0"
[ "$(read_direct /dev/mapper/tpm-v $((4 * 1024 * 1024)) | sha256sum)" = "$sum" ] ||
	fail "the passphrase's mapping reads other data"
"$VS" close tpm-v
ok "PCR 16 changed: open falls back to the passphrase on standard input (keyslot 0)"

# 3. veiltab, tpm2-device=auto. A fake systemd-ask-password logs each
# question and answers with the passphrase (tests/veilsetup/007's way).
mkdir "$WORK/bin"
cat > "$WORK/bin/systemd-ask-password" <<'ASK'
#!/bin/sh
echo "$*" >> "$ASK_LOG"
cat "$ASK_PASS"
ASK
chmod +x "$WORK/bin/systemd-ask-password"
export ASK_LOG=$WORK/asked ASK_PASS=$WORK/pass
cat > "$WORK/veiltab" <<TAB
tpm-tab     $L  none        tpm2-device=auto,tries=1
tpm-tabkey  $L  $WORK/pass  luks,tpm2-device=/dev/tpmrm0,noauto
tpm-tabbad  $L  none        plain,tpm2-device=auto,noauto
tpm-tabbad2 $L  none        tpm2-device=maybe,noauto
TAB
export VEILTAB=$WORK/veiltab VEILSETUP=$VS
VT=$TOP/userspace/veiltab
# tab NAME: veiltab start NAME without a terminal; its exit code in $rc
tab() {
	: > "$ASK_LOG"
	PATH=$WORK/bin:$PATH open_log "$WORK/o" "$VT" start "$1" < /dev/null
}
"$VT" list tpm-tab tpm-tabkey | tee "$WORK/list"
grep -q -- "--token-only --token-type systemd-tpm2 $L tpm-tab || $VS open --type luks --tries=1 --disable-external-tokens $L tpm-tab" \
	"$WORK/list" || fail "veiltab list: tpm2-device=auto not as expected"
for n in "tpm-tabbad:needs a LUKS2 volume" "tpm-tabbad2:'tpm2-device=maybe' not understood"; do
	tab "${n%%:*}"
	[ "$rc" = 1 ] || fail "veiltab: ${n%%:*}: exit $rc, want 1"
	grep -q "${n#*:}" "$WORK/o" || fail "veiltab: ${n%%:*}: no '${n#*:}'"
done

pcr_good
tab tpm-tab
[ "$rc" = 0 ] || fail "veiltab start tpm-tab with the TPM2: exit $rc"
[ ! -s "$ASK_LOG" ] || fail "veiltab asked for a passphrase with the TPM2 there: $(cat "$ASK_LOG")"
grep -q 'tpm-tab opened (TPM2)' "$WORK/o" || fail "veiltab: not opened by the TPM2"
dmsetup table tpm-tab | grep -q ' veil ' || fail "tpm-tab: $(dmsetup table tpm-tab)"
[ "$(read_direct /dev/mapper/tpm-tab $((4 * 1024 * 1024)) | sha256sum)" = "$sum" ] ||
	fail "tpm-tab reads other data"
"$VT" stop tpm-tab
ok "veiltab tpm2-device=auto: opened by the TPM2, no question asked"

pcr_bad
tab tpm-tabkey
[ "$rc" = 0 ] || fail "veiltab start tpm-tabkey, PCR changed, key file: exit $rc"
grep -q 'policy digest does not match' "$WORK/o" || fail "veiltab: the TPM2 was not tried first"
grep -q 'not unlocked by the TPM2, trying the key file' "$WORK/o" || fail "veiltab: no word of the key file"
[ ! -s "$ASK_LOG" ] || fail "veiltab asked with a key file: $(cat "$ASK_LOG")"
dmsetup table tpm-tabkey | grep -q ' veil ' || fail "tpm-tabkey: $(dmsetup table tpm-tabkey)"
"$VT" stop tpm-tabkey
ok "veiltab tpm2-device=/dev/tpmrm0, PCR changed: the key file opened it"
tab tpm-tab
[ "$rc" = 0 ] || fail "veiltab start tpm-tab, PCR changed, asked: exit $rc"
[ "$(wc -l < "$ASK_LOG")" = 1 ] || fail "veiltab asked $(wc -l < "$ASK_LOG") times, want once"
grep -q 'not unlocked by the TPM2, trying the passphrase' "$WORK/o" || fail "veiltab: no word of the passphrase"
dmsetup table tpm-tab | grep -q ' veil ' || fail "tpm-tab: $(dmsetup table tpm-tab)"
"$VT" stop tpm-tab
ok "veiltab tpm2-device=auto, PCR changed: the passphrase asked once opened it"

# 4. At boot: veiltab as veiltab.service runs it. This guest's PID 1 is
# virtme-ng's init, not systemd, so the unit itself cannot start; its
# ExecStart= line runs as systemd runs a system service's: veiltab and
# veilsetup where the package puts them (/usr/sbin, an overlay in this
# guest, as /etc is), /etc/veiltab, the working directory /, a session of
# its own with no terminal, standard input /dev/null, no environment but
# systemd's PATH. Nothing else is faked: systemd-ask-password is the real
# one, which no agent answers here (as on a machine nobody is at), so it
# times out (timeout=). `timeout` only bounds the test: the unit waits
# without a limit (TimeoutSec=0).
install -D -m 0755 "$TOP/userspace/veilsetup" /usr/sbin/veilsetup
install -D -m 0755 "$TOP/userspace/veiltab" /usr/sbin/veiltab
exec_start=$(sed -n 's/^ExecStart=//p' "$TOP/userspace/veiltab.service")
exec_stop=$(sed -n 's/^ExecStop=//p' "$TOP/userspace/veiltab.service")
[ "${exec_start%% *}" = /usr/sbin/veiltab ] || fail "veiltab.service: ExecStart=$exec_start"
head -c 64 /dev/urandom > "$WORK/next.key"
mkloop 8M
L2=$LOOP
_devs+=(tpm-boot tpm-next)
# etc_veiltab OPTIONS: /etc/veiltab: the TPM2-enrolled volume with
# OPTIONS, then a plain volume with a key file that must open whatever
# happened to the first
etc_veiltab() {
	cat > /etc/veiltab <<TAB
# name    device  key file         options
tpm-boot  $L      none             $1
tpm-next  $L2     $WORK/next.key   plain,cipher=aes-xts-plain64,size=512
TAB
}
# unit CMD: CMD as systemd runs ExecStart= or ExecStop=; output into
# $WORK/unit, exit code in $rc
unit() {
	local start=$SECONDS
	rc=0
	# shellcheck disable=SC2086 # CMD is a command line
	(cd / && exec timeout 300 setsid -w env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin $1) \
		< /dev/null > "$WORK/unit" 2>&1 || rc=$?
	echo "  + $1 (as veiltab.service): exit $rc, $((SECONDS - start)) s"
	sed 's/^/  | /' "$WORK/unit"
}
mapped() { dmsetup info "$1" > /dev/null 2>&1; }
asked_left() { ls /run/systemd/ask-password 2>/dev/null | grep -q '^ask\.'; }

pcr_good
etc_veiltab tpm2-device=auto,timeout=5s,nofail
unit "$exec_start"
[ "$rc" = 0 ] || fail "boot, PCR 16 as enrolled: veiltab start: exit $rc"
grep -q 'tpm-boot opened (TPM2)' "$WORK/unit" || fail "boot: tpm-boot not opened by the TPM2"
grep -q 'not unlocked\|no passphrase' "$WORK/unit" && fail "boot: the TPM2 unlock fell back"
mapped tpm-boot && mapped tpm-next || fail "boot: not both mapped"
[ "$(read_direct /dev/mapper/tpm-boot $((4 * 1024 * 1024)) | sha256sum)" = "$sum" ] ||
	fail "boot: tpm-boot reads other data"
unit "$exec_stop"
[ "$rc" = 0 ] || fail "veiltab stop: exit $rc"
mapped tpm-boot || mapped tpm-next && fail "veiltab stop left a mapping"
ok "boot (ExecStart= as systemd runs it): tpm2-device=auto opened by the TPM2, no passphrase"

# refused OPTIONS RC: with PCR 16 changed and /etc/veiltab's tpm-boot
# entry taking OPTIONS, veiltab start as the unit runs it ends with exit
# code RC: tpm-boot refused with its reason (the TPM2's policy, the
# question timed out), nothing left asking, the next entry opened; with
# nofail reported as such
refused() {
	etc_veiltab "$1"
	unit "$exec_start"
	[ "$rc" = "$2" ] || fail "boot, PCR 16 changed, $1: exit $rc, want $2"
	mapped tpm-boot && fail "boot, PCR 16 changed, $1: tpm-boot mapped"
	mapped tpm-next || fail "boot, PCR 16 changed, $1: the next entry was not opened"
	grep -q 'policy digest does not match' "$WORK/unit" || fail "boot, $1: the TPM2 was not tried"
	grep -q 'veiltab: tpm-boot: not unlocked by the TPM2' "$WORK/unit" ||
		fail "boot, $1: no word of the TPM2"
	grep -q 'veiltab: tpm-boot: no passphrase given' "$WORK/unit" ||
		fail "boot, $1: the timed-out question not reported"
	case $1 in
	*nofail*) grep -q 'veiltab: tpm-boot not opened (nofail)' "$WORK/unit" ||
			fail "boot, $1: nofail not reported" ;;
	*) grep -q '(nofail)' "$WORK/unit" && fail "boot, $1: nofail reported" ;;
	esac
	asked_left && fail "boot, $1: a question is left in /run/systemd/ask-password"
	unit "$exec_stop"
}
pcr_bad
refused tpm2-device=auto,timeout=5s,nofail 0
ok "boot, PCR 16 changed, nofail: tpm-boot refused with its reason, exit 0, the next entry opened"
refused tpm2-device=auto,timeout=5s 1
ok "boot, PCR 16 changed, no nofail: exit 1, the next entry opened all the same"

bad=$(kmsg_bad) && fail "kernel log: $bad"
touch "$RESULTS/tpm2.ok"
