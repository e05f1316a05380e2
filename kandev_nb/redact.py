"""The one redaction routine: what must not reach the model, a card, a saved output or the ledger.

Every path that sends kernel, notebook or tool text onward calls :func:`redact_text`: the
kernel tools (``recent_history``, ``read_notebook``, ``inspect_variable``, ``run_code``...),
``{name}`` interpolation in a `%%claude` cell, the PostToolUse hook that masks the CLI's tool
outputs before the model reads them, and the adapter boundary that masks them before a card,
the saved output, the ledger or the recorder holds them. The ledger masks its URL with the
same patterns (:func:`mask_credentials` with ``"***"``).

Three kinds of secret are masked:

- **known values** (:func:`mask_values`): values of secret-looking variables and keys,
  secret-looking environment variables (:func:`environment_secrets`), the values given to
  ``configure(env=...)``, the ledger's password;
- **credentials by shape** (:func:`mask_credentials`), in any text: the password of
  ``scheme://user:password@host`` (through the last ``@`` of the word, so a raw ``@`` in the
  password is covered), password-like query parameters (``?password=``, ``&token=``...),
  ``Authorization: Bearer ...`` / ``Basic ...`` and bare ``Bearer <token>``, ``Cookie:`` and
  ``Set-Cookie:`` header values, ``NAME=value`` lines of an environment or ``.env`` listing
  with a secret-looking NAME, and ``password=...`` / ``PWD=...`` pairs of a DSN;
- **code** (:func:`redact_assignments`, with ``code=True``): the right-hand side of an
  assignment to a secret-looking name and string literals passed as a secret-looking keyword
  or dict key (``connect(password="...")``).

Pure functions over ``str``; nothing here imports a front end.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import msgspec

__all__ = [
    "ENV_NOT_SECRET",
    "MIN_FOUND",
    "REDACTED",
    "LineMasker",
    "configured_secrets",
    "environment_secrets",
    "is_secret_name",
    "known_secrets",
    "mask_credentials",
    "mask_values",
    "redact_assignments",
    "redact_json",
    "redact_text",
    "token_like",
]

REDACTED: Final = "<redacted>"
"""What stands in for a secret inside a shown text or structure."""

MIN_FOUND: Final = 6
"""Values found without a name the user chose (environment, DataFrame cells) are searched
for in texts only from this many characters on: shorter ones match too much."""

ENV_NOT_SECRET: Final = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "GPG_TTY", "XAUTHORITY", "KEYTIMEOUT"})
"""Environment names that look secret but hold none (a path, a socket); absolute paths are skipped too."""

_SECRET_WORDS = frozenset(
    {
        "token",
        "key",
        "password",
        "passwd",
        "pwd",
        "secret",
        "apikey",
        "credential",
        "credentials",
        "passphrase",
        "auth",
        "cookie",
    }
)
_SECRET_SUFFIXES = ("token", "password", "passwd", "secret")
_KEY_PREFIXES = frozenset({"api", "secret", "private", "access", "auth", "signing", "encryption", "master", "session"})
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def is_secret_name(name: str) -> bool:
    """True when `name` looks like it holds a secret: one of its words (split on ``_``, ``-``
    and camelCase) is token, key, password, secret, cookie (and a few spellings), or a
    run-together form of one (``apikey``, ``authtoken``, ``dbpassword``).

    >>> [is_secret_name(n) for n in ("api_key", "GITHUB_TOKEN", "dbPassword", "monkey", "keys")]
    [True, True, True, False, False]
    """
    for word in _WORDS.findall(name):
        low = word.lower()
        if low in _SECRET_WORDS or (len(low) > 6 and low.endswith(_SECRET_SUFFIXES)):
            return True
        if low.endswith("key") and low[:-3] in _KEY_PREFIXES:
            return True
    return False


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values (6 characters or more, not absolute paths) of the secret-looking variables
    of `environ` (default ``os.environ``): ``AWS_SECRET_ACCESS_KEY``, ``JUPYTERHUB_API_TOKEN``,
    ``PGPASSWORD``...; not ``PWD`` or ``SSH_AUTH_SOCK`` (:data:`ENV_NOT_SECRET`). Also the
    password and password-like query parameters of a URL held by any variable
    (``DATABASE_URL``, ``KANDEV_NB_LEDGER``), as written and percent-decoded."""
    env = os.environ if environ is None else environ
    found: list[str] = []
    for name, value in list(env.items()):
        if not isinstance(value, str):
            continue
        secret = is_secret_name(name) and name not in ENV_NOT_SECRET and not value.startswith("/")
        if secret and len(value) >= MIN_FOUND:
            found.append(value)
        if "://" in value:
            parts = [m.group("password") for m in _USERINFO.finditer(value)]
            parts += [m.group("value") for m in _QUERY.finditer(value) if is_secret_name(m.group("key"))]
            for part in parts:
                if len(part) >= 4:
                    found.extend({part, _unquote(part)})
    return found


