#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "key set" with a keyring key that another process is still constructing
# (keyctl request2 runs /sbin/request-key, which may take as long as its
# helper likes) waits for that key: the table, status and resume of the
# device must not wait with it, and the key set must then fail and leave
# the old key in place.
. "$(dirname "$0")/../lib.sh"
requires root
requires cmd keyctl
requires module loop
[ -x /sbin/request-key ] || skip "no /sbin/request-key (keyutils)"
veil_load

mkloop 8M
dm_create vt "0 8192 veil aes-xts-plain64 $(randhex 64) 0 $LOOP 0"
plaintext "$WORK/data" $((256 * 1024))
write_direct "$WORK/data" /dev/mapper/vt

# The upcall's helper, for 30 s. The bind mount is the guest's own.
cat > "$WORK/request-key" <<'EOF'
#!/bin/sh
exec sleep 30
EOF
chmod 755 "$WORK/request-key"
mount --bind "$WORK/request-key" /sbin/request-key
at_exit "umount /sbin/request-key"

keyctl request2 logon veiltest:slow callout @u > /dev/null 2>&1 &
for _ in $(seq 50); do
	pgrep -x sleep -a | grep -q 'sleep 30' && break
	sleep 0.2
done
pgrep -x sleep -a | grep -q 'sleep 30' || fail "keyctl request2 did not start the request-key upcall"
dmsetup suspend vt
dmsetup message vt 0 key set :64:logon:veiltest:slow > "$WORK/msg" 2>&1 &
msg=$!
sleep 2
kill -0 $msg 2>/dev/null || fail "key set did not wait for the key under construction: $(cat "$WORK/msg")"

t0=$(date +%s)
timeout 10 dmsetup table vt > "$WORK/table" || fail "dmsetup table waited for the upcall ($(($(date +%s) - t0)) s)"
timeout 10 dmsetup status vt > /dev/null || fail "dmsetup status waited for the upcall"
timeout 10 dmsetup resume vt || fail "dmsetup resume waited for the upcall ($(($(date +%s) - t0)) s)"
same_data "$WORK/data" /dev/mapper/vt || fail "data after resume"

wait $msg && fail "key set of a missing key succeeded"
cat "$WORK/msg"
dmsetup table vt | grep -q ':64:logon:veiltest:slow' && fail "the table names the missing key"
same_data "$WORK/data" /dev/mapper/vt || fail "data after the key set failed"
echo "table, status and resume during the upcall: $(($(date +%s) - t0)) s until the key set failed"
