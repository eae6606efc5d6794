#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# QEMU for vng (guest.sh passes it as --qemu-bin), telling on stderr how it
# ended when that was not its own exit: vng reports a guest whose command
# never reported back as exit 255 whether the guest kernel panicked
# (QEMU then exits by itself, -no-reboot) or QEMU died of a signal, which
# leaves nothing on the guest's console. With this line the two differ.
qemu=$(command -v qemu-system-x86_64) || { echo "qemu-status: no qemu-system-x86_64" >&2; exit 127; }
"$qemu" "$@"
rc=$?
[ "$rc" -gt 128 ] && echo "qemu-status: QEMU was killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))" >&2
exit "$rc"
