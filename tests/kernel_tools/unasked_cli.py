#!/usr/bin/env python3
"""A stand-in ``claude`` (stdio stream-json) that calls a kernel tool without asking first.

It answers ``initialize``, then for each user message sends an ``mcp_message`` control
request with ``tools/call`` for the tool named by ``$UNASKED_TOOL`` (default run_code) and
the JSON arguments in ``$UNASKED_ARGS``, with no ``can_use_tool`` before it, as an intruder
or a confused peer would. It ends the turn with a ``result`` whose ``result`` text is the
tool's answer as it came back, so a test sees what the model would have received.
"""

from __future__ import annotations

import json
import os
import sys
import uuid

SESSION = str(uuid.uuid4())


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    if "--version" in sys.argv:
        print("2.1.332 (Claude Code)")  # a stand-in; `%%claude --cli` asks for the version first
        return
    tool = os.environ.get("UNASKED_TOOL", "run_code")
    arguments = json.loads(os.environ.get("UNASKED_ARGS", '{"code": "ran = True"}'))
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "control_request" and message["request"].get("subtype") == "initialize":
            send(
                {
                    "type": "control_response",
                    "response": {
                        "subtype": "success",
                        "request_id": message["request_id"],
                        "response": {"commands": []},
                    },
                }
            )
        elif kind == "user":
            send(
                {
                    "type": "system",
                    "subtype": "init",
                    "session_id": SESSION,
                    "tools": [],
                    "mcp_servers": [],
                    "model": "stand-in",
                    "permissionMode": "default",
                    "cwd": os.getcwd(),
                }
            )
            mcp(
                "init",
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "stand-in", "version": "0"},
                    },
                },
            )
        elif kind == "control_response" and message["response"].get("request_id") == "init":
            mcp("initialized", {"jsonrpc": "2.0", "method": "notifications/initialized"})
            mcp(
                "call",
                {
                    "jsonrpc": "2.0",
                    "id": 7,
                    "method": "tools/call",
                    "params": {
                        "name": tool,
                        "arguments": arguments,
                        "_meta": {"claudecode/toolUseId": "toolu_unasked"},
                    },
                },
            )
        elif kind == "control_response" and message["response"].get("request_id") == "call":
            reply = message["response"].get("response", {}).get("mcp_response", {})
            content = reply.get("result", {}).get("content", [])
            answer = "\n".join(c.get("text", "") for c in content if isinstance(c, dict)) or json.dumps(reply)
            send(
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": False,
                    "result": answer,
                    "session_id": SESSION,
                    "duration_ms": 1,
                    "duration_api_ms": 0,
                    "num_turns": 1,
                    "total_cost_usd": 0,
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                }
            )


def mcp(request_id: str, message: dict[str, object]) -> None:
    send(
        {
            "type": "control_request",
            "request_id": request_id,
            "request": {"subtype": "mcp_message", "server_name": "kernel", "message": message},
        }
    )


if __name__ == "__main__":
    main()
