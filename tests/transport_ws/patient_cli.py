"""A stand-in ``claude`` that waits for a file before dialling ``--sdk-url``, so a test can
let another process race to the URL first. It presents the token from its environment
(``CLAUDE_CODE_SESSION_ACCESS_TOKEN``) as the real CLI does, sends one line, then waits."""

from __future__ import annotations

import os
import sys
import time

from websockets.sync.client import connect

if __name__ == "__main__":
    url = sys.argv[sys.argv.index("--sdk-url") + 1]
    go = os.environ["PATIENT_GO"]
    while not os.path.exists(go):
        time.sleep(0.02)
    bearer = {"Authorization": f"Bearer {os.environ.get('CLAUDE_CODE_SESSION_ACCESS_TOKEN', '')}"}
    with connect(url, additional_headers=bearer) as ws:
        ws.send('{"hello":"from the CLI the kernel started"}\n')
        for _ in ws:
            pass
