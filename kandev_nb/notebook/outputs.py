"""`%%claude --schema NAME -o VAR [--frame]` and `--hooks NAME`: answers into variables.

``--schema NAME`` names a notebook variable holding a pydantic model class, a dataclass, a
TypedDict or a JSON-schema dict; the turn runs with its JSON schema (``--json-schema``, see
:mod:`kandev_nb.agent.structured`) and ``-o VAR`` receives the validated object. With
``--frame``, the model is asked for a list of such records and ``VAR`` gets a DataFrame
whose dtypes come from the fields (:func:`to_frame`). ``--hooks NAME`` gives the session
the hooks in that variable (``{event: [kandev_nb.HookMatcher, ...]}``).

The CLI takes the schema and the hooks only at launch (measured with 2.1.332: no control
request changes them), so a cell whose schema or hooks differ from the live process's
restarts the CLI, resuming the conversation (``--resume``); the next plain cell restarts
it once more without the schema.
"""

from __future__ import annotations

import argparse
import weakref
from collections.abc import Callable
from typing import Any

from IPython.core.magic_arguments import argument

from kandev_nb.agent.hooks import HookRegistry
from kandev_nb.agent.session import Session
from kandev_nb.agent.structured import OutputSpec
from kandev_nb.agent.turn import Turn
from kandev_nb.errors import StructuredOutputError
from kandev_nb.ledger.typed_frame import to_frame

__all__ = ["HookRegistry", "deliver", "output_arguments", "prepare", "run_turn", "show_output", "to_frame"]


def output_arguments(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The decorator adding ``--schema``, ``-o``/``--output``, ``--frame`` and ``--hooks``."""
    options: list[tuple[tuple[str, ...], dict[str, Any]]] = [
        (
            ("--hooks",),
            {
                "metavar": "NAME",
                "help": "a notebook variable holding hooks {event: [kandev_nb.HookMatcher]} for this session",
            },
        ),
        (
            ("--frame",),
            {"action": "store_true", "help": "with --schema: ask for a list of records and put a DataFrame in -o VAR"},
        ),
        (("-o", "--output"), {"metavar": "VAR", "help": "with --schema: the variable that gets the answer"}),
        (
            ("--schema",),
            {
                "metavar": "NAME",
                "help": "a notebook variable: pydantic model, dataclass, TypedDict or JSON-schema dict",
            },
        ),
    ]
    for names, kwargs in options:
        decorate = argument(*names, **kwargs)  # type: ignore[no-untyped-call]  # IPython's has no annotations
        fn = decorate(fn)
    return fn


def _output_type(args: argparse.Namespace, namespace: dict[str, Any]) -> Any:
    """The `output_type` this cell asks for, or None.

    Raises:
        ValueError: -o/--frame without --schema, an unknown variable, a type with no schema.
    """
    if args.schema is None:
        if args.output or args.frame:
            raise ValueError("-o/--output and --frame need --schema NAME")
        return None
    if args.schema not in namespace:
        raise ValueError(f"--schema {args.schema}: no notebook variable of that name")
    target = namespace[args.schema]
    if args.frame:
        if isinstance(target, dict):
            target = {"type": "array", "items": target}
        else:
            target = list[target]  # type: ignore[valid-type]
    try:
        return OutputSpec.of(target)
    except TypeError as exc:
        raise ValueError(f"--schema {args.schema}: {exc}") from None


_OWN_HOOKS: weakref.WeakSet[Session] = weakref.WeakSet()  # sessions given --hooks NAME


def _apply_hooks(
    args: argparse.Namespace,
    session: Session,
    namespace: dict[str, Any],
    notebook_hooks: dict[str, Any],
    replaced: Session | None,
) -> None:
    """The session's hooks: ``--hooks NAME`` (kept by the session's later cells, and by the
    session that replaces it after a launch option change, ``--retry`` or ``--resume``: a
    guard is never dropped silently; ``--new`` drops it), else the notebook's
    (``configure(hooks=...)``). A change restarts the CLI at the next turn.

    Raises:
        ValueError: no such variable, or HookError (a ValueError) for a bad configuration.
    """
    if args.hooks is None and not args.new and replaced in _OWN_HOOKS and session not in _OWN_HOOKS:
        assert replaced is not None
        session.use_hooks(replaced.config.hooks)
        _OWN_HOOKS.add(session)
    if args.hooks is None:
        if session not in _OWN_HOOKS:
            session.use_hooks(notebook_hooks)
        return
    if args.hooks not in namespace or not isinstance(namespace[args.hooks], dict):
        raise ValueError(
            f"--hooks {args.hooks}: no notebook variable of that name holding {{event: [kandev_nb.HookMatcher(...)]}}"
        )
    HookRegistry(namespace[args.hooks])
    session.use_hooks(namespace[args.hooks])
    _OWN_HOOKS.add(session)


def prepare(
    args: argparse.Namespace,
    session: Session,
    namespace: dict[str, Any],
    notebook_hooks: dict[str, Any],
    replaced: Session | None = None,
) -> Any:
    """Check this cell's --schema/-o/--frame/--hooks before anything is sent; returns the
    output spec (or None) and sets the session's hooks. Raises ValueError (one line)."""
    spec = _output_type(args, namespace)
    _apply_hooks(args, session, namespace, notebook_hooks, replaced)
    return spec


