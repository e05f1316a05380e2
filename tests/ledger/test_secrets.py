"""Secrets stay out (issue 15, 8): a ledger URL's password is never printed, logged, stored
in a row or a spool file, nor handed to the CLI; it is shown masked. Against a real
PostgreSQL server whose superuser has a password."""

from __future__ import annotations

import logging
import traceback
from pathlib import Path

import pytest
import sqlalchemy as sa

from kandev_nb.ledger import ENV_LEDGER, LedgerError, RunLedger, mask_secrets, mask_url, resolve_url
from kandev_nb.testing.postgres import PostgresCluster
from kandev_nb.wire.cli import child_env
from tests.ledger.conftest import make_turn

SECRET = "s3cr3t-Pa55word"


def test_masking_text_and_urls() -> None:
    url = f"postgresql+psycopg://team:{SECRET}@db.internal:5432/ledger"
    assert mask_url(url) == "postgresql+psycopg://team:***@db.internal:5432/ledger"
    assert mask_url(resolve_url(url)) == "postgresql+psycopg://team:***@db.internal:5432/ledger"
    assert SECRET not in mask_secrets(f"could not reach '{url}' (and {url})")
    assert mask_url("sqlite:////tmp/x.sqlite") == "sqlite:////tmp/x.sqlite"


def test_a_malformed_url_with_a_password_is_reported_masked() -> None:
    bad = f"postgresql+psycopg://team:{SECRET}@db.internal:notaport/ledger"
    with pytest.raises(sa.exc.ArgumentError) as info:
        resolve_url(bad)
    assert SECRET not in "".join(traceback.format_exception(info.value)) and "***" in str(info.value)


def test_a_ledger_that_cannot_be_reached_names_itself_masked_everywhere(
    postgres_cluster: PostgresCluster, postgres_url: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = postgres_url.replace(postgres_cluster.password, SECRET)  # a wrong password: refused
    with pytest.raises(LedgerError) as info:
        RunLedger(wrong)
    shown = "".join(traceback.format_exception(info.value)) + info.value.url + caplog.text
    assert SECRET not in shown and "***" in str(info.value)

    ledger = RunLedger(postgres_url, spool_dir=tmp_path / "spool")
    assert postgres_cluster.password not in repr(ledger) + str(ledger)
    postgres_cluster.stop()
    try:
        with pytest.raises(LedgerError) as down:
            ledger.record(make_turn("while down"))
    finally:
        postgres_cluster.start()
    shown = "".join(traceback.format_exception(down.value)) + caplog.text
    assert postgres_cluster.password not in shown
    assert down.value.spooled is not None
    for path in (tmp_path / "spool").rglob("*"):
        assert postgres_cluster.password not in path.read_text()
    ledger.record(make_turn("back"))
    frame = ledger.runs()
    assert list(frame["prompt"]) == ["while down", "back"]
    assert postgres_cluster.password not in frame.astype(str).to_csv()
    ledger.close()


def test_the_cli_does_not_inherit_the_ledger_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LEDGER, f"postgresql+psycopg://team:{SECRET}@db.internal/ledger")
    assert ENV_LEDGER not in child_env({"EXTRA": "1"})
    assert SECRET not in repr(child_env())
