"""A stand-in ``claude`` that sends awkwardly framed lines over ``--sdk-url``, then waits.

Each item of :data:`MESSAGES` is one WebSocket message (str: text, bytes: binary). After
sending them it keeps the connection open until the kernel closes it.
"""

from __future__ import annotations

import os
import sys

from websockets.sync.client import connect

BIG = "x" * 3_000_000  # over the websockets library's default 1 MiB message limit

MESSAGES: list[str | bytes] = [
    '{"type":"keep_alive"}\n{"n":1}\n{"n":2}\n',  # several lines in one message
    '{"n":3,"s":"caf',  # one line across three messages, cut inside "é" (binary pieces)
    b"\xc3",
    b'\xa9"}\n{"n":4}',  # ...and the start of the next line
    "\n",
    '{"n":5,"s":"a\u2028b"}\n',  # a raw U+2028 is not a line break
    '{"n":6,"big":"' + BIG + '"}\n',
    '{"n":7}\n',
]

if __name__ == "__main__":
    url = sys.argv[sys.argv.index("--sdk-url") + 1]
    bearer = {"Authorization": f"Bearer {os.environ.get('CLAUDE_CODE_SESSION_ACCESS_TOKEN', '')}"}
    with connect(url, max_size=None, additional_headers=bearer) as ws:
        for message in MESSAGES:
            ws.send(message)
        for _ in ws:
            pass