async def run_turn(
    session: Session, prompt: str, spec: Any, consumers: list[Any], approve: Any, **run_options: Any
) -> tuple[Turn, StructuredOutputError | None]:
    """``session.run(prompt, consumers=, approve=, output_type=spec, **run_options)`` (e.g.
    ``approval_timeout=``); a structured failure is returned,
    not raised, so the cell still shows and records the turn first.

    For ``--retry``, every turn keeps in ``turn.meta["retry_at"]`` the message UUID before it
    (:attr:`Session.resume_point` when it started), where a retry resumes.
    """
    try:
        return await session.run(prompt, consumers=consumers, approve=approve, output_type=spec, **run_options), None
    except StructuredOutputError as exc:
        turn = exc.turn if isinstance(exc.turn, Turn) else session.turns[-1]
        return turn, exc


def deliver(
    args: argparse.Namespace, turn: Turn, failure: StructuredOutputError | None, namespace: dict[str, Any]
) -> Turn:
    """Put the answer in ``-o VAR`` (a DataFrame with --frame) and show what it holds
    (:func:`show_output`), or fail the cell in one line.

    Returns `turn`.

    Raises:
        UsageError: the answer did not validate (pydantic's message; ``turn.output_raw``
            keeps it, ``--retry`` asks again) or there was none.
    """
    from IPython.core.error import UsageError

    if failure is not None:
        hint = (
            " The raw answer is kandev_nb.last_turn().output_raw; --retry asks again."
            if turn.output_raw is not None
            else ""
        )
        raise UsageError(f"%%claude --schema {args.schema}: {failure}.{hint}")
    if args.schema is None or not args.output:
        return turn
    value = turn.output
    if args.frame:
        item = namespace[args.schema]
        value = to_frame(list(value or []), None if isinstance(item, dict) else item)
        turn.output = value
    namespace[args.output] = value
    show_output(args.output, value)
    return turn


def show_output(name: str, value: Any) -> None:
    """Show what ``-o NAME`` now holds under the turn: "→ NAME: DataFrame 4 × 3 (...)" and the
    first rows (:func:`kandev_nb.notebook.value_summary.summary_bundle`), a display output of the
    cell (so the saved notebook keeps it; a background turn's cell gets it when the turn ends)."""
    from IPython.display import display

    from kandev_nb.notebook.value_summary import summary_bundle

    display(summary_bundle(name, value), raw=True)  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
