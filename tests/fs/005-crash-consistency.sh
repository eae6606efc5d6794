#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Crash consistency: veil passes flushes and FUA writes down in the right
# order, so that what the device below holds at each durability point is a
# consistent file system.
#
# The stack: a file system on veil on dm-log-writes, which writes through
# to a data loop file and records every write below veil, in the order the
# writes became durable, on a log loop file. Marks go into the log after
# mkfs, after each step of a workload (create, overwrite, append, fsync,
# rename, link, delete, truncate) once it is synced and flushed, and after
# unmount. tests/tools/log-replay.c then replays the log, entry by entry,
# onto a zeroed copy of the data device, and at each durability point of
# the log the copy is opened through veil with the same key:
#   - ext4 (journaled): at every flush, every FUA write and every mark
#     after mkfs (at most MAX_POINTS of them, evenly spread, the marks
#     always among them), a mount of a copy replays the journal as after a
#     crash, and after unmount `e2fsck -fn` must find nothing to fix;
#   - ext2 (no journal): only the points where the file system was synced
#     and quiet (the marks) must pass e2fsck -fn; a few other flushes are
#     counted (how many were clean), not judged.
# At each mark the files read back with the checksums they had when the
# mark was placed. The log must hold flushes, and for ext4 FUA writes
# (journal commits): they crossed veil.
. "$(dirname "$0")/../lib.sh"
requires root
requires module loop dm_log_writes ext4
requires cmd cc mkfs.ext2 mkfs.ext4 e2fsck sha256sum
veil_load

cc -O2 -Wall -o "$WORK/log-replay" "$TOP/tests/tools/log-replay.c" ||
	fail "cannot build log-replay"
REPLAY=$WORK/log-replay
SECTORS=32768			# 16 MiB file systems
MAX_POINTS=${MAX_POINTS:-60}	# ext4: durability points checked
INFO_POINTS=6			# ext2: flushes between marks looked at
KEY=$(randhex 64)
CIPHER="aes-xts-plain64 $KEY 0"
mnt=$WORK/mnt cmnt=$WORK/cmnt
mkdir -p "$mnt" "$cmnt"
track_mount "$mnt"
track_mount "$cmnt"


# tree_state DIR: names, types, link counts, symlink targets and file
# contents of the tree under DIR (lost+found left out)
tree_state() {
	(cd "$1" &&
	 find . -mindepth 1 -path ./lost+found -prune -o -printf '%y %n %p %l\n' | sort &&
	 find . -path ./lost+found -prune -o -type f -print0 | sort -z | xargs -0r sha256sum)
}

# durable NAME: make everything written so far durable (sync writes it,
# fsync of the device sends a flush through veil), keep the tree's state,
# then mark the log
durable() {
	sync
	sync /dev/mapper/vt-fs
	if mountpoint -q "$mnt"; then tree_state "$mnt" > "$WORK/state.$1"; fi
	dmsetup message lw 0 mark "$1"
}

# workload: file system operations in steps, each made durable and marked;
# fsync of single files in between gives the journal commits of its own
workload() {
	local m=$mnt i
	mkdir -p "$m/a/b" "$m/c" "$m/d/0" "$m/d/1" "$m/d/2/x" "$m/d/3"
	plaintext "$m/a/big" $((1024 * 1024))
	for ((i = 0; i < 8; i++)); do
		head -c $((512 + i * 3000)) /dev/urandom > "$m/a/b/s$i"
	done
	durable step1-create

	dd if=/dev/urandom of="$m/a/big" bs=4k seek=37 count=9 conv=notrunc status=none
	head -c 100000 /dev/urandom >> "$m/a/b/s3"
	dd if=/dev/urandom of="$m/c/fsynced" bs=64k count=8 conv=fsync status=none
	for ((i = 0; i < 30; i++)); do echo "$i" > "$m/c/n$i"; done
	dd if=/dev/urandom of="$m/c/n7" bs=4k count=3 conv=fsync status=none
	durable step2-overwrite

	mv "$m/a/b/s1" "$m/c/moved"
	mv "$m/a/b" "$m/c/b2"
	ln "$m/c/moved" "$m/c/hard"
	ln -s ../a/big "$m/c/sym"
	mv "$m/c/n3" "$m/c/n4"
	durable step3-rename

	rm -f "$m"/c/n1* "$m/c/b2/s5" "$m/c/b2/s6"
	truncate -s 5000 "$m/a/big"
	truncate -s 3M "$m/c/fsynced"
	dd if=/dev/urandom of="$m/a/grown" bs=64k count=4 conv=fsync status=none
	durable step4-delete

	head -c $((2 * 1024 * 1024)) /dev/urandom > "$m/d/two"
	rm -rf "$m/c/b2" "$m/d/2"
	mv "$m/d/two" "$m/a/two"
	durable step5-mixed
}

