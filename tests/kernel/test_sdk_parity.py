"""Issue 34.10 in a real kernel, with the real CLI (2.1.332) and the scripted model: what the Agent
SDK gives a host, `%%claude` gives a notebook.

- the origin stamp: the cell's id and ``In [n]`` in the ledger, tied to the prompt's uuid the
  result named;
- ``forward_subagent_text``: a subagent's text inside its Agent card (the notebook's default);
- ``list_subagents`` / ``get_subagent_messages``: ``Session.subagents()`` from the notebook;
- ``resume_drops_turn``: ``--retry`` drops exactly the failed turn, or is refused;
- ``SessionStore``: ``configure(session_store=...)`` and ``--resume`` from another HOME.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from kandev_nb.ledger import RunLedger
from kandev_nb.testing import Reply, ScriptedModelServer, http_error, scripted_env, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(300)

OVERLOADED = http_error(529, "Overloaded", headers={"x-should-retry": "false"})
SUB_NOTE = "SUB-NOTE: reading the notes first."


def _html(run: object) -> str:
    return html.unescape("".join(map(str, run.data("text/html"))))  # type: ignore[attr-defined]


def test_a_cells_origin_and_its_subagents_text_transcripts_and_ledger_row(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    ledger_path: Path,
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir, approval_timeout=60))
    (claude_workdir / "notes.md").write_text("# Notes\nThe build uses make.\n")
    call = {"description": "Read the notes", "subagent_type": "general-purpose", "prompt": "Read notes.md"}
    scripted_model.push(
        Reply(text("I will delegate."), tool_use("Agent", {**call, "run_in_background": False})),
        Reply(text(SUB_NOTE), tool_use("Read", {"file_path": f"{claude_workdir}/notes.md"})),
        Reply(text("SUB-REPORT: make.")),
        Reply(text("It builds with make.")),
    )
    run = kernel.wait(kernel.start("%%claude --mode acceptEdits\nHow does it build? Ask a subagent.", "cell-7f3a"))
    assert run.status == "ok", run.error
    saved = _html(run)
    card = saved.index("kandev-kind-subagent_task")
    assert card < saved.index('class="kandev-nested"', card) < saved.index(SUB_NOTE)  # inside the Agent card

    turn = kernel.eval(
        "(lambda t: {'uuid': t.prompt_uuid, 'echoed': t.origin_echoed, 'origin': t.origin.as_dict(),"
        " 'agent': next(k for k, r in t.tools.items() if r.call.tool_name == 'Agent')})(kandev_nb.last_turn())"
    )
    assert turn["echoed"] is True
    assert turn["origin"]["kind"] == "cell" and turn["origin"]["cell_id"] == "cell-7f3a"
    count = turn["origin"]["execution_count"]
    with RunLedger(ledger_path) as ledger:
        row = ledger.runs().iloc[-1]
    assert row["prompt_uuid"] == turn["uuid"] and row["origin_kind"] == "cell"
    assert row["origin"] == {
        "kind": "cell",
        "cell_id": "cell-7f3a",
        "execution_count": count,
        "echoed": True,
        "result_origin": {"kind": "human"},
    }
    assert row["execution_count"] == count

    infos = kernel.eval("[(i.agent_id, i.tool_use_id) for i in kandev_nb.sessions['default'].subagents()]")
    assert [tool for _, tool in infos] == [turn["agent"]]
    messages = kernel.eval(
        f"[(m.type, m.parent_tool_use_id) for m in kandev_nb.sessions['default'].subagent_messages({infos[0][0]!r})]"
    )
    assert [t for t, _ in messages] == ["user", "assistant", "assistant", "user", "assistant"]
    assert {p for _, p in messages} == {turn["agent"]}
    listed = kernel.eval(f"kandev_nb.list_subagents(kandev_nb.last_turn().session_id, env={dict(claude_env)!r})")
    assert listed == [infos[0][0]]


def test_retry_drops_exactly_the_failed_turn_or_is_refused(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    scripted_model.push(Reply(text("First answer.")), OVERLOADED)
    kernel.execute("%%claude\nFirst question")
    kernel.wait(kernel.start("%%claude\nSecond question"))
    failed = kernel.eval("kandev_nb.last_turn().prompt_uuid")
    scripted_model.push(Reply(text("Second answer, on retry.")))
    run = kernel.wait(kernel.start("%%claude --retry\n"))
    assert run.status == "ok", run.error
    assert kernel.eval("kandev_nb.sessions['default'].launch_options.resume_drops_turn") == failed
    assert kernel.eval("kandev_nb.last_turn().text") == "Second answer, on retry."

    # Two failed turns in a row: retrying the second would drop the first one too.
    scripted_model.push(OVERLOADED, OVERLOADED)
    kernel.wait(kernel.start("%%claude\nThird question"))
    kernel.wait(kernel.start("%%claude\nFourth question"))
    asked = len(scripted_model.main_requests)
    run = kernel.wait(kernel.start("%%claude --retry\n"))
    assert run.status == "error"
    said = f"{run.error} {run.stdout()} {run.reply}"
    assert "refused to resume" in said and "more than that turn" in said and "Nothing was dropped" in said
    assert len(scripted_model.main_requests) == asked  # the model was not asked
    scripted_model.push(Reply(text("Fifth answer.")))  # the session goes on, nothing dropped
    kernel.execute("%%claude\nFifth question")
    sent = json.dumps(scripted_model.main_requests[-1].messages)
    assert "Second answer, on retry." in sent and "Fifth question" in sent


def test_a_session_resumes_from_the_store_where_its_transcript_is_not(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    tmp_path: Path,
) -> None:
    store = tmp_path / "team-transcripts"
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(f"kandev_nb.configure(session_store=kandev_nb.FolderSessionStore({str(store)!r}))")
    scripted_model.push(Reply(text("Noted: MANGO.")), Reply(text("It was MANGO.")))
    kernel.execute("%%claude\nRemember the word MANGO.")
    sid = kernel.eval("kandev_nb.last_turn().session_id")
    assert list(store.glob(f"*/{sid}.jsonl"))
    other = scripted_env(scripted_model, tmp_path / "other-machine")  # another HOME: no transcript there
    kernel.execute(f"kandev_nb.configure(env={other!r})")
    run = kernel.wait(kernel.start(f"%%claude --resume {sid}\nWhich word?"))
    assert run.status == "ok", run.error
    assert kernel.eval("kandev_nb.last_turn().text") == "It was MANGO."
    assert "Remember the word MANGO." in json.dumps(scripted_model.main_requests[-1].messages)
    assert list((tmp_path / "other-machine" / ".claude" / "projects").glob(f"*/{sid}.jsonl"))
