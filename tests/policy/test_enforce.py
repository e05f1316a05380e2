"""The deny side of a policy holds in every mode: kandev-nb's PreToolUse hook (real CLI).

On the old main, a policy was asked only on can_use_tool: in acceptEdits the CLI ran
``rm data.csv`` unasked, and in autonomous mode nothing was asked at all, so a deny rule
deleted nothing only when the CLI happened to ask.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.hooks import HookMatcher
from kandev_nb.agent.permissions import Rules
from kandev_nb.policy.enforce import LabelledPolicy, check
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker

pytestmark = pytest.mark.timeout(180)

RM_RULE = "Bash(rm*)"  # the old matcher's spelling; Bash(rm:*) once the rule parser (wt-rules) is merged


def _rm_script(scripted_model: ScriptedModelServer) -> None:
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "rm data.csv", "description": "delete the data"})),
        Reply(text("done")),
    )


def _tool_results(scripted_model: ScriptedModelServer) -> list[dict[str, Any]]:
    """The tool_result blocks of the model's requests (what the model was told)."""
    found = []
    for request in scripted_model.main_requests:
        for message in request.messages:
            content = message.get("content")
            if isinstance(content, list):
                found += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return found


def _policy_denials(events: list[ev.AgentEvent]) -> list[ev.PermissionDecided]:
    return [
        e for e in events if isinstance(e, ev.PermissionDecided) and e.decided_by == "policy" and e.behavior == "deny"
    ]


@pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197", "2.1.118"], indirect=True)
@pytest.mark.parametrize("mode", ["acceptEdits", "autonomous"])
async def test_a_session_deny_rule_stops_rm_in_modes_that_never_ask(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path, mode: str
) -> None:
    (claude_workdir / "data.csv").write_text("a,b\n1,2\n")
    _rm_script(scripted_model)
    asked: list[str] = []
    session = make_session(mode=mode, allow_root_bypass=True, approve=Rules(deny=[RM_RULE]))
    turn = await session.run("clean up", consumers=[lambda e: asked.append(e.type)])
    assert (claude_workdir / "data.csv").read_text() == "a,b\n1,2\n"  # old main: deleted
    assert "permission_request" not in asked  # nobody was asked: the hook decided
    [denial] = _policy_denials(turn.events)
    assert denial.rule == RM_RULE and denial.who == f"your policy rule {RM_RULE}"
    assert denial.message == f"Denied by your policy rule {RM_RULE}."
    [result] = _tool_results(scripted_model)
    assert result["is_error"] is True and f"your policy rule {RM_RULE}" in json.dumps(result["content"])
    record = next(iter(turn.tools.values()))
    assert record.decision is not None and record.decision.decided_by == "policy"


async def test_a_turn_policy_denies_in_accept_edits(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    (claude_workdir / "data.csv").write_text("x\n")
    _rm_script(scripted_model)
    session = make_session(mode="acceptEdits")
    cell_policy = LabelledPolicy(Rules(deny=[RM_RULE]), "this cell's policy (--approve rules)")
    turn = await session.run("clean up", approve=cell_policy)
    assert (claude_workdir / "data.csv").exists()  # old main: deleted
    [denial] = _policy_denials(turn.events)
    assert denial.message == f"Denied by this cell's policy (--approve rules) rule {RM_RULE}."
    assert "this cell's policy (--approve rules)" in json.dumps(_tool_results(scripted_model))


async def test_allow_rules_keep_answering_can_use_tool_and_unmatched_calls_run(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "mkdir made", "description": "d"})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "w.txt"), "content": "w\n"})),
        Reply(text("done")),
    )
    session = make_session(approve=Rules(allow=["Bash(mkdir*)", "Write"], deny=[RM_RULE]))
    turn = await session.run("go")
    assert (claude_workdir / "made").is_dir() and (claude_workdir / "w.txt").read_text() == "w\n"
    assert {r.decision.decided_by for r in turn.tools.values() if r.decision} == {"policy"}
    assert not _policy_denials(turn.events)


