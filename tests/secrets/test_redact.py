"""Issue 24.5 and 24.6: one redaction routine for every text sent onward.

On the old code: ``read_notebook`` sent ``connect(password="...")`` as it was; bearer
tokens, cookies, DSNs and ``scheme://user:password@host`` were secret nowhere; ``{os.environ}``
and a nested password went into the prompt.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from kandev_nb.errors import PromptError
from kandev_nb.kernel_tools import KernelTools
from kandev_nb.notebook.cell_text import interpolate
from kandev_nb.redact import LineMasker, known_secrets, mask_credentials, redact_text

SHAPES = [
    ("curl -H 'Authorization: Bearer eyJhbGciOi.JIUzI1NiJ9.abc' https://x", "eyJhbGciOi"),
    ('{"authorization": "Basic dXNlcjpwYXNzd29yZA=="}', "dXNlcjpwYXNzd29yZA"),
    ("Cookie: sessionid=abc123def456; csrftoken=zzz999", "abc123def456"),
    ("Set-Cookie: sid=s3cr3tcookie; Path=/; HttpOnly", "s3cr3tcookie"),
    ("postgresql://ana:hunter2pw@db.internal:5432/prod", "hunter2pw"),
    ("redis://:onlypassword1@cache:6379/0", "onlypassword1"),
    ("mysql://u:p@ss'w\"rd@h/db", "ss'w\"rd"),  # a raw @ and quotes in the password
    ("https://h/x?sslmode=require&password=qpass123&user=me", "qpass123"),
    ("https://h/api?api_key=k3y-v4lue&page=2", "k3y-v4lue"),
    ("host=db port=5432 user=me password=dsnpass1 dbname=x", "dsnpass1"),
    ("Server=db;Uid=me;Pwd=odbcpass1;Database=x", "odbcpass1"),
    ("GITHUB_TOKEN=ghp_abcdef1234567890\nPATH=/usr/bin", "ghp_abcdef1234567890"),
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI"),
]


@pytest.mark.parametrize(("text", "secret"), SHAPES)
def test_credentials_by_their_shape_are_masked_in_any_text(text: str, secret: str) -> None:
    masked = redact_text(text)
    assert secret not in masked and "<redacted>" in masked


def test_what_is_not_a_credential_stays() -> None:
    for text in ("PATH=/usr/bin:/bin", "https://example.com/a?page=2", "the key point", "user@example.com"):
        assert redact_text(text) == text
    assert mask_credentials("postgresql://u:pw@h/d", "***") == "postgresql://u:***@h/d"


class View:
    """A notebook tab that answers `read` with fixed cells."""

    def __init__(self, cells: list[dict[str, Any]]) -> None:
        self.cells = cells
        self.requests: list[tuple[str, dict[str, Any]]] = []

    async def request(self, op: str, args: dict[str, Any], *, timeout_s: float) -> dict[str, Any]:
        self.requests.append((op, args))
        if op in ("read", "cells"):
            return {"cells": self.cells}
        raise AssertionError(f"unexpected {op}")


async def test_read_notebook_redacts_as_recent_history_does() -> None:
    source = (
        'db = connect(host="h", password="pw-in-a-cell-1")\n'
        "api_key = 'sk-ant-in-a-cell-2'\n"
        "url = 'postgresql://me:pw-in-a-url-3@h/db'\n"
        "headers = {'Authorization': 'Bearer tok-in-a-header-4'}"
    )
    cell = {"id": "c1", "cell_type": "code", "source": source, "outputs": [], "execution_count": 1}
    view = View([cell])
    tools = KernelTools(namespace={})
    tools.notebook._view = view
    try:
        text, _images, failed = await tools.notebook.call("read_notebook", {})
        assert not failed
        for leaked in ("pw-in-a-cell-1", "sk-ant-in-a-cell-2", "pw-in-a-url-3", "tok-in-a-header-4"):
            assert leaked not in text, text
        assert 'connect(host="h", password=<redacted>)' in text
        # writing the shown <redacted> back would erase the user's password: refused, nothing sent
        edited = source.replace("db = ", "conn = ")
        text, _images, failed = await tools.notebook.call(
            "edit_cell", {"cell_id": "c1", "source": text.split("---\n", 1)[1].replace("db = ", "conn = ")}
        )
        assert failed and "erase the user's value" in text
        assert [op for op, _ in view.requests] == ["read", "cells"] and edited
    finally:
        await tools.aclose()


def test_interpolation_follows_the_kernel_tools_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "env-token-value-77")
    cfg = {"db": {"host": "db.local", "password": "nested-pw-88"}, "users": [{"token": "listed-99"}]}
    namespace: dict[str, Any] = {"os": os, "cfg": cfg, "api_key": "sk-top-level-11", "env": dict(os.environ)}
    namespace["note"] = "call with Authorization: Bearer bearer-tok-1234567"
    prompt = interpolate("cfg={cfg} key={api_key} n={note} e={env}", namespace, secrets=["configured-55"])
    for leaked in ("nested-pw-88", "listed-99", "sk-top-level-11", "bearer-tok-1234567", "env-token-value-77"):
        assert leaked not in prompt
    assert "db.local" in prompt and "key=<redacted>" in prompt
    assert interpolate("{x}", {"x": "says configured-55"}, secrets=["configured-55"]) == "says <redacted>"
    for bad in ("{os.environ}", "{os}", "{_secret}", "{cfg.__class__}", "{In}"):
        with pytest.raises(PromptError):
            interpolate(bad, {**namespace, "_secret": 1, "In": []})
    assert interpolate("{api_key}", namespace, reveal_secrets=True) == "sk-top-level-11"  # the user's opt-in


def test_the_line_masker_keeps_the_message_and_touches_only_strings() -> None:
    masker = LineMasker(["sekret-value-1", "session"])  # a secret that is also a wire word
    line = json.dumps(
        {
            "type": "user",
            "session_id": "s",
            "message": {"content": [{"type": "tool_result", "content": "sekret-value-1 and a session"}]},
        }
    ).encode()
    out = json.loads(masker.line(line))
    assert out["session_id"] == "s" and "session_id" in out  # keys are never touched
    assert out["message"]["content"][0]["content"] == "<redacted> and a <redacted>"
    plain = b'{"type":"stream_event","event":{"delta":{"text":"hi"}}}'
    assert masker.line(plain) is plain  # nothing to mask: the same bytes


def test_the_line_masker_checks_a_whole_read_at_once_and_masks_only_the_lines_that_need_it() -> None:
    masker = LineMasker(["sekret-value-1"])
    plain = [b'{"type":"stream_event","event":{"delta":{"text":"hi"}}}', b'{"type":"keep_alive"}']
    assert masker.lines(plain) is plain  # nothing to mask in the read: the same list
    too_long = object()  # a line over the framer's limit passes as it is
    leaky = b'{"type":"stream_event","event":{"delta":{"text":"the key is sekret-value-1"}}}'
    out = masker.lines([plain[0], leaky, too_long])
    assert out[0] is plain[0] and out[2] is too_long
    assert b"sekret-value-1" not in out[1] and json.loads(out[1])["event"]["delta"]["text"] == "the key is <redacted>"


def test_known_secrets_are_the_environments_and_what_the_user_passes() -> None:
    base = {"PGPASSWORD": "pg-password-1", "PATH": "/bin", "KANDEV_NB_LEDGER": "postgresql://u:ledgerpw9@h/d"}
    child = {"PATH": "/bin", "HOME": "/h", "MY_SETTING": "abcdefghijklmnop", "LABEL": "short"}
    found = known_secrets(child, base)
    assert {"pg-password-1", "ledgerpw9", "abcdefghijklmnop"} <= set(found) and "short" not in found


def _delta(text: str, index: int = 0, session: str = "s") -> bytes:
    event = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}
    return json.dumps(
        {"type": "stream_event", "event": event, "session_id": session, "parent_tool_use_id": None}
    ).encode()


def _streamed_text(lines: list[bytes]) -> str:
    """The text a reader builds from the delta lines, as the adapter does."""
    text = ""
    for line in lines:
        message = json.loads(line)
        event = message.get("event") or {}
        if event.get("type") == "content_block_delta":
            text += event["delta"]["text"]
    return text


def test_a_secret_split_across_text_deltas_is_masked_at_every_split() -> None:
    # each line holds a piece of the secret, so a line-at-a-time masker finds none
    secret = "cfg-0123456789abcdef"
    said = f"the password is {secret} ok, and c is cfg- but not the key"
    stop = json.dumps({"type": "stream_event", "event": {"type": "content_block_stop", "index": 0}, "session_id": "s"})
    for first in range(1, len(said)):
        for second in (first + 3, first + 11, len(said)):
            pieces = [said[:first], said[first:second], said[second:]]
            masker = LineMasker([secret])
            out: list[bytes] = []
            for piece in pieces:  # one read per delta, as a slow stream comes
                out += masker.lines([_delta(piece), b'{"type":"keep_alive"}'])
            out += masker.lines([stop.encode()])
            streamed = _streamed_text(out)
            assert streamed == said.replace(secret, "<redacted>"), (first, second)
            assert all(secret.encode() not in line for line in out)
            assert json.loads(out[-1])["event"]["type"] == "content_block_stop"  # held text comes before the stop


def test_held_text_of_one_session_is_not_released_by_another_sessions_line() -> None:
    secret = "cfg-0123456789abcdef"
    masker = LineMasker([secret])
    out = masker.lines([_delta("key cfg-0123", session="a"), _delta("other", session="b")])
    out += masker.lines([_delta("456789abcdef!", session="a")])
    assert _streamed_text([line for line in out if json.loads(line)["session_id"] == "a"]) == "key <redacted>!"
