"""What one ``%%claude`` cell sends and under which policy: the prompt (interpolated, retried,
with attachments) and the cell's approval policy, named as such in its denials."""

from __future__ import annotations

import argparse
import os
from typing import Any

from kandev_nb.agent.origin import Origin
from kandev_nb.agent.permissions import ApprovalPolicy
from kandev_nb.kernel_tools import options as kernel_tools_options
from kandev_nb.notebook.attachments import attach, prompt_with_attachments
from kandev_nb.notebook.cell_text import interpolate
from kandev_nb.notebook.state import current
from kandev_nb.policy.enforce import LabelledPolicy
from kandev_nb.redact import configured_secrets

__all__ = ["cell_origin", "last_session_of", "notebook_path", "notebook_policy", "prepare_retry", "prompt_and_policy"]


def last_session_of(notebook: str | None) -> str:
    """The session_id of the latest ledger row of `notebook` (``--resume last``).

    Raises:
        RuntimeError: the notebook path is unknown, or the ledger has no turn for it.
    """
    from kandev_nb.ledger import default_ledger

    if not notebook:
        raise RuntimeError(
            "--resume last: this notebook's path is unknown here; pass the session id (kandev_nb.runs() lists them)"
        )
    rows = default_ledger().runs(notebook=notebook).dropna(subset=["session_id"])
    if rows.empty:
        raise RuntimeError(f"--resume last: the ledger has no turn for {notebook}")
    return str(rows.iloc[-1]["session_id"])


def prepare_retry(args: argparse.Namespace, prompt: str) -> str:
    """--retry: resume the session at its last good message UUID, dropping the failed turn
    (``--resume-drops-turn`` with its prompt's uuid: the CLI refuses when more would be
    dropped, :class:`~kandev_nb.errors.ResumeRejectedError`); resend the failed prompt.

    Raises:
        UsageError: the session has no turn to retry, or its last turn did not fail.
    """
    from IPython.core.error import UsageError

    session = current().sessions.get(args.session)
    failed = session.turns[-1] if session and session.turns else None
    if failed is None or (failed.error is None and failed.output_error is None):
        raise UsageError("--retry: the last turn of this session did not fail; nothing to retry")
    if not session or not session.session_id:
        raise UsageError("--retry: the failed turn has no session id to resume")
    args.resume = session.session_id
    args.resume_session_at = failed.meta.get("retry_at")  # the last good message before it (Session.run)
    args.resume_drops_turn = failed.prompt_uuid  # and only the failed turn is dropped, or the CLI refuses
    return prompt or failed.prompt


def notebook_path(namespace: dict[str, Any]) -> str | None:
    """The open notebook's path as the kernel knows it (VS Code's ``__vsc_ipynb_file__``,
    ``__session__``, ``JPY_SESSION_NAME``), or None."""
    for key in ("__vsc_ipynb_file__", "__session__"):
        if isinstance(namespace.get(key), str):
            return str(namespace[key])
    return os.environ.get("JPY_SESSION_NAME")


def cell_origin(ip: Any, namespace: dict[str, Any], execution_count: int | None) -> Origin:
    """The running cell's origin stamp (:mod:`kandev_nb.agent.origin`): the notebook's path
    (:func:`notebook_path`), the cell's ``In [n]`` and its nbformat id, which JupyterLab sends
    with each execution as the request's ``metadata.cellId`` (DESIGN.md: readable from
    ``kernel.get_parent("shell")`` in the cell's own context, so call it when the cell starts;
    None where the frontend sends none, as nbclient)."""
    cell_id = None
    try:
        parent = ip.kernel.get_parent("shell") if ip is not None and getattr(ip, "kernel", None) else None
        value = (parent or {}).get("metadata", {}).get("cellId")
        cell_id = value if isinstance(value, str) and value else None
    except Exception:  # noqa: BLE001 - an unusual kernel: no cell id, never a failed cell
        cell_id = None
    return Origin.cell(notebook=notebook_path(namespace), cell_id=cell_id, execution_count=execution_count)


def prompt_and_policy(
    args: argparse.Namespace, body: str, namespace: dict[str, Any]
) -> tuple[str, ApprovalPolicy | None]:
    """The prompt to send (interpolated, retried, with attachments) and the cell's policy.

    Raises:
        UsageError, PromptError, AttachmentError, RuntimeError: see :func:`run_cell`.
    """
    from IPython.core.error import UsageError

    settings = current().settings
    prompt = body.strip("\n")
    if not args.no_interpolate and settings.interpolate:
        reveal = kernel_tools_options.reveal_secrets  # the kernel tools' opt-in counts here too
        prompt = interpolate(prompt, namespace, secrets=configured_secrets(settings.env), reveal_secrets=reveal)
    if args.resume == "last":
        args.resume = last_session_of(notebook_path(namespace))
    if args.retry:
        prompt = prepare_retry(args, prompt)
    if args.attach:
        cwd = args.cwd or settings.cwd or os.getcwd()
        prompt = prompt_with_attachments(prompt, [attach(item, namespace, cwd) for item in args.attach])
    if not prompt.strip():
        raise UsageError("the %%claude cell is empty: write the prompt below the %%claude line")
    policy: ApprovalPolicy | None = None
    if args.approve:
        if args.approve not in namespace or not callable(namespace[args.approve]):
            raise UsageError(f"--approve {args.approve}: no callable notebook variable of that name")
        policy = LabelledPolicy(namespace[args.approve], f"this cell's policy (--approve {args.approve})")
    return prompt, policy


def notebook_policy(policy: ApprovalPolicy | None) -> ApprovalPolicy | None:
    """``configure(approve=...)``, named as such in its denials."""
    return LabelledPolicy(policy, "the notebook's policy (configure(approve=...))") if policy is not None else None
