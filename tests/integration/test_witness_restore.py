"""A restored backup read by ``audit verify`` against the witness (issue 25.1), as an
operator runs it, on both backends: through ``reelgate db restore`` it is an audited
restore naming the backup and the rows lost; put back behind Reelgate's back it is a
rollback, with the rows missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from gateway.app.backups import pg_tools, sqlite_files
from gateway.app.cli import main
from gateway.records.witness import WITNESS_ENV
from gateway.records.witness_check import rows, span


@pytest.fixture
def witness_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "witness" / "audit.witness"
    monkeypatch.setenv(WITNESS_ENV, str(path))
    monkeypatch.setenv("REELGATE_ACTOR", "director:anna")
    return path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


def _verify(capsys: pytest.CaptureFixture[str], database: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code, out = _cli(capsys, "audit", "verify", "--database", database, "--json")
    return code, json.loads(out)


def _put_back_by_hand(backup: Path, database: str) -> None:
    if make_url(database).get_backend_name() == "sqlite":
        sqlite_files.restore(backup, Path(make_url(database).database or ""))
    else:
        pg_tools.restore(backup, database)


def test_a_restore_through_the_command_is_reported_as_a_restore(
    database: str, witness_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--database", database]
    assert _cli(capsys, "tournament", "create", "Winter Cup", *db)[0] == 0
    code, report = _verify(capsys, database)
    assert code == 0, report
    backed_up = report["last_id"]
    assert report["witness"]["last_witnessed"] == backed_up
    backup = tmp_path / "winter.backup"
    assert _cli(capsys, "db", "backup", str(backup), *db)[0] == 0
    assert _cli(capsys, "tournament", "create", "Spring Cup", *db)[0] == 0
    lost_to = _verify(capsys, database)[1]["last_id"]
    assert lost_to > backed_up

    code, out = _cli(capsys, "db", "restore", str(backup), *db)
    assert code == 0, out
    lost = span(backed_up + 1, lost_to)
    assert f"restore recorded at audit row {backed_up + 1}: rows {lost} as witnessed" in out
    code, report = _verify(capsys, database)
    assert code == 0, report
    (line,) = report["witness"]["restores"]
    assert f"restored from backup {backup} by os:" in line
    assert f"(audit row {backed_up + 1}): rows {lost} lost" in line
    code, out = _cli(capsys, "audit", "show", *db, "--json")
    restore = json.loads(out)[-2]  # the restore, then the exit's checkpoint
    assert restore["action"] == "audit.restore"
    assert restore["details"]["restored_to"] == backed_up
    assert restore["details"]["lost_to"] == lost_to
    assert len(restore["details"]["backup_sha256"]) == 64


def test_a_backup_put_back_by_hand_is_a_rollback(
    database: str, witness_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--database", database]
    assert _cli(capsys, "tournament", "create", "Winter Cup", *db)[0] == 0
    backup = tmp_path / "winter.backup"
    assert _cli(capsys, "db", "backup", str(backup), *db)[0] == 0
    backed_up = _verify(capsys, database)[1]["last_id"]
    assert _cli(capsys, "tournament", "create", "Spring Cup", *db)[0] == 0
    lost_to = _verify(capsys, database)[1]["last_id"]

    _put_back_by_hand(backup, database)
    code, out = _cli(capsys, "audit", "verify", *db)
    assert code == 1
    assert out.splitlines()[0] == (
        f"audit log ROLLED BACK: witness saw position {lost_to} at "
        + out.split(" at ", 1)[1].split(",", 1)[0]
        + f", database ends at {backed_up} ({rows(lost_to - backed_up)} missing: "
        f"{span(backed_up + 1, lost_to)})"
    )
    # New writes over the lost positions do not hide it.
    assert _cli(capsys, "tournament", "create", "Autumn Cup", *db)[0] == 0
    code, report = _verify(capsys, database)
    assert code == 1
    assert report["witness"]["verdict"] == "ROLLED BACK"
    assert report["witness"]["missing"] == [backed_up + 1, lost_to]
