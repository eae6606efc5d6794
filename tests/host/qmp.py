#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hot-unplug and re-plug a QEMU device through the QMP socket of a guest.

    qmp.py SOCKET unplug ID           device_del ID, wait for DEVICE_DELETED
    qmp.py SOCKET plug DRIVER ID K=V...   device_add driver=DRIVER,id=ID,K=V...

Exits non-zero with QEMU's error message if the command fails.
"""
import json
import socket
import sys
import time


class Qmp:
    def __init__(self, path, timeout=60):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.events = []
        self.recv()                     # the greeting
        self.command("qmp_capabilities")

    def recv(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("QMP socket closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, name, **args):
        self.sock.sendall(json.dumps({"execute": name, "arguments": args}).encode() + b"\n")
        while True:
            msg = self.recv()
            if "event" in msg:
                self.events.append(msg)
            elif "error" in msg:
                raise RuntimeError(f"{name}: {msg['error'].get('desc', msg['error'])}")
            elif "return" in msg:
                return msg["return"]

    def wait_event(self, name, device, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for ev in self.events:
                if ev["event"] == name and ev.get("data", {}).get("device") == device:
                    return ev
            self.events.append(self.recv())
        raise TimeoutError(f"no {name} for {device} within {timeout}s")


def typed(kv):
    """K=V with V as QMP wants it: on/off as booleans, digits as numbers."""
    key, val = kv.split("=", 1)
    if val in ("on", "off"):
        return key, val == "on"
    return key, int(val) if val.isdigit() else val


def main(argv):
    if len(argv) < 4 or argv[2] not in ("unplug", "plug"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        qmp = Qmp(argv[1])
        if argv[2] == "unplug":
            qmp.command("device_del", id=argv[3])
            qmp.wait_event("DEVICE_DELETED", argv[3], 60)
        else:
            args = dict(typed(kv) for kv in argv[5:])
            qmp.command("device_add", driver=argv[3], id=argv[4], **args)
    except (OSError, RuntimeError, TimeoutError, ValueError) as err:
        print(f"qmp: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