def _unquote(text: str) -> str:
    from urllib.parse import unquote

    return unquote(text)


def mask_values(text: str, secrets: Iterable[str], mask: str = REDACTED) -> str:
    """`text` with every occurrence of each of `secrets` (longest first) replaced by `mask`.
    Empty values are ignored."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, mask)
    return text


# scheme://user:password@host: the password runs to the last "@" of the word, so a raw "@"
# in it (which URL parsers mis-split) is still covered; quotes may be part of it.
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^/@:\s'\"]*:)(?P<password>\S*)@")
# ?password=... &token=... ;api_key=... in a URL's query (or a form body)
_QUERY = re.compile(r"(?P<head>[?&;](?P<key>[A-Za-z0-9_.\-]+)=)(?P<value>[^&#\s'\"]+)")
# Authorization: Bearer xyz / Proxy-Authorization: Basic xyz / "authorization": "Bearer xyz"
_AUTH_HEADER = re.compile(
    r"(?P<head>\b(?:Proxy-)?Authorization['\"]?\s*[:=]\s*['\"]?(?:(?:Bearer|Basic|Token|Digest|Negotiate)\s+)?)"
    r"(?P<value>[^\s'\",]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(?P<head>\bBearer\s+)(?P<value>[A-Za-z0-9\-._~+/]{8,}=*)")
_COOKIE = re.compile(r"(?P<head>\b(?:Set-)?Cookie['\"]?\s*:\s*)(?P<value>[^\r\n]+)", re.IGNORECASE)
# NAME=value on a line of its own (env, printenv, .env files, `export NAME=value`)
_ENV_LINE = re.compile(
    r"^(?P<head>[ \t]*(?:export[ \t]+)?(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*=[ \t]*)(?P<value>\S.*?)[ \t]*$",
    re.MULTILINE,
)
# a DSN's key=value pair: "host=db user=me password=xyz", "Server=x;Uid=me;Pwd=xyz;"
_DSN_PAIR = re.compile(
    r"(?P<head>(?:^|[\s;'\"(])(?:password|passwd|pwd|pass)\s*=\s*)(?P<value>'[^']*'|\"[^\"]*\"|[^\s;'\")]+)",
    re.IGNORECASE,
)


def mask_credentials(text: str, mask: str = REDACTED) -> str:
    """`text` with credentials recognised by their shape replaced by `mask` (see the module
    docstring): URL passwords, password-like query parameters, Authorization and Cookie
    header values, bare bearer tokens, secret-looking ``NAME=value`` lines, DSN passwords.

    >>> mask_credentials("postgresql://me:p@ss@db:5432/x?sslmode=require&password=pw", "***")
    'postgresql://me:***@db:5432/x?sslmode=require&password=***'
    >>> mask_credentials("Authorization: Bearer abc.def.ghi")
    'Authorization: Bearer <redacted>'
    """
    text = _USERINFO.sub(lambda m: m.group("head") + mask + "@", text)
    text = _QUERY.sub(lambda m: m.group("head") + mask if is_secret_name(m.group("key")) else m.group(0), text)
    text = _AUTH_HEADER.sub(lambda m: m.group("head") + mask, text)
    text = _BEARER.sub(lambda m: m.group("head") + mask, text)
    text = _COOKIE.sub(lambda m: m.group("head") + mask, text)
    text = _ENV_LINE.sub(
        lambda m: (
            m.group("head") + mask
            if is_secret_name(m.group("key")) and m.group("key") not in ENV_NOT_SECRET and m.group("value") != mask
            else m.group(0)
        ),
        text,
    )
    return _DSN_PAIR.sub(lambda m: m.group("head") + mask, text)


_ASSIGN = re.compile(r"^(?P<lhs>\s*[^=#\n(]*?[^=!<>+\-*/%&|^:\s])(?P<op>\s*(?::[^=]*)?=(?!=)\s*)(?P<rhs>.+)$")
_KWARG = re.compile(r"\b(?P<name>[A-Za-z_]\w*)(?P<eq>\s*[=:]\s*)(?P<lit>'[^'\n]*'|\"[^\"\n]*\")")
_DICT_ITEM = re.compile(r"(?P<head>(?P<q>['\"])(?P<key>[\w-]+)(?P=q)\s*:\s*)(?:'[^'\n]*'|\"[^\"\n]*\")")
_IDENT = re.compile(r"[A-Za-z_]\w*")


def redact_assignments(source: str) -> str:
    """`source` (code) with the right-hand side of every assignment to a secret-looking name,
    and every string literal passed as a secret-looking keyword or dict key, replaced by
    ``<redacted>``.

    >>> redact_assignments('api_key = "sk-123"\\nconnect(password="pw", user="me")')
    'api_key = <redacted>\\nconnect(password=<redacted>, user="me")'
    """
    lines = []
    for line in source.splitlines():
        match = _ASSIGN.match(line)
        if match and any(is_secret_name(word) for word in _IDENT.findall(match["lhs"]) + _quoted(match["lhs"])):
            line = match["lhs"] + match["op"] + REDACTED
        else:
            line = _KWARG.sub(
                lambda m: m["name"] + m["eq"] + REDACTED if is_secret_name(m["name"]) and not _masked(m[0]) else m[0],
                line,
            )
            line = _DICT_ITEM.sub(
                lambda m: m["head"] + REDACTED if is_secret_name(m["key"]) and not _masked(m[0]) else m[0], line
            )
        lines.append(line)
    return "\n".join(lines)


def _masked(match: str) -> bool:
    """A literal that already is ``'<redacted>'`` (a repr of a redacted copy) stays as it is."""
    return match.endswith((f"'{REDACTED}'", f'"{REDACTED}"'))


def _quoted(text: str) -> list[str]:
    return re.findall(r"['\"]([\w-]+)['\"]", text)


def redact_text(text: str, secrets: Iterable[str] = (), *, code: bool = False) -> str:
    """The one routine: `text` with the known `secrets` (:func:`mask_values`), credentials
    by their shape (:func:`mask_credentials`) and, with `code`, secret assignments and
    keyword literals (:func:`redact_assignments`) replaced by ``<redacted>``.

    Args:
        text: any text about to reach the model, a card, a saved output or the ledger.
        secrets: values known to be secret (``secret_values`` of the kernel tools,
            :func:`environment_secrets`, ``configure(env=...)`` values).
        code: also redact code (cell sources, history): on for kernel and notebook text;
            off for the CLI's tool outputs, whose file contents the model copies into edits.

    >>> redact_text('db = connect("postgresql://u:pw123@h/x")\\npassword="hunter2"', code=True)
    'db = connect("postgresql://u:<redacted>@h/x")\\npassword=<redacted>'
    """
    text = mask_values(text, secrets)
    text = mask_credentials(text)
    return redact_assignments(text) if code else text


def token_like(value: str) -> bool:
    """Whether a value given without a secret-looking name still looks like a credential:
    12 characters or more, no ``/`` or space, not only digits (``configure(env=...)``)."""
    return len(value) >= 12 and "/" not in value and " " not in value and not value.isdigit()


def configured_secrets(env: Mapping[str, str]) -> list[str]:
    """The values of `env` (``configure(env=...)``) that must not reach the model: those of
    secret-looking names, and token-like ones (:func:`token_like`)."""
    return [v for k, v in env.items() if isinstance(v, str) and (is_secret_name(str(k)) or token_like(v))]


def known_secrets(child_env: Mapping[str, str], base: Mapping[str, str] | None = None) -> list[str]:
    """The secret values a CLI process started with `child_env` may print, longest first:
    :func:`environment_secrets` of the kernel's environment `base` (default ``os.environ``,
    which also holds the ledger's URL) and of `child_env`, and the values `child_env` adds
    to `base` (``configure(env=...)``, ``Session(env=...)``) under a secret-looking name or
    looking like a token (:func:`token_like`)."""
    parent = os.environ if base is None else base
    found = set(environment_secrets(parent)) | set(environment_secrets(child_env))
    for name, value in child_env.items():
        if parent.get(name) != value and (is_secret_name(name) or token_like(value)) and len(value) >= 4:
            found.add(value)
    return sorted(found, key=len, reverse=True)


def redact_json(value: Any, secrets: Sequence[str], *, shapes: bool = True) -> Any:
    """A copy of the JSON value `value` with every string (not the keys of objects) passed
    through :func:`mask_values` and, with `shapes`, :func:`mask_credentials`; `value` itself
    when nothing changed (compare with ``is``)."""
    if isinstance(value, str):
        masked = mask_values(value, secrets)
        masked = mask_credentials(masked) if shapes else masked
        return value if masked == value else masked
    if isinstance(value, list):
        items = [redact_json(item, secrets, shapes=shapes) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = {key: redact_json(item, secrets, shapes=shapes) for key, item in value.items()}
        return value if all(pairs[k] is v for k, v in value.items()) else pairs
    return value


_TOOL_OUTPUT: Final = (b'"tool_result"', b'"tool_response"')
"""Lines that carry a tool's output: a `user` line's tool_result, a PostToolUse hook_callback's input."""
_TEXT_DELTAS_FIELDS: Final = {"text_delta": "text", "thinking_delta": "thinking"}
"""The stream_event deltas whose text makes events, and the field that holds it."""
_TEXT_DELTAS: Final = tuple(f'"{name}"'.encode() for name in _TEXT_DELTAS_FIELDS)


