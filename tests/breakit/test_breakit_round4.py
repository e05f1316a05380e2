"""Round-4 break-it findings on the approval policy (issue 23): shell spellings that ran a
denied program while ``Rules(allow=["Bash(*)"], deny=[...])`` said "allow".

Each test failed on the code before its fix (the policy answered "allow").
"""

from __future__ import annotations

import pytest

from kandev_nb.policy import Rules
from tests.approvals.conftest import make_session  # noqa: F401  (the fixture)

RM = Rules(allow=["Bash(*)"], deny=["Bash(rm:*)"])


def _not_allowed(command: str) -> None:
    assert RM("Bash", {"command": command}) != "allow", command


def test_backtick_inside_parameter_expansion_is_read() -> None:
    # bash runs `rm x` when x is unset; the grammar read ${x:=`rm x`} as a plain word
    _not_allowed('echo "${x:=`rm x`}"')
    _not_allowed("echo ${x:-`rm x`}")
    assert RM("Bash", {"command": 'echo "${x:=`rm x`}"'}) == "deny"


def test_find_exec_shell_script_is_read() -> None:
    # find -exec sh -c TEXT runs TEXT; only the words after -exec were compared
    assert RM("Bash", {"command": "find . -exec sh -c 'rm x' \\;"}) == "deny"
    assert RM("Bash", {"command": "find . -exec sudo rm {} +"}) == "deny"


def test_trap_action_is_read() -> None:
    # trap 'rm x' EXIT runs rm x when the shell exits
    assert RM("Bash", {"command": "trap 'rm x' EXIT; true"}) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm x' | sh -",
        "echo 'rm x' | bash /dev/stdin",
        "bash /dev/stdin <<< 'rm x'",
        "bash <(echo rm x)",
        ". <(echo rm x)",
        "source <(echo rm x)",
        "source /dev/stdin <<< 'rm x'",
    ],
)
def test_shell_reading_stdin_or_a_substituted_file_is_asked(command: str) -> None:
    # `sh -`, `bash /dev/stdin` read standard input; `. <(...)` runs what a command prints
    _not_allowed(command)


@pytest.mark.parametrize(
    "command",
    [
        "parallel rm ::: x",
        "parallel -j1 'rm {}' ::: x",
        "toybox rm x",
        "rlwrap rm x",
        "valgrind --quiet rm x",
    ],
)
def test_more_wrappers_are_peeled(command: str) -> None:
    assert RM("Bash", {"command": command}) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "git -c core.pager='rm x' log",
        "git -c alias.x='!rm x' x",
        "git -c core.editor='rm x' commit",
        "git -c core.sshCommand='rm x' fetch",
        "git -c core.fsmonitor='rm x' status",
        "git -C . -c diff.x.textconv='rm x' diff",
        "git submodule foreach rm x",
        "git submodule foreach --recursive 'rm x'",
        "git difftool -x 'rm x'",
        "git rebase --exec 'rm x' HEAD~1",
        "git bisect run rm x",
    ],
)
def test_git_runs_commands_from_its_options(command: str) -> None:
    assert RM("Bash", {"command": command}) == "deny"


def test_git_hooks_path_is_asked() -> None:
    # core.hooksPath points git at scripts nobody read
    _not_allowed("git -c core.hooksPath=/tmp/h commit -m x")


def test_hash_p_rebinding_a_name_is_read() -> None:
    # hash -p /bin/rm ls makes `ls x` run rm
    _not_allowed("hash -p /bin/rm ls; ls x")


@pytest.mark.parametrize(
    "command",
    [
        "python3.12 script.py",
        "nodejs app.js",
        "gawk -f x.awk f",
        "stdbuf -oL ls",
        "setsid ls",
        "ionice -c3 ls",
        "strace ls",
        "git -c color.ui=never status",
        "git submodule status",
        "git rebase main",
    ],
)
def test_session_grant_for_a_code_runner_is_the_exact_command(command: str) -> None:
    # a prefix grant `stdbuf:*` / `python3.12:*` / `git:*` also allows `stdbuf rm -rf ~`,
    # `python3.12 -c ...`, `git -c core.pager='rm -rf ~' log`: the button said less
    from kandev_nb.policy.grants import session_grant

    grant = session_grant("Bash", {"command": command}, "/tmp")
    assert grant is not None
    assert grant.rule == f"Bash({command})", grant.rule
    assert "this exact command" in grant.label


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.com\\@good.com/",  # WHATWG: a backslash is a slash, the host is evil.com
        "https:evil.com",
        "https:/evil.com/x",
        "https://%65vil.com/",
        "https://evil%2Ecom/",
        "https://evil\u3002com/",  # ideographic full stop
        "https://\uff45vil.com/",  # fullwidth e
    ],
)
def test_webfetch_domain_rules_read_the_url_as_the_cli_does(url: str) -> None:
    deny = Rules(allow=["WebFetch"], deny=["WebFetch(domain:evil.com)"])
    assert deny("WebFetch", {"url": url}) == "deny", url
    allow = Rules(allow=["WebFetch(domain:good.com)"])
    assert allow("WebFetch", {"url": url}) != "allow", url


