"""No `claude` process outlives its kernel; a CLI that dies mid-turn is reported and resumed."""

from __future__ import annotations

import os
import signal
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def mortal_kernel(claude_workdir: Path, ledger_path: Path) -> Iterator[KernelHarness]:
    """Like the `kernel` fixture, for tests that shut the kernel down or kill it themselves."""
    harness = KernelHarness(env=dict(os.environ, KANDEV_NB_LEDGER=str(ledger_path)), cwd=str(claude_workdir))
    try:
        yield harness
    finally:
        harness.kc.stop_channels()
        if harness.km.has_kernel and harness.km.is_alive():
            harness.km.shutdown_kernel(now=True)
        else:
            harness.km.cleanup_resources()


def alive(pid: int) -> bool:
    """True while `pid` is a running process (a zombie waiting to be reaped counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return fields[0] not in ("Z", "X")


def clis_in(cwd: Path) -> list[int]:
    """Running processes whose cwd is `cwd` and whose command line names a `claude` binary."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
            where = os.readlink(entry / "cwd")
        except OSError:
            continue
        if Path(argv0).name == "claude" and where == str(cwd) and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def wait_gone(pid: int, timeout: float = 30) -> bool:
    end = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.1)
    return not alive(pid)


def start_turn_waiting_for_approval(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> tuple[int, int]:
    """Run one turn, then leave a second one blocked on an approval card. Returns (kernel pid, CLI pid)."""
    scripted_model.push(
        Reply(text("first")), Reply(tool_use("Write", {"file_path": str(claude_workdir / "w.txt"), "content": "w"}))
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude\nHello")
    kernel_pid, cli_pid = kernel.eval("(__import__('os').getpid(), kandev_nb.sessions['default'].pid)")
    assert alive(cli_pid) and clis_in(claude_workdir) == [cli_pid]
    kernel.start("%%claude\nWrite w.txt")
    kernel.wait_for_approval()
    return kernel_pid, cli_pid


def shutdown(kernel: KernelHarness, kernel_pid: int) -> None:
    kernel.km.shutdown_kernel(now=False)


def restart(kernel: KernelHarness, kernel_pid: int) -> None:
    kernel.km.restart_kernel(now=False)


def sigkill(kernel: KernelHarness, kernel_pid: int) -> None:
    os.kill(kernel_pid, signal.SIGKILL)


@pytest.mark.parametrize("end", [shutdown, restart, sigkill], ids=["shutdown", "restart", "sigkill"])
def test_no_cli_outlives_its_kernel(
    end: Callable[[KernelHarness, int], None],
    mortal_kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    kernel_pid, cli_pid = start_turn_waiting_for_approval(mortal_kernel, scripted_model, claude_env, claude_workdir)
    end(mortal_kernel, kernel_pid)
    assert wait_gone(kernel_pid)
    assert wait_gone(cli_pid), f"claude pid {cli_pid} outlived its kernel"
    assert clis_in(claude_workdir) == []


def test_a_cli_that_dies_mid_turn_ends_the_cell_and_the_next_cell_resumes(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    claude_cli: Path,
    tmp_path: Path,
) -> None:
    wrapper = tmp_path / "bin" / "claude"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "wrapper: the test started this claude" >&2\nexec {claude_cli} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    scripted_model.push(
        Reply(text("The password is swordfish.")),
        Reply(text("never"), delay_first_byte=60),
        Reply(text("It was swordfish.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir, cli_path=str(wrapper)))
    kernel.execute("%%claude\nRemember the password swordfish")
    first_pid, session_id = kernel.eval("(kandev_nb.sessions['default'].pid, kandev_nb.last_turn().session_id)")
    run = kernel.start("%%claude\nThink about it for a long time")
    end = time.monotonic() + 60
    while len(scripted_model.main_requests) < 2 and time.monotonic() < end:
        kernel.pump_for(0.1)
    os.kill(first_pid, signal.SIGKILL)
    kernel.wait(run, timeout=60)
    assert run.status == "ok", run.error
    shown = "\n".join(run.data("text/html")) + kernel.widget_texts()
    assert "exit code -9" in shown and "wrapper: the test started this claude" in shown
    assert kernel.eval("(kandev_nb.last_turn().error.exit_code, kandev_nb.last_turn().error.subtype)") == [
        -9,
        "cli_exited",
    ]
    kernel.execute("%%claude\nWhat was the password?")
    assert kernel.eval("(kandev_nb.last_turn().text, kandev_nb.last_turn().session_id)") == [
        "It was swordfish.",
        session_id,
    ]
    assert kernel.eval("kandev_nb.sessions['default'].pid") != first_pid
    assert "Remember the password swordfish" in repr(scripted_model.main_requests[-1].messages)