# replay_to IDX: apply the log up to entry IDX to the replay image, then
# copy it to the check device (ext4: the mount there writes) and drop what
# veil's device over it cached
replay_to() {
	"$REPLAY" replay -o "${offs[cursor]}" ${COPY:+-c "$COPY"} -f /dev/mapper/vc \
		"$LOG_FILE" "$IMG" "$cursor" "$1" || fail "replay up to entry $1 failed"
	cursor=$(($1 + 1))
}

# check_point FS IDX MARK: the file system as the log has it at entry IDX,
# through veil (/dev/mapper/vc); 0 if consistent and, at a mark, with the
# files of that mark. (errexit does not apply in a function called with
# ||: failures that are not the verdict call fail.)
check_point() {
	local fs=$1 idx=$2 mark=$3 rc=0
	replay_to "$idx"
	if [ "$fs" = ext4 ]; then
		# The kernel replays the journal and the orphan list, as on
		# the first mount after a crash.
		if mount -t ext4 -o noatime /dev/mapper/vc "$cmnt"; then
			if [ -f "$WORK/state.$mark" ]; then
				tree_state "$cmnt" | cmp -s - "$WORK/state.$mark" || rc=3
			fi
			umount "$cmnt" || fail "cannot unmount the copy"
		else
			rc=2
		fi
	fi
	if [ "$rc" = 0 ]; then
		e2fsck -fn /dev/mapper/vc > "$WORK/fsck.out" 2>&1 || rc=1
	fi
	if [ "$rc" = 0 ] && [ "$fs" = ext2 ] && [ -f "$WORK/state.$mark" ]; then
		if mount -t ext2 -o ro /dev/mapper/vc "$cmnt"; then
			tree_state "$cmnt" | cmp -s - "$WORK/state.$mark" || rc=3
			umount "$cmnt" || fail "cannot unmount the replay"
		else
			rc=2
		fi
	fi
	return "$rc"
}

# why RC: what a failed check_point found
why() {
	case "$1" in
	1) echo "e2fsck -fn: $(grep -v '^Pass\|^e2fsck\|^/dev' "$WORK/fsck.out" | head -5 | tr '\n' ';')" ;;
	2) echo "does not mount" ;;
	3) echo "files differ from the mark's" ;;
	esac
}

