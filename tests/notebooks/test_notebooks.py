"""The approvals, cost_analysis and replay notebooks run top to bottom offline.

Each notebook is copied (with ``notebooks/data``) into a temporary directory and executed
there by nbclient in a fresh kernel whose ``KANDEV_NB_LEDGER`` is a temporary file; nobody
clicks, so every approval is answered by a policy, a mode or a short timeout. The tests
then check what the notebooks claim: the approval outcomes (in the ledger and the cell
outputs), the cost notebook's rows and sums against the CLI's own cumulative cost, and the
replayed text, diff and answers.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from kandev_nb.ledger import RunLedger

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"

pytestmark = pytest.mark.timeout(300)


@dataclass
class Executed:
    """An executed notebook, its working directory and the kernel's ledger file."""

    nb: Any
    work: Path
    ledger: Path

    def cell(self, cell_id: str) -> Any:
        return next(c for c in self.nb.cells if c.get("id") == cell_id)

    def text(self, cell_id: str) -> str:
        """Everything a code cell printed or displayed, as text (stream, plain, Markdown)."""
        parts: list[str] = []
        for out in self.cell(cell_id).get("outputs", []):
            if out["output_type"] == "stream":
                parts.append(out["text"])
            elif out["output_type"] in ("display_data", "execute_result"):
                data = out["data"]
                parts.append(data.get("text/markdown") or data.get("text/plain", ""))
        return "\n".join(parts)

    def mime_types(self, cell_id: str) -> set[str]:
        return {mime for out in self.cell(cell_id).get("outputs", []) for mime in out.get("data", {})}