async def test_a_policy_that_raises_makes_the_cli_ask_a_person_even_in_accept_edits(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    def broken(tool_name: str, tool_input: dict[str, Any]) -> None:
        raise RuntimeError("no rules file")

    (claude_workdir / "data.csv").write_text("x\n")
    _rm_script(scripted_model)
    asked: list[ev.PermissionRequest] = []

    def deny(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked.append(event)
            event.approval.deny("not now")

    session = make_session(mode="acceptEdits", approve=broken)
    await session.run("clean up", consumers=[deny])
    assert [r.input["command"] for r in asked] == ["rm data.csv"]  # the hook said "ask"
    assert "RuntimeError: no rules file" in str(asked[0].reason)
    assert (claude_workdir / "data.csv").exists()


@pytest.mark.parametrize("matcher", [None, "*", "", ".*"])
async def test_every_all_tools_matcher_spelling_reaches_read_and_bash(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path, matcher: str | None
) -> None:
    seen: list[str] = []

    def hook(data: dict[str, Any], tool_use_id: str | None, context: dict[str, Any]) -> dict[str, Any]:
        seen.append(str(data.get("tool_name")))
        return {}

    (claude_workdir / "a.txt").write_text("x")
    scripted_model.push(
        Reply(tool_use("Read", {"file_path": str(claude_workdir / "a.txt")})),
        Reply(tool_use("Bash", {"command": "echo hi", "description": "e"})),
        Reply(text("done")),
    )
    await make_session(hooks={"PreToolUse": [HookMatcher(matcher=matcher, hooks=[hook])]}).run("go")
    assert seen == ["Read", "Bash"]


def test_check_names_the_rule_and_gives_no_opinion_otherwise() -> None:
    rules = Rules(deny=["Bash(rm*)", "WebFetch"])
    verdict = check("Bash", {"command": "rm -rf data"}, guard=None, policies=[(rules, "your policy")])
    assert verdict is not None and (verdict.decision, verdict.rule) == ("deny", "Bash(rm*)")
    assert check("Bash", {"command": "ls"}, guard=None, policies=[(rules, "your policy")]) is None
    guarded = check("Write", {"file_path": "n.ipynb"}, guard=lambda n, i: "open in a tab", policies=[])
    assert guarded is not None and guarded.source == "guard" and guarded.reason == "open in a tab"
    assert check("Bash", {"command": "x"}, guard=lambda n, i: "never for Bash", policies=[]) is None

    def plain(tool_name: str, tool_input: dict[str, Any]) -> str:
        return "deny"

    named = check("Bash", {"command": "ls"}, guard=None, policies=[(plain, "this turn's policy")])
    assert named is not None and named.reason.startswith("Denied by this turn's policy (")


def test_the_policys_plain_deny_rules_go_to_disallowed_tools() -> None:
    from kandev_nb.agent.config import SessionConfig

    class WithCliRules:
        def __call__(self, tool_name: str, tool_input: dict[str, Any]) -> None:
            return None

        def cli_disallowed_tools(self) -> list[str]:
            return ["Bash(rm:*)", "WebFetch"]

    options = SessionConfig(approve=WithCliRules(), disallowed_tools=("WebFetch",)).launch_options()
    assert options.disallowed_tools == ("WebFetch", "Bash(rm:*)")


async def test_a_can_use_tool_denial_names_the_cells_policy_and_its_rule() -> None:
    """Issue 28.8: not "the notebook's approval policy", but whose policy and which rule."""
    from tests.approvals.test_broker import Harness

    h = Harness()
    h.broker.begin_turn(
        LabelledPolicy(Rules(deny=["Bash(git push*)"]), "this cell's policy (--approve ci)"), has_timeout=False
    )
    h.ask("r1", "Bash", {"command": "git push origin main"})
    await h.settle()
    [decided] = h.of(ev.PermissionDecided)
    assert decided.message == "Denied by this cell's policy (--approve ci) rule Bash(git push*)."
    assert (decided.rule, decided.decided_by) == ("Bash(git push*)", "policy")
    assert h.answers[0][1]["message"] == decided.message  # what the model reads


async def test_the_hook_answer_denies_reports_once_and_lets_the_rest_through() -> None:
    from tests.approvals.test_broker import Harness

    h = Harness(policy=Rules(deny=["Bash(rm*)"]))
    hook = {"callback_id": "kandev_policy", "tool_use_id": "tu-9", "input": {"tool_name": "Bash", "cwd": "/p"}}
    out = h.broker.pre_tool_use({**hook, "input": {**hook["input"], "tool_input": {"command": "rm -rf d"}}}, None)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == "Denied by your policy rule Bash(rm*)."
    assert "tu-9" in h.broker.asked and [e.tool_use_id for e in h.of(ev.PermissionDecided)] == ["tu-9"]
    assert h.broker.pre_tool_use({**hook, "input": {**hook["input"], "tool_input": {"command": "ls"}}}, None) == {}
