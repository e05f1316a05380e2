"""What a fleet is asked to do, checked before anything starts: the frame, the prompt
template, the options, each row's prompt, the row keys as the ledger keeps them, and the
fingerprint that tells a rerun which finished rows still count.

>>> import pandas as pd
>>> spec = FleetSpec.of(pd.DataFrame({"id": [1, 2]}, index=["a", "b"]), "Ticket {id} {{literal}}")
>>> spec.prompts["b"]
'Ticket 2 {literal}'
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import string
import types
from _string import formatter_field_name_split as _formatter_field_name_split
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kandev_nb.agent.config import SessionConfig
from kandev_nb.agent.structured import OutputSpec
from kandev_nb.errors import KandevError
from kandev_nb.ledger.keys import legacy_key_text
from kandev_nb.redact import REDACTED, is_secret_name, redact_text

__all__ = ["FleetError", "FleetSpec", "key_text", "row_values", "template_fields"]


class FleetError(KandevError, ValueError):
    """A fleet that cannot start (an empty frame, a missing ``{column}``, a duplicate index,
    a bad option); raised before any CLI process starts, so nothing is lost."""


def key_text(key: Any) -> str:
    """A row's index value as JSON text (numpy scalars as their Python value, a tuple of a
    MultiIndex as a list, anything else as its ``str``): the row's name in the fleet's
    messages on a cluster and in worktree names, and what ``turns.fleet_key`` held before
    the ledger kept keys with their type (:func:`kandev_nb.ledger.keys.encode_key`)."""
    return legacy_key_text(key)


def _parse(template: str) -> list[tuple[str, str | None, str, str | None]]:
    """``string.Formatter().parse`` of `template`, or FleetError for an invalid one."""
    try:
        return [(text, name, spec or "", conv) for text, name, spec, conv in string.Formatter().parse(template)]
    except ValueError as exc:
        raise FleetError(f"the prompt template is not valid ({exc}); write {{{{ for a literal brace") from None


def _all_fields(template: str) -> list[str]:
    """Every field name of `template` at any depth: a field nested in another's format spec
    (``{ts:{fmt}}``, ``{x:{w}.{p}f}``) is read too, so it follows the same rules."""
    names: list[str] = []
    for _text, name, spec, _conv in _parse(template):
        if name is not None:
            names.append(name)
        if spec and "{" in spec:
            names.extend(_all_fields(spec))
    return names


def template_fields(template: str) -> list[str]:
    """The names a prompt template reads, in order (``"{id} and {subject!r}"`` -> id, subject),
    including the fields nested in a format spec (``{ts:{fmt}}`` -> ts, fmt).

    Raises:
        FleetError: the template is not valid (an unmatched ``{``, a positional ``{}``).
    """
    names: list[str] = []
    for name in _all_fields(template):
        root = name.split(".", 1)[0].split("[", 1)[0]
        if not root or root.isdigit():
            raise FleetError(f"the prompt template has a positional field {{{name}}}: name a column, e.g. {{id}}")
        if root not in names:
            names.append(root)
    return names


_REFUSED_ROOTS = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})
"""IPython's own names, refused as a `%%claude` cell's interpolation refuses them."""


_ENVIRON_TYPE = type(os.environ)
_MEMBERS = 1000
"""A value's members read for the process environment (a mapping's values, a sequence's
items, an object's attributes): at most this many."""


def _mirrors_environ(value: Mapping[Any, Any]) -> bool:
    """`value` is a copy of the process environment (``dict(os.environ)``): it holds at least
    min(3, len(os.environ)) of its entries, same name and same value."""
    env = dict(os.environ)
    if not env or len(value) < min(3, len(env)):
        return False
    same = 0
    for k, v in env.items():
        try:
            same += value.get(k) == v
        except (TypeError, ValueError, KeyError):  # an odd mapping (unhashable lookups, raising __eq__)
            return False
        if same >= min(3, len(env)):
            return True
    return False


def _is_environ(value: Any) -> bool:
    """`value` is the process environment, a copy of it, or a bound method of it (``environ.copy``)."""
    if isinstance(value, _ENVIRON_TYPE) or isinstance(getattr(value, "__self__", None), _ENVIRON_TYPE):
        return True
    return isinstance(value, Mapping) and _mirrors_environ(value)


def _members(value: Any) -> list[Any]:
    """A value's direct members: a mapping's values, a list's/tuple's/set's items, an object's
    ``__dict__`` values (first :data:`_MEMBERS`)."""
    try:
        if isinstance(value, Mapping):
            items: Any = value.values()
        elif isinstance(value, (list, tuple, set, frozenset)):
            items = value
        else:
            items = vars(value).values() if hasattr(value, "__dict__") else ()
        out: list[Any] = []
        for item in items:
            if len(out) >= _MEMBERS:
                break
            out.append(item)
        return out
    except (TypeError, AttributeError, RuntimeError):
        return []


def check_field(name: str, scope: Mapping[str, Any]) -> None:
    """Resolve the template field `name` (``mods[0].environ``, ``o.d[k].environ``) in `scope`
    step by step, as ``str.format`` will, and refuse it if any step is a module or the process
    environment (``os.environ`` by type, a copy of it, a bound method of it), or if the value
    holds the environment as a direct member. A step that cannot be resolved stops the check
    (the fill then fails with its own error). The error names the field, never a value.

    Raises:
        FleetError: a step is a module or the process environment.
    """
    first, rest = _formatter_field_name_split(name)
    if first not in scope:
        return
    value = scope[first]
    steps = [None, *rest]
    for i, step in enumerate(steps):
        if step is not None:
            is_attr, key = step
            if is_attr and str(key).startswith("_"):
                raise FleetError(f"the prompt template's {{{name}}} names a private or IPython name; it is not sent")
            try:
                value = getattr(value, key) if is_attr else value[key]
            except (KeyError, AttributeError, IndexError, ValueError, TypeError):  # what format_map would raise
                return
        if isinstance(value, types.ModuleType):
            raise FleetError(
                f"the prompt template's {{{name}}} is a module or reaches one; modules and their attributes "
                "(os.environ and other process state) are not sent to Claude"
            )
        last = i == len(steps) - 1
        if _is_environ(value) or (last and any(_is_environ(m) for m in _members(value))):
            raise FleetError(
                f"the prompt template's {{{name}}} is or holds the process environment (os.environ); "
                "it is not sent to Claude"
            )


def _escaped(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _safe_template(template: str, columns: Mapping[str, Any], variables: Mapping[str, Any], reveal: bool) -> str:
    """`template` checked by the rules of a cell's ``{name}`` interpolation
    (:func:`kandev_nb.notebook.cell_text.interpolate`): no private or IPython names, no
    modules; unless `reveal`, a field with a secret-looking part (``{api_key}``,
    ``{cfg.password}``) becomes the literal ``<redacted>``. A field nested in a format spec
    (``{ts:{os.environ}}``, ``{ts:{cfg.password}}``) is checked by the same rules: its spec is
    checked as a template of its own, at any depth.

    Raises:
        FleetError: a field names a private or IPython name, or a module.
    """
    out: list[str] = []
    for text, name, spec, conv in _parse(template):
        out.append(_escaped(text))
        if name is None:
            continue
        parts = [p for p in re.split(r"[.\[\]]", name) if p]
        root, attrs = parts[0], parts[1:]
        is_column = root in columns
        private_root = not is_column and (root.startswith("_") or root in _REFUSED_ROOTS)
        if private_root or any(p.startswith("_") for p in attrs):
            raise FleetError(f"the prompt template's {{{name}}} names a private or IPython name; it is not sent")
        if not is_column and root in variables:
            check_field(name, variables)
        safe_spec = _safe_template(spec, columns, variables, reveal) if spec else ""
        if not reveal and not is_column and any(is_secret_name(p) for p in parts):
            out.append(REDACTED)
            continue
        out.append("{" + name + (f"!{conv}" if conv else "") + (f":{safe_spec}" if safe_spec else "") + "}")
    return "".join(out)


def _fill_error(key: Any, template: str, row: Mapping[str, Any], exc: Exception) -> FleetError:
    """The error of a row whose prompt cannot be filled, naming the template's field that
    fails and the type of its value, never a value: an exception's own text can quote one
    (``Invalid format specifier '<the secret>' ...`` for a nested spec)."""
    for _text, name, spec, conv in _parse(template):
        if name is None:
            continue
        field_text = "{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
        try:
            field_text.format_map(row)
        except (KeyError, AttributeError, IndexError, ValueError, TypeError) as err:
            root = name.split(".", 1)[0].split("[", 1)[0]
            kind = type(row[root]).__name__ if root in row else "missing"
            return FleetError(
                f"row {key!r}: the prompt template's field {field_text} cannot be filled "
                f"({type(err).__name__} for a value of type {kind}; its message is not shown, it may quote a value)"
            )
    return FleetError(f"row {key!r}: the prompt template cannot be filled ({type(exc).__name__})")


def is_missing(value: Any) -> bool:
    """`value` is a missing value of a frame: None, ``pd.NA``, ``NaT``, a float NaN (numpy's too)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float | np.floating):
        return bool(np.isnan(value))
    if isinstance(value, np.datetime64 | np.timedelta64):
        return bool(np.isnat(value))
    return False


def _missing_error(missing: list[tuple[Any, int, str]], total: int) -> FleetError:
    """The error for rows with a missing value in a ``{column}`` of the template: each row
    named by key and position (the first five; how many more)."""
    shown = "; ".join(f"row {key!r} (row {position} of {total}): {{{column}}}" for key, position, column in missing[:5])
    more = f"; and {len(missing) - 5} more" if len(missing) > 5 else ""
    columns = sorted({column for _key, _position, column in missing})
    return FleetError(
        f"a missing value (NaN, None, NA) in a column the prompt template reads would be sent as 'nan': {shown}{more}. "
        f"Nothing was sent. Fill or drop them (frame.dropna(subset={columns!r})), or pass fill_missing='TEXT' "
        "(%%claude --fill-missing TEXT) to send that text in their place"
    )


def _check_number(name: str, value: Any, *, minimum: float, integer: bool, allow_none: bool) -> None:
    if value is None and allow_none:
        return
    kinds = int if integer else int | float
    if isinstance(value, bool) or not isinstance(value, kinds) or value < minimum or math.isnan(value):
        what = "an integer" if integer else "a number"
        raise FleetError(f"{name} must be {what} >= {minimum:g}{' or None' if allow_none else ''}, not {value!r}")


@dataclass(frozen=True)
class FleetSpec:
    """A checked fleet request.

    Attributes:
        frame: the input DataFrame (one row per agent).
        template: the prompt template (``{column}`` is the row's value, ``{{`` a literal brace).
        prompts: by row key (the frame's index value), the row's prompt.
        output: the structured answer every row gives (None: the final text, ``answer``).
        schema: the type `output` was made from (for the result's typed columns).
    """

    frame: pd.DataFrame
    template: str
    prompts: dict[Any, str]
    output: OutputSpec | None = None
    schema: Any = None
    variables: Mapping[str, Any] = field(default_factory=dict)
    cwds: dict[Any, str] | None = None
    """By row key, the row's working directory (``cwd=COLUMN``), or None (the config's)."""

    @classmethod
    def of(
        cls,
        frame: Any,
        template: Any,
        *,
        schema: Any = None,
        variables: Mapping[str, Any] | None = None,
        cwd_column: str | None = None,
        secrets: Sequence[str] = (),
        reveal_secrets: bool = False,
        fill_missing: str | None = None,
    ) -> FleetSpec:
        """Check the request and make every row's prompt.

        Args:
            frame: a pandas DataFrame with a unique index and at least one row.
            template: ``str.format`` text; each ``{name}`` is the row's column `name`, else
                ``variables[name]`` (a notebook variable); ``{{`` stays a literal ``{``.
            schema: a pydantic model, dataclass, TypedDict or JSON-schema dict (or None).
            variables: fallback values for names that are not columns.
            cwd_column: a column holding each row's working directory (a non-empty string).
            secrets: values that must not reach the model (``configure(env=...)`` values).
            reveal_secrets: send secret-looking values as they are (the kernel tools' opt-in).
            fill_missing: the text a missing value (NaN, None, ``pd.NA``, ``NaT``) of a
                ``{column}`` the template reads is sent as; None (the default): such a row is
                refused before anything starts, named with its column.

        A name that is not a column follows a cell's ``{name}`` rules: private, IPython and
        module names are refused; unless `reveal_secrets`, secret-looking names give
        ``<redacted>`` and each prompt goes through :func:`kandev_nb.redact.redact_text` with
        the variables' secret values.

        Raises:
            FleetError: not a DataFrame, an empty frame, a duplicate index value (named), a
                missing value in a ``{column}`` the template reads (each row named, unless
                `fill_missing`), an empty or invalid template, a name that is neither a column nor a variable, a
                private, IPython or module name, a schema with no JSON schema, a `cwd_column`
                value that is not a non-empty string (the row is named).
        """
        if not isinstance(frame, pd.DataFrame):
            raise FleetError(f"a fleet runs over a pandas DataFrame, not {type(frame).__name__}")
        if frame.empty or len(frame.index) == 0:
            raise FleetError("the frame has no rows: a fleet needs at least one row")
        if not frame.index.is_unique:
            dupes = frame.index[frame.index.duplicated()].unique().tolist()[:5]
            raise FleetError(
                f"the frame's index has duplicate values {dupes}: each row needs its own key "
                "(the result joins back on it and the ledger resumes by it); try frame.reset_index()"
            )
        if not isinstance(template, str) or not template.strip():
            raise FleetError("the prompt template is empty: write what each row's agent should do")
        names = template_fields(template)
        extra = dict(variables or {})
        columns = {str(c): c for c in frame.columns}
        missing = [n for n in names if n not in columns and n not in extra]
        if missing:
            raise FleetError(
                f"the prompt template names {', '.join('{' + m + '}' for m in missing)}, which is not a column "
                f"of the frame (columns: {', '.join(map(str, frame.columns))}); write {{{{ for a literal brace"
            )
        template_sent = _safe_template(template, columns, extra, reveal_secrets)
        known: list[str] = []
        if not reveal_secrets:
            from kandev_nb.kernel_tools._namespace import redacted_copy, secret_values

            used = {n: redacted_copy(extra[n]) for n in names if n not in columns}
            known = secret_values(extra, extra=secrets)
            extra = {**extra, **used}
        output = None
        if schema is not None:
            try:
                output = OutputSpec.of(schema)
            except TypeError as exc:
                raise FleetError(f"schema: {exc}") from None
        prompts: dict[Any, str] = {}
        wanted = [n for n in names if n in columns]
        column_fields = [f for f in _all_fields(template) if _formatter_field_name_split(f)[0] in columns]
        if fill_missing is not None and not isinstance(fill_missing, str):
            raise FleetError(f"fill_missing must be text (what a missing value is sent as), not {fill_missing!r}")
        absent: list[tuple[Any, int, str]] = []
        rows = frame[[columns[n] for n in wanted]].itertuples(index=False)
        for position, (key, values) in enumerate(zip(frame.index, rows, strict=True), start=1):
            cells = dict(zip(wanted, values, strict=True))
            for name, value in cells.items():
                if is_missing(value):
                    if fill_missing is None:
                        absent.append((key, position, name))
                    cells[name] = fill_missing
            if absent:
                continue  # refused below, naming every such row; nothing is filled or sent
            row = ChainMap(cells, extra)  # a row value wins over a variable
            for f in column_fields:  # a column's values: checked row by row (variables: once, above)
                check_field(f, row)
            try:
                prompts[key] = template_sent.format_map(row)
                if not reveal_secrets:
                    prompts[key] = redact_text(prompts[key], known)
            except (KeyError, AttributeError, IndexError, ValueError, TypeError) as exc:
                raise _fill_error(key, template_sent, row, exc) from None
        if absent:
            raise _missing_error(absent, len(frame.index))
        cwds = None
        if cwd_column is not None:
            cwds = {}
            for key, value in frame[cwd_column].items():
                if isinstance(value, os.PathLike):
                    value = os.fspath(value)
                if not isinstance(value, str) or not value.strip():
                    raise FleetError(
                        f"cwd={cwd_column!r}: row {key!r} has {value!r}; each row's working directory must be "
                        "a non-empty string (a path)"
                    )
                cwds[key] = value
        return cls(frame, template, prompts, output, schema, extra, cwds)

    @property
    def keys(self) -> list[Any]:
        """The row keys in frame order."""
        return list(self.frame.index)

    def fingerprint(self, config: SessionConfig, kernel_tools: bool, worktree: bool = False) -> str:
        """A short hash of the template and of every option that changes an answer: the
        schema, mode, model, max_turns, cwd, tool rules, system prompts, kernel tools.
        A rerun counts a finished row only if its fingerprint is this one and its prompt the
        row's (:meth:`kandev_nb.fleet.runner.Fleet.row_fingerprint`)."""
        options: dict[str, Any] = {
            "template": self.template,
            "schema": self.output.schema_json if self.output else None,
            "mode": config.mode,
            "model": config.model,
            "max_turns": config.max_turns,
            "cwd": str(config.cwd) if config.cwd is not None else None,
            "allowed_tools": list(config.allowed_tools),
            "disallowed_tools": list(config.disallowed_tools),
            "system_prompt": config.system_prompt,
            "append_system_prompt": config.append_system_prompt,
            "kernel_tools": kernel_tools,
            "cwd_column": sorted(set(self.cwds.values())) if self.cwds else None,
        }
        if worktree:
            options["worktree"] = True
        text = json.dumps(options, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_options(*, concurrency: Any, budget_usd: Any, retries: Any, name: Any) -> None:
    """Raise FleetError for an option out of range (concurrency >= 1, budget >= 0, retries >= 0,
    name a non-empty string or None)."""
    _check_number("concurrency", concurrency, minimum=1, integer=True, allow_none=False)
    _check_number("budget_usd", budget_usd, minimum=0, integer=False, allow_none=True)
    _check_number("retries", retries, minimum=0, integer=True, allow_none=False)
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise FleetError(f"name must be a non-empty string or None, not {name!r}")


def _field_texts(value: Any, spec: str, conversion: str | None) -> list[str]:
    """A row's value as the prompt shows it (its format spec and conversion applied) and as ``str``."""
    texts = [str(value)]
    try:
        shown = repr(value) if conversion == "r" else ascii(value) if conversion == "a" else value
        shown = str(shown) if conversion == "s" else shown
        texts.append(format(shown, spec) if "{" not in spec else str(shown))
    except (TypeError, ValueError):
        pass
    return list(dict.fromkeys(t.strip() for t in texts if t.strip()))


def row_values(spec: FleetSpec) -> dict[Any, tuple[str, ...]]:
    """By row key, the row's values that its prompt reads and that differ between rows, as text
    (``{"a": ("f00",), "b": ("f01",)}`` for ``"Profile data/{file}.csv"``): each as ``str`` and as
    the prompt shows it (``{n:03d}`` -> ``007``). A column with one value for every row is left
    out (with a single row, every column counts). What the rule proposals stop at
    (:func:`kandev_nb.fleet.proposal.propose`)."""
    columns = {str(c): c for c in spec.frame.columns}
    names = set(template_fields(spec.template)) & set(columns)
    found: dict[Any, list[str]] = {key: [] for key in spec.keys}
    for _text, name, fmt, conversion in string.Formatter().parse(spec.template):
        if name is None or name not in names:
            continue
        series = spec.frame[columns[name]]
        per_row = [_field_texts(v, fmt or "", conversion) for v in series]
        if len(spec.keys) > 1 and len({tuple(t) for t in per_row}) < 2:
            continue  # the same for every row: not a row's value
        for key, texts in zip(spec.keys, per_row, strict=True):
            found[key].extend(texts)
    return {key: tuple(dict.fromkeys(texts)) for key, texts in found.items()}
