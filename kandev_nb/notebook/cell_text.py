"""The text of a `%%claude` cell: ``{name}`` interpolation, option hints, the help text.

Pure functions (no IPython, no CLI), used by :mod:`kandev_nb.notebook.magic`.
"""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Iterable
from typing import Any

from kandev_nb.errors import PromptError
from kandev_nb.kernel_tools._namespace import redacted_copy, secret_values
from kandev_nb.redact import REDACTED, is_secret_name, redact_text

__all__ = ["PromptError", "clean_help", "did_you_mean", "fenced", "interpolate"]


_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_FIELD = re.compile(r"\{\{(" + _NAME + r")\}\}|\{(" + _NAME + r")\}")


_REFUSED_ROOTS = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})
"""IPython's own names (cell history, outputs), refused like private names, as the kernel tools refuse them."""


def interpolate(
    prompt: str, namespace: dict[str, Any], *, secrets: Iterable[str] = (), reveal_secrets: bool = False
) -> str:
    """Replace ``{name}`` / ``{name.attr}`` with the variable's ``str()``, by the kernel
    tools' rules (issue 24): no modules, no private names, secrets redacted.

    ``{{name}}`` gives a literal ``{name}``. Braces around anything that is not a dotted
    name (JSON, dicts, code, ``}}``) are left exactly as they are. A value whose ``str()``
    has several lines (a DataFrame, a file's text) is sent as a fenced block on lines of
    its own (see :func:`fenced`), so its columns and indentation reach Claude intact.

    Unless `reveal_secrets` (``kandev_nb.kernel_tools.options.reveal_secrets``): a path with
    a secret-looking part (``{api_key}``, ``{cfg.password}``) gives ``<redacted>``; values
    under secret-looking keys at any depth of dicts and lists show ``<redacted>``
    (:func:`~kandev_nb.kernel_tools._namespace.redacted_copy`); and the text goes through
    :func:`kandev_nb.redact.redact_text` with the namespace's secret values and `secrets`
    (``configure(env=...)`` values), so the prompt, the ledger's ``prompt`` column and the
    saved output hold what ``inspect_variable`` would show.

    Raises:
        PromptError: ``{name}`` names no notebook variable, a module (``{os.environ}``), a
            private or IPython name (``{_x}``, ``{obj._y}``, ``{In}``), or a missing attribute.
    """
    known: list[str] | None = None

    def replace(match: re.Match[str]) -> str:
        nonlocal known
        if match.group(1) is not None:  # {{name}}: the literal text {name}
            return "{" + match.group(1) + "}"
        dotted = match.group(2)
        head, *attrs = dotted.split(".")
        if head.startswith("_") or head in _REFUSED_ROOTS or any(a.startswith("_") for a in attrs):
            raise PromptError(
                f"{{{dotted}}} in the prompt names a private or IPython name; it is not sent "
                f"(write {{{{{dotted}}}}} for literal braces)"
            )
        if head not in namespace:
            raise PromptError(
                f"{{{dotted}}} in the prompt names no notebook variable {head!r}; "
                f"write {{{{{dotted}}}}} for literal braces, or use --no-interpolate"
            )
        value = namespace[head]
        for step, attr in enumerate([None, *attrs]):
            if attr is not None:
                if not hasattr(value, attr):
                    raise PromptError(f"{{{dotted}}} in the prompt: {head} has no attribute path {dotted!r}")
                value = getattr(value, attr)
            if isinstance(value, types.ModuleType):
                path = ".".join([head, *attrs[:step]])
                raise PromptError(
                    f"{{{dotted}}} in the prompt: {path} is a module; modules and their attributes "
                    "(os.environ and other process state) are not sent to Claude"
                )
        if reveal_secrets:
            text = str(value)
        elif any(is_secret_name(part) for part in [head, *attrs]):
            text = REDACTED
        else:
            if known is None:
                known = secret_values(namespace, extra=secrets)
            text = redact_text(str(redacted_copy(value)), known)
        if "\n" not in text.strip("\n"):
            return text
        start = match.string.rfind("\n", 0, match.start()) + 1
        before = "" if match.string[start : match.start()].strip() == "" else "\n"
        end = match.string.find("\n", match.end())
        after = "" if match.string[match.end() : end if end >= 0 else None].strip() == "" else "\n"
        return before + fenced(text) + after

    return _FIELD.sub(replace, prompt)


def fenced(text: str) -> str:
    """`text` as a Markdown fenced block whose fence is longer than any backtick run in it.

    >>> fenced("a\nb")
    '```\na\nb\n```'
    """
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.strip(chr(10))}\n{fence}"


def did_you_mean(line: str, known: list[str]) -> str:
    """ "did you mean --mode?" for each unknown ``--option`` of `line` close to one of
    `known` (difflib.get_close_matches); "" when none is close."""
    hints = []
    for token in line.split():
        name = token.split("=", 1)[0]
        if name.startswith("--") and name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            if close:
                hints.append(f"did you mean {close[0]}? (not {name})")
    return "; ".join(hints)


def clean_help(doc: str) -> str:
    """The help text of ``%%claude?`` without reST residue: no leading ``::`` block marker,
    no double backticks."""
    doc = doc.replace("%claude_help", "%%claude")
    doc = re.sub(r"^\s*::\s*\n", "", doc)
    return doc.replace("``", "")