class _DeltaText(msgspec.Struct, frozen=True, gc=False):
    text: str | None = None
    thinking: str | None = None


class _DeltaEvent(msgspec.Struct, frozen=True, gc=False):
    delta: _DeltaText


class _DeltaLine(msgspec.Struct, frozen=True, gc=False):
    event: _DeltaEvent


_decode_delta = msgspec.json.Decoder(_DeltaLine).decode
"""A delta line's text, decoded in C with the rest skipped (raises msgspec.DecodeError otherwise)."""


def _with_delta_text(message: dict[str, Any], field: str, text: str) -> bytes:
    """Stream_event `message` again, its delta's `field` set to `text`."""
    event = message["event"]
    changed = {**message, "event": {**event, "delta": {**event["delta"], field: text}}}
    return json.dumps(changed, ensure_ascii=False, separators=(",", ":")).encode()


class LineMasker:
    """Masks the CLI's stdout lines (stream-json, one message per line) before anything
    above the transport sees them: the adapter, cards, saved outputs, the ledger, a recording.

    A line holding one of the known `secrets` (as written, or JSON-escaped), and every line
    carrying a tool's output (a ``tool_result``, a hook's ``tool_response``: credentials by
    shape too), is decoded, its
    string values masked (:func:`redact_json`; keys and numbers are never touched, so the
    message keeps its meaning) and encoded again; other lines pass unchanged, at the cost of
    one substring search per secret. A line that is not JSON has the secrets replaced as bytes.

    Args:
        secrets: the known secret values (:func:`known_secrets`); 4 characters or more.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)
        needles: set[bytes] = set()
        for secret in self.secrets:
            needles.add(secret.encode())
            needles.add(json.dumps(secret)[1:-1].encode())
            needles.add(json.dumps(secret, ensure_ascii=False)[1:-1].encode())
        self._needles = sorted(needles, key=len, reverse=True)
        self._starts = {secret[:size] for secret in self.secrets for size in range(1, len(secret))}
        """Every start of a secret that is not the whole secret."""
        self._by_first = {secret[0] for secret in self.secrets}
        self._inner = {char for secret in self.secrets for char in secret[:-1]}
        self._window = max((len(secret) - 1 for secret in self.secrets), default=0)
        self._held: dict[tuple[Any, Any, Any], tuple[dict[str, Any], str]] = {}
        """By (session_id, parent_tool_use_id, block index): the last text delta message and
        the tail of its text held back because it may start a secret."""

    def lines(self, batch: list[Any]) -> list[Any]:
        """:meth:`line` of every bytes line of one read (other items, e.g. a line over the
        framer's limit, pass as they are), and the text deltas masked as one stream
        (:meth:`_delta_lines`). A read with no secret, no tool output and no text delta in it
        is checked with one substring search per secret over the whole read, not per line,
        and returned as it is."""
        blob = b"\n".join(line for line in batch if isinstance(line, bytes))
        deltas = bool(self.secrets) and (bool(self._held) or any(m in blob for m in _TEXT_DELTAS))
        known = any(n in blob for n in self._needles)
        if not deltas and not known and not any(m in blob for m in _TOOL_OUTPUT):
            return batch
        out: list[Any] = []
        for line in batch:
            if not isinstance(line, bytes):
                out.append(line)
            elif deltas:
                out.extend(self._delta_lines(line, known))
            else:
                out.append(self.line(line))
        return out

    def _delta_lines(self, line: bytes, known: bool = True) -> list[bytes]:
        """`line` masked, with text deltas masked as one stream: a secret split across two
        ``text_delta`` (or ``thinking_delta``) stream_events is in no single line, so the
        tail of each delta's text that may start a secret is held back and sent at the front
        of the next delta of the same content block; the next other line of that session
        (``content_block_stop``, the ``assistant`` message, ``result``) sends what is held
        first, as a delta of its own. A delta left with no text is dropped. `known`: the line
        may hold a secret whole (False when the read was searched and has none)."""
        if not self._held:
            if b'"text_delta"' not in line and b'"thinking_delta"' not in line:  # _TEXT_DELTAS, inlined
                return [self.line(line)]
            if not known:  # the common case: the delta's text decoded in C, the line kept as it is
                try:
                    piece = _decode_delta(line).event.delta
                    said = piece.text if piece.text is not None else piece.thinking
                except msgspec.DecodeError:
                    said = None
                if said is not None and not self._secret_start(said):
                    return [line]
        try:
            message = json.loads(line)
        except ValueError:
            return [self.line(line)]
        if not isinstance(message, dict):
            return [self.line(line)]
        scope = (message.get("session_id"), message.get("parent_tool_use_id"))
        event = message.get("event") if message.get("type") == "stream_event" else None
        delta = event.get("delta") if isinstance(event, dict) and event.get("type") == "content_block_delta" else None
        field = _TEXT_DELTAS_FIELDS.get(str(delta.get("type"))) if isinstance(delta, dict) else None
        if event is None or delta is None or field is None or not isinstance(delta.get(field), str):
            out = [self._release(key) for key in list(self._held) if key[:2] == scope and scope[0] is not None]
            return [*out, self.line(line)]
        key = (*scope, event.get("index"))
        held = self._held.pop(key, (message, ""))[1]
        text = mask_values(held + delta[field], self.secrets)
        keep = self._secret_start(text)
        if keep:
            self._held[key] = (message, text[-keep:])
            text = text[:-keep]
        if not text:
            return []
        if text == delta[field]:
            return [line]
        return [_with_delta_text(message, field, text)]

    def _release(self, key: tuple[Any, Any, Any]) -> bytes:
        """The held tail of block `key` as a delta line of its own (it started no secret)."""
        message, text = self._held.pop(key)
        delta = message["event"]["delta"]
        return _with_delta_text(message, _TEXT_DELTAS_FIELDS[delta["type"]], text)

    def _secret_start(self, text: str) -> int:
        """The length of the longest end of `text` that is the start (not the whole) of a secret."""
        if not text or text[-1] not in self._inner:
            return 0
        for size in range(min(self._window, len(text)), 0, -1):
            if text[-size] in self._by_first and text[-size:] in self._starts:
                return size
        return 0

    def line(self, line: bytes) -> bytes:
        """`line` with the secrets in it masked (the same object when there were none)."""
        known = any(needle in line for needle in self._needles)
        output = any(marker in line for marker in _TOOL_OUTPUT)
        if not known and not output:
            return line
        try:
            message = json.loads(line)
        except ValueError:
            for needle in self._needles:
                line = line.replace(needle, REDACTED.encode())
            return line
        masked = redact_json(message, self.secrets, shapes=output)
        if masked is message:
            return line
        return json.dumps(masked, ensure_ascii=False, separators=(",", ":")).encode()
