from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from kandev_nb.notebook.magic import PromptError, interpolate, parse_options, transform_cell


def test_transform_makes_a_top_level_await() -> None:
    out = transform_cell(["%%claude --mode plan\n", "Fix {thing}\n", "now\n"])
    assert out == [
        "await __import__('kandev_nb.notebook.magic').notebook.magic.run_cell('--mode plan', 'Fix {thing}\\nnow\\n');\n"
    ]


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


def test_a_misspelt_option_says_which_one_was_meant() -> None:
    with pytest.raises(UsageError, match=r"did you mean --mode\? \(not --mdoe\)"):
        parse_options("--mdoe acceptEdits")
    with pytest.raises(UsageError, match=r"did you mean --session\?"):
        parse_options("--sesion review")
    with pytest.raises(UsageError) as far:
        parse_options("--zzzzzz")
    assert "did you mean" not in str(far.value)


def test_a_multi_line_value_is_sent_as_a_fenced_block() -> None:
    import pandas as pd

    df = pd.DataFrame({"region": ["north", "south"], "sales": [1200.5, 80.25]})
    sent = interpolate("Summarise {df} in one line; the table is {name}", {"df": df, "name": "sales"})
    assert sent == f"Summarise \n```\n{df}\n```\n in one line; the table is sales"
    alone = interpolate("Look at this:\n{df}\nThanks", {"df": df})
    assert alone == f"Look at this:\n```\n{df}\n```\nThanks"
    assert interpolate("{code}", {"code": "a\n```\nb"}) == "````\na\n```\nb\n````"  # the fence outgrows the text's
    assert interpolate("one {x} line", {"x": "plain\n"}) == "one plain\n line"  # one line stays inline


def test_the_cell_help_is_clean_text_with_examples() -> None:
    from kandev_nb.notebook.magic import claude_cell

    doc = claude_cell.__doc__ or ""
    assert "::" not in doc and "``" not in doc
    assert "Examples:" in doc and "%%claude --mode plan" in doc
    assert "For this cell only: --mode" in doc and "For the session" in doc
