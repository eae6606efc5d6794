#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What veilsetup must never do with a LUKS volume:
# - map a header in the middle of a re-encryption (one key, one offset for
#   data under two keys): refused with cryptsetup's message, no mapping,
#   the disk unchanged (volumes with integrity protection open:
#   veilsetup/009);
# - leave the volume key in a keyring: it is in the thread keyring for the
#   table load only, so open works from a private session keyring too;
#   looked at after exit and while veilsetup still runs after the load
#   (held in its last write to a full pipe), when a key left in its thread
#   keyring would still be there;
# - keep a wrong passphrase in its memory while it asks again (read through
#   /proc/PID/mem at the second prompt; a marker planted in its
#   environment must be found there, so that reading nothing fails);
# - leave the terminal without echo after Ctrl-C at the prompt;
# - answer a question on a terminal otherwise than cryptsetup: the YES
#   questions of luksFormat, luksKillSlot, luksRemoveKey, erase,
#   luksHeaderRestore and --tries running out, through both tools on a pty.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd cryptsetup
requires cmd keyctl
requires cmd python3
requires module loop dm_crypt
veil_load
fast="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
printf 'first' > "$WORK/k1"
snap() { head -c 40M "$1" | sha256sum | cut -d' ' -f1; }

# 1. Re-encryption in progress.
mkloop 40M
cryptsetup luksFormat -q $fast "$LOOP" "$WORK/k1"
cryptsetup reencrypt --init-only -q $fast -d "$WORK/k1" "$LOOP" ||
	fail "cryptsetup reencrypt --init-only"
cryptsetup luksDump "$LOOP" | grep 'online-reencrypt' >/dev/null || fail "no reencrypt requirement"
before=$(snap "$LOOP")
if "$VS" open -d "$WORK/k1" "$LOOP" vt > "$WORK/out" 2>&1; then
	_devs+=(vt)
	fail "a header in re-encryption was mapped"
fi
cat "$WORK/out"
grep -q 'Operation incompatible with device marked for LUKS2 reencryption. Aborting.' "$WORK/out" ||
	fail "not cryptsetup's message: $(cat "$WORK/out")"
[ -z "$(dmsetup ls --target veil | grep -v 'No devices')" ] || fail "a mapping was left"
[ "$(snap "$LOOP")" = "$before" ] || fail "the disk changed"
echo "ok: re-encryption header refused, disk unchanged"

# 2. Keyrings: nothing left, before or after close; a private session works.
cryptsetup luksFormat -q $fast "$LOOP" "$WORK/k1"
keys() { grep -c 'logon.*veil:' /proc/keys || true; }
k0=$(keys)
keyctl session - "$VS" open -d "$WORK/k1" "$LOOP" vt || fail "open from a private session keyring"
_devs+=(vt)
dmsetup table vt | grep -q ' :64:logon:veil:VEIL-LUKS2-' || fail "the table does not name a keyring key: $(dmsetup table vt)"
[ "$(keys)" = "$k0" ] || fail "a volume key is left in a keyring: $(grep veil: /proc/keys)"
"$VS" status vt | grep -q 'key location: keyring' || fail "status: key location"
[ "$(lsblk -dno TYPE /dev/mapper/vt)" = veil ] || fail "lsblk TYPE: $(lsblk -dno TYPE /dev/mapper/vt)"
"$VS" status --json vt | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["active"] and d["type"] == "LUKS2" and d["key_location"] == "keyring", d
assert d["key_bits"] == 512 and "reads" in d["counters"], d' || fail "status --json"
{ "$VS" status --json nosuch || [ $? = 4 ]; } | python3 -c '
import json, sys
assert json.load(sys.stdin) == {"name": "nosuch", "active": False}' || fail "status --json, inactive"
"$VS" luksSuspend vt
"$VS" luksResume -d "$WORK/k1" vt || fail "luksResume"
[ "$(keys)" = "$k0" ] || fail "luksResume left a key: $(grep veil: /proc/keys)"
"$VS" close vt
[ "$(keys)" = "$k0" ] || fail "close left a key"
# While it runs: veilsetup -v ends with "Command successful." on standard
# output, a pipe filled up beforehand, so it waits in that write, after
# the table load, with its thread and thread keyring alive. The mapping
# must exist then (the control that the load is done), and no veil key
# may be in any keyring but as invalidated (/proc/keys flag i) or gone.
cat > "$WORK/keys-live.py" <<'PY'
import os, re, subprocess, sys, time
vs, dev, key, name = sys.argv[1:5]
def live_keys():
    n = 0
    with open("/proc/keys") as f:
        for line in f:
            w = line.split()
            if "logon" in w and re.search(r"veil:", line) and "i" not in w[2]:
                n += 1
    return n
r, w = os.pipe()
os.set_blocking(w, False)
filled = 0
try:
    while True:
        filled += os.write(w, b"x" * 4096)
