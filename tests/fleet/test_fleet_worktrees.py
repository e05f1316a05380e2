"""``worktree=True`` on a real git repository: each row edits its own worktree and branch."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

import kandev_nb
from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import FleetError, build_fleet
from kandev_nb.testing import RecordedRequest, Reply, text, tool_use
from tests.fleet.conftest import answer_per_row

pytestmark = pytest.mark.timeout(240)


def write_lines(number: int, request: RecordedRequest) -> Reply:
    """A file command acceptEdits runs unasked, then a text answer."""
    if request.last_user_text():
        return Reply(tool_use("Bash", {"command": f"printf 'a\\nb\\n' > out-{number}.txt", "description": "write"}))
    return Reply(text(f"wrote out-{number}.txt"))


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout


async def test_each_row_edits_its_own_worktree_and_the_checkout_is_untouched(
    base_config: SessionConfig, claude_workdir: Path, feed: Callable[..., None]
) -> None:
    feed(answer_per_row(write_lines), 12)
    git(claude_workdir, "init", "-q", "-b", "main")
    (claude_workdir / "README.md").write_text("hello\n")
    git(claude_workdir, "add", "README.md")
    git(claude_workdir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    frame = pd.DataFrame({"id": [1, 2]}, index=["a", "b"])
    fleet = build_fleet(
        frame, "Handle ticket {id}.", name="edits", mode="acceptEdits", worktree=True, config=base_config, ledger=None
    )
    result = await fleet.run()
    assert list(result["status"]) == ["done", "done"], result["error"].tolist()
    assert list(result["branch"]) == ["kandev/edits/a", "kandev/edits/b"]
    assert list(result["files_changed"]) == [1, 1] and list(result["insertions"]) == [2, 2]
    for key, number in (("a", 1), ("b", 2)):
        tree = Path(result.loc[key, "worktree"])
        assert (tree / f"out-{number}.txt").read_text() == "a\nb\n"
        assert not (tree / f"out-{3 - number}.txt").exists()
    assert sorted(p.name for p in claude_workdir.iterdir() if p.name != ".git") == ["README.md"]
    assert git(claude_workdir, "status", "--porcelain") == ""
    removed = kandev_nb.fleet_cleanup("edits", claude_workdir, delete_branches=True)
    assert len(removed) == 2 and not any(Path(p).exists() for p in removed)
    assert git(claude_workdir, "branch", "--list", "kandev/*") == ""


def test_worktree_outside_a_git_repository_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FleetError, match="worktree=True needs cwd inside a git repository"):
        build_fleet(pd.DataFrame({"id": [1]}), "ticket {id}", worktree=True, cwd=str(tmp_path), ledger=None)


def test_two_unnamed_worktree_fleets_do_not_share_folders_or_branches(tmp_path: Path) -> None:
    # both were "fleet": the second run's rows started in the first run's worktrees, with its edits
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init")
    frame = pd.DataFrame({"id": [1]}, index=["a"])
    first, second = (build_fleet(frame, "ticket {id}", worktree=True, cwd=str(tmp_path), ledger=None) for _ in range(2))
    assert first.worktrees is not None and second.worktrees is not None
    assert first.worktrees.path_of("a") != second.worktrees.path_of("a")
    assert first.worktrees.path_of("a").parent.name.startswith("fleet-")
