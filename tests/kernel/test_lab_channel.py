"""The JupyterLab extension's channel to a kernel, in a real kernel with the real CLI (issue 37).

The test opens the comm the extension's Claude panel opens (target ``kandev_nb.lab``) as a
frontend does, reads the kernel's State, and answers as the panel does: through the same
broker and payload binding as the card (an Allow carries the digest of the text it showed,
and only the whole payload allows).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from kandev_nb import __version__
from kandev_nb.notebook.lab_messages import PROTOCOL, TARGET
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_queue_budget import touch_then_answer
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel.test_background_turns import attach_frontend
from tests.kernel.test_pending import BACKGROUND, push_write

pytestmark = pytest.mark.timeout(300)


def hello(**settings: Any) -> dict[str, Any]:
    return {"kind": "hello", "protocol": PROTOCOL, "version": __version__, "settings": settings}


def receive(kernel: KernelHarness, comm_id: str, until: Any, timeout: float = 60) -> dict[str, Any]:
    """The first message on `comm_id` (received from now on, or already there) that `until` accepts."""
    end = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < end:
        got = kernel.comms[comm_id]
        for message in got[seen:]:
            if until(message):
                return message
        seen = len(got)
        kernel.pump_for(0.1)
    raise TimeoutError(f"no such message on {comm_id}; last: {kernel.comms[comm_id][-2:]}")


def waiting_state(kernel: KernelHarness, comm_id: str) -> dict[str, Any]:
    return receive(kernel, comm_id, lambda m: m.get("kind") == "state" and m["waiting"])


def test_the_panel_sees_a_waiting_write_whole_and_only_the_whole_allows(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    target = claude_workdir / "hello.txt"
    push_write(scripted_model, target)
    kernel.execute(setup_code(claude_env, claude_workdir))
    comm = kernel.open_comm(TARGET, hello())
    first = receive(kernel, comm, lambda m: m.get("kind") == "state")
    assert first["protocol"] == PROTOCOL and first["version"] == __version__ and first["waiting"] == []

    kernel.execute(BACKGROUND.format(line=""))
    state = waiting_state(kernel, comm)
    item = state["waiting"][0]
    assert item["tool"] == "Write" and item["complete"] is False and item["question"] is False
    assert f"file_path: {target}" in item["whole"] and "content:\nhi\n" in item["whole"], item["whole"]
    assert [t["session"] for t in state["turns"]] == ["default"]

    # the notification's one line is only a summary of a Write: its digest does not allow
    kernel.comm_send(comm, {"kind": "answer", "id": item["id"], "action": "allow", "digest": item["line_digest"]})
    refused = receive(kernel, comm, lambda m: m.get("kind") == "answered")
    assert refused["ok"] is False and "only a summary" in refused["error"], refused
    # a digest of another text (a forged or stale page) does not allow either
    kernel.comm_send(comm, {"kind": "answer", "id": item["id"], "action": "allow", "digest": "0" * 64})
    stale = receive(kernel, comm, lambda m: m.get("kind") == "answered" and m is not refused)
    assert stale["ok"] is False and "not what was shown" in stale["error"], stale
    assert not target.exists()

    # the panel showed it whole: its digest allows, as the card's Allow once
    kernel.comm_send(comm, {"kind": "answer", "id": item["id"], "action": "allow", "digest": item["whole_digest"]})
    allowed = receive(kernel, comm, lambda m: m.get("kind") == "answered" and m["ok"])
    assert allowed["id"] == item["id"]
    kernel.execute("turn = await task")
    assert target.read_text() == "hi\n"
    assert kernel.eval("[r.decision.decided_by for r in turn.tools.values()]") == ["person"]
    done = receive(kernel, comm, lambda m: m.get("kind") == "state" and m["sessions"] and not m["turns"])
    (session,) = done["sessions"]
    assert session["turns_today"] == 1 and session["cost_today_usd"] > 0 and session["running"] is False
    assert session["cost_today_usd"] == pytest.approx(kernel.eval("kandev_nb.last_turn().stats.cost_usd"))


def test_deny_and_stop_from_the_panel(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    first, second = claude_workdir / "a.txt", claude_workdir / "b.txt"
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(first), "content": "a\n"})),
        Reply(tool_use("Write", {"file_path": str(second), "content": "b\n"})),
        Reply(text("Done.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    comm = kernel.open_comm(TARGET, hello())
    kernel.execute(BACKGROUND.format(line=""))
    item = waiting_state(kernel, comm)["waiting"][0]
    kernel.comm_send(comm, {"kind": "answer", "id": item["id"], "action": "deny", "reason": "not there"})
    assert receive(kernel, comm, lambda m: m.get("kind") == "answered")["ok"] is True
    nxt = receive(
        kernel, comm, lambda m: m.get("kind") == "state" and m["waiting"] and m["waiting"][0]["id"] != item["id"]
    )
    assert str(second) in nxt["waiting"][0]["whole"]

    kernel.comm_send(comm, {"kind": "stop", "session": None})
    receive(kernel, comm, lambda m: m.get("kind") == "state" and m["sessions"] and not m["turns"] and not m["waiting"])
    kernel.execute("turn = await task")
    assert kernel.eval("turn.interrupted") is True
    assert not first.exists() and not second.exists()
    denied = kernel.eval("[[r.decision.behavior, r.decision.message] for r in turn.tools.values() if r.decision]")
    assert denied[0] == ["deny", "not there"], denied


def test_lab_settings_are_the_kernel_defaults_and_configure_wins(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    comm = kernel.open_comm(TARGET, hello(defaultMode="acceptEdits", unansweredCard="deny-after", denyAfterSeconds=2))
    receive(kernel, comm, lambda m: m.get("kind") == "state")
    assert kernel.eval("kandev_nb.settings.mode") == "acceptEdits"

    # deny-after 2 s: an unanswered Bash call is denied in 2 s (headless, the default would wait 300 s)
    target = claude_workdir / "late.txt"
    command = f"python3 -c \"open('{target.name}', 'w').close()\""  # acceptEdits asks for it (touch it allows)
    scripted_model.push(Reply(tool_use("Bash", {"command": command})), Reply(text("Done.")))
    started = time.monotonic()
    kernel.execute("%%claude\nTouch late.txt", timeout=120)
    assert time.monotonic() - started < 60 and not target.exists()
    assert kernel.eval("[r.decision.behavior for r in kandev_nb.last_turn().tools.values()]") == ["deny"]

    kernel.execute("kandev_nb.configure(mode='plan')")
    kernel.comm_send(comm, {"kind": "settings", "settings": {"defaultMode": "supervised"}})
    kernel.pump_for(1.0)
    assert kernel.eval("kandev_nb.settings.mode") == "plan"  # configure() in the kernel wins


def test_another_protocol_is_refused_and_a_bad_message_is_dropped(
    kernel: KernelHarness, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    old = kernel.open_comm(TARGET, {"kind": "hello", "protocol": PROTOCOL + 1, "version": "9.9.9"})
    mismatch = receive(kernel, old, lambda m: m.get("kind") == "mismatch")
    assert "9.9.9" in mismatch["error"] and __version__ in mismatch["error"]
    end = time.monotonic() + 10
    while old not in kernel.closed_comms and time.monotonic() < end:
        kernel.pump_for(0.1)
    assert old in kernel.closed_comms

    comm = kernel.open_comm(TARGET, hello())
    receive(kernel, comm, lambda m: m.get("kind") == "state")
    kernel.comm_send(comm, {"kind": "answer", "id": 3, "action": "launch"})  # dropped, logged
    kernel.comm_send(comm, {"kind": "answer", "id": "nope", "action": "deny"})
    gone = receive(kernel, comm, lambda m: m.get("kind") == "answered")
    assert gone == {"kind": "answered", "id": "nope", "ok": False, "error": "this approval is no longer waiting"}


def test_without_kandev_nb_loaded_the_kernel_refuses_the_comm(kernel: KernelHarness) -> None:
    comm = kernel.open_comm(TARGET, hello())
    end = time.monotonic() + 20
    while comm not in kernel.closed_comms and time.monotonic() < end:
        kernel.pump_for(0.1)
    assert comm in kernel.closed_comms and kernel.comms[comm] == []


def test_a_second_hello_changes_no_mode_and_a_closed_comm_is_forgotten(
    kernel: KernelHarness, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    first = kernel.open_comm(TARGET, hello(defaultMode="acceptEdits"))
    receive(kernel, first, lambda m: m.get("kind") == "state")
    assert kernel.eval("kandev_nb.settings.mode") == "acceptEdits"
    kernel.execute("from kandev_nb.notebook.state import current\ncurrent().card_modes['default'] = 'plan'")
    kernel.execute("kandev_nb.settings.mode = 'supervised'")  # as a person's later change would
    second = kernel.open_comm(TARGET, hello(defaultMode="acceptEdits"))  # a reload: the same settings
    receive(kernel, second, lambda m: m.get("kind") == "state")
    assert kernel.eval("kandev_nb.settings.mode") == "supervised"
    assert kernel.eval("current().card_modes") == {"default": "plan"}  # a card's choice for the session stays
    assert kernel.eval("len(__import__('kandev_nb.notebook.lab_channel', fromlist=['c']).channel().comms)") == 2
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_close", {"comm_id": first, "data": {}}))
    kernel.pump_for(1.0)
    assert kernel.eval("len(__import__('kandev_nb.notebook.lab_channel', fromlist=['c']).channel().comms)") == 1


FLEET = "import pandas as pd\nrows = pd.DataFrame({'id': [1, 2, 3]}, index=['a', 'b', 'c'])"


def test_the_panel_lists_a_fleet_answers_its_rows_and_stops_it(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """A background fleet's rows wait for a person: the State lists the fleet (rows by status,
    its cell) and each row's approval (named by row, bound to its fleet); the panel's Allow
    runs that row's Bash call, and StopFleet stops the rest as the board's Stop all does."""
    scripted_model.push(*[answer_per_row(touch_then_answer)] * 12)
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(FLEET)
    attach_frontend(kernel)
    comm = kernel.open_comm(TARGET, hello())
    assert receive(kernel, comm, lambda m: m.get("kind") == "state")["fleets"] == []

    run = kernel.execute(
        "%%claude --over rows -o out --background --concurrency 3 --approval-timeout 120 --fleet lab\n"
        "Handle ticket {id}.",
        timeout=60,
    )
    state = receive(kernel, comm, lambda m: m.get("kind") == "state" and len(m["waiting"]) == 3, timeout=120)
    (fleet,) = state["fleets"]
    assert fleet["name"] == "lab" and fleet["cell"] == run.reply["execution_count"] and fleet["stopping"] is None
    counts = {k: fleet[k] for k in ("total", "done", "running", "waiting", "pending", "error", "stopped", "skipped")}
    assert counts == {
        "total": 3,
        "done": 0,
        "running": 3,
        "waiting": 3,
        "pending": 0,
        "error": 0,
        "stopped": 0,
        "skipped": 0,
    }
    assert fleet["spent_usd"] == 0 and fleet["budget_usd"] is None
    assert sorted(w["row"] for w in state["waiting"]) == ["row 1 of 3", "row 2 of 3", "row 3 of 3"]
    assert {(w["fleet"], w["cell"], w["tool"]) for w in state["waiting"]} == {
        (fleet["id"], run.reply["execution_count"], "Bash")
    }
    assert state["turns"] == [] and state["sessions"] == []  # a fleet's rows are not the notebook's sessions

    item = next(w for w in state["waiting"] if w["row"] == "row 2 of 3")
    assert "touch out-2.txt" in item["whole"], item["whole"]
    kernel.comm_send(comm, {"kind": "answer", "id": item["id"], "action": "allow", "digest": item["whole_digest"]})
    assert receive(kernel, comm, lambda m: m.get("kind") == "answered")["ok"] is True
    one_done = receive(
        kernel, comm, lambda m: m.get("kind") == "state" and m["fleets"] and m["fleets"][0]["done"] == 1, timeout=120
    )
    assert (claude_workdir / "out-2.txt").exists()
    assert [one_done["fleets"][0][k] for k in ("running", "waiting")] == [2, 2]
    assert one_done["fleets"][0]["spent_usd"] > 0

    kernel.comm_send(comm, {"kind": "stop_fleet", "id": "fleet-0"})  # no such fleet: nothing stops
    kernel.comm_send(comm, {"kind": "stop_fleet", "id": fleet["id"]})
    receive(kernel, comm, lambda m: m.get("kind") == "state" and not m["fleets"] and not m["waiting"], timeout=120)
    kernel.execute("result = await kandev_nb.wait()")
    assert kernel.eval("[list(result['status']), list(result['error'].fillna(''))]") == [
        ["stopped", "done", "stopped"],
        ["stopped by you (Stop all)", "", "stopped by you (Stop all)"],
    ]
    assert sorted(p.name for p in claude_workdir.glob("out-*.txt")) == ["out-2.txt"]


def test_stop_every_running_turn_stops_the_fleets_too(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """The palette's "Stop every running turn" (Stop with no session) stops a background
    fleet's rows as its board's Stop all does (old code: only the notebook's sessions; the
    rows kept waiting and running)."""
    scripted_model.push(*[answer_per_row(touch_then_answer)] * 12)
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(FLEET)
    attach_frontend(kernel)
    comm = kernel.open_comm(TARGET, hello())
    kernel.execute(
        "%%claude --over rows -o out --background --concurrency 3 --approval-timeout 120 --fleet lab\n"
        "Handle ticket {id}.",
        timeout=60,
    )
    receive(kernel, comm, lambda m: m.get("kind") == "state" and len(m["waiting"]) == 3, timeout=120)
    kernel.comm_send(comm, {"kind": "stop", "session": None})
    receive(kernel, comm, lambda m: m.get("kind") == "state" and not m["fleets"] and not m["waiting"], timeout=60)
    kernel.execute("result = await kandev_nb.wait()")
    assert kernel.eval("list(result['status'])") == ["stopped", "stopped", "stopped"]
    assert kernel.eval("sorted(set(result['error']))") == ["stopped by you (Stop all)"]
    assert not list(claude_workdir.glob("out-*.txt"))
