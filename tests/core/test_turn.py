from __future__ import annotations

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.turn import Turn, compact_events


def _call(tool_id: str) -> ev.ToolCall:
    payload = t.normalize_tool_call("Read", {"file_path": "a.py"})
    return ev.ToolCall(tool_call_id=tool_id, tool_name="Read", title="a.py", normalized=payload)


def test_compact_merges_text_runs_per_thread_only() -> None:
    events: list[ev.AgentEvent] = [
        ev.MessageChunk(text="Hel"),
        ev.MessageChunk(text="lo"),
        ev.Reasoning(text="hm"),
        ev.Reasoning(text="m"),
        _call("t1"),
        ev.MessageChunk(text="sub", parent_tool_use_id="t1"),
        ev.MessageChunk(text="!"),
        ev.MessageChunk(text="?"),
    ]
    out = compact_events(events)
    assert [(type(e).__name__, getattr(e, "text", None)) for e in out] == [
        ("MessageChunk", "Hello"),
        ("Reasoning", "hmm"),
        ("ToolCall", None),
        ("MessageChunk", "sub"),
        ("MessageChunk", "!?"),
    ]


def test_finished_turn_keeps_text_and_fewer_events() -> None:
    turn = Turn(prompt="p")
    for i in range(500):
        turn.add(ev.MessageChunk(text=f"{i} "))
    turn.add(_call("t1"))
    turn.add(ev.MessageChunk(text="after"))
    turn.add(ev.Complete(stats=ev.TurnStats(result_subtype="success")))
    assert turn.text == "".join(f"{i} " for i in range(500)) + "\n\nafter"
    assert len(turn.events) == 4
