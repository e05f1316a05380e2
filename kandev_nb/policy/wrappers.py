"""Commands that run another command: how :mod:`kandev_nb.policy.shell` sees through them.

A wrapper runs its arguments as a command after its own options (``sudo -u bob rm x``,
``timeout 5 rm x``, ``flock /tmp/l rm x``), or runs one of its arguments as a shell script
(``su -c 'rm x'``, ``script -qc 'rm x'``, ``watch rm x``, ``env -S 'rm x'``). :func:`peel`
removes one wrapper; the shell parser peels until the words are no wrapper, and parses each
script it finds as bash, so a deny rule sees ``rm x`` in every one of these spellings.

:func:`runs_code` names what an allowed command runs besides itself: an interpreter
(``python3``, ``bash``, ``node``...), or a test runner or build tool (``pytest``, ``make``,
``npm test``...) that executes code from the project's files. No deny rule sees that code.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import takewhile

__all__ = ["INTERPRETERS", "SHELLS", "WRAPPER_NAMES", "Peeled", "git_scripts", "peel", "runs_code", "shell_script"]

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class _Wrapper:
    valued: frozenset[str] = frozenset()
    """Options that take a value: the next word, or the rest of a short cluster (``-oL``)."""
    script: frozenset[str] = frozenset()
    """Options whose value is a shell script the wrapper runs (``su -c TEXT``)."""
    positional: int = 0
    """Words before the command (``flock FILE``, ``taskset MASK``, ``chroot DIR``)."""
    joined: bool = False
    """The remaining words are joined into one shell script (``watch rm x`` runs ``sh -c 'rm x'``)."""
    assignments: bool = False
    """``NAME=value`` words before the command (``env A=1 rm x``)."""
    script_anywhere: bool = False
    """The script option may follow positionals (``su bob -c TEXT``); without one, the wrapper
    starts a shell that reads its standard input."""


def _w(valued: str = "", script: str = "", **kwargs: bool | int) -> _Wrapper:
    return _Wrapper(frozenset(valued.split()), frozenset(script.split()), **kwargs)  # type: ignore[arg-type]


_SUDO_VALUED = (
    "-u -g -C -h -p -U -r -t -T -D --user --group --host --prompt --role --type --chdir --close-from --other-user"
)
_WRAPPERS: dict[str, _Wrapper] = {
    # the shell's own prefixes
    "command": _w(),
    "builtin": _w(),
    "exec": _w("-a"),
    "time": _w("-f -o --format --output"),
    "coproc": _w(),
    # run a command as another user, in another place, with other limits
    "sudo": _w(_SUDO_VALUED),
    "doas": _w("-u -C"),
    "pkexec": _w("--user"),
    "env": _w("-u -C --unset --chdir", "-S --split-string", assignments=True),
    "nohup": _w(),
    "setsid": _w(),
    "unbuffer": _w(),
    "nice": _w("-n --adjustment"),
    "ionice": _w("-c -n -p -P -u --class --classdata"),
    "chrt": _w("-T -P -D", positional=1),
    "timeout": _w("-s -k --signal --kill-after", positional=1),
    "stdbuf": _w("-i -o -e --input --output --error"),
    "taskset": _w(positional=1),
    "flock": _w("-w -E --timeout --conflict-exit-code", "-c --command", positional=1),
    "chroot": _w("--userspec --groups", positional=1),
    "setpriv": _w(
        "--reuid --regid --groups --inh-caps --ambient-caps --bounding-set --securebits --pdeathsig "
        "--selinux-label --apparmor-profile --landlock-access --landlock-rule --seccomp-filter --ruid --euid "
        "--rgid --egid"
    ),
    "unshare": _w("-S -G -R -w --setuid --setgid --root --wd --map-user --map-group --propagation --setgroups"),
    "nsenter": _w("-t -S -G -r -w --target --setuid --setgid --root --wd"),
    "firejail": _w(),
    "prlimit": _w("-p --pid"),
    "cpulimit": _w("-l -p -e --limit --pid --exe"),
    "numactl": _w("-C -N -m -p -i --physcpubind --cpunodebind --membind --preferred --interleave"),
    "setarch": _w(positional=1),
    "linux32": _w(),
    "linux64": _w(),
    "fakeroot": _w("-l -s -i --lib --faked"),
    "faketime": _w(positional=1),
    "torsocks": _w("-u -p -a -P"),
    "proxychains": _w("-f"),
    "proxychains4": _w("-f"),
    "dbus-run-session": _w("--config-file --dbus-daemon"),
    "xvfb-run": _w("-n -s -f -e -p -w --server-num --server-args --auth-file --error-file"),
    "strace": _w("-o -e -p -s -u -E -P -I -X -a -b"),
    "ltrace": _w("-o -e -p -s -u -n -a -A -D -F -l -x"),
    "systemd-run": _w("-p -E -u --unit --property --setenv --uid --gid --working-directory --slice --description"),
    "xargs": _w(
        "-I -n -P -d -L -s -a -E --max-args --max-procs --delimiter --arg-file --max-chars --max-lines --replace"
    ),
    "busybox": _w(),
    "toybox": _w(),
    # project and environment runners: `uv run rm x`, `conda run -n env rm x`, `perf stat rm x`
    "uv": _w("--with -p --python --directory --project --env-file --group --extra --package", positional=1),
    "poetry": _w("-C -P --directory --project", positional=1),
    "pdm": _w("-p --project", positional=1),
    "pixi": _w("-e --environment --manifest-path", positional=1),
    "conda": _w("-n -p --name --prefix --cwd", positional=1),
    "mamba": _w("-n -p --name --prefix --cwd", positional=1),
    "pipx": _w("--spec --python", positional=1),
    "perf": _w("-o -e -p -t -C -F --output --event --pid --tid --cpu --freq", positional=1),
    "rlwrap": _w("-a -b -C -D -e -f -g -H -I -l -n -o -O -p -P -q -s -S -t -w -z"),
    "valgrind": _w(),
    "catchsegv": _w(),
    "caffeinate": _w("-t -w"),
    "tsp": _w("-L -D -N"),
    # parallel CMD ::: ARGS runs CMD (joined, as a shell script) once per argument
    "parallel": _w(
        "-j -P -S -a -d -N -n -L -I -C --jobs --sshlogin --arg-file --delimiter --max-args --colsep --tmpdir "
        "--joblog --results --timeout --delay --workdir --env",
        joined=True,
    ),
    # ssh HOST CMD... runs CMD (joined, as a shell script) on HOST, which may be this machine
    "ssh": _w("-p -i -l -o -F -J -L -R -D -b -c -E -e -I -m -O -Q -S -W -w -B", positional=1, joined=True),
    "watch": _w("-n --interval", joined=True),
    # run a shell script given as an option (or start a shell that reads standard input)
    "su": _w("-s -g -G -w --shell --group --supp-group --whitelist-environment", "-c --command", script_anywhere=True),
    "runuser": _w(
        "-u -s -g -G -w --user --shell --group --supp-group --whitelist-environment",
        "-c --command --session-command",
        script_anywhere=True,
    ),
    "sg": _w("", "-c", positional=1, script_anywhere=True),
    "script": _w(
        "-E -I -O -B -T -m --echo --log-in --log-out --log-io --log-timing --logging-format",
        "-c --command",
        script_anywhere=True,
    ),
}
"""Commands that run their arguments as a command or a script, with how to skip their options."""

WRAPPER_NAMES = frozenset(_WRAPPERS)
"""The command words :func:`peel` sees through (``sudo``, ``env``, ``stdbuf``...)."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "yash", "posh"})
"""Shells: ``sh -c TEXT`` runs TEXT, ``sh FILE`` a script, ``sh`` alone its standard input."""

