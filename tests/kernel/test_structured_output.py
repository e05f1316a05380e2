"""`%%claude --schema NAME -o VAR [--frame]` and `--hooks NAME` in a real kernel, against the
real CLI and the scripted model (the model answers through the CLI's StructuredOutput tool)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import CellRun, KernelHarness

pytestmark = pytest.mark.timeout(300)

TYPES = """
import dataclasses, datetime
from typing import Optional
from pydantic import BaseModel, field_validator

class Person(BaseModel):
    name: str
    age: int

@dataclasses.dataclass
class Point:
    x: float
    y: float
    label: str

class Sale(BaseModel):
    region: str
    units: int
    price: float
    paid: bool
    day: datetime.date
    note: Optional[str] = None

class Adult(BaseModel):
    name: str
    age: int

    @field_validator("age")
    @classmethod
    def grown_up(cls, v: int) -> int:
        if v < 18:
            raise ValueError("must be at least 18")
        return v
"""


def _error_text(run: CellRun) -> str:
    """What a failed cell showed: IPython prints a UsageError on stderr, other errors in `error`."""
    return (str(run.error.get("evalue", "")) if run.error else "") + run.stdout()


def _answer(value: object) -> Reply:
    return Reply(tool_use("StructuredOutput", value))  # type: ignore[arg-type]


def test_models_and_dataclasses_fill_variables_and_lists_become_frames(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(
        _answer({"name": "Ada", "age": 36}),
        _answer({"x": 1.5, "y": -2, "label": "origin-ish"}),
        _answer(
            {
                "items": [
                    {"region": "north", "units": 3, "price": 9.5, "paid": True, "day": "2026-11-02"},
                    {"region": "south", "units": 7, "price": 4.25, "paid": False, "day": "2026-11-03", "note": "late"},
                ]
            }
        ),
        Reply(text("Plain again.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(TYPES)
    kernel.execute("%%claude --schema Person -o ada\nWho wrote the first program?")
    assert kernel.eval("[type(ada).__name__, ada.name, ada.age, kandev_nb.last_turn().output == ada]") == [
        "Person",
        "Ada",
        36,
        True,
    ]
    sent = scripted_model.main_requests[0].body
    tool = next(t for t in sent["tools"] if t["name"] == "StructuredOutput")
    assert set(tool["input_schema"]["properties"]) == {"name", "age"}  # the schema reached the model

    kernel.execute("%%claude --schema Point -o p\nA point please")
    assert kernel.eval("[type(p).__name__, p.x, p.y, p.label]") == ["Point", 1.5, -2.0, "origin-ish"]

    kernel.execute("%%claude --schema Sale --frame -o sales\nThe sales table")
    assert kernel.eval("type(sales).__name__") == "DataFrame"
    assert kernel.eval("{c: str(t) for c, t in sales.dtypes.items()}") == {
        "region": "string",
        "units": "Int64",
        "price": "Float64",
        "paid": "boolean",
        "day": "datetime64[ns]",
        "note": "string",
    }
    assert kernel.eval("[sales.units.sum(), sales.note.isna().tolist()]") == [10, [True, False]]
    sent = scripted_model.main_requests[2].body
    tool = next(t for t in sent["tools"] if t["name"] == "StructuredOutput")
    assert tool["input_schema"]["type"] == "object" and tool["input_schema"]["properties"]["items"]["type"] == "array"

    # A plain cell afterwards: the CLI restarts without the schema and resumes the conversation.
    kernel.execute("%%claude\nThanks")
    last = scripted_model.main_requests[-1].body
    assert not any(t["name"] == "StructuredOutput" for t in last["tools"])
    assert "Who wrote the first program?" in repr(last["messages"])


def test_an_invalid_answer_fails_in_one_line_keeps_the_raw_answer_and_retry_asks_again(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(_answer({"name": "Tim", "age": 9}), _answer({"name": "Tom", "age": 40}))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(TYPES)
    run = kernel.wait(kernel.start("%%claude --schema Adult -o grown\nAn adult, please"))
    assert run.status == "error"
    message = _error_text(run).strip()
    assert "1 validation error for Adult: age: Value error, must be at least 18" in message
    assert "\n" not in message.split("UsageError: ", 1)[-1]  # one line
    assert kernel.eval("kandev_nb.last_turn().output_raw") == {"name": "Tim", "age": 9}
    assert kernel.eval("'grown' in globals()") is False

    kernel.execute("%%claude --retry --schema Adult -o grown\n")
    assert kernel.eval("[grown.name, grown.age]") == ["Tom", 40]
    assert "An adult, please" in scripted_model.main_requests[-1].last_user_text()


def test_no_structured_answer_is_a_clear_error(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    # The CLI nudges the model once after an answer without the tool; both get plain text.
    scripted_model.push(Reply(text("I would rather not.")), Reply(text("Still no.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(TYPES)
    run = kernel.wait(kernel.start("%%claude --schema Person -o who\nWho?"))
    assert run.status == "error"
    assert (
        "no structured answer for Person: the model answered without calling the StructuredOutput tool"
        in _error_text(run)
    )
    for cell, message in [
        ("%%claude -o x\nhi", "need --schema"),
        ("%%claude --schema Nope -o x\nhi", "Nope"),
        ("%%claude --schema datetime -o x\nhi", "cannot be a --schema"),
    ]:
        bad = kernel.wait(kernel.start(cell))
        assert bad.status == "error" and message in _error_text(bad)


def test_hooks_option_denies_in_the_cell_and_the_card_names_the_hook(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "rm -rf data"})),
        Reply(text("Not allowed, fine.")),
        Reply(tool_use("Bash", {"command": "rm -rf data"})),
        Reply(text("Still not allowed.")),
        Reply(tool_use("Bash", {"command": "touch x.txt"})),
        Reply(text("Broken hook.")),
    )
    (claude_workdir / "data").mkdir()
    kernel.execute(setup_code(claude_env, claude_workdir, allow_root_bypass=True))
    kernel.execute(
        "def no_rm(input_data, tool_use_id, context):\n"
        "    if 'rm ' in input_data['tool_input'].get('command', ''):\n"
        "        return {'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'permissionDecision': 'deny',\n"
        "                'permissionDecisionReason': 'rm is off limits'}}\n"
        "    return {}\n"
        "guard = {'PreToolUse': [kandev_nb.HookMatcher(matcher='Bash', hooks=[no_rm])]}\n"
        "def broken(input_data, tool_use_id, context):\n"
        "    raise KeyError('rules')\n"
    )
    run = kernel.execute("%%claude --mode autonomous --hooks guard\nclean up data/")
    assert (claude_workdir / "data").is_dir()
    html = "".join(str(h) for h in run.data("text/html"))
    assert "denied by <b>hook no_rm</b>" in html or "denied by hook no_rm" in html
    assert "rm is off limits" in html
    # A launch option change replaces the CLI process (and the Session); the guard stays.
    kernel.execute("%%claude --mode autonomous --max-turns 7\nclean up data/ again")
    assert (claude_workdir / "data").is_dir()
    assert "rm is off limits" in repr(scripted_model.main_requests[-1].body["messages"][-1])

    kernel.execute("kandev_nb.configure(hooks={'PreToolUse': [kandev_nb.HookMatcher(hooks=[broken])]})")
    run = kernel.execute("%%claude --mode autonomous --session other\nmake x.txt")
    assert not (claude_workdir / "x.txt").exists()
    assert "HookWarning: hook broken (PreToolUse) failed: KeyError: 'rules'. The call was denied." in run.stdout()