except BlockingIOError:
    pass
os.set_blocking(w, True)
before = live_keys()
p = subprocess.Popen([vs, "-v", "open", "-d", key, dev, name], stdout=w)
def wchan():
    try:
        with open("/proc/%d/wchan" % p.pid) as f:
            return f.read().strip()
    except OSError:
        return ""
end = time.time() + 60
while time.time() < end and p.poll() is None and wchan() != "pipe_write":
    time.sleep(0.1)
time.sleep(0.5)	# the keyring's garbage collector, for an invalidated key
running = p.poll() is None and wchan() == "pipe_write"
mapped = b"LIVE" in subprocess.run(["dmsetup", "info", name], capture_output=True).stdout
during = live_keys()
os.close(w)
out = b""
while True:
    chunk = os.read(r, 65536)
    if not chunk:
        break
    out += chunk
rc = p.wait()
print("pipe filled with %d bytes; waiting in its last write: %s, live table: %s, "
      "live veil keys before %d, during %d; exit code %d, said %r" %
      (filled, running, mapped, before, during, rc, out[filled:].decode(errors="replace").strip()))
sys.exit(0 if running and mapped and during == before and rc == 0 and
         b"Command successful." in out[filled:] else 1)
PY
python3 "$WORK/keys-live.py" "$VS" "$LOOP" "$WORK/k1" vt ||
	fail "a volume key in a keyring while veilsetup ran, or the check saw nothing"
_devs+=(vt)
"$VS" close vt
echo "ok: no key left in any keyring"

# 3 and 4: the terminal.
cat > "$WORK/prompt.py" <<'PY'
import os, pty, re, signal, sys, termios, time
vs, dev, what = sys.argv[1], sys.argv[2], sys.argv[3]
# A control: a marker in the environment, on veilsetup's stack, must be
# found by the same reads, or they read nothing.
control = b"MemControl-" + os.urandom(6).hex().encode()
pid, fd = pty.fork()
if pid == 0:
    os.execve(vs, [vs, "open", "--tries", "2", dev, "vt"],
              dict(os.environ, VEIL_MEM_CONTROL=control.decode()))
def wait_for(text, timeout=60):
    buf, end = b"", time.time() + timeout
    while time.time() < end:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        buf += chunk
        if text in buf:
            return buf
    sys.exit("no prompt %r: %r" % (text, buf))
wait_for(b"Enter passphrase")
if what == "ctrl-c":
    time.sleep(0.5)
    echo_off = not (termios.tcgetattr(fd)[3] & termios.ECHO)
    os.write(fd, b"\x03")
    _, status = os.waitpid(pid, 0)
    echo_on = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
    print("echo off at the prompt: %s, killed by SIGINT: %s, echo back: %s" %
          (echo_off, os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT, echo_on))
    sys.exit(0 if echo_off and echo_on and os.WIFSIGNALED(status) else 1)
marker = b"WrongPass-" + os.urandom(6).hex().encode()
os.write(fd, marker + b"\n")
wait_for(b"Enter passphrase")
time.sleep(0.5)
found = seen = nread = 0
with open("/proc/%d/maps" % pid) as maps, open("/proc/%d/mem" % pid, "rb", 0) as mem:
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (r)", line)
        if not m or "[vvar]" in line or "[vsyscall]" in line:
            continue
        start, end = int(m.group(1), 16), int(m.group(2), 16)
        try:
            mem.seek(start)
            data = mem.read(end - start)
        except OSError:
            continue
        nread += len(data)
        found += data.count(marker)
        seen += data.count(control)
print("read %d bytes of veilsetup's memory at the second prompt: %d copies of the "
      "wrong passphrase, %d of the control marker" % (nread, found, seen))
os.write(fd, b"first\n")
_, status = os.waitpid(pid, 0)
print("open exit code: %d" % os.WEXITSTATUS(status))
sys.exit(0 if nread > 0 and seen > 0 and found == 0 and os.WEXITSTATUS(status) == 0 else 1)
PY
python3 "$WORK/prompt.py" "$VS" "$LOOP" memory || fail "a wrong passphrase stayed in memory, or open failed"
_devs+=(vt)
"$VS" close vt
python3 "$WORK/prompt.py" "$VS" "$LOOP" ctrl-c || fail "Ctrl-C at the prompt"
dmsetup info vt > /dev/null 2>&1 && fail "a mapping after Ctrl-C"
echo "ok: the terminal"