# run_fs FS MKFS-OPTIONS...: the whole scenario on one file system
run_fs() {
	local fs=$1 idx flags mark nflush=0 nfua=0 first=-1 pts=() strict info=0 clean=0 rc
	local data log chk
	shift
	mkloop $((SECTORS * 512))
	data=$LOOP
	mkloop 128M
	log=$LOOP LOG_FILE=$LOOP_FILE
	# The replay image starts as the data device did: all zeros. ext4's
	# check mounts, which writes: it gets a copy on a loop device of its
	# own. ext2's only reads: it looks at the replay image itself.
	mkloop $((SECTORS * 512))
	chk=$LOOP
	if [ "$fs" = ext4 ]; then
		IMG=$WORK/replay.img COPY=$LOOP_FILE
		truncate -s $((SECTORS * 512)) "$IMG"
	else
		IMG=$LOOP_FILE COPY=
	fi
	rm -f "$WORK"/state.*

	dm_create lw "0 $SECTORS log-writes $data $log"
	dm_create vt-fs "0 $SECTORS veil $CIPHER /dev/mapper/lw 0"
	"mkfs.$fs" -q -F "$@" /dev/mapper/vt-fs
	durable mkfs
	mount -t "$fs" -o noatime /dev/mapper/vt-fs "$mnt"
	workload
	umount "$mnt"
	durable umounted
	cp "$WORK/state.step5-mixed" "$WORK/state.umounted"
	dm_remove vt-fs
	dm_remove lw
	# Both devices below veil, data and log, hold only ciphertext.
	no_plaintext "$data"
	no_plaintext "$log"

	# The log: one line per entry, "INDEX OFFSET FLAGS SECTOR NR MARK".
	"$REPLAY" list "$LOG_FILE" > "$WORK/log.$fs" || fail "$fs: cannot read the log"
	mapfile -t offs < <(awk '{print $2}' "$WORK/log.$fs")
	cursor=0
	while read -r idx _ flags _ _ mark; do
		case ",$flags," in *,FLUSH,*) nflush=$((nflush + 1)) ;; esac
		case ",$flags," in *,FUA,*) nfua=$((nfua + 1)) ;; esac
		[ "$mark" = mkfs ] && first=$idx
	done < "$WORK/log.$fs"
	info "$fs: ${#offs[@]} log entries, $nflush flushes, $nfua FUA writes"
	[ "$first" -ge 0 ] || fail "$fs: no mkfs mark in the log"
	[ "$nflush" -gt 0 ] || fail "$fs: no flush reached the device below veil"
	[ "$fs" = ext2 ] || [ "$nfua" -gt 0 ] || fail "$fs: no FUA write reached the device below veil"

	# The durability points after mkfs: every mark; flushes and FUA
	# writes evenly thinned so that there are at most MAX points in all.
	local max=$MAX_POINTS
	[ "$fs" = ext4 ] || max=$((8 + INFO_POINTS))
	awk -v first="$first" -v max="$max" '
		$1 < first { next }
		$3 ~ /MARK/ { print $1, $6, "strict"; m++; next }
		$3 ~ /FLUSH|FUA/ { f[n++] = $1 }
		END {
			k = max - m; if (k < 1) k = 1
			for (i = 0; i < n; i++)
				if (n <= k || int(i * k / n) != int((i + 1) * k / n))
					print f[i], "-", "flush"
		}' "$WORK/log.$fs" | sort -n > "$WORK/points.$fs"

	dm_create vc "0 $SECTORS veil $CIPHER $chk 0"
	while read -r -u 3 idx mark strict; do
		[ "$fs" = ext4 ] || [ "$strict" = strict ] || strict=info
		rc=0
		check_point "$fs" "$idx" "$mark" || rc=$?
		if [ "$strict" = info ]; then
			info=$((info + 1))
			[ "$rc" = 0 ] && clean=$((clean + 1))
			continue
		fi
		[ "$rc" = 0 ] || fail "$fs: entry $idx ($(sed -n "$((idx + 1))p" "$WORK/log.$fs")): $(why "$rc")"
		pts+=("$idx")
	done 3< "$WORK/points.$fs"
	dm_remove vc
	info "$fs: consistent at ${#pts[@]} durability points (entries ${pts[*]})"
	[ "$fs" = ext4 ] || info "$fs: $clean of $info flushes between marks were clean (not required)"
	[ "${#pts[@]}" -ge 8 ] || fail "$fs: only ${#pts[@]} points checked"
}

start=$SECONDS
run_fs ext4 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0
info "ext4: $((SECONDS - start)) s"
run_fs ext2 -E nodiscard
info "ext4 and ext2: $((SECONDS - start)) s"
