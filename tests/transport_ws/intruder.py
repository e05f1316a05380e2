"""Another local process racing to a session's ``--sdk-url`` (standard library only, so it
runs under any uid, e.g. ``setpriv --reuid=65534``).

Usage: ``python3 intruder.py PID [TOKEN]``. It reads the CLI's URL from
``/proc/PID/cmdline``, tries to read ``/proc/PID/environ``, then opens a WebSocket
handshake to the URL (with ``Authorization: Bearer TOKEN`` if given) and prints one JSON
line: ``{"url", "cmdline", "environ_readable", "status"}`` (status: the HTTP status code).
"""

from __future__ import annotations

import base64
import json
import os
import socket
import sys
from urllib.parse import urlsplit


def main() -> None:
    pid, token = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        argv = [a.decode() for a in handle.read().split(b"\0") if a]
    url = argv[argv.index("--sdk-url") + 1]
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ_readable = bool(handle.read())
    except OSError:
        environ_readable = False
    parts = urlsplit(url)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
    )
    if token:
        request += f"Authorization: Bearer {token}\r\n"
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as conn:
        conn.sendall((request + "\r\n").encode())
        head = conn.recv(4096).decode("latin-1")
    print(
        json.dumps(
            {
                "url": url,
                "cmdline": " ".join(argv),
                "environ_readable": environ_readable,
                "status": int(head.split()[1]),
            }
        )
    )


if __name__ == "__main__":
    main()
