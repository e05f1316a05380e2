"""Commands hidden where the grammar reads opaque text, or where bash evaluates a value as a
prompt or as arithmetic (the attacker review after issue 32).

``ls ${PWD#$(touch x)}`` (a pattern the grammar reads as one ``regex`` leaf), ``${x@P}`` and
``PS4`` with ``set -x`` (prompt expansion of a value), ``$(( _ ))`` and ``$(( BASH_REMATCH ))``
(variables bash sets itself from text the command line controls), backticks in an unquoted
here-document, a partly quoted here-document delimiter (``<<E"O"F``: bash ends the body
elsewhere), ``bash /dev//stdin``, and GNU sed's ``e`` command and ``s///e`` flag. Each form is
first run in the real ``/bin/bash`` (the hidden ``touch`` must really create its file), then
the policy must ask (never allow, whatever the allow rules) and a deny on ``touch`` must
deny or at least ask; where the command is written out, the deny must see it.
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

SEEN = [  # the hidden command is written out: a deny on touch denies it
    "ls ${PWD#$(touch x)}",
    "ls ${PWD##$(touch x)}",
    "git status ${HOME%$(touch x)}",
    "echo ${HOME%%`touch x`}",
    "echo ${HOME,$(touch x)}",
    "echo ${HOME,,$(touch x)}",
    "echo ${HOME^$(touch x)}",
    "printf '%s\\n' \"${HOME^^$(touch x)}\"",
    "echo ${HOME#$(touch x)}",
    "echo ${HOME/${HOME#$(touch x)}/}",
    "cat ${HOME#<(touch x)}",
    'cat <<E"O"F\nhi\nEOF\ntouch x\nE"O"F',
    "cat <<E'O'F\nhi\nEOF\ntouch x\nE'O'F",
    "cat <<$'EOF'\nhi\nEOF\ntouch x\n$'EOF'",
]

VISIBLE = [  # the command is read (not dynamic): the rules must allow it too, a deny denies it
    "cat <<EOF\n`touch x`\nEOF",
    "cat <<EOF\nhello `touch x` $HOME\nEOF",
    "sed -n '1e touch x' <<< a",
    "sed -e 's/a/b/' -e '1e touch x' <<< a",
    "sed 's/a/b/;e touch x' <<< a",
]

ASKED = [  # the command is in a value: asked (a deny may not see it)
    "echo '$(touch x)'; echo ${_@P}",
    "for y in '$(touch x)'; do printf '%s' \"${y@P}\"; done",
    "echo ${x:='$(touch x)'} ${x@P}",
    "for PS4 in '$(touch x)'; do set -x; echo hi; done",
    "PS4='$(touch x)'; set -o xtrace; echo hi",
    "echo 'a[$(touch x)]'; echo $(( _ ))",
    "echo 'a[$(touch x)]'; [[ _ -eq 0 ]]",
    "echo 'a[$(touch x)]'; echo ${!_}",
    "echo 'a[$(touch x)]'; [[ -v $_ ]]",
    "echo 'a[$(touch x)]'; echo ${b[_]}",
    "echo 'a[$(touch x)]'; echo $[ _ ]",
    "echo 'a[$(touch x)]'; (( _ ))",
    "echo 'a[$(touch x)]'; let _",
    "echo 'a[$(touch x)]'; declare -i n=_",
    "echo 'a[$(touch x)]'; for ((i=_;0;)); do :; done",
    "echo 'a[$(touch x)]'; test -n $(( _ ))",
    "echo hi; [[ 'a[$(touch x)]' =~ .* ]]; echo $(( BASH_REMATCH ))",
    "echo ${x:='a[$(touch x)]'} $(( x ))",
    "echo ${x='a[$(touch x)]'} $(( x ))",
    "read <<< 'a[$(touch x)]'; echo $((REPLY))",
    "mapfile <<< 'a[$(touch x)]'; echo $((MAPFILE))",
    "getopts a: o -a 'a[$(touch x)]'; echo $((OPTARG))",
    "bash /dev//stdin <<< 'touch x'",
    "bash /dev/./stdin <<< 'touch x'",
    "bash /proc/thread-self/fd/0 <<< 'touch x'",
    "source /dev//stdin <<< 'touch x'",
    "source /proc/self/fd//0 <<< 'touch x'",
    "sed 's/a/touch x/e' <<< a",
]

ALLOW = [
    "Bash(echo:*)",
    "Bash(ls:*)",
    "Bash(cat:*)",
    "Bash(printf:*)",
    "Bash(git status:*)",
    "Bash(test:*)",
    *(f"Bash({name}:*)" for name in ("read", "mapfile", "getopts", "let", "declare", "set", "bash", "source", "sed")),
]


@pytest.mark.parametrize("command", SEEN + ASKED + VISIBLE)
def test_bash_really_runs_the_hidden_command(command: str, tmp_path: Path) -> None:
    if "sed" in command and shutil.which("sed") is None:
        pytest.skip("no sed")
    subprocess.run(["/bin/bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=10, check=False)
    assert (tmp_path / "x").exists(), f"bash did not run the hidden touch in {command!r}"


@pytest.mark.parametrize("allow", [["Bash"], ALLOW], ids=["whole-tool", "prefix-rules"])
@pytest.mark.parametrize("command", SEEN + ASKED)
def test_the_policy_asks_and_a_deny_is_not_bypassed(command: str, allow: list[str]) -> None:
    assert_asked_and_not_bypassed(command, allow, written_out=command in SEEN)


@pytest.mark.parametrize("command", SEEN + ASKED)
def test_the_command_line_is_dynamic(command: str) -> None:
    assert parse_command(command).dynamic


@pytest.mark.parametrize("command", VISIBLE)
def test_a_command_read_from_the_text_needs_its_own_allow_rule_and_is_denied(command: str) -> None:
    assert_read_and_denied(command, ALLOW)


def test_the_rm_in_a_pattern_is_denied(tmp_path: Path) -> None:
    command = "printf '%s\\n' \"${HOME^^$(rm -f victim)}\""
    assert_rm_runs_in_bash_and_is_denied(command, ALLOW, tmp_path)


@pytest.mark.parametrize(
    "command",
    [
        "echo $((1+2))",
        "for ((i=0;i<3;i++)); do echo $i; done",
        "i=0; (( i++ )); echo $i",
        "(( $# > 0 )) || echo none",
        "echo ${HOME}",
        'echo "${name%.txt}" ${f##*/} ${f%/*} ${s,,} ${s^^} ${s/a/b}',
        "cat <<EOF\nhello $HOME\nEOF",
        "cat <<'EOF'\nmarkdown `code` $(not run)\nEOF",
        'cat <<"EOF"\n`not run`\nEOF',
        "cat <<\\EOF\n`not run`\nEOF",
        "echo $PS1 ${PS1}",
        "set -e; echo hi",
        "bash script.sh",
        "sed -n '1,5p' f",
        "sed -i.bak 's/x/y/g;s|a|b|' f",
        "sed -n '/start/,/end/{p}' f",
        "sed '$!N;P;D' f",
        "sed --sandbox '1e touch x' f",
    ],
)
def test_plain_commands_stay_allowed(command: str) -> None:
    verdict = Rules(allow=["Bash"]).verdict("Bash", {"command": command})
    assert verdict.answer == "allow", f"{command!r} was {verdict} ({parse_command(command).dynamic})"
