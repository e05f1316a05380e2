"""Issue 24.7 and 24.8: a ledger password in the URL's query is masked everywhere; the spool
trusts only a folder of its own, tested with another uid (``setpriv --reuid nobody``).

On the old code: ``?password=`` showed in errors, ``repr`` and ``ledger.txt`` (0644); a
password with a quote was not masked and one with a raw ``@`` only up to it; a spool folder
another user pre-created was written into (through their symlink) and their planted turn
was read back by the next flush.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from kandev_nb import ledger as ledger_mod
from kandev_nb.errors import LedgerError
from kandev_nb.ledger import ENV_LEDGER, RunLedger, mask_secrets, mask_url, record_or_spool
from kandev_nb.ledger.rows import turn_rows
from kandev_nb.ledger.spool import ENV_SPOOL, pending, spool_dir, write
from tests.ledger.conftest import make_turn

AS_NOBODY = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="switching to another uid needs root and setpriv"
)

QUERY_PW = "q-pass-1234"
USER_PW = "u-pass-5678"
UNREACHABLE = f"postgresql+psycopg://team:{USER_PW}@127.0.0.1:9/ledger?sslmode=disable&password={QUERY_PW}"


def test_password_like_query_parameters_quotes_and_raw_ats_are_masked() -> None:
    assert QUERY_PW not in mask_url(UNREACHABLE) and USER_PW not in mask_url(UNREACHABLE)
    assert QUERY_PW not in mask_url(make_url(UNREACHABLE)) and "sslmode=disable" in mask_url(make_url(UNREACHABLE))
    for secret in ("pa'ss\"wd", "p@ss@word", "p%40ss%3Aenc"):
        text = f"could not connect to postgresql://team:{secret}@db.internal:5432/x"
        masked = mask_secrets(text)
        assert secret not in masked and "db.internal:5432/x" in masked, masked


def test_errors_repr_and_the_spool_name_the_ledger_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LEDGER, UNREACHABLE)
    monkeypatch.setenv(ENV_SPOOL, str(tmp_path / "spool"))
    monkeypatch.setattr(ledger_mod, "_defaults", {})
    with pytest.raises(LedgerError) as caught:
        RunLedger(UNREACHABLE, busy_timeout_s=1)
    shown = str(caught.value) + repr(caught.value) + str(caught.value.url)
    assert QUERY_PW not in shown and USER_PW not in shown and "127.0.0.1:9" in shown
    turn = make_turn("spooled while away")
    assert record_or_spool(turn) is None
    spooled = Path(turn.meta["ledger_spooled"])
    note = spooled.parent / "ledger.txt"
    for path in (spooled, note):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        assert QUERY_PW.encode() not in path.read_bytes() and USER_PW.encode() not in path.read_bytes()
    assert "password=***" in note.read_text()
    assert stat.S_IMODE(spooled.parent.stat().st_mode) == 0o700


@pytest.fixture
def shared_root() -> Iterator[Path]:
    """A /tmp-like folder (1777) every local user can make folders in."""
    root = Path(f"/tmp/kandev-shared-{uuid.uuid4().hex[:8]}")
    root.mkdir()
    root.chmod(0o1777)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@needs_root
def test_a_spool_folder_another_user_made_is_refused_and_never_read(
    shared_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "postgresql+psycopg://team@127.0.0.1:9/ledger"
    monkeypatch.setenv(ENV_LEDGER, url)
    monkeypatch.setenv(ENV_SPOOL, str(shared_root))
    monkeypatch.setattr(ledger_mod, "_defaults", {})
    folder = spool_dir(make_url(url))
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    forged = shared_root / "forged"
    shutil.copy(write(tmp_path / "forge", turn_rows(make_turn("forged by nobody"), None, None), "x"), forged)
    forged.chmod(0o644)
    # the other user pre-creates the predictable folder, a symlink and a planted turn
    script = f"mkdir -m 777 {folder} && ln -s {victim} {folder}/ledger.txt && cp {forged} {folder}/0-x.json"
    subprocess.run([*AS_NOBODY, "sh", "-c", script], check=True)
    assert folder.stat().st_uid != 0

    turn = make_turn("mine")
    with pytest.raises(LedgerError, match="refusing the spool folder .* owned by uid"):
        record_or_spool(turn)
    assert victim.read_text() == "mine\n"  # nothing written through their symlink
    assert list(pending(folder)) == []  # their planted turn is never read
    assert sorted(p.name for p in folder.iterdir()) == ["0-x.json", "ledger.txt"]


@needs_root
def test_in_a_folder_of_ours_files_of_another_uid_and_symlinks_are_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "spool" / "abc"
    mine = write(folder, turn_rows(make_turn("mine"), None, None), "x")
    planted = folder / "0-planted.json"
    shutil.copy(mine, planted)
    nobody = int(subprocess.run(["id", "-u", "nobody"], capture_output=True, text=True, check=True).stdout)
    os.chown(planted, nobody, -1)
    (folder / "1-link.json").symlink_to(mine)
    assert [path.name for path, _rows in pending(folder)] == [mine.name]
    folder.chmod(0o770)  # writable by a group: refused
    assert list(pending(folder)) == []
    with pytest.raises(PermissionError, match="lets others write"):
        write(folder, turn_rows(make_turn("again"), None, None), "x")
