"""Commands hidden where bash evaluates a word as arithmetic or as a variable name (issue 32, point 1).

Bash expands a subscript when it evaluates it, even in a single-quoted word:
``[[ 'a[$(touch x)]' -eq 0 ]]`` runs ``touch x``. Each form is first run in the real
``/bin/bash`` (the hidden ``touch`` must really create its file), then the policy must ask
(never allow, whatever the allow rules) and a deny on ``touch`` must still deny.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kandev_nb.policy import Rules, parse_command

HIDDEN = [
    "echo checking; [[ 'a[$(touch x)]' -eq 0 ]]",
    "[[ 1 -eq 'a[$(touch x)]' ]]",
    "[[ 'a[`touch x`]' -lt 1 ]]",
    "[[ -v 'a[$(touch x)]' ]]",
    "[ -v 'a[$(touch x)]' ]",
    "test -v 'a[$(touch x)]'",
    "echo ${a['$(touch x)']}",
    "echo \"${a['$(touch x)']}\"",
    "a=(1); echo ${#a['$(touch x)']}",
    "echo ${!a['$(touch x)']}",
    "x=abc; a=(1); echo ${x:'a[$(touch x)]'}",
    "a=(1); echo ${a[@]:'a[$(touch x)]'}",
    "printf -v 'a[$(touch x)]' hi",
    "printf -va'[$(touch x)]' hi",
    "builtin printf -v 'a[$(touch x)]' hi",
    "read 'a[$(touch x)]' <<< hi",
    "declare 'a[$(touch x)]=1'",
    "declare -a 'b=([$(touch x)]=1)'",
    "typeset 'a[$(touch x)]=1'",
    "f(){ local 'a[$(touch x)]=1'; }; f",
    "declare -i n='a[$(touch x)]'",
    "declare -i n; n='a[$(touch x)]'",
    "declare -n r='a[$(touch x)]'; echo $r",
    "let 'a[$(touch x)]=1'",
    "(( 'a[$(touch x)]' ))",
    "while (( 'a[$(touch x)]' )); do break; done",
    "for (( i='a[$(touch x)]'; i<1; i++ )); do :; done",
    "echo $(( 'a[$(touch x)]' ))",
    "echo $[ 'a[$(touch x)]' ]",
    "cat <<EOF\n$(( 'a[$(touch x)]' ))\nEOF",  # the grammar reads it as $( ( command ) )
    "echo $(( $(echo 'a[$(touch x)]') ))",
    "x='a[$(touch x)]'; echo $(( x ))",
    "x='a[$(touch x)]'; [[ $x -eq 0 ]]",
    "y='a[$(touch x)]'; echo ${!y}",
    "n='a[$(touch x)]'; test -v \"$n\"",
    "f() { (( $1 )); }; f 'a[$(touch x)]'",
    "declare -a a; unset 'a[$(touch x)]'",
    "mapfile -C 'touch x' -c 1 v <<< hi",
    "true & wait -n -p 'a[$(touch x)]'",
    "a['$(touch x)']=1",
    "a=(['$(touch x)']=1)",
    "a+=(['$(touch x)']=1)",
    "bash -c \"(( 'a[\\$(touch x)]' ))\"",
]

ALLOW = [
    "Bash(echo:*)",
    "Bash(test:*)",
    "Bash(touch:*)",  # "Allow for all rows" on one row's touch row-1.txt
    *(f"Bash({name}:*)" for name in ("printf", "read", "declare", "typeset", "let", "unset", "mapfile", "true")),
    *(f"Bash({name}:*)" for name in ("f", "builtin", "bash", "wait")),
]


@pytest.mark.parametrize("command", HIDDEN)
def test_bash_really_runs_the_hidden_command(command: str, tmp_path: Path) -> None:
    subprocess.run(["/bin/bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=10, check=False)
    assert (tmp_path / "x").exists(), f"bash did not run the hidden touch in {command!r}"


@pytest.mark.parametrize("allow", [["Bash"], ALLOW], ids=["whole-tool", "prefix-rules"])
@pytest.mark.parametrize("command", HIDDEN)
def test_the_policy_asks_and_a_deny_still_denies(command: str, allow: list[str]) -> None:
    verdict = Rules(allow=allow).verdict("Bash", {"command": command})
    assert verdict.answer is None, f"{command!r} was {verdict}"
    assert "may hide a command" in verdict.note or "does not parse" in verdict.note
    assert parse_command(command).dynamic
    assert Rules(allow=allow, deny=["Bash(touch:*)"])("Bash", {"command": command}) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "echo hi",
        "echo $((1+2))",
        "echo hi; (( 1 + 2 ))",
        "echo hi; [[ -f x ]]",
        "echo $(( i + 1 )); echo $(( ${#a[@]} - 1 ))",
        "for i in 1 2 3; do echo $((i*2)); done",
        "for ((i=0; i<3; i++)); do echo $i; done",
        "echo hi; [[ $? -eq 0 && $x -gt 1 ]]",
        "echo ${a[@]} ${a[0]} ${a[i]} ${a[$i]} ${!a[@]} ${x:1:2} ${x:-d} ${x: -1}",
        "a=(a b c); a[2]=5; x=5; echo ${a[1]} $((x * 2))",
        'declare -a arr=(1 2 3); declare -A m=([k]=v); export PATH="$PATH:/x"',
        "printf -v out '%s' hi; printf '%s[%d]\\n' a 1; unset x; test -v x; let i=i+1",
    ],
)
def test_plain_arithmetic_is_not_asked(command: str) -> None:
    assert Rules(allow=["Bash"]).verdict("Bash", {"command": command}).answer == "allow"
    assert not parse_command(command).dynamic


@pytest.mark.parametrize(
    "command",
    [
        "n=$(wc -l < f); echo $((n + 1))",  # the file may say a[$(rm -rf ~)]
        "read n; echo $((n+1))",
        "[[ $(cat f) -eq 0 ]]",
        "for i in $(cat f); do echo $((i*2)); done",
        'test -v "$name"',
    ],
)
def test_arithmetic_over_values_read_at_run_time_is_asked(command: str) -> None:
    assert Rules(allow=["Bash"]).verdict("Bash", {"command": command}).answer is None