def test_webfetch_grant_names_the_host_the_cli_fetches() -> None:
    from kandev_nb.policy.grants import session_grant

    grant = session_grant("WebFetch", {"url": "https://evil.com\\@good.com/"}, "/tmp")
    assert grant is not None and grant.rule == "WebFetch(domain:evil.com)", grant


def test_domain_rule_written_as_a_url_is_refused() -> None:
    # it was accepted as a URL-glob rule "domain:https://evil.com" that matches no URL
    from kandev_nb.errors import RuleError

    with pytest.raises(RuleError):
        Rules(deny=["WebFetch(domain:https://evil.com)"])


def test_relative_file_rules_mean_the_clis_folder_not_the_kernels(tmp_path: object) -> None:
    # Session(cwd=X) with the kernel elsewhere: the hook got cwd=X but Rules resolved
    # Read(./.env) against os.getcwd(), so the deny never matched X/.env
    from pathlib import Path

    from kandev_nb.policy import enforce

    folder = Path(str(tmp_path)) / "project"
    folder.mkdir()
    rules = Rules(allow=["Read", "Write"], deny=["Read(./.env)", "Edit(/secrets/**)"])
    policies = [(rules, "your policy")]
    read = enforce.check("Read", {"file_path": str(folder / ".env")}, guard=None, policies=policies, cwd=str(folder))
    assert read is not None and read.decision == "deny" and read.rule == "Read(./.env)"
    write = {"file_path": str(folder / "secrets" / "k"), "content": "x"}
    denied = enforce.check("Write", write, guard=None, policies=policies, cwd=str(folder))
    assert denied is not None and denied.decision == "deny" and denied.rule == "Edit(/secrets/**)"