_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})

INTERPRETERS = re.compile(
    r"^(python[0-9.]*|pypy[0-9.]*|ipython[0-9.]*|node|nodejs|deno|bun|ruby|irb|perl[0-9.]*|php[0-9.]*|lua[0-9.]*|"
    r"luajit|R|Rscript|julia|tclsh|wish|bash|sh|zsh|dash|ksh|mksh|fish|csh|tcsh|ash|rbash|busybox|pwsh|powershell|"
    r"osascript|eval|source|\.|awk|gawk|mawk|nawk|expect|npx|uv|uvx|pipx|poetry|conda|jupyter|gdb|vim|vi)$"
)
"""Command words that run code of their own (a script, ``-c``/``-e`` text...)."""

_RUNNERS = frozenset(
    {"pytest", "py.test", "tox", "nox", "make", "gmake", "cmake", "ninja", "cargo", "rake", "gradle", "gradlew"}
    | {"mvn", "mvnw", "ant", "just", "meson", "hatch", "pdm", "bazel", "bazelisk", "invoke", "doit", "scons"}
)
"""Test runners and build tools that run code from the project's files whatever their arguments."""

_PACKAGE_MANAGERS = frozenset({"npm", "yarn", "pnpm", "bun"})
_PM_HARMLESS = frozenset(
    {"view", "info", "ls", "list", "outdated", "help", "whoami", "search", "config", "-v", "--version", "--help"}
)
_GO_RUNS = frozenset({"test", "run", "generate", "build", "install", "vet", "tool"})


