"""A stand-in ``claude`` for tests: the real CLI's WebSocket relayed through us, re-cut.

Usage: ``python rechunk_relay.py [--keepalive SECONDS] REAL_CLI ARGS... --sdk-url URL``

It listens on loopback, launches ``REAL_CLI ARGS`` with ``--sdk-url`` pointing at itself,
and connects to ``URL`` (the kernel's). What the CLI sends reaches the kernel re-cut: in
turn, one line is held back, the next goes out together with it (two lines in one
message), and the one after is cut in half by bytes (even inside a UTF-8 character, so the
pieces go as binary messages) with its second half held for the next message. With
``--keepalive``, a ``{"type":"keep_alive"}`` line is added every SECONDS, also while the CLI
is quiet. What the kernel sends reaches the CLI unchanged; the kernel's close code is passed
on (4001 makes the CLI exit).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
import time

from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

KEEP_ALIVE = b'{"type":"keep_alive"}\n'
HOLD_AT_MOST = 0.05  # seconds a held piece waits for the CLI's next message


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


async def _upward(cli: ServerConnection, kernel: ClientConnection, keepalive: float | None) -> None:
    held, count, last_keepalive = b"", 0, time.monotonic()
    while True:
        due = last_keepalive + keepalive - time.monotonic() if keepalive else None
        waits = [w for w in (HOLD_AT_MOST if held else None, due) if w is not None]
        try:
            message = await asyncio.wait_for(cli.recv(), max(0.0, min(waits)) if waits else None)
        except TimeoutError:
            if held:
                await kernel.send(held)
                held = b""
            elif keepalive and time.monotonic() - last_keepalive >= keepalive:
                await kernel.send(KEEP_ALIVE.decode())
                last_keepalive = time.monotonic()
            continue
        except ConnectionClosed:
            break
        data = message.encode() if isinstance(message, str) else message
        if keepalive and time.monotonic() - last_keepalive >= keepalive:
            data, last_keepalive = KEEP_ALIVE + data, time.monotonic()
        count += 1
        if count % 3 == 1:
            held += data
        elif count % 3 == 2:
            await kernel.send(held + data)
            held = b""
        else:
            half = len(data) // 2
            await kernel.send(held + data[:half])
            held = data[half:]
    if held:
        await kernel.send(held)


async def _downward(kernel: ClientConnection, cli: ServerConnection) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for message in kernel:
            await cli.send(message)
    await cli.close(kernel.close_code or 1011, kernel.close_reason or "relay lost the kernel")


async def main(argv: list[str]) -> int:
    keepalive = None
    if argv[0] == "--keepalive":
        keepalive, argv = float(argv[1]), argv[2:]
    at = argv.index("--sdk-url")
    kernel_url, cli_argv = argv[at + 1], argv[:at] + argv[at + 2 :]
    cli_connected: asyncio.Future[ServerConnection] = asyncio.get_running_loop().create_future()
    finished = asyncio.Event()

    async def handler(connection: ServerConnection) -> None:
        if not cli_connected.done():
            cli_connected.set_result(connection)
            await finished.wait()

    bearer = {"Authorization": f"Bearer {os.environ.get('CLAUDE_CODE_SESSION_ACCESS_TOKEN', '')}"}
    async with (
        connect(kernel_url, max_size=None, additional_headers=bearer) as kernel,
        serve(handler, "127.0.0.1", 0, max_size=None) as server,
    ):
        port = next(iter(server.sockets)).getsockname()[1]
        proc = await asyncio.create_subprocess_exec(
            *cli_argv, "--sdk-url", f"ws://127.0.0.1:{port}/relay", preexec_fn=_die_with_parent
        )
        cli = await cli_connected
        tasks = [
            asyncio.ensure_future(c) for c in (_upward(cli, kernel, keepalive), _downward(kernel, cli), proc.wait())
        ]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(proc.wait(), 5)
        if proc.returncode is None:
            proc.kill()
        finished.set()
        for task in tasks:
            task.cancel()
        return await proc.wait()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
