"""Commands hidden from the policy, second attacker round (after the hidden-expansions fix).

Quoted text inside a double-quoted ``${x:-...}`` (bash keeps the quotes and still runs the
``$(...)`` in it), escapes inside backticks (bash removes ``\\```, ``\\$`` and ``\\\\`` and
parses the body again), a sed script built at run time, GNU sed's abbreviated long options
(``--expr``, ``--fi``), environment variables that make an allowed program run a command
(``GIT_CONFIG_*``, ``BASH_ENV``, ``GIT_SSH_COMMAND``, ``set -k``), and a ``git -c`` value
built at run time. Each form is first run in the real ``/bin/bash`` (the hidden command must
really run), then the policy must ask (never allow) and a deny on ``touch``/``rm`` must deny
or at least ask; where the hidden command is written out, the deny must see it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kandev_nb.policy import Rules, parse_command
from tests.policy.hidden import (
    assert_asked_and_not_bypassed,
    assert_read_and_denied,
    assert_rm_runs_in_bash_and_is_denied,
)

SEEN = [  # the hidden command is written out: a deny on touch/rm denies it
    "echo \"${x:-'$(touch x)'}\"",
    "echo \"${x-'$(touch x)'}\"",
    "echo \"${x:='$(touch x)'}\"",
    "echo \"${x='$(touch x)'}\"",
    "x=1; echo \"${x:+'$(touch x)'}\"",
    "x=1; echo \"${x+'$(touch x)'}\"",
    "cat <<EOF\n${x:-'$(touch x)'}\nEOF",
    "git status \"${x:-$'$(touch x)'}\"",
    "echo $\"${x:-'$(touch x)'}\"",
    "echo \"${1:-'$(touch x)'}\"",
    "echo \"${@:-'$(touch x)'}\"",
    "echo \"${x[0]:-'$(touch x)'}\"",
    "echo \"${x:-'${y:-$(touch x)}'}\"",
    "cat <<< \"${x:-'$(touch x)'}\"",
    "case \"${x:-'$(touch x)'}\" in *) echo;; esac",
    'echo "$(echo "${x:-\'$(touch x)\'}")"',
    "echo `echo \\`touch x\\``",
    'echo `echo "\\$(touch x)"`',
    "cat <<EOF\n`echo \\`touch x\\``\nEOF",
]

VISIBLE = [  # GNU sed's abbreviated long options, read as sed reads them: the e command is seen
    "sed --expr='1e touch x' <<< a",
    "sed --e='1e touch x' <<< a",
    "sed --expressio '1e touch x' <<< a",
    "sed -e p --exp '1e touch x' <<< a",
]

ASKED = [  # the command is in a value or built at run time: asked (a deny may not see it)
    "BASH_ENV='$(touch x)' bash -c 'echo hi'",
    "GIT_SSH_COMMAND='touch x' git fetch ssh://h/r",
    'sed "${x:-1e touch x}" <<< a',
    'sed "${x-1e touch x}" <<< a',
    'sed -e "${x:-1e touch x}" <<< a',
    "printf -v x '1e touch x'; sed \"$x\" <<< a",
    "p='1e touch x'; sed -e \"$p\" <<< a",
    "x='1e touch x'; sed \"${x}\" <<< a",
    "x='1e touch x'; sed --expression=\"$x\" <<< a",
    "printf '1e touch x' > s.sed; sed --fi=s.sed <<< a",
    "sed --fi=/dev/stdin in.txt <<< '1e touch x'",
    "set -k; git status GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch x'",
    "set -o keyword; git status GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch x'",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch x' git status",
    "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='touch x'\" git status",
    "env GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='touch x'\" git status",
    "export GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='touch x'\"; git status",
    "declare -x GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='touch x'\"; git status",
    "env BASH_ENV='$(touch x)' bash -c 'echo hi'",
    "export BASH_ENV='$(touch x)'; bash -c 'echo hi'",
    "BASH_ENV=<(echo touch x) bash -c 'echo hi'",
    'git -c "${x:-core.fsmonitor=touch x}" status',
    "x=core.fsmonitor='touch x'; git -c \"$x\" status",
]

UNPROVEN = [  # bash 5.2 does not run these here (no terminal for a pager...), asked all the same
    "echo \"${x:?'$(touch x)'}\"",
    "echo \"${x?'$(touch x)'}\"",
    'echo "${x:-\\`touch x\\`}"',
    "GIT_PAGER='touch x' git -p status",
]

ALLOW = [
    *(f"Bash({name}:*)" for name in ("echo", "ls", "cat", "printf", "git status", "git fetch", "git -c", "git -p")),
    *(f"Bash({name}:*)" for name in ("sed", "set", "env", "export", "declare", "bash", "case", "p=", "x=")),
]


def _prepare(command: str, where: Path) -> None:
    if "git" in command:
        subprocess.run(["git", "init", "-q", str(where)], check=True, capture_output=True)
    (where / "in.txt").write_text("a\n")


@pytest.mark.parametrize("command", SEEN + ASKED + VISIBLE)
def test_bash_really_runs_the_hidden_command(command: str, tmp_path: Path) -> None:
    if "sed" in command and shutil.which("sed") is None:
        pytest.skip("no sed")
    if "git" in command and shutil.which("git") is None:
        pytest.skip("no git")
    _prepare(command, tmp_path)
    subprocess.run(
        ["/bin/bash", "-c", command],
        cwd=tmp_path,
        capture_output=True,
        timeout=10,
        check=False,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_SSH_COMMAND_UNUSED": ""},
    )
    assert (tmp_path / "x").exists(), f"bash did not run the hidden touch in {command!r}"


@pytest.mark.parametrize("allow", [["Bash"], ALLOW], ids=["whole-tool", "prefix-rules"])
@pytest.mark.parametrize("command", SEEN + ASKED + UNPROVEN)
def test_the_policy_asks_and_a_deny_is_not_bypassed(command: str, allow: list[str]) -> None:
    assert_asked_and_not_bypassed(command, allow, written_out=command in SEEN)


@pytest.mark.parametrize("command", SEEN + ASKED + UNPROVEN)
def test_the_command_line_is_dynamic(command: str) -> None:
    assert parse_command(command).dynamic


@pytest.mark.parametrize("command", VISIBLE)
def test_a_command_read_from_the_text_needs_its_own_allow_rule_and_is_denied(command: str) -> None:
    assert_read_and_denied(command, ALLOW)


def test_the_rm_in_a_quoted_default_is_denied(tmp_path: Path) -> None:
    command = "echo \"${x:-'$(rm -f victim)'}\""
    assert_rm_runs_in_bash_and_is_denied(command, ALLOW, tmp_path)


@pytest.mark.parametrize(
    "command",
    [
        'echo "${x:-default}"',
        'echo "${HOME}"',
        "echo ${x:-'a b'}",
        "sed -n '1,5p' f",
        "sed -e 's/a/b/' f",
        "sed --expression='s/a/b/' --quiet f",
        "sed --expr='s/a/b/' --quie f",
        "sed -i.bak 's/x/y/' f",
        "git status --short",
        "FOO=1 echo hi",
        'export PATH="$PATH:/x"',
        "set -e; echo hi",
        "echo `echo hi`",
        "git -c core.pager=cat log -1",
        "env LANG=C sort f",
    ],
)
def test_plain_commands_stay_allowed(command: str) -> None:
    verdict = Rules(allow=["Bash"]).verdict("Bash", {"command": command})
    assert verdict.answer == "allow", f"{command!r} was {verdict} ({parse_command(command).dynamic})"
