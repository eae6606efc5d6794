#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Authenticated encryption seen on the device itself: dm-integrity made by
# hand (direct mode, 28 bytes of metadata per sector) under
# capi:gcm(aes)-random integrity:28:aead, sectors of each size dm-crypt
# takes (512, 1024, 2048 and 4096 bytes), the loop device under it read and
# changed directly:
#   - a sector written through veil changes its data and its 28 bytes of
#     metadata (16 of tag, 12 of IV) and nothing else on the device;
#   - fresh IVs: the same sector written 64 times through veil stores 64
#     different IVs and 64 different tags, the writes encrypted with
#     write masks made ahead (aead_mask_hit > 0: interop/009);
#   - tampering: one byte flipped in the sector's data, its tag or its
#     stored IV fails the read of that sector with EILSEQ and
#     "INTEGRITY AEAD ERROR, sector S" (S in 512-byte units), for veil as
#     for dm-crypt; the sectors beside it still read back; the byte
#     flipped back, the sector reads back again.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_integrity dm_crypt
veil_load

# dev_tool snap DEV OUT | diff OLD NEW | flip DEV OFF | rewrite ...: the
# devices read and written with O_DIRECT, as dm-integrity sees them
dev_tool() {
	python3 - "$@" <<'PY'
import mmap, os, sys
op, path = sys.argv[1], sys.argv[2]
BLK = 8192

def block(fd, off, write=None):
    buf = mmap.mmap(-1, BLK)
    base = off - off % BLK
    os.preadv(fd, [buf], base)
    if write is not None:
        write(buf, off - base)
        os.pwritev(fd, [buf], base)
    return buf[:], off - base

if op == "snap":
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, 1 << 20)
    with open(sys.argv[3], "wb") as o:
        while True:
            n = os.readv(fd, [buf])
            if n <= 0:
                break
            o.write(buf[:n])
elif op == "diff":
    # the differing byte ranges, "start end" per line (end exclusive),
    # ranges closer than 64 bytes joined
    a, b = open(path, "rb").read(), open(sys.argv[3], "rb").read()
    runs = []
    blocks = (o for o in range(0, len(a), 4096) if a[o:o + 4096] != b[o:o + 4096])
    for i in (o + j for o in blocks for j in range(4096) if a[o + j] != b[o + j]):
        if runs and i - runs[-1][1] < 64:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    for s, e in runs:
        print(s, e)
elif op == "flip":
    fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    def flip(buf, i):
        buf[i] ^= 0x5a
    block(fd, int(sys.argv[3]), flip)
elif op == "rewrite":
    # rewrite DEV LOWER N SIZE OFF COUNT: sector N of DEV (SIZE bytes)
    # written COUNT times with the same data, each time flushed and the 28
    # bytes at OFF of LOWER printed
    dev = os.open(path, os.O_RDWR | os.O_DIRECT)
    low = os.open(sys.argv[3], os.O_RDONLY | os.O_DIRECT)
    n, size, off, count = (int(a) for a in sys.argv[4:8])
    data = mmap.mmap(-1, size)
    data.write(os.urandom(size))
    for _ in range(count):
        os.pwritev(dev, [data], n * size)
        os.fsync(dev)
        buf, i = block(low, off)
        print(buf[i:i + 28].hex())
PY
}

# read_sector DEV N SIZE: sector N (of SIZE bytes) of DEV, O_DIRECT
read_sector() {
	dd if="$1" of=/dev/null bs="$3" skip="$2" count=1 iflag=direct status=none
}

