#!/usr/bin/env python3
"""A stand-in for systemd's notification socket: binds a unix datagram socket at argv[1] and
appends every sd_notify(3) message it receives, one assignment per line, to argv[2]. Runs until
killed, or until argv[3] seconds (default 60) pass without a message."""
import os
import socket
import sys


def main() -> int:
    path, log = sys.argv[1], sys.argv[2]
    idle = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(idle)
    # The socket exists from here on: tell the caller it may start the daemon.
    with open(log, "a", encoding="utf-8") as out:
        out.write("LISTENING=1\n")
        out.flush()
        while True:
            try:
                data = sock.recv(65536)
            except socket.timeout:
                return 0
            for line in data.decode("utf-8", "replace").splitlines():
                out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())


if __name__ == "__main__":
    sys.exit(main())
