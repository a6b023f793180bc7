"""The keys from the command line: zero set-up on a SQLite file, one line without a key,
``audit keys-init`` never overwrites, ``audit verify`` names what it finds."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from gateway.app.cli import main
from gateway.records.keys import AUDIT_KEY_ENV, SIGNING_KEY_ENV
from storage import migrate


@pytest.fixture
def no_key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(AUDIT_KEY_ENV, raising=False)
    monkeypatch.delenv(SIGNING_KEY_ENV, raising=False)
    monkeypatch.setenv("REELGATE_ACTOR", "director:anna")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.usefixtures("no_key_env")
def test_db_upgrade_makes_local_keys_and_everything_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "venue.db"
    db = ["--database", f"sqlite:///{file}"]
    assert _run(capsys, "db", "upgrade", *db)[0] == 0
    keys = tmp_path / "venue.db.keys"
    assert sorted(p.name for p in keys.iterdir()) == ["audit.key", "signing.key", "signing.pub"]
    assert (keys / "audit.key").stat().st_mode & 0o777 == 0o600
    assert _run(capsys, "tournament", "create", "Ridge", *db)[0] == 0
    code, out, _ = _run(capsys, "audit", "verify", *db)
    assert code == 0, out
    assert out.startswith("audit log intact: ")
    assert "keyed from row 1" in out
    # A raw edit is named, with its table and row.
    with sqlite3.connect(file) as raw:
        raw.execute("UPDATE audit_log SET actor = 'cashier:bob' WHERE id = 2")
    code, out, _ = _run(capsys, "audit", "verify", *db, "--json")
    report = json.loads(out)
    assert code == 1
    assert report["findings"] == [
        {"table": "audit_log", "id": 2, "problem": "altered: its MAC does not match its content"}
    ]


@pytest.mark.usefixtures("no_key_env")
def test_without_a_key_reads_work_and_writes_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database copied without its key can be read, not re-signed."""
    url = f"sqlite:///{tmp_path / 'copy.db'}"
    migrate.upgrade(url.replace("sqlite:", "sqlite+aiosqlite:"))  # no keys made
    db = ["--database", url]
    code, _, err = _run(capsys, "tournament", "create", "Ridge", *db)
    assert code == 2
    assert err.count("\n") == 1
    assert "no audit key" in err
    code, _, err = _run(capsys, "audit", "verify", *db)
    assert code == 2
    assert "audit verify needs the audit key" in err
    code, out, _ = _run(capsys, "audit", "show", *db, "--json")
    assert code == 0
    assert json.loads(out) == []  # the refused write left nothing


@pytest.mark.usefixtures("no_key_env")
def test_keys_init_writes_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "keys"
    code, out, _ = _run(capsys, "audit", "keys-init", "--dir", str(folder))
    assert code == 0
    assert f"{AUDIT_KEY_ENV}={folder / 'audit.key'}" in out
    before = (folder / "audit.key").read_bytes()
    code, _, err = _run(capsys, "audit", "keys-init", "--dir", str(folder))
    assert code == 2
    assert "already exists" in err
    assert (folder / "audit.key").read_bytes() == before
    code, _, err = _run(
        capsys, "audit", "keys-init", "--database", "postgresql://postgres@127.0.0.1:1/x"
    )
    assert code == 2
    assert "--dir" in err


def test_verify_with_a_wrong_public_key_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'v.db'}"
    assert _run(capsys, "db", "upgrade", "--database", url)[0] == 0
    bad = tmp_path / "bad.pub"
    bad.write_text("not a key\n")
    code, _, err = _run(capsys, "audit", "verify", "--database", url, "--public-key", str(bad))
    assert code == 2
    assert "not a PEM Ed25519 public key" in err


@pytest.mark.usefixtures("no_key_env")
def test_db_upgrade_seals_the_tables_a_release_put_under_the_seals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25.2 on an existing database: keyed when only the result tables were sealed,
    its players and tournaments are named once per table by ``audit verify`` until
    ``db upgrade`` seals them as they stand (one records.seal_scope row); then verify
    passes and a later edit of a player is named."""
    from storage import audit, seals

    file = tmp_path / "venue.db"
    db = ["--database", f"sqlite:///{file}"]
    first = {name: seals.SEALED[name] for name in seals.FIRST_SCOPE}
    with monkeypatch.context() as old_release:
        old_release.setattr(seals, "SEALED", first)
        old_release.setitem(audit.GENESIS_FACTS, "sealed_tables", sorted(first))
        assert _run(capsys, "db", "upgrade", *db)[0] == 0
        assert _run(capsys, "tournament", "create", "Ridge", *db)[0] == 0
        player = ["--id-number", "8001015009087", "--name", "Anna", "--dob", "1980-01-01"]
        assert _run(capsys, "players", "add", *player, *db)[0] == 0
    code, out, _ = _run(capsys, "audit", "verify", *db)
    assert code == 1
    assert "  players *: 1 row(s) not under the seals yet: run `reelgate db upgrade`" in out
    assert "  tournaments *: 1 row(s) not under the seals yet" in out
    assert _run(capsys, "db", "upgrade", *db)[0] == 0
    code, out, _ = _run(capsys, "audit", "verify", *db)
    assert code == 0, out
    code, out, _ = _run(capsys, "audit", "show", *db, "--json")
    scope = [row for row in json.loads(out) if row["action"] == seals.SCOPE_ACTION]
    assert len(scope) == 1
    assert "players" in scope[0]["details"]["added"]
    with sqlite3.connect(file) as raw:
        raw.execute("UPDATE players SET name = 'Mallory'")
    code, out, _ = _run(capsys, "audit", "verify", *db)
    assert code == 1
    assert "  players 1: differs from its seal" in out
