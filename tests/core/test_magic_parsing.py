from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from kandev_nb.notebook.magic import PromptError, interpolate, parse_options, transform_cell


def test_transform_makes_a_top_level_await() -> None:
    out = transform_cell(["%%claude --mode plan\n", "Fix {thing}\n", "now\n"])
    assert out == ["await __import__('kandev_nb.notebook.magic').notebook.magic.run_cell('--mode plan', 'Fix {thing}\\nnow\\n');\n"]


def test_transform_leaves_other_cells_and_help_alone() -> None:
    assert transform_cell(["print(1)\n"]) == ["print(1)\n"]
    assert transform_cell(["%%claude?\n"]) == ["%%claude?\n"]
    assert transform_cell(["%%claude_stats\n"]) == ["%%claude_stats\n"]


def test_bad_options_are_a_usage_error() -> None:
    with pytest.raises(UsageError):
        parse_options("--mode yolo")
    with pytest.raises(UsageError):
        parse_options("--no-such-option")
    args = parse_options("--mode acceptEdits --session review --max-turns 3")
    assert (args.mode, args.session, args.max_turns) == ("acceptEdits", "review", 3)


def test_interpolation() -> None:
    ns = {"df": type("D", (), {"shape": (3, 4)})(), "name": "sales"}
    assert interpolate("Look at {name} with shape {df.shape}", ns) == "Look at sales with shape (3, 4)"
    assert interpolate('JSON stays: {"a": 1} and {{name}}', ns) == 'JSON stays: {"a": 1} and {name}'
    with pytest.raises(PromptError, match="missing"):
        interpolate("what is {missing}?", ns)


def test_interpolation_leaves_json_and_code_braces_alone() -> None:
    ns = {"x": 1}
    prompt = 'Validate {"user": {"id": 1}} and def f(): return {k: v for k, v in d.items()}}'
    assert interpolate(prompt, ns) == prompt
    assert interpolate("{{x}} is {x}", ns) == "{x} is 1"
    with pytest.raises(PromptError, match="attribute"):
        interpolate("{x.nope}", ns)
