"""Re-record ``notebooks/data/fix_mean.jsonl``, the run that ``notebooks/replay.ipynb`` replays.

    python notebooks/data/record_replay.py

A real Claude Code CLI (the one kandev-nb finds first) runs two turns against the scripted
model, in a throwaway project, through :func:`kandev_nb.wire.recorder.recording_factory`:

1. "What does stats.py do?": a Read (no approval needed) and a Markdown answer.
2. "Fix the bug in mean() and run the tests.": an Edit (approval: allowed, shown as a diff),
   a Bash ``python3 -m pytest -q`` (approval: allowed) and a short answer.

Temporary paths are rewritten to ``/home/user/project`` and ``/home/user``, so the
committed file does not change with the machine.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from kandev_nb import Session
from kandev_nb.agent import events as ev
from kandev_nb.testing import (
    Reply,
    ScriptedModelServer,
    Usage,
    scripted_env,
    text,
    thinking,
    tool_use,
)
from kandev_nb.wire.recorder import recording_factory

OUT = Path(__file__).with_name("fix_mean.jsonl")
PROJECT, HOME = "/home/user/project", "/home/user"

STATS = '''def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    return sum(values) / (len(values) - 1)
'''
TEST = '''from stats import mean


def test_mean():
    assert mean([1, 2, 3]) == 2
'''

ANSWER = """`stats.py` has one function, `mean(values)`, meant to return the arithmetic mean:

```python
def mean(values):
    return sum(values) / (len(values) - 1)
```

It divides by **`len(values) - 1`** instead of `len(values)`, so `mean([1, 2, 3])` is `3.0`,
not `2.0`, and a one-element list divides by zero. `test_stats.py` catches it."""


def allow_all(event: ev.AgentEvent) -> None:
    """Click Allow on every approval, as the person at the notebook did."""
    if isinstance(event, ev.PermissionRequest):
        event.approval.allow()


async def main() -> None:
    project = Path(tempfile.mkdtemp(prefix="kandev-replay-"))
    home = Path(tempfile.mkdtemp(prefix="kandev-replay-home-"))
    (project / "stats.py").write_text(STATS)
    (project / "test_stats.py").write_text(TEST)
    model = ScriptedModelServer([
        Reply(text("I'll read it."), tool_use("Read", {"file_path": f"{project}/stats.py"}),
              usage=Usage(input_tokens=2400, output_tokens=60, cache_creation_input_tokens=9000)),
        Reply(text(ANSWER), usage=Usage(input_tokens=2600, output_tokens=180, cache_read_input_tokens=9000)),
        Reply(thinking("The divisor is off by one; fix it, then run the test."),
              tool_use("Edit", {"file_path": f"{project}/stats.py",
                                "old_string": "return sum(values) / (len(values) - 1)",
                                "new_string": "return sum(values) / len(values)"}),
              usage=Usage(input_tokens=2900, output_tokens=120, cache_read_input_tokens=9000)),
        Reply(tool_use("Bash", {"command": "python3 -m pytest -q -p no:cacheprovider test_stats.py",
                                "description": "Run the tests"}),
              usage=Usage(input_tokens=3100, output_tokens=50, cache_read_input_tokens=9000)),
        Reply(text("Fixed: `mean` now divides by `len(values)`, and `test_stats.py` passes."),
              usage=Usage(input_tokens=3300, output_tokens=40, cache_read_input_tokens=9000)),
    ]).start()
    rewrite = {str(project): PROJECT, str(home): HOME, model.url: "http://127.0.0.1:8000"}
    session = Session(cwd=project, env=scripted_env(model, home), model="claude-sonnet-4-5",
                      transport_factory=recording_factory(OUT, rewrite=rewrite))
    try:
        first = await session.run("What does stats.py do?")
        second = await session.run("Fix the bug in mean() and run the tests.", consumers=[allow_all])
    finally:
        await session.close()
        model.stop()
    for turn in (first, second):
        print(turn, [(r.call.tool_name, r.status) for r in turn.tools.values()])
    print((project / "stats.py").read_text())
    shutil.rmtree(project, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
