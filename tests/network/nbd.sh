# SPDX-License-Identifier: GPL-2.0
# Network block storage for the tests of this area, sourced after lib.sh:
# an NBD server and the kernel's NBD client in the guest, in two network
# namespaces joined by a veth link, so that tc netem can add delay and
# loss between them. The same commands as docs/walkthrough-network.md,
# with the server's machine played by the namespace veil-srv (10.99.0.1)
# and the client's by the guest's initial namespace (10.99.0.2 on
# veil-c): nbd-client configures the kernel through generic netlink, which
# the NBD driver offers in the initial namespace only.
#
#   nbd_setup SIZE         the link, an export file of SIZE, the server;
#                          the export file is $EXPORT, the server's config
#                          $WORK/nbd-server.conf (export "veil")
#   nbd_connect [DEV]      nbd-client: DEV (/dev/nbd0) is the export;
#                          waits until it has its size
#   nbd_flushes [DEV]      flush requests DEV completed so far
#   nbd_disconnect [DEV]   nbd-client -d
#   nbd_server_start       (again, after nbd_server_kill)
#   nbd_server_kill        SIGKILL, as a crash would
#   netem "ARGS"           tc netem ARGS on both ends of the link ("" to
#                          remove): e.g. "delay 1ms loss 1%"

requires cmd nbd-client nbd-server ip tc
requires modinfo nbd veth sch_netem

NBD_PORT=10809
NBD_SRV=10.99.0.1
NBD=/dev/nbd0

nbd_setup() {
	modprobe nbd nbds_max=4
	modprobe veth
	ip netns add veil-srv
	at_exit "ip link del veil-c; ip netns del veil-srv"
	ip link add veil-c type veth peer name veil-s
	ip link set veil-s netns veil-srv
	ip -n veil-srv addr add "$NBD_SRV/24" dev veil-s
	ip addr add 10.99.0.2/24 dev veil-c
	ip -n veil-srv link set veil-s up
	ip -n veil-srv link set lo up
	ip link set veil-c up

	EXPORT=$WORK/export.img
	truncate -s "$1" "$EXPORT"
	# No user line: the server keeps root's rights to the file. flush and
	# fua: the client gets a write cache to flush, and a flush makes the
	# server fsync the file (without them the kernel drops every flush).
	cat > "$WORK/nbd-server.conf" <<-EOF
	[generic]
	listenaddr = $NBD_SRV
	port = $NBD_PORT
	[veil]
	exportname = $EXPORT
	flush = true
	fua = true
	EOF
	# Cleanup runs the registered commands newest first: the client goes
	# before the server, the server before the link.
	at_exit "nbd_server_kill"
	nbd_server_start
	at_exit "for d in /dev/nbd[0-3]; do nbd-client -c \$d >/dev/null && nbd-client -d \$d; done"
}

nbd_server_start() {
	local i
	# The server closes every descriptor up to its limit when it starts:
	# a low limit keeps that short; the guest's own (virtio ports) stay out.
	(ulimit -n 1024
	 exec ip netns exec veil-srv nbd-server -C "$WORK/nbd-server.conf" \
		-p "$WORK/nbd-server.pid" 3>&- 4>&- 5>&-)
	for ((i = 0; i < 100; i++)); do
		(exec 3<>"/dev/tcp/$NBD_SRV/$NBD_PORT") 2>/dev/null && return 0
		sleep 0.1
	done
	fail "nbd-server does not answer on $NBD_SRV:$NBD_PORT"
}

nbd_server_kill() {
	local pid
	pid=$(cat "$WORK/nbd-server.pid" 2>/dev/null) || return 0
	# The server forks one child per client: kill them all.
	pkill -KILL -f "nbd-server -C $WORK/nbd-server.conf" || true
	while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	rm -f "$WORK/nbd-server.pid"
}

nbd_connect() {
	local dev=${1:-$NBD} i
	nbd-client "$NBD_SRV" "$NBD_PORT" "$dev" -N veil -t 20 >/dev/null
	for ((i = 0; i < 100; i++)); do
		[ "$(blockdev --getsize64 "$dev" 2>/dev/null || echo 0)" -gt 0 ] && break
		sleep 0.1
	done
	[ "$(blockdev --getsize64 "$dev")" -gt 0 ] || fail "$dev has no size after nbd-client"
	udevadm settle
}

nbd_flushes() {
	local dev=${1:-$NBD}
	awk '{ print $16 }' "/sys/block/${dev#/dev/}/stat"
}

nbd_disconnect() {
	local dev=${1:-$NBD}
	nbd-client -d "$dev" >/dev/null
	udevadm settle
}

netem() {
	tc qdisc del dev veil-c root 2>/dev/null || true
	tc -n veil-srv qdisc del dev veil-s root 2>/dev/null || true
	[ -n "$1" ] || return 0
	tc qdisc add dev veil-c root netem $1
	tc -n veil-srv qdisc add dev veil-s root netem $1
}
