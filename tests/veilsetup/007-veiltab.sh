#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# veiltab: /etc/veiltab in crypttab's syntax, opened and closed with
# veilsetup (what veiltab.service runs at boot and shutdown). LUKS by
# UUID= with options, plain with a key file, noauto opened only by name,
# nofail, a bad option reported without stopping the other entries.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop
veil_load
fast="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
head -c 64 /dev/urandom > "$WORK/plain.key"
printf 'tab secret' > "$WORK/luks.key"
mkloop 40M
L1=$LOOP
"$VS" luksFormat -q $fast "$L1" "$WORK/luks.key"
udevadm trigger --settle "$L1" 2>/dev/null || udevadm settle
uuid=$("$VS" luksUUID "$L1")
mkloop 40M
L2=$LOOP
mkloop 40M
L3=$LOOP
"$VS" luksFormat -q $fast "$L3" "$WORK/luks.key"
_devs+=(tab-luks tab-plain tab-later tab-bad tab-nofail)

cat > "$WORK/veiltab" <<TAB
# name     device        key file         options
tab-luks   UUID=$uuid    $WORK/luks.key   luks,discard,no-read-workqueue
tab-plain  $L2           $WORK/plain.key  plain,cipher=aes-xts-plain64,size=512,offset=2048,fanout-chunk=8192

tab-later  $L3           $WORK/luks.key   luks,noauto,readonly
tab-bad    $L3           $WORK/luks.key   luks,frobnicate
tab-nofail /dev/veil-nosuch $WORK/luks.key nofail
TAB
export VEILTAB=$WORK/veiltab VEILSETUP=$VS
VT=$TOP/userspace/veiltab

# list prints every entry; the bad one makes it fail.
if "$VT" list; then fail "list: the bad entry was not reported"; fi
if "$VT" start > "$WORK/out" 2>&1; then fail "a bad entry did not fail the start"; fi
cat "$WORK/out"
grep -q "unknown option 'frobnicate'" "$WORK/out" || fail "bad option not reported"
dmsetup table tab-luks | grep -q ' 2 allow_discards no_read_workqueue$' ||
	fail "tab-luks options: $(dmsetup table tab-luks)"
dmsetup table tab-plain | grep -q "aes-xts-plain64 .* $(majmin "$L2") 2048 1 fanout_chunk:8192$" ||
	fail "tab-plain: $(dmsetup table tab-plain)"
# The key file's key, through the keyring: a veil table of it by hand
# reads what tab-plain wrote.
key_hidden tab-plain
head -c 262144 /dev/urandom > "$WORK/tp"
write_direct "$WORK/tp" /dev/mapper/tab-plain
dm_create tab-check "0 512 veil aes-xts-plain64 $(od -An -v -tx1 "$WORK/plain.key" | tr -d ' \n') 0 $(majmin "$L2") 2048"
same_data "$WORK/tp" /dev/mapper/tab-check || fail "tab-plain: not the key file's key"
dm_remove tab-check
dmsetup info tab-later > /dev/null 2>&1 && fail "noauto entry opened"
dmsetup info tab-nofail > /dev/null 2>&1 && fail "nofail entry opened"
grep -q 'tab-nofail not opened (nofail)' "$WORK/out" || fail "nofail not reported"

"$VT" start tab-later || fail "start by name"
[ "$(blockdev --getro /dev/mapper/tab-later)" = 1 ] || fail "readonly"
"$VT" start tab-luks | grep -q 'already open' || fail "second start"

"$VT" stop || fail "stop"
for n in tab-luks tab-plain tab-later; do
	dmsetup info "$n" > /dev/null 2>&1 && fail "$n left open"
done
echo "ok: veiltab start, start NAME, stop"

# Passphrases at boot come from systemd-ask-password (here a fake on PATH
# that gives the answers in $WORK/answers, one per question, and logs its
# arguments): tries= asks again after a wrong passphrase, up to tries
# times; timeout= is passed on; a question that times out is not asked
# again.
mkdir "$WORK/bin"
cat > "$WORK/bin/systemd-ask-password" <<'ASK'
#!/bin/sh
echo "$*" >> "$ASK_LOG"
a=$(head -n 1 "$ASK_ANSWERS")
sed -i 1d "$ASK_ANSWERS"
[ "$a" = TIMEOUT ] && exit 1
printf '%s\n' "$a"
ASK
chmod +x "$WORK/bin/systemd-ask-password"
export ASK_LOG=$WORK/asked ASK_ANSWERS=$WORK/answers
cat > "$WORK/veiltab-ask" <<TAB
ask-three  $L3  none  luks,tries=3
ask-two    $L3  none  luks,tries=2
ask-wait   $L3  none  luks,timeout=2min
ask-zero   $L3  none  luks,tries=00
ask-gone   /dev/veil-nosuch  none  luks
TAB
_devs+=(ask-three ask-two ask-wait ask-zero)
# ask NAME ANSWER...: veiltab start NAME without a terminal; its exit code
ask() {
	local name=$1 rc=0
	shift
	printf '%s\n' "$@" > "$ASK_ANSWERS"
	: > "$ASK_LOG"
	VEILTAB=$WORK/veiltab-ask PATH=$WORK/bin:$PATH "$VT" start "$name" < /dev/null > "$WORK/out" 2>&1 || rc=$?
	cat "$WORK/out"
	return $rc
}
asked() { wc -l < "$ASK_LOG"; }
ask ask-three wrong1 wrong2 "tab secret" || fail "tries=3: not opened on the third answer"
[ "$(asked)" = 3 ] || fail "tries=3: asked $(asked) times"
dmsetup info ask-three > /dev/null || fail "tries=3: no mapping"
"$VS" close ask-three
if ask ask-two wrong1 wrong2 "tab secret"; then fail "tries=2: opened on the third answer"; fi
[ "$(asked)" = 2 ] || fail "tries=2: asked $(asked) times"
dmsetup info ask-two > /dev/null 2>&1 && fail "tries=2: mapped"
grep -q -- '--timeout=0' "$ASK_LOG" || fail "no timeout= should wait without a limit: $(cat "$ASK_LOG")"
if ask ask-wait TIMEOUT "tab secret"; then fail "timeout: opened after the question timed out"; fi
[ "$(asked)" = 1 ] || fail "timeout: asked $(asked) times"
grep -q -- '--timeout=120 ' "$ASK_LOG" || fail "timeout=2min not passed on: $(cat "$ASK_LOG")"
grep -q 'no passphrase' "$WORK/out" || fail "timeout not reported"
echo "ok: veiltab tries= and timeout= through systemd-ask-password"
# tries=00 is tries=0, no limit (veiltab compared the text "00" with "0"
# and gave up after one question until 2026-11-24).
ask ask-zero wrong1 wrong2 wrong3 "tab secret" || fail "tries=00: not opened on the fourth answer"
[ "$(asked)" = 4 ] || fail "tries=00: asked $(asked) times"
"$VS" close ask-zero
# A device that is not there: no question, veilsetup's message and exit
# code 4 (veiltab asked, veilsetup exited unread, the answer's SIGPIPE was
# taken for a timeout: "no passphrase given", exit 1, until 2026-11-24).
rc=0
ask ask-gone "tab secret" || rc=$?
[ "$rc" = 4 ] || fail "missing device: exit code $rc, want 4"
[ "$(asked)" = 0 ] || fail "missing device: asked $(asked) times"
grep -q 'no passphrase' "$WORK/out" && fail "missing device reported as a timeout"
grep -q 'does not exist' "$WORK/out" || fail "missing device not reported: $(cat "$WORK/out")"
echo "ok: veiltab tries=00, a missing device without a question"
