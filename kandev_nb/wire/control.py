"""The control plane: our control_requests to the CLI and their control_responses.

Outgoing requests (initialize, interrupt, set_permission_mode, ...) get a `request_id` and a
future; :meth:`ControlPlane.handle_response` resolves it from the CLI's `control_response`.
Answers to the CLI's own control_requests (can_use_tool, hook_callback, mcp_message) are
sent with :meth:`ControlPlane.answer` in the shape the CLI accepts (DESIGN.md, wire facts).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from kandev_nb.errors import ControlError, ControlTimeoutError
from kandev_nb.wire.protocol import ControlResponse, control_error, control_request, control_success

__all__ = ["ControlError", "ControlPlane", "ControlTimeoutError"]


class ControlPlane:
    """Correlates control_requests and control_responses for one CLI process.

    Args:
        send: writes one message to the CLI (the transport's ``send``).
    """

    def __init__(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self._send = send
        self._ids = itertools.count(1)
        self._pending: dict[str, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self.answered: set[str] = set()

    async def request(self, subtype: str, *, timeout: float | None = 60.0, **fields: Any) -> dict[str, Any]:
        """Send a control_request and wait for its answer.

        Returns:
            The inner `response` object of the CLI's success answer (may be empty).

        Raises:
            ControlError: the CLI answered with an error.
            ControlTimeoutError: no answer within `timeout` seconds.
            ConnectionError: the CLI went away first (see :meth:`fail_all`).
        """
        request_id = f"req_{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (subtype, future)
        try:
            await self._send(control_request(request_id, subtype, **fields))
            return await asyncio.wait_for(future, timeout)
        except TimeoutError as exc:
            raise ControlTimeoutError(subtype, timeout or 0.0) from exc
        finally:
            self._pending.pop(request_id, None)

    def handle_response(self, msg: ControlResponse) -> bool:
        """Resolve the request `msg` answers. Returns False if it matches none of ours."""
        response = msg.response
        entry = self._pending.get(str(response.get("request_id")))
        if entry is None:
            return False
        subtype, future = entry
        if future.done():
            return True
        if response.get("subtype") == "error":
            future.set_exception(ControlError(subtype, str(response.get("error", "unknown error"))))
        else:
            inner = response.get("response")
            future.set_result(inner if isinstance(inner, dict) else {})
        return True

    def fail_all(self, exc: BaseException) -> None:
        """The CLI is gone: every waiting request fails with `exc`."""
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(exc)

    async def answer(self, request_id: str, response: dict[str, Any]) -> bool:
        """Answer the CLI's control_request `request_id` once; later calls send nothing.

        Returns:
            True if sent, False if that request was already answered.
        """
        if request_id in self.answered:
            return False
        self.answered.add(request_id)
        await self._send(control_success(request_id, response))
        return True

    async def answer_error(self, request_id: str, error: str) -> bool:
        """Refuse the CLI's control_request `request_id` (once)."""
        if request_id in self.answered:
            return False
        self.answered.add(request_id)
        await self._send(control_error(request_id, error))
        return True