@dataclass(frozen=True)
class Peeled:
    """What one wrapper runs: the command after it (`command`, words) or a shell script (`script`).

    `stdin` is True when the wrapper starts a shell that reads its standard input (``su bob``).
    """

    command: tuple[str, ...] = ()
    script: str | None = None
    stdin: bool = False
    dynamic: str | None = None
    """Why the command it runs is only known at run time (``xargs -I{} sh -c '{}'``), or None."""


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1] if "/" in word else word


def _option(words: Sequence[str], i: int, valued: frozenset[str], scripts: frozenset[str]) -> tuple[int, str | None]:
    """Skip the option at `words[i]`; returns (next index, script text if it was a script option)."""
    word = words[i]
    if word.startswith("--"):
        name, eq, _ = word.partition("=")
        if name in scripts:
            if eq:
                return i + 1, word.split("=", 1)[1]
            return i + 2, words[i + 1] if i + 1 < len(words) else ""
        if name in valued and not eq:
            return i + 2, None
        return i + 1, None
    for j, letter in enumerate(word[1:], start=1):
        flag = f"-{letter}"
        if flag in scripts or flag in valued:
            rest = word[j + 1 :]
            value_index = i + 1 if not rest else i
            value = rest if rest else (words[i + 1] if i + 1 < len(words) else "")
            if flag in scripts:
                return value_index + 1, value
            return value_index + 1, None
    return i + 1, None


def peel(words: Sequence[str]) -> Peeled | None:
    """One wrapper or leading ``NAME=value`` removed from `words` (already unquoted).

    >>> peel(["sudo", "-u", "bob", "rm", "x"]).command
    ('rm', 'x')
    >>> peel(["su", "-c", "rm x", "bob"]).script
    'rm x'

    Returns None when `words` does not start with a wrapper (the command itself runs).
    """
    if not words:
        return None
    if _ASSIGNMENT.match(words[0]):
        return Peeled(command=tuple(words[1:]))
    head = _basename(words[0])
    spec = _WRAPPERS.get(head)
    if spec is None:
        return None
    if head == "coproc" and len(words) > 2 and words[2] in ("{", "("):
        return Peeled(script=" ".join(words[3:]).removesuffix("}").removesuffix(")"))
    if head == "coproc" and len(words) > 1 and words[1] in ("{", "("):
        return Peeled(script=" ".join(words[2:]).removesuffix("}").removesuffix(")"))
    i, positional = 1, spec.positional
    script: str | None = None
    # runuser -u USER runs a command; su USER [-c TEXT] and runuser USER start a shell
    anywhere = spec.script_anywhere and not (
        head == "runuser" and any(w in ("-u", "--user") or w.startswith("--user=") for w in words[1:])
    )
    dashdash = False
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            dashdash = True
            break
        if word.startswith("-") and len(word) > 1:
            i, found = _option(words, i, spec.valued, spec.script)
            script = found if found is not None else script
        elif spec.assignments and _ASSIGNMENT.match(word):
            i += 1
        elif positional > 0:
            positional -= 1
            i += 1
        elif anywhere:
            i += 1  # su bob -c TEXT: the user, then maybe the script option
        else:
            break
    if script is not None:
        return Peeled(script=script)
    if anywhere and not (dashdash and i < len(words)):
        return Peeled(stdin=True)
    rest = tuple(words[i:])
    if head == "parallel":
        rest = tuple(takewhile(lambda w: not w.startswith(":::"), rest))
    if spec.joined:
        return Peeled(script=" ".join(rest))
    if head == "xargs" and rest:
        return Peeled(command=rest, dynamic=_xargs_fills(words[1:i], rest))
    return Peeled(command=rest)