# 5. Questions on a terminal, compared with cryptsetup: term.py drives
# each tool on a pty, answering "Are you sure?" and the passphrase prompts
# from a list. The same exit code, the same keyslots left and cryptsetup's
# "Operation aborted..." line, for each answer.
cat > "$WORK/term.py" <<'PY'
import os, pty, re, select, signal, sys, termios, time
sep = sys.argv.index("--")
spec, argv = sys.argv[1:sep], sys.argv[sep + 1:]
yes = [a[4:] for a in spec if a.startswith("yes=")]
passes = [a[5:] for a in spec if a.startswith("pass=")]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
buf, pos, end, status = b"", 0, time.time() + 120, None
def give_up(why):
    # the deadline passed: the child is killed, and term() fails the test
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    sys.stderr.write(buf.decode(errors="replace").replace("\r", ""))
    sys.stderr.write("term.py: %s\n" % why)
    print("DEADLINE")
    sys.exit(0)
def done():
    global status
    if status is None:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            status = st
    return status is not None
def echo_on():
    try:
        return termios.tcgetattr(fd)[3] & termios.ECHO
    except termios.error:
        return False
while True:
    # select() with the deadline: a lost answer fails, it does not hang
    left = end - time.time()
    if left <= 0:
        give_up("no end of output before the deadline")
    if not select.select([fd], [], [], left)[0]:
        continue
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    buf += chunk
    tail = buf[pos:]
    if re.search(rb"Are you sure\? \(Type 'yes' in capital letters\): $", tail):
        answer = yes.pop(0) if yes else ""
    elif re.search(rb"(?i)(passphrase|verify)[^\n]*: $", tail):
        answer = passes.pop(0) if passes else ""
        # The tool writes the prompt before it turns echo off, and
        # tcsetattr(TCSAFLUSH) drops what came before: answer once echo
        # is off (the yes/no question keeps echo on).
        while echo_on() and not done():
            if time.time() > end:
                give_up("echo still on at the passphrase prompt")
            time.sleep(0.01)
        if done():
            continue
    else:
        continue
    os.write(fd, answer.encode() + b"\n")
    pos = len(buf)
if status is None:
    _, status = os.waitpid(pid, 0)
sys.stderr.write(buf.decode(errors="replace").replace("\r", ""))
print(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
PY
mkloop 40M
TC=$LOOP
mkloop 40M
TV=$LOOP
slots() { cryptsetup luksDump "$1" 2>/dev/null | grep -c ': luks2' || true; }
# term ANSWER... -- ARGS: ARGS (@DEV@ the device) through both tools on a
# pty, each on a device freshly formatted with passphrase "first"
term() {
	local spec=() a rc_c rc_v args_c=() args_v=()
	while [ "$1" != -- ]; do spec+=("$1"); shift; done
	shift
	for a in "$@"; do args_c+=("${a//@DEV@/$TC}"); args_v+=("${a//@DEV@/$TV}"); done
	cryptsetup luksFormat -q $fast "$TC" "$WORK/k1"
	cryptsetup luksFormat -q $fast "$TV" "$WORK/k1"
	rc_c=$(python3 "$WORK/term.py" "${spec[@]}" -- cryptsetup "${args_c[@]}" 2> "$WORK/tr-c")
	rc_v=$(python3 "$WORK/term.py" "${spec[@]}" -- "$VS" "${args_v[@]}" 2> "$WORK/tr-v")
	# term.py kills a tool still running at its deadline (a lost answer)
	if [ "$rc_c" = DEADLINE ] || [ "$rc_v" = DEADLINE ] ||
	   [ "$rc_c" != "$rc_v" ] || [ "$(slots "$TC")" != "$(slots "$TV")" ] ||
	   ! { grep -a '^Operation aborted' "$WORK/tr-c" || true; } | cmp -s - <(grep -a '^Operation aborted' "$WORK/tr-v" || true); then
		echo "--- cryptsetup:"; cat "$WORK/tr-c"; echo "--- veilsetup:"; cat "$WORK/tr-v"
		fail "on a terminal, ${spec[*]}: $*: exit codes cryptsetup $rc_c, veilsetup $rc_v; keyslots $(slots "$TC"), $(slots "$TV")"
	fi
	echo "ok: [$rc_v] ${spec[*]}: $* (keyslots left: $(slots "$TV"))"
}
term yes=no -- luksFormat $fast @DEV@
term yes=YES pass=new pass=other -- luksFormat $fast @DEV@
term pass=first yes=no -- luksKillSlot @DEV@ 0
term pass=first yes=YES -- luksKillSlot @DEV@ 0
term yes=no -- luksKillSlot -d "$WORK/k1" @DEV@ 0
term pass=first yes=no -- luksRemoveKey @DEV@
term pass=first yes=YES -- luksRemoveKey @DEV@
term yes=no -- erase @DEV@
term pass=wrong pass=wrong -- open --test-passphrase --tries 2 @DEV@
term pass=wrong pass=first -- open --test-passphrase --tries 2 @DEV@
term pass=wrong -- open --test-passphrase --tries 1 @DEV@
cryptsetup luksHeaderBackup "$TC" --header-backup-file "$WORK/hb"
term yes=no -- luksHeaderRestore @DEV@ --header-backup-file "$WORK/hb"
echo "ok: questions on a terminal as cryptsetup's"
