"""issue 23, point 5: shell spellings of ``rm -rf data`` never get past a deny rule.

Every spelling the security review found is judged by ``Rules(allow=["Bash(*)"], deny=[...])``
with the old fnmatch-style ``Bash(rm*)`` and with Claude Code's prefix form ``Bash(rm:*)``:
none may be allowed. The first six are run in real bash first, to show each really deletes.
Written against ``kandev_nb.Rules`` so the same file runs against the old main.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kandev_nb import Rules

SPELLINGS = [
    "(rm -rf data)",
    "{ rm -rf data; }",
    "if true; then rm -rf data; fi",
    "for f in data; do rm -rf $f; done",
    "$'rm' -rf data",
    "{rm,-rf,data}",
    "/bin/r? -rf data",
    "/bin/r[m] -rf data",
    "x=rm; $x -rf data",
    "busybox rm -rf data",
    "su -c 'rm -rf data'",
    "script -qc 'rm -rf data' /dev/null",
    "watch rm -rf data",
    "flock /tmp/l rm -rf data",
    "taskset 1 rm -rf data",
    "coproc rm -rf data",
]
DENY_RULES = ["Bash(rm*)", "Bash(rm:*)"]


@pytest.mark.parametrize("command", SPELLINGS[:6])
def test_the_first_six_really_delete_in_bash(tmp_path: Path, command: str) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "keep.txt").write_text("x")
    subprocess.run([bash, "-c", command], cwd=tmp_path, check=True, timeout=30)
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("deny", DENY_RULES)
@pytest.mark.parametrize("command", SPELLINGS)
def test_no_spelling_is_allowed(command: str, deny: str) -> None:
    rules = Rules(allow=["Bash(*)"], deny=[deny])
    assert rules("Bash", {"command": command}) != "allow"


@pytest.mark.parametrize("deny", DENY_RULES)
@pytest.mark.parametrize("command", [s for s in SPELLINGS if "/bin/r" not in s or Path("/bin/rm").exists()])
def test_every_spelling_is_denied(command: str, deny: str) -> None:
    """What bash would run is read (or guessed, for a deny: the value ``x`` was given, the
    files a glob names, the words of a brace expansion), so the deny rule itself matches."""
    rules = Rules(allow=["Bash(*)"], deny=[deny])
    assert rules("Bash", {"command": command}) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        '"$CMD" -rf data',
        "$(printf rm) -rf data",
        "`echo rm` -rf data",
        'eval "$(cat script.sh)"',
        "cat script.sh | bash",
        "bash < script.sh",
        "sudo $TOOL -rf data",
        "cat cmds.txt | xargs -I{} sh -c '{}'",
        "cat cmds.txt | xargs sh -c",
        "su bob",
    ],
)
def test_what_cannot_be_read_is_asked_never_allowed(command: str) -> None:
    rules = Rules(allow=["Bash(*)"], deny=["Bash(rm:*)"])
    assert rules("Bash", {"command": command}) is None


@pytest.mark.parametrize(
    "command",
    [
        "ls | rm -rf data",
        "ls && rm -rf data",
        "ls || rm -rf data",
        "ls & rm -rf data",
        "ls\nrm -rf data",
        "echo $(rm -rf data)",
        'echo "$(rm -rf data)"',
        "echo `rm -rf data`",
        "cat <(rm -rf data)",
        "echo hi > $(rm -rf data)",
        "while rm -rf data; do break; done",
        "until false; do rm -rf data; done",
        "case x in x) rm -rf data;; esac",
        "f() { rm -rf data; }; f",
        "[[ -n $(rm -rf data) ]]",
        "export A=$(rm -rf data)",
        "cat <<EOF\n$(rm -rf data)\nEOF",
        "bash -c \"sh -c 'rm -rf data'\"",
        'bash -c "rm -rf $D"',
        "sudo -u bob env A=1 nice -n 3 timeout 5 rm -rf data",
        "find . -name data -exec rm -rf {} +",
        "chroot / rm -rf data",
        "setpriv --reuid=1000 rm -rf data",
        "runuser -u bob -- rm -rf data",
        "unshare -m rm -rf data",
        "nsenter -t 1 -m rm -rf data",
        "firejail --quiet rm -rf data",
        "stdbuf -oL rm -rf data",
        "env -S 'rm -rf data'",
        "flock -w 3 /tmp/l -c 'rm -rf data'",
        "su bob -c 'rm -rf data'",
        "script -q -c 'rm -rf data'",
        "taskset -c 0 rm -rf data",
        "xargs rm -rf < list",
        "! rm -rf data",
        "coproc w { rm -rf data; }",
        "ssh -p 22 localhost rm -rf data",
        "ssh localhost 'rm -rf data'",
        "time rm -rf data",
        "\\rm -rf data",
        "r\\m -rf data",
        "r\\\nm -rf data",  # bash joins a backslash-newline inside a word
        "'r'\"m\" -rf data",
    ],
)
def test_a_deny_rule_sees_every_simple_command_anywhere(command: str) -> None:
    rules = Rules(allow=["Bash(*)"], deny=["Bash(rm:*)"])
    assert rules("Bash", {"command": command}) == "deny"


@pytest.mark.parametrize("command", ["rmdir build", "echo rm -rf data", "grep -r 'rm -rf' .", "git rm --cached x"])
def test_other_commands_stay_allowed(command: str) -> None:
    assert Rules(allow=["Bash(*)"], deny=["Bash(rm:*)"])("Bash", {"command": command}) == "allow"
