#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest of 004-packages.sh, whose /etc, /usr and /var are overlays
# (nothing reaches the host): install the two .deb files as a user would,
# let DKMS build the module for this kernel (the only one whose headers
# it sees), and use a volume with no insmod at all. Writes
# RESULTS/packages.ok when all is well.
#
#   package-guest.sh RESULTS DEBDIR
. "$(dirname "$0")/../lib.sh"
RESULTS=$1 DEBS=$2
# The compiler DKMS runs, too (004-packages.sh made this list).
. "$TOP/tests/guest-cache.sh"
guest_cache "$RESULTS/guest-cache-packages.list"
requires root
requires module loop
requires cmd apt-get dpkg dkms
kmsg_mark
rel=$(uname -r)
VS=/usr/sbin/veilsetup
PASS="package test passphrase"
module_loaded dm_veil && fail "dm_veil is loaded before the packages are installed"
dpkg -s dm-veil-dkms >/dev/null 2>&1 && fail "dm-veil-dkms is installed already"

# DKMS builds for the running kernel and the newest one with headers. The
# test wants this kernel's build; the other kernels' headers are hidden
# in the overlay so that the emulated guest compiles the module once.
for k in /lib/modules/*; do
	[ "${k##*/}" = "$rel" ] || rm -f "$k/build"
done
# man-db re-indexes every manual page after each install and removal,
# four minutes and more under emulation and nothing this test is about
# (the page's file is checked below); the overlay keeps this off the host.
rm -f /var/lib/man-db/auto-update
# As docs/install.md says: apt installs the files and checks their
# dependencies (all present here: the guest has no network).
info "apt-get install: $(cd "$DEBS" && echo dm-veil-dkms_*.deb veilsetup_*.deb)"
t0=$SECONDS
apt-get install -y --no-install-recommends "$DEBS"/dm-veil-dkms_*.deb \
	"$DEBS"/veilsetup_*.deb > "$WORK/dpkg.log" 2>&1 ||
	{ cat "$WORK/dpkg.log"; fail "apt-get install failed"; }
grep -E 'dkms|DKMS|Building|Installing' "$WORK/dpkg.log" | head -20
info "apt-get install took $((SECONDS - t0)) s"
for f in /usr/share/man/man8/veilsetup.8.gz /usr/share/bash-completion/completions/veilsetup \
	/usr/sbin/veiltab /lib/systemd/system/veiltab.service; do
	[ -f "$f" ] || fail "veilsetup's package did not install $f"
done
page=$(MANWIDTH=80 man -l /usr/share/man/man8/veilsetup.8.gz 2>&1) || fail "man veilsetup: $page"
[[ "$page" == *"luksFormat"* ]] || fail "the installed man page does not render: $(echo "$page" | head -5)"
ko=$(modinfo -n dm-veil 2>/dev/null) || { cat "$WORK/dpkg.log"; fail "modinfo finds no dm-veil after apt-get install"; }
info "module: $ko"
case "$ko" in /lib/modules/$rel/updates/dkms/*|/usr/lib/modules/$rel/updates/dkms/*) ;;
*) fail "dm-veil is not DKMS's build for $rel: $ko" ;; esac
dkms status dm-veil | grep -q "$rel.*installed" || { dkms status; fail "dkms status: not installed for $rel"; }
module_loaded dm_veil && fail "apt-get install loaded the module: the test wants device-mapper to"

# A LUKS2 volume, opened by the packaged veilsetup: device-mapper asks
# modprobe for dm-veil itself.
modprobe dm_mod
mkloop 64M
echo "$PASS" | $VS luksFormat -q --pbkdf-memory 65536 --iter-time 200 "$LOOP" ||
	fail "veilsetup luksFormat"
echo "$PASS" | $VS open "$LOOP" vp || fail "veilsetup open without insmod"
_devs+=(vp)
module_loaded dm_veil || fail "the volume opened but dm_veil is not loaded"
dmsetup table vp | grep -q ' veil ' || fail "vp is not a veil device: $(dmsetup table vp)"
plaintext "$WORK/data" $((4 * 1024 * 1024))
dd if="$WORK/data" of=/dev/mapper/vp bs=1M oflag=direct status=none
$VS close vp
echo "$PASS" | $VS open "$LOOP" vp || fail "reopen"
cmp "$WORK/data" <(dd if=/dev/mapper/vp bs=1M count=4 iflag=direct status=none) ||
	fail "data read back after reopen differs"
st=$($VS status vp) || fail "veilsetup status failed"
[[ "$st" == *"type:    LUKS2"* ]] || fail "veilsetup status: $st"
$VS close vp
no_plaintext "$LOOP"

# Removal: the module may stay loaded (as any module), its files go.
rmmod dm_veil
apt-get purge -y veilsetup dm-veil-dkms > "$WORK/purge.log" 2>&1 ||
	{ cat "$WORK/purge.log"; fail "apt-get purge failed"; }
[ -z "$(ls -d /usr/src/dm-veil-* 2>/dev/null)" ] || fail "DKMS sources left in /usr/src"
[ ! -e "$VS" ] || fail "$VS left after purge"
[ ! -e /usr/share/man/man8/veilsetup.8.gz ] || fail "the man page is left after purge"
modinfo dm-veil >/dev/null 2>&1 && fail "dm-veil still installed after purge: $(modinfo -n dm-veil)"
[ -z "$(dkms status dm-veil 2>/dev/null)" ] || fail "dkms still knows dm-veil: $(dkms status dm-veil)"
bad=$(kmsg_bad) && fail "kernel log: $bad"
touch "$RESULTS/packages.ok"
echo "ok: packages installed, volume opened with no insmod, packages purged"