def _xargs_fills(options: Sequence[str], command: Sequence[str]) -> str | None:
    """Why ``xargs -I REPL CMD`` runs a command known only at run time: REPL in the command
    word, or in the text of a shell or eval it runs."""
    replace = None
    for j, word in enumerate(options):
        if word in ("-I", "--replace") and j + 1 < len(options):
            replace = options[j + 1]
        elif word.startswith("-I") and len(word) > 2:
            replace = word[2:]
        elif word == "-i" or word.startswith("--replace="):
            replace = word.partition("=")[2] or "{}"
    if replace is None:
        return None
    head = _basename(command[0])
    if replace in command[0] or ((head in SHELLS or head == "eval") and any(replace in w for w in command[1:])):
        return f"xargs puts its input in place of {replace!r} in the command it runs"
    return None


def shell_script(words: Sequence[str]) -> Peeled | None:
    """What a shell command runs: ``sh -c TEXT`` -> script TEXT; ``sh`` / ``sh -s`` -> its
    standard input (``stdin=True``); ``sh FILE`` -> None (a script file, see :func:`runs_code`);
    ``eval WORDS`` -> the words joined. None for a command that is no shell."""
    if not words:
        return None
    head = _basename(words[0])
    if head == "eval":
        return Peeled(script=" ".join(words[1:]))
    if head == "trap":  # trap ACTION SIGNAL...: ACTION runs when a signal (or EXIT) comes
        args = [w for w in words[1:] if w != "--" and not (w.startswith("-") and len(w) > 1)]
        return Peeled(script=args[0]) if len(args) > 1 else None
    if head == "alias":  # alias r='rm -rf': a later line's `r x` runs the value (the CLI's shell expands aliases)
        values = [w.split("=", 1)[1] for w in words[1:] if "=" in w]
        return Peeled(script="\n".join(values)) if values else None
    if head in (".", "source"):
        return Peeled(stdin=True) if len(words) > 1 and _reads_stdin(words[1]) else None
    if head not in SHELLS:
        return None
    inline, stdin, i = False, False, 1
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            break
        if word in _SHELL_VALUED:
            i += 2
            continue
        if word.startswith("--"):
            if word in ("--version", "--help"):
                return None
            i += 1
            continue
        if word[:1] in "-+" and len(word) > 1:
            inline = inline or (word[0] == "-" and "c" in word[1:])
            stdin = stdin or (word[0] == "-" and "s" in word[1:])
            i += 1
            continue
        break
    if inline:  # sh -c with no text: the text comes from elsewhere (xargs sh -c)
        return Peeled(script=words[i]) if i < len(words) else Peeled(stdin=True)
    if stdin or i >= len(words) or _reads_stdin(words[i]):
        return Peeled(stdin=True)
    return None


def _reads_stdin(path: str) -> bool:
    """Whether a script file name is the shell's standard input (``sh -``, ``bash /dev/stdin``),
    however spelt (``/dev//stdin``, ``/dev/./stdin``, ``/proc/thread-self/fd/0``, ``/dev/fd/0/``)."""
    if path == "-":
        return True
    normal = posixpath.normpath(path.replace("\\", "")) if path.startswith("/") else path
    normal = "/" + normal.lstrip("/")
    return normal == "/dev/stdin" or _STDIN_PATH.match(normal) is not None


