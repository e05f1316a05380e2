"""The Rules policy object: construction errors, deny > ask > allow, verdicts, notes (issue 23, 5 and 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kandev_nb
from kandev_nb.agent import permissions
from kandev_nb.errors import KandevError, RuleError
from kandev_nb.policy import Rules, Verdict, parse_command, rule_matches


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        ("Bash(rm", "unbalanced parentheses"),
        ("Bash(rm))", "unbalanced parentheses"),
        ("Bash()", "empty content"),
        ("Bash(npm:* test)", "may only end the rule"),
        ("WebFetch(url:example.com)", "unknown specifier 'url'"),
        ("WebFetch(example.com)", "domain:"),
        ("WebFetch(domain:exa mple.com)", "not a host name"),
        ("Read(domain:example.com)", "unknown specifier 'domain'"),
        ("Read(../secrets)", "'..'"),
        ("Read(~bob/.ssh)", "~user"),
        ("Read(!x)", "negated"),
        ("mcp__kernel__run_cell(x)", "takes no content"),
        ("TodoWrite(anything)", "takes no content"),
        ("Ba*sh", "no wildcard"),
        ("Bash Tool", "not a tool name"),
        ("", "empty"),
    ],
)
def test_a_rule_the_matcher_does_not_understand_is_refused_when_built(rule: str, says: str) -> None:
    with pytest.raises(RuleError) as caught:
        Rules(deny=["Bash(ls)", rule])
    assert repr(rule) in str(caught.value) and says in str(caught.value)
    assert caught.value.rule == rule
    assert isinstance(caught.value, KandevError) and isinstance(caught.value, ValueError)


def test_a_single_string_is_not_a_rule_list() -> None:
    with pytest.raises(RuleError, match=r"allow must be a list of rules, e\.g\. allow=\['Bash\(ls\)'\]"):
        Rules(allow="Bash(ls)")  # type: ignore[arg-type]


def test_rules_stay_importable_where_they_were() -> None:
    assert kandev_nb.Rules is Rules and permissions.Rules is Rules
    assert "RuleError" in kandev_nb.__all__


def test_deny_beats_ask_beats_allow() -> None:
    rules = Rules(allow=["Bash(git:*)"], ask=["Bash(git push:*)"], deny=["Bash(git push --force:*)"])
    assert rules.verdict("Bash", {"command": "git status"}) == Verdict("allow", "Bash(git:*)")
    assert rules.verdict("Bash", {"command": "git push origin"}).answer == "ask"
    assert rules("Bash", {"command": "git push origin"}) is None  # a person decides
    assert rules.verdict("Bash", {"command": "git push --force"}).rule == "Bash(git push --force:*)"
    assert rules("Bash", {"command": "git push --force"}) == "deny"


def test_denied_by_names_the_rule() -> None:
    rules = Rules(deny=["Bash(curl:*)", "Bash(git push:*)", "WebFetch(domain:evil.com)", "Read(./.env)"])
    assert rules.denied_by("Bash", {"command": "ls && sudo git push origin"}) == "Bash(git push:*)"
    assert rules.denied_by("WebFetch", {"url": "https://sub.evil.com", "prompt": "p"}) == "WebFetch(domain:evil.com)"
    assert rules.denied_by("Bash", {"command": "git status"}) is None


def test_an_allow_names_every_rule_it_used() -> None:
    rules = Rules(allow=["Bash(git status:*)", "Bash(ls:*)"])
    verdict = rules.verdict("Bash", {"command": "git status && ls -la"})
    assert verdict == Verdict("allow", "Bash(git status:*), Bash(ls:*)")


def test_a_dynamic_command_says_why_it_is_asked() -> None:
    verdict = Rules(allow=["Bash(*)"]).verdict("Bash", {"command": "x=rm; $x -rf data"})
    assert verdict.answer is None and "'$x' is a variable expansion" in verdict.note


def test_relative_rules_resolve_against_root(tmp_path: Path) -> None:
    rules = Rules(deny=["Read(./.env)", "Edit(/build/**)"], allow=["Read", "Edit"], root=tmp_path)
    assert rules("Read", {"file_path": str(tmp_path / ".env")}) == "deny"
    assert rules("Read", {"file_path": ".env"}) == "deny"  # a relative tool path too
    assert rules("Edit", {"file_path": str(tmp_path / "build" / "out.js")}) == "deny"
    assert rules("Read", {"file_path": str(tmp_path / "src" / ".env.example")}) == "allow"


def test_the_cli_gets_the_deny_rules_it_reads_as_we_do() -> None:
    rules = Rules(
        deny=[
            "Bash(git push:*)",
            "WebFetch(domain:evil.com)",
            "WebFetch(https://bad.example/*)",
            "Read(~/.ssh/**)",
            "mcp__kernel__run_cell",
            "Bash(echo a,b)",
        ]
    )
    assert rules.cli_disallowed_tools() == [
        "Bash(git push:*)",
        "WebFetch(domain:evil.com)",
        "WebFetch(domain:*.evil.com)",  # the CLI's domain: is one host; ours also covers subdomains
        "Read(~/.ssh/**)",
        "mcp__kernel__run_cell",
    ]


def test_rule_matches_reads_one_rule_as_an_allow(tmp_path: Path) -> None:
    assert rule_matches("Bash(touch:*)", "Bash", {"command": "touch out1.txt"})
    assert not rule_matches("Bash(touch:*)", "Bash", {"command": "rm -f stats.py"})
    assert not rule_matches("Bash(touch:*)", "Bash", {"command": "touch a; rm -f stats.py"})
    assert rule_matches("Edit(src/**)", "Write", {"file_path": str(tmp_path / "src" / "a.py")}, cwd=str(tmp_path))
    assert not rule_matches("Edit(src/**)", "Write", {"file_path": str(tmp_path / "b.py")}, cwd=str(tmp_path))
    assert rule_matches("WebFetch(domain:docs.python.org)", "WebFetch", {"url": "https://docs.python.org/3/"})
    with pytest.raises(RuleError):
        rule_matches("Bash(", "Bash", {"command": "ls"})


@pytest.mark.parametrize(
    ("command", "runner"),
    [
        ("pytest -q", "pytest"),
        ("python3 -m pytest tests", "python3 -m pytest"),
        ("tox -e py311", "tox"),
        ("nox -s tests", "nox"),
        ("npm test", "npm test"),
        ("npm run build", "npm run"),
        ("yarn", "yarn"),
        ("pnpm install", "pnpm install"),
        ("cargo test", "cargo"),
        ("go test ./...", "go test"),
        ("pip install .", "pip install"),
        ("pip install -e .", "pip install"),
        ("make", "make"),
        ("cd src && make check", "make"),
    ],
)
def test_the_note_names_test_runners_and_build_tools(command: str, runner: str) -> None:
    note = Rules(allow=["Bash(*)"]).note("Bash", {"command": command})
    assert f"test runner or build tool ({runner}" in note
    assert "conftest.py" in note


def test_the_note_stays_empty_for_plain_commands_and_for_what_is_not_allowed() -> None:
    rules = Rules(allow=["Bash(ls:*)"])
    assert rules.note("Bash", {"command": "ls -la"}) == ""
    assert rules.note("Bash", {"command": "make"}) == ""  # not allowed: nothing to note
    assert Rules(allow=["Bash(*)"]).note("Bash", {"command": "npm view react"}) == ""


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        ("conftest.py", "pytest"),
        ("tests/test_stats.py", "pytest"),
        ("setup.py", "pip install"),
        ("noxfile.py", "nox"),
        ("tox.ini", "tox"),
        ("Makefile", "make"),
        ("package.json", "npm"),
        ("build.rs", "cargo"),
        ("pyproject.toml", "pip install"),
    ],
)
def test_an_allowed_edit_of_a_file_a_tool_executes_is_noted(tmp_path: Path, name: str, tool: str) -> None:
    rules = Rules(allow_edits_under=[tmp_path])
    tool_input = {"file_path": str(tmp_path / name), "content": "x"}
    assert rules("Write", tool_input) == "allow"
    note = rules.note("Write", tool_input)
    assert Path(name).name in note and tool in note and "code no person has seen" in note
    assert rules.verdict("Write", tool_input).rule == f"allow_edits_under={tmp_path.resolve()}"
    assert rules.note("Write", {"file_path": str(tmp_path / "src" / "stats.py"), "content": "x"}) == ""


def test_an_allow_rule_edit_of_a_build_file_is_noted_too(tmp_path: Path) -> None:
    rules = Rules(allow=["Edit(//**)"])
    assert "make" in rules.note("Edit", {"file_path": str(tmp_path / "Makefile"), "old_string": "a"})


def test_the_parser_reads_every_simple_command() -> None:
    parsed = parse_command("cd src && { make; } | tee log; (echo $(date)); if [ -f x ]; then rm x; fi")
    assert [c.words for c in parsed.commands] == [
        ("cd", "src"),
        ("make",),
        ("tee", "log"),
        ("echo", "$(date)"),
        ("date",),
        ("rm", "x"),  # [ -f x ] is a test, not a command
    ]
    assert parsed.dynamic == ()
    assert parse_command('echo \'a b\' "c\\"d" e\\ f').commands[0].words == ("echo", "a b", 'c"d', "e f")
    assert parse_command("date > stamp.txt 2>&1").commands[0].redirects == ("> stamp.txt",)
    # the grammar reads `b` as a second redirect target; bash passes it to echo
    assert parse_command("echo a >f b").commands[0].words == ("echo", "a", "b")


def test_words_after_a_redirection_are_arguments_an_exact_rule_sees() -> None:
    command = "git log >/dev/null -p --output=/tmp/x"  # bash runs git log -p --output=/tmp/x
    assert Rules(allow=["Bash(git log)"])("Bash", {"command": command}) is None
    assert Rules(allow=["Bash(*)"], deny=["Bash(rm -rf:*)"])("Bash", {"command": "rm >/dev/null -rf data"}) == "deny"


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("cat <<EOF\nx\nEOF", "allow"),
        ("cat <<EOF > notes.txt\nx\nEOF", None),  # the grammar nests '> notes.txt' in the here-document
        ("cat notes.txt 2>&1 >/dev/null", "allow"),
        ("cat notes.txt > copy.txt", None),
    ],
)
def test_a_redirection_to_a_file_needs_a_rule_that_writes_it(command: str, answer: str | None) -> None:
    assert Rules(allow=["Bash(cat:*)"])("Bash", {"command": command}) == answer
    assert Rules(allow=["Bash"])("Bash", {"command": command}) == answer
    assert Rules(allow=["Bash(cat notes.txt > copy.txt)"])("Bash", {"command": "cat notes.txt > copy.txt"}) == "allow"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("rm -$'\"(){};|&<>`*?[]\\\nabx=~#")), max_size=40))
def test_the_parser_never_raises_and_a_dynamic_command_is_never_allowed(command: str) -> None:
    parsed = parse_command(command)
    answer = Rules(allow=["Bash(*)"])("Bash", {"command": command})
    assert answer in ("allow", None)
    if parsed.dynamic:
        assert answer is None


def test_a_command_nested_too_deeply_to_read_is_asked_and_still_denied() -> None:
    command = "(" * 3000 + "rm -rf data" + ")" * 3000
    assert Rules(allow=["Bash(*)"])("Bash", {"command": command}) is None
    assert Rules(allow=["Bash(*)"], deny=["Bash(rm:*)"])("Bash", {"command": command}) == "deny"
