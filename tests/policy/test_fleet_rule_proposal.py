"""The rule "Allow for all rows" proposes (kandev_nb/fleet/proposal.py, issue 33 point 1), and the
fleet queue that gives it, checked with the policy's own matcher (``rule_matches``, ``Rules``).

On the old main, "Allow for all rows" on row 0's ``python3 tools/profile.py data/f00.csv`` gave
``Bash(python3 tools/profile.py data/f00.csv)``: every other row, naming its own file, asked again.

Decided here: ``Bash(python3 tools/profile.py:*)`` covers that script with any arguments, and not
another script of the same folder (``python3 tools/other.py``): the rule stops at the first word
that holds a row's value, and the script's name is not one.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.permissions import Approval
from kandev_nb.agent.tools import normalize_tool_call
from kandev_nb.fleet.proposal import Call, TooBroadError, check_rules, propose, rule_label, too_broad
from kandev_nb.fleet.queue import ApprovalQueue
from kandev_nb.policy import rule_matches

CWD = "/tmp/fleet-rows"
OUTSIDE = ["rm -rf /", "python3 -c 'import os; os.remove(\"x\")'", "python3 tools/other.py data/f00.csv", "curl x.sh"]
"""Commands no proposed prefix rule below may cover."""


def _proposed(commands: list[str], values: list[list[str]], *, with_others: bool = True) -> list[Any]:
    """Each row's proposal, from its values and (with `with_others`) the other rows' commands."""
    calls = [Call("Bash", {"command": c}, CWD) for c in commands]
    out = []
    for i, (command, mine) in enumerate(zip(commands, values, strict=True)):
        others = [c for j, c in enumerate(calls) if j != i] if with_others else []
        out.append(propose("Bash", {"command": command}, cwd=CWD, values=mine, others=others))
    return out


def _covers(rule: str, command: str) -> bool:
    return rule_matches(rule, "Bash", {"command": command}, cwd=CWD)


ROWS = [
    pytest.param(
        [f"python3 tools/profile.py data/f{i:02d}.csv" for i in range(3)],
        [[f"f{i:02d}"] for i in range(3)],
        "Bash(python3 tools/profile.py:*)",
        id="a path",
    ),
    pytest.param(
        [f"python3 tools/sim.py --seed {n} --out runs" for n in (3, 17, 250)],
        [["3"], ["17"], ["250"]],
        "Bash(python3 tools/sim.py --seed:*)",
        id="a number",
    ),
    pytest.param(
        ["python3 tools/greet.py 'name one'", "python3 tools/greet.py 'name two'", "python3 tools/greet.py 'name 3'"],
        [["name one"], ["name two"], ["name 3"]],
        "Bash(python3 tools/greet.py:*)",
        id="a quoted name",
    ),
    pytest.param(
        [f"wc -l data/report-{n}.txt" for n in (1, 2, 3)],
        [["1"], ["2"], ["3"]],
        "Bash(wc -l:*)",
        id="a number in a file name",
    ),
]


@pytest.mark.parametrize(("commands", "values", "expected"), ROWS)
@pytest.mark.parametrize("with_others", [True, False], ids=["values and waiting rows", "values only"])
def test_the_rule_covers_what_differs_between_rows_and_nothing_more(
    commands: list[str], values: list[list[str]], expected: str, with_others: bool
) -> None:
    for proposal in _proposed(commands, values, with_others=with_others):
        assert proposal.rules == (expected,) and proposal.kind == "prefix" and not proposal.too_broad
        assert all(_covers(expected, c) for c in commands)  # every row's command, by the real matcher
        assert not any(_covers(expected, c) for c in OUTSIDE)
        for command in commands:  # and nothing chained after it
            assert not _covers(expected, f"{command}; rm -rf /")
            assert not _covers(expected, f"{command} && curl x.sh | sh")
            assert not _covers(expected, f"{command} $(rm -rf ~)")


def test_the_waiting_rows_alone_say_where_the_rule_stops() -> None:
    """No prompt value in the command (the frame's ints, the files zero-padded): the other rows'
    commands of the same program differ at the file."""
    commands = ["python3 tools/profile.py data/f00.csv", "python3 tools/profile.py data/f01.csv"]
    proposal = _proposed(commands, [["0"], ["1"]])[0]
    assert (
        proposal.rules == ("Bash(python3 tools/profile.py:*)",) and "differs between the waiting rows" in proposal.why
    )
    alone = _proposed(commands[:1], [["0"]])[0]  # nothing differs yet: the exact command
    assert alone.rules == ("Bash(python3 tools/profile.py data/f00.csv)",) and alone.kind == "exact"


def test_a_value_inside_a_longer_word_does_not_stop_the_rule() -> None:
    proposal = propose("Bash", {"command": "python3 tools/profile2.py data/x.csv"}, cwd=CWD, values=["2"])
    assert proposal.rules == ("Bash(python3 tools/profile2.py data/x.csv)",)


@pytest.mark.parametrize(
    ("commands", "what"),
    [
        pytest.param([f"cd data && wc -l f0{i}.csv" for i in range(3)], "a list of commands", id="compound"),
        pytest.param([f"cat data/f0{i}.csv | wc -l" for i in range(3)], "a pipe", id="pipe"),
        pytest.param([f"echo $(wc -l data/f0{i}.csv)" for i in range(3)], "a command substitution", id="substitution"),
    ],
)
def test_a_command_a_prefix_rule_never_covers_gets_its_exact_commands_and_says_why(
    commands: list[str], what: str
) -> None:
    proposals = _proposed(commands, [[f"f0{i}"] for i in range(3)])
    for i, proposal in enumerate(proposals):
        assert proposal.kind == "parts" and what in proposal.why and "exactly as written" in proposal.why
        assert not any(r.endswith(":*)") for r in proposal.rules)
        assert len(proposal.rules) > 1 and not any(_covers(r, commands[i]) for r in proposal.rules)  # one alone: no
        ok = check_rules(proposal.rules, "allow", Call("Bash", {"command": commands[i]}, CWD))
        assert ok.error == "" and not ok.too_broad  # together they allow this row's command ...
        others = [c for j, c in enumerate(commands) if j != i]
        for other in others:  # ... and not another row's, nor anything else
            assert check_rules(proposal.rules, "allow", Call("Bash", {"command": other}, CWD)).error
        assert check_rules(proposal.rules, "allow", Call("Bash", {"command": "rm -rf /"}, CWD)).error
    # the prefix rule a string comparison would offer does not cover it: the matcher refuses it
    first_word = commands[0].split()[0]
    assert not _covers(f"Bash({first_word}:*)", commands[0])


def test_a_command_no_rule_can_allow_gets_none_and_deny_gets_the_exact_command() -> None:
    proposal = propose("Bash", {"command": "$TOOL data/f00.csv"}, cwd=CWD, values=["f00"])
    assert proposal.rules == () and proposal.kind == "none" and "row by row" in proposal.why
    assert proposal.deny_rules == ("Bash($TOOL data/f00.csv)",)
    denied = check_rules(proposal.deny_rules, "deny", Call("Bash", {"command": "$TOOL data/f00.csv"}, CWD))
    assert denied.error == ""


def test_a_redirection_gets_the_exact_command_with_it() -> None:
    proposal = propose("Bash", {"command": "python3 tools/p.py f00 > out/f00.txt"}, cwd=CWD, values=["f00"])
    assert proposal.rules == ("Bash(python3 tools/p.py f00 > out/f00.txt)",) and "redirect" in proposal.why
    assert _covers(proposal.rules[0], "python3 tools/p.py f00 > out/f00.txt")
    assert not _covers(proposal.rules[0], "python3 tools/p.py f00 > ~/.bashrc")


@pytest.mark.parametrize(
    ("command", "values", "rule"),
    [
        ("python3 data/f00.py", ["f00"], "Bash(python3:*)"),
        ("python3 -c 'print(7)'", ["7"], "Bash(python3 -c:*)"),
        ("bash scripts/f00.sh", ["scripts/f00.sh"], "Bash(bash:*)"),
        ("rm data/f00.csv", ["f00"], "Bash(rm:*)"),
        ("sudo tools/f00", ["f00"], "Bash(sudo:*)"),  # the value in the command word after a wrapper
    ],
)
def test_a_proposal_too_broad_to_give_with_one_click_is_flagged(command: str, values: list[str], rule: str) -> None:
    proposal = propose("Bash", {"command": command}, cwd=CWD, values=values)
    assert proposal.rules == (rule,)
    assert bool(proposal.too_broad) == rule.endswith(":*)"), proposal


@pytest.mark.parametrize(
    "rule",
    [
        "Bash",
        "Bash(*)",
        "Bash(python3:*)",
        "Bash(python3 -c:*)",
        "Bash(python3 -u:*)",
        "Bash(python3 *)",
        "Bash(sh:*)",
        "Bash(bash:*)",
        "Bash(bash -c:*)",
        "Bash(node -e:*)",
        "Bash(env python3:*)",
        "Bash(sudo:*)",
        "Bash(timeout 5:*)",
        "Bash(uv run:*)",
        "Bash(rm:*)",
        "Bash(git:*)",
        "Edit",
        "Edit(**)",
        "Edit(*.py)",
        "Edit(./**)",
        "Write(/**)",
        "Read(//tmp/**)",
        f"Edit(/{CWD}/**)",
        "WebFetch(domain:*)",
    ],
)
def test_too_broad_rules(rule: str) -> None:
    assert too_broad([rule], CWD).startswith(rule)


@pytest.mark.parametrize(
    "rule",
    [
        "Bash(python3 tools/profile.py:*)",
        "Bash(python3 -m pytest:*)",
        "Bash(sh scripts/run.sh:*)",
        "Bash(git status:*)",
        "Bash(touch:*)",
        "Bash(rm -rf data/f00)",
        "Edit(out/**)",
        "Edit(./report-*.md)",
        f"Edit(/{CWD}/out/**)",
        "WebFetch(domain:example.com)",
        "mcp__kernel__read_notebook",
    ],
)
def test_rules_not_too_broad(rule: str) -> None:
    assert too_broad([rule], CWD) == ""


def test_file_tools_get_the_folder_the_rows_share_from_each_rows_own_folder(tmp_path: Path) -> None:
    """Rows in their own worktrees (different cwds) share one relative rule."""
    rows = [tmp_path / f"tree-{i}" for i in range(3)]
    calls = [
        Call("Write", {"file_path": str(r / "out" / f"f0{i}" / "report.md"), "content": "x"}, str(r))
        for i, r in enumerate(rows)
    ]
    proposals = [
        propose(c.tool_name, c.tool_input, cwd=c.cwd, values=[f"f0{i}"], others=[o for o in calls if o is not c])
        for i, c in enumerate(calls)
    ]
    assert {p.rules for p in proposals} == {("Edit(out/**)",)} and not any(p.too_broad for p in proposals)
    for call in calls:  # by the matcher, relative to each row's own folder
        assert rule_matches("Edit(out/**)", call.tool_name, dict(call.tool_input), cwd=call.cwd)
        assert rule_matches("Edit(out/**)", "Edit", {"file_path": str(Path(call.cwd) / "out/x.py")}, cwd=call.cwd)
        for outside in (".git/config", "conftest.py", "src/out/x.py"):
            assert not rule_matches("Edit(out/**)", "Write", {"file_path": str(Path(call.cwd) / outside)}, cwd=call.cwd)
    in_folder = propose("Write", {"file_path": str(rows[0] / "report-f00.md")}, cwd=str(rows[0]), values=["f00"])
    assert in_folder.rules == ("Edit(./report-*.md)",) and not in_folder.too_broad
    whole = propose("Write", {"file_path": str(rows[0] / "notes.md")}, cwd=str(rows[0]), values=["f00"])
    assert whole.rules == ("Edit(./**)",) and whole.too_broad  # the whole working folder: a second click


def test_check_rules_reads_a_persons_rule_with_the_matcher() -> None:
    call = Call("Bash", {"command": "python3 tools/profile.py data/f00.csv"}, CWD)
    assert check_rules("Bash(python3 tools/profile.py:*)", "allow", call).error == ""
    assert "does not allow this row's request" in check_rules("Bash(python3 tools/other.py:*)", "allow", call).error
    assert "unbalanced" in check_rules("Bash(python3:*", "allow", call).error
    assert check_rules("Bash(python3:*)", "allow", call).too_broad
    assert check_rules("Bash(python3:*)", "deny", call).too_broad == ""  # a broad deny needs no second click
    assert rule_label(("Bash(python3 tools/profile.py:*)",)) == "`python3 tools/profile.py …`"


# -- the queue -------------------------------------------------------------------------------------

_ids = itertools.count()


def _event(tool: str, tool_input: dict[str, Any]) -> ev.PermissionRequest:
    n = next(_ids)
    approval = Approval(f"req-{n}", tool, tool_input, tool_use_id=f"toolu_{n}", cwd=CWD)
    return ev.PermissionRequest(
        request_id=approval.request_id,
        tool_name=tool,
        tool_use_id=approval.tool_use_id,
        input=tool_input,
        normalized=normalize_tool_call(tool, tool_input),
        approval=approval,
    )


def _queue(commands: list[str]) -> tuple[ApprovalQueue, list[ev.PermissionRequest]]:
    queue = ApprovalQueue(row_values={i: (f"f{i:02d}",) for i in range(len(commands))})
    events = [_event("Bash", {"command": c, "description": "profile"}) for c in commands]
    for i, event in enumerate(events):
        queue.offer(i, i + 1, len(commands), event, CWD)
    return queue, events


async def test_one_allow_for_all_rows_answers_every_row_that_names_its_own_file() -> None:
    """Fails on the old code: it gave the exact command and answered no other row."""
    queue, events = _queue([f"python3 tools/profile.py data/f{i:02d}.csv" for i in range(5)])
    head = queue.head
    assert head is not None and head.row == "row 1 of 5"
    assert queue.rule_for(head) == "Bash(python3 tools/profile.py:*)"
    assert queue.rows_answered(["Bash(python3 tools/profile.py:*)"], "allow") == 5
    assert queue.allow_all(head) == "Bash(python3 tools/profile.py:*)"
    await asyncio.sleep(0)
    assert queue.pending == [] and [r.rule for r in queue.rules] == ["Bash(python3 tools/profile.py:*)"]
    decisions = [e.approval.decision for e in events]
    assert all(d is not None and d.behavior == "allow" for d in decisions)
    assert [d.decided_by for d in decisions if d] == ["person"] + ["policy"] * 4
    late = _event("Bash", {"command": "python3 tools/profile.py data/f09.csv"})  # a row asking later
    assert queue.offer(9, 10, 10, late, CWD) is None and late.approval.decision is not None
    other = _event("Bash", {"command": "python3 tools/other.py data/f09.csv"})
    assert queue.offer(9, 10, 10, other, CWD) is not None  # still asked


async def test_a_too_broad_rule_needs_confirm_and_a_rule_must_answer_its_own_row() -> None:
    queue, events = _queue([f"python3 data/f{i:02d}.py" for i in range(3)])
    head = queue.head
    assert head is not None and queue.propose(head).too_broad
    with pytest.raises(TooBroadError, match="too broad"):
        queue.allow_all(head)
    with pytest.raises(ValueError, match="does not allow this row's request"):
        queue.allow_all(head, "Bash(python3 tools/profile.py:*)")
    assert queue.rules == [] and all(e.approval.decision is None for e in events)  # nothing decided
    assert queue.rows_answered(["Bash(python3:*)"], "allow") == 3
    assert queue.allow_all(head, "Bash(python3:*)", confirm=True) == "Bash(python3:*)"
    await asyncio.sleep(0)
    assert all(e.approval.decision is not None for e in events)
    with pytest.raises(RuntimeError, match="already answered"):
        queue.allow_all(head)


async def test_deny_for_all_rows_counts_with_the_deny_matcher() -> None:
    queue, events = _queue(["rm data/f00.csv", "nice rm data/f01.csv", "rm data/f02.csv; ls"])
    head = queue.head
    assert head is not None
    assert queue.rows_answered(["Bash(rm:*)"], "deny") == 3  # a deny sees through nice and lists
    assert queue.rows_answered(["Bash(rm:*)"], "allow") == 1
    assert queue.deny_all(head, "no removing", rule="Bash(rm:*)") == "Bash(rm:*)"
    await asyncio.sleep(0)
    assert [e.approval.decision.behavior for e in events if e.approval.decision] == ["deny"] * 3
    assert events[0].approval.decision is not None and events[0].approval.decision.message == "no removing"


def test_a_value_every_waiting_row_shares_is_not_where_the_rule_stops() -> None:
    """Row 1's id is 1, and every row runs ``head -n 1``: the rule stops at the file, not at ``1``."""
    commands = [f"head -n 1 data/f{i:02d}.csv" for i in range(1, 4)]
    proposals = _proposed(commands, [[str(i), f"f{i:02d}"] for i in range(1, 4)])
    assert {p.rules for p in proposals} == {("Bash(head -n 1:*)",)}
    assert not _covers("Bash(head -n 1:*)", "head -n 1000000 /etc/shadow")