_STDIN_PATH = re.compile(r"^/(?:dev/fd|proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd)(?:/|$)")
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"})
_GIT_CONFIG_COMMAND = re.compile(
    r"^(core\.(pager|editor|sshcommand|fsmonitor|askpass|gitproxy)|sequence\.editor|pager\..*|diff\.external|"
    r".*\.(textconv|command|cmd|driver|program|helper|process|clean|smudge|sshcommand|path|tool))$"
)


def git_scripts(words: Sequence[str]) -> tuple[list[str], list[tuple[str, ...]], str | None]:
    """What ``git`` runs besides itself: (shell scripts, commands, why it is dynamic or None).

    ``git -c core.pager=TEXT``, ``-c alias.x='!TEXT'`` and other command-valued settings run
    TEXT as a shell script; ``git submodule foreach TEXT``, ``git difftool -x TEXT`` and
    ``git rebase --exec TEXT`` too; ``git bisect run CMD...`` runs CMD. ``-c core.hooksPath=``
    points git at hook scripts nobody read (dynamic). Empty for any other command.
    """
    if not words or _basename(words[0]) != "git":
        return [], [], None
    scripts: list[str] = []
    commands: list[tuple[str, ...]] = []
    dynamic = None
    i = 1
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        setting = None
        if word == "-c" and i + 1 < len(words):
            setting = words[i + 1]
        elif word.startswith("-c") and len(word) > 2:
            setting = word[2:]
        if setting is not None:
            key, _, value = setting.partition("=")
            key = key.lower()
            if key == "core.hookspath":
                dynamic = "git -c core.hooksPath runs hook scripts from that folder"
            elif (key.startswith("alias.") and value.startswith("!")) or _GIT_CONFIG_COMMAND.match(key):
                scripts.append(value.removeprefix("!"))
        if word == "--config-env":
            dynamic = dynamic or "git --config-env reads a setting from the environment"
        i += 2 if word in _GIT_VALUED else 1
    rest = list(words[i:])
    sub = rest[0] if rest else ""
    args = rest[1:]
    if sub == "submodule" and "foreach" in args:
        after = [w for w in args[args.index("foreach") + 1 :] if w not in ("--recursive", "-q", "--quiet")]
        scripts.append(" ".join(after))
    elif sub in ("difftool", "mergetool", "rebase"):
        for j, word in enumerate(args):
            if word in ("-x", "--extcmd", "--exec") and j + 1 < len(args):
                scripts.append(args[j + 1])
            elif word.startswith(("--extcmd=", "--exec=")):
                scripts.append(word.partition("=")[2])
    elif sub == "bisect" and args[:1] == ["run"] and len(args) > 1:
        commands.append(tuple(args[1:]))
    return scripts, commands, dynamic


def runs_code(words: Sequence[str]) -> tuple[str, str] | None:
    """What code `words` (one peeled command) runs besides its own: ``("interpreter", name)``
    (``python3``, ``bash``...), ``("runner", name)`` for a test runner or build tool that
    executes the project's files (``pytest``, ``npm test``, ``go test``, ``pip install``,
    ``make``...), else None."""
    if not words:
        return None
    head = _basename(words[0])
    args = [w for w in words[1:] if not w.startswith("-")]
    first = args[0] if args else ""
    if head in _RUNNERS:
        return ("runner", head)
    if head in _PACKAGE_MANAGERS and first not in _PM_HARMLESS and (first or head == "yarn"):
        return ("runner", f"{head} {first}".strip())
    if head == "go" and first in _GO_RUNS:
        return ("runner", f"go {first}")
    if re.match(r"^pip[0-9.]*$", head) and first == "install":
        return ("runner", "pip install")
    if re.match(r"^python[0-9.]*$", head) and len(words) > 2 and words[1] == "-m":
        module = words[2]
        if module in ("pytest", "tox", "nox", "pip") and (module != "pip" or "install" in words[3:]):
            return ("runner", f"{head} -m {module}{' install' if module == 'pip' else ''}")
    if INTERPRETERS.match(head):
        return ("interpreter", head)
    return None