@pytest.mark.xfail(
    strict=True,
    reason="a failing tool fires PostToolUseFailure, whose answer takes only additionalContext (CLI 2.1.332): "
    "the error text cannot be replaced by a hook; masking it needs another route (e.g. a Bash wrapper)",
)
@pytest.mark.timeout(180)
@pytest.mark.parametrize("claude_cli", ["2.1.332"], indirect=True)
@pytest.mark.parametrize("command", ["cat creds.txt; exit 3", "cat creds.txt >&2; exit 1"])
async def test_a_failing_tools_output_reaches_the_model_masked(
    command: str,
    claude_cli: object,
    scripted_model: object,
    claude_env: dict[str, str],
    claude_workdir: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # PostToolUse is not sent for a tool that fails (non-zero exit): the error text went to
    # the model with the secret the file held
    import json
    import uuid
    from pathlib import Path

    from kandev_nb.agent.session import Session, SessionConfig
    from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use

    assert isinstance(scripted_model, ScriptedModelServer)
    workdir = Path(str(claude_workdir))
    token = f"svc-{uuid.uuid4().hex}"
    monkeypatch.setenv("SERVICE_TOKEN", token)
    (workdir / "creds.txt").write_text(f"token in a file: {token}\n")
    scripted_model.push(Reply(tool_use("Bash", {"command": command})), Reply(text("done")))
    session = Session(
        SessionConfig(
            cwd=workdir,
            cli_path=Path(str(claude_cli)),
            env=claude_env,
            approve=lambda tool_name, tool_input: "allow",
            approval_timeout=60,
        )
    )
    try:
        turn = await session.run("show the creds")
    finally:
        await session.close()
    call = next(e for e in turn.events if e.type == "tool_update")
    assert "token in a file" in str(call.output)  # type: ignore[attr-defined]  # the tool ran
    assert token not in str(call.output)  # type: ignore[attr-defined]
    body = json.dumps(scripted_model.main_requests[-1].body)
    assert "token in a file" in body
    assert token not in body, "the failing tool's output reached the model with the secret"


def test_child_env_keeps_secret_looking_names_under_inherited_prefixes() -> None:
    # MCP_*, ENABLE_*, DISABLE_*, LC_*, XDG_* were inherited whatever the name: the agent's
    # `env | base64` in a Bash tool carried MCP_SERVER_TOKEN out past the output masking
    from kandev_nb.wire.cli import child_env

    base = {
        "PATH": "/usr/bin",
        "MCP_SERVER_TOKEN": "mcp-secret-123",
        "ENABLE_FOO_TOKEN": "tok-123456",
        "DISABLE_X_PASSWORD": "pw-1234567",
        "XDG_SESSION_COOKIE": "c0123456",
        "MCP_TIMEOUT": "5000",
        "ANTHROPIC_API_KEY": "sk-ant-x",
        "CLAUDE_CODE_OAUTH_TOKEN": "oauth-x",
    }
    env = child_env(base=base)
    for name in ("MCP_SERVER_TOKEN", "ENABLE_FOO_TOKEN", "DISABLE_X_PASSWORD", "XDG_SESSION_COOKIE"):
        assert name not in env, name
    for name in ("MCP_TIMEOUT", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"):
        assert name in env, name


@pytest.mark.timeout(180)
@pytest.mark.parametrize("claude_cli", ["2.1.332"], indirect=True)
async def test_a_secret_split_across_text_deltas_is_masked_everywhere(
    claude_cli: object,
    scripted_model: object,
    claude_env: dict[str, str],
    claude_workdir: object,
    tmp_path: object,
) -> None:
    # each stream_event line holds a piece of the secret, so the LineMasker finds none
    import uuid
    from pathlib import Path

    from kandev_nb.agent.session import Session, SessionConfig
    from kandev_nb.ledger import RunLedger
    from kandev_nb.render.static import render_html, render_markdown
    from kandev_nb.testing import Reply, ScriptedModelServer, text

    assert isinstance(scripted_model, ScriptedModelServer)
    secret = f"cfg-{uuid.uuid4().hex}"
    scripted_model.push(Reply(text(f"the password is {secret} ok", chunk_size=7)))
    session = Session(
        SessionConfig(
            cwd=Path(str(claude_workdir)),
            cli_path=Path(str(claude_cli)),
            env={**claude_env, "MY_DB_PASSWORD": secret},
            approve=lambda tool_name, tool_input: "allow",
            approval_timeout=60,
        )
    )
    try:
        turn = await session.run("say it")
    finally:
        await session.close()
    folder = Path(str(tmp_path))
    ledger = RunLedger(folder / "ledger.sqlite")
    ledger.record(turn)
    ledger.close()
    places = {
        "events": repr(turn.events),
        "html": render_html(turn),
        "markdown": render_markdown(turn),
        "ledger": b"".join(p.read_bytes() for p in folder.glob("ledger.sqlite*")).decode("utf-8", "replace"),
    }
    assert "the password is" in places["markdown"]
    for place, body in places.items():
        assert secret not in body, place


@pytest.mark.timeout(180)
@pytest.mark.parametrize("claude_cli", ["2.1.332"], indirect=True)
@pytest.mark.parametrize(
    "policy",
    [
        Rules(allow=["Bash(*)"], ask=["Bash(rm:*)"]),  # an ask rule
        lambda tool_name, tool_input: "Deny",  # not one of "allow", "deny", None
    ],
    ids=["ask-rule", "bad-answer"],
)
async def test_an_ask_rule_or_a_bad_answer_asks_in_autonomous_mode(
    policy: object,
    make_session: object,  # noqa: F811  (the fixture imported above)
    scripted_model: object,
    claude_workdir: object,
) -> None:
    # the hook had no opinion, so in autonomous mode `rm data.csv` ran with nobody asked
    from pathlib import Path

    from kandev_nb.agent import events as ev
    from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use

    assert isinstance(scripted_model, ScriptedModelServer) and callable(make_session)
    workdir = Path(str(claude_workdir))
    (workdir / "data.csv").write_text("x\n")
    scripted_model.push(Reply(tool_use("Bash", {"command": "rm data.csv"})), Reply(text("done")))
    asked: list[ev.PermissionRequest] = []

    def deny(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked.append(event)
            event.approval.deny("not now")

    session = make_session(mode="autonomous", allow_root_bypass=True, approve=policy)
    try:
        await session.run("clean up", consumers=[deny])
    finally:
        await session.close()
    assert [r.input["command"] for r in asked] == ["rm data.csv"]
    assert (workdir / "data.csv").exists()


@pytest.mark.parametrize("command", ["alias r=rm\nr x", "alias r='rm -rf'\nr data", "alias ll='ls -l' r=rm\nr x"])
def test_an_alias_defined_then_used_is_read(command: str) -> None:
    # the CLI's shell snapshot runs `shopt -s expand_aliases`: `r x` on the next line runs rm
    assert RM("Bash", {"command": command}) == "deny"


def test_a_deep_glob_in_command_position_does_not_walk_the_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    # /*/*/*/*/*/*/*/r? was expanded to guess the program: minutes of walking / (a hung hook)
    import glob

    walked: list[str] = []
    real = glob.glob

    def recording(pattern: str, **kwargs: object) -> list[str]:
        walked.append(pattern)
        return real(pattern, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(glob, "glob", recording)
    assert RM("Bash", {"command": "/*/*/*/*/*/*/*/r? x"}) is None  # asked, never allowed
    assert walked == []
    assert RM("Bash", {"command": "/bin/r? x"}) == "deny"  # a shallow glob is still guessed
    assert walked == ["/bin/r?"]


@pytest.mark.parametrize(
    "command",
    ["uv run rm x", "uv run --with pandas rm x", "poetry run rm x", "pdm run rm x", "conda run -n base rm x"]
    + ["perf stat rm x", "perf record -o p.data rm x"],
)
def test_environment_runners_are_peeled(command: str) -> None:
    assert RM("Bash", {"command": command}) == "deny"