def execute(name: str, tmp_path: Path, **env_overrides: str) -> Executed:
    """Run notebooks/`name` in a fresh kernel, in a temporary copy of notebooks/."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(NOTEBOOKS / name, work / name)
    shutil.copytree(NOTEBOOKS / "data", work / "data")
    ledger = tmp_path / "kernel-ledger.sqlite"
    env = dict(
        os.environ,
        KANDEV_NB_LEDGER=str(ledger),
        IPYTHONDIR=str(tmp_path / "ipython"),
        MPLCONFIGDIR=str(tmp_path / "mpl"),
        **env_overrides,
    )
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "KANDEV_NB_APPROVAL_TIMEOUT"):
        env.pop(var, None)
    nb = nbformat.read(work / name, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(work)}})
    client.execute(env=env)  # raises CellExecutionError on the first failing cell
    return Executed(nb, work, ledger)


def printed_path(executed: Executed, cell_id: str, label: str) -> Path:
    match = re.search(rf"{label} (\S+)", executed.text(cell_id))
    assert match, executed.text(cell_id)
    return Path(match.group(1).rstrip(";"))


# -- approvals ----------------------------------------------------------------------------


def test_approvals_notebook_answers_every_request_without_a_person(tmp_path: Path) -> None:
    done = execute("approvals.ipynb", tmp_path)
    project = printed_path(done, "setup", "project in")

    runs = RunLedger(done.ledger).runs()
    assert runs["prompt"].tolist() == [
        "Write a NOTES.md with the project's open questions.",
        "Make add() reject strings.",
        "Plan how to add a command-line entry point; don't change anything yet.",
        "Run the tests, clean the build directory, and write a changelog.",
        "Add a docs/USAGE.md page.",
    ]  # the edit section runs through kandev_nb.Session, which records nothing by itself
    assert runs["session_id"].nunique() == 1
    assert not runs["is_error"].any()
    assert runs["permission_denials"].tolist() == [1, 0, 0, 2, 1]

    calls = RunLedger(done.ledger).tool_calls()
    outcomes = list(
        zip(
            calls["turn_id"],
            calls["tool_name"].astype(str),
            calls["decision"].astype(str),
            calls["decided_by"].astype(str),
            strict=True,
        )
    )
    assert outcomes == [
        (1, "Write", "deny", "timeout"),  # supervised: nobody clicked, --approval-timeout 3
        (2, "Edit", "allow", "mode"),  # acceptEdits: the mode ran it without asking
        (3, "ExitPlanMode", "allow", "policy"),  # plan: --approve approve_plans
        (4, "Bash", "allow", "policy"),  # Rules: Bash(python3 -m unittest:*)
        (4, "Bash", "deny", "policy"),  # Rules: deny Bash(rm:*)
        (4, "Write", "allow", "policy"),  # Rules: allow_edits_under docs/
        (4, "Write", "deny", "timeout"),  # no rule matched setup.cfg: asked, nobody answered
        (5, "Write", "deny", "policy"),  # --approve tests_only replaced the notebook's policy
    ]

    assert "Write         NOTES.md                 -> deny by timeout" in done.text("supervised-after")
    assert "denied by the approval timeout" in done.text("supervised")  # the static rendering says so too
    assert "the session's mode is now: acceptEdits" in done.text("plan-after")
    assert [line.rsplit("-> ", 1)[1] for line in done.text("policy").splitlines() if "->" in line] == [
        "allow",
        "deny",
        "ask",
        "allow",
        "ask",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        assert "RootBypassError:" in done.text("autonomous") and "--i-am-sandboxed" in done.text("autonomous")
    else:
        assert "does not run as root" in done.text("autonomous")

    # Editing the input from Python: the Write ran with the consumer's content.
    assert "Write         config.toml              -> allow by person" in done.text("edit")
    assert (project / "config.toml").read_text() == "debug = false\nport = 8000\n"
    assert "debug = false" in done.text("edit")

    assert "raise TypeError" in (project / "app.py").read_text()
    assert (project / "docs" / "CHANGES.md").exists()
    for refused in ("NOTES.md", "setup.cfg", "docs/USAGE.md"):
        assert not (project / refused).exists(), refused


# -- cost analysis ------------------------------------------------------------------------


def test_cost_notebook_uses_its_own_ledger_and_its_sums_match_the_cli(tmp_path: Path) -> None:
    done = execute("cost_analysis.ipynb", tmp_path)
    ledger = printed_path(done, "ledger", "ledger:")
    assert ledger.exists() and ledger != done.ledger
    assert not done.ledger.exists() or RunLedger(done.ledger).runs().empty  # the kernel's ledger is untouched

    runs = RunLedger(ledger).runs()
    assert len(runs) == 6
    assert runs["session_name"].astype(str).tolist() == ["default"] * 3 + ["review"] * 2 + ["deep"]
    assert runs["model"].astype(str).tolist() == ["claude-sonnet-4-5"] * 3 + ["claude-haiku-4-5"] * 2 + [
        "claude-opus-4-5"
    ]
    assert (runs["cost_usd"] > 0).all() and not runs["is_error"].any()
    assert runs["output_tokens"].tolist() == [420, 900, 330, 270, 350, 2500]  # from the scripted Usage(...)
    assert runs["cache_read_input_tokens"].tolist() == [0, 12_000, 51_000, 8_000, 10_500, 0]
    assert runs["num_turns"].tolist() == [1, 1, 4, 2, 1, 1]
    # A turn's cost is the difference of the CLI's cumulative total_cost_usd: per session,
    # the turns add up to the CLI's last total.
    for _, session in runs.groupby("session_name", observed=True):
        assert session["cost_usd"].sum() == pytest.approx(session["total_cost_usd"].iloc[-1], abs=1e-12)

    assert f"6 turns, {runs['cost_usd'].sum():.4f} USD" in done.text("runs")
    check = done.text("cumulative")
    assert check.count("True") == 3 and "False" not in check
    total = round(runs["cost_usd"].sum(), 6)
    assert f"notebook total (sum of turns): {total} USD; sum of the CLIs' totals: {total} USD" in check

    calls = RunLedger(ledger).tool_calls()
    assert sorted(calls["tool_name"].astype(str)) == ["Bash", "Edit", "Read", "Read"]
    assert "image/png" in done.mime_types("plot")
    stats = done.text("stats")
    assert re.search(r"today\s+6\s+\$0\.29", stats) and re.search(r"this session\s+3\s", stats), stats
    assert "datetime" not in stats and "denials" in stats


# -- replay -------------------------------------------------------------------------------


def fake_cli(tmp_path: Path) -> Path:
    """A `claude` that only knows its version and leaves a mark if it is ever started."""
    path = tmp_path / "claude"
    marker = tmp_path / "cli-started"
    path.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "if sys.argv[1:] == ['--version']:\n    print('2.1.332 (Claude Code)')\n    sys.exit(0)\n"
        f"open({str(marker)!r}, 'a').write(' '.join(sys.argv) + '\\n')\nsys.exit(1)\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_replay_notebook_replays_the_recording_without_starting_a_cli(tmp_path: Path) -> None:
    cli = fake_cli(tmp_path)
    done = execute("replay.ipynb", tmp_path, KANDEV_CLAUDE_CLI=str(cli))
    assert not (tmp_path / "cli-started").exists()  # no CLI process: only the recording answered

    assert "prompts: ['What does stats.py do?', 'Fix the bug in mean() and run the tests.']" in done.text("file")
    first = done.text("turn1")
    assert "It divides by **`len(values) - 1`** instead of `len(values)`" in first
    assert "Read: /home/user/project/stats.py" in first
    second = done.text("turn2")
    assert "+    return sum(values) / len(values)" in second  # the Edit's diff
    assert "python3 -m pytest" in second and "1 passed" in second
    assert second.count("allowed by policy") == 2
    assert "Fixed: `mean` now divides by `len(values)`" in second
    assert done.text("turn") == second  # the Turn's rich display is the static rendering

    fields = done.text("turn-fields")
    assert "<Turn done, $0.0551: 'What does stats.py do?' -> 345 chars, 1 tools>" in fields  # 2 text runs
    assert "Edit  complete  allow by policy" in fields and "Bash  complete  allow by policy" in fields
    assert "cost $0.0391 (CLI total $0.0942)" in fields
    sent = done.text("sent").splitlines()
    assert [line.split()[0] for line in sent] == [
        "control_request",
        "user",
        "user",
        "control_response",
        "control_response",
    ]
    assert not done.ledger.exists() or RunLedger(done.ledger).runs().empty  # a replay records nothing