N=100
for size in 512 1024 2048 4096; do
	info "sectors of $size bytes"
	mkloop 16M
	integrity vt-int "$LOOP" 28 D "$size"
	len=$INT_LEN
	# dm-integrity's optional words, to load it again below
	opts=0
	[ "$size" = 512 ] || opts="1 block_size:$size"
	feat="1 integrity:28:aead"
	[ "$size" = 512 ] || feat="2 integrity:28:aead sector_size:$size"
	table="0 $len crypt capi:gcm(aes)-random $(randhex 32) 0 $(majmin /dev/mapper/vt-int) 0 $feat"
	# The first MiB written once, so that sector N and its neighbours read.
	dm_create vt-ae "$table"
	dd if=/dev/zero of=/dev/mapper/vt-ae bs=64k count=16 oflag=direct conv=fsync \
		status=none
	dm_remove vt-ae
	dm_create vt-ae "${table/ crypt / veil }"

	# Where sector N lives: the union of what three writes of it change,
	# runs of more than 64 bytes its data, shorter ones its metadata.
	dev_tool snap "$LOOP" "$WORK/before"
	: > "$WORK/changed"
	for i in 1 2 3; do
		head -c "$size" /dev/urandom > "$WORK/sector"
		dd if="$WORK/sector" of=/dev/mapper/vt-ae bs="$size" seek=$N \
			oflag=direct conv=notrunc,fsync status=none
		dev_tool snap "$LOOP" "$WORK/after"
		dev_tool diff "$WORK/before" "$WORK/after" >> "$WORK/changed"
		mv "$WORK/after" "$WORK/before"
	done
	read -r d de t te < <(awk '
		$2 - $1 > 64 { if (!dn || $1 < ds) ds = $1; if (!dn || $2 > de) de = $2; dn = 1; next }
		{ if (!tn || $1 < ts) ts = $1; if (!tn || $2 > te) te = $2; tn = 1 }
		END { print ds + 0, de + 0, ts + 0, te + 0 }' "$WORK/changed")
	[ $((de - d)) = "$size" ] && [ $((d % 512)) = 0 ] ||
		fail "sector $size: a write of one sector changed data bytes $d-$de"
	[ $((te - t)) = 28 ] ||
		fail "sector $size: a write of one sector changed metadata bytes $t-$te, not 28"
	echo "ok: sector $N: data at byte $d of the device, metadata at $t, nothing else changed"

	# Fresh IVs: 64 writes of the same sector, 64 IVs and 64 tags.
	dev_tool rewrite /dev/mapper/vt-ae "$LOOP" $N "$size" "$t" 64 > "$WORK/tuples"
	[ "$(wc -l < "$WORK/tuples")" = 64 ] || fail "sector $size: 64 writes of sector $N failed"
	[ "$(cut -c 33-56 "$WORK/tuples" | sort -u | wc -l)" = 64 ] ||
		fail "sector $size: 64 writes of one sector stored fewer than 64 IVs"
	[ "$(cut -c 1-32 "$WORK/tuples" | sort -u | wc -l)" = 64 ] ||
		fail "sector $size: 64 writes of the same data stored fewer than 64 tags"
	h=$(status_field vt-ae aead_mask_hit)
	# No masks without the architecture's GHASH (a kernel built without it).
	if arch_ghash; then
		[ "$h" -gt 0 ] || fail "sector $size: 67 writes through veil, aead_mask_hit=$h"
	else
		[ "$h" = 0 ] || fail "sector $size: no architecture GHASH, yet aead_mask_hit=$h"
	fi
	echo "ok: 64 writes of sector $N: 64 IVs, 64 tags (aead_mask_hit=$h)"
	dm_remove vt-ae

	# Tampering: data, tag, IV; for both targets.
	for where in "data $((d + 7))" "tag $((t + 3))" "IV $((t + 20))"; do
		set -- $where
		dm_remove vt-int
		dev_tool flip "$LOOP" "$2"
		for target in crypt veil; do
			# dm-integrity anew: no metadata buffered from before.
			dm_create vt-int "0 $len integrity $LOOP 0 28 D $opts"
			dm_create vt-ae "${table/ crypt / $target }"
			kmsg_mark
			if out=$(read_sector /dev/mapper/vt-ae $N "$size" 2>&1); then
				fail "sector $size: $target reads sector $N with its $1 changed"
			fi
			case "$out" in *"multibyte"*|*"Invalid or incomplete"*) ;;
			*) fail "sector $size, $1 changed: $target's read failed with '$out', not EILSEQ" ;;
			esac
			kmsg_wait "$target: .*INTEGRITY AEAD ERROR, sector $((N * size / 512))\$" ||
				fail "sector $size, $1 changed: $target logged no integrity error for sector $N"
			read_sector /dev/mapper/vt-ae $((N - 1)) "$size" &&
				read_sector /dev/mapper/vt-ae $((N + 1)) "$size" ||
				fail "sector $size, $1 of sector $N changed: $target fails its neighbours"
			dm_remove vt-ae
			dm_remove vt-int
		done
		dev_tool flip "$LOOP" "$2"
		dm_create vt-int "0 $len integrity $LOOP 0 28 D $opts"
		dm_create vt-ae "${table/ crypt / veil }"
		read_sector /dev/mapper/vt-ae $N "$size" ||
			fail "sector $size: sector $N fails to read with its $1 restored"
		dm_remove vt-ae
		echo "ok: $1 changed: EILSEQ and the same error logged by both, the neighbours read"
	done
	dm_remove vt-int
done

[ -z "$(kmsg_bad)" ] || fail "kernel log: $(kmsg_bad)"
