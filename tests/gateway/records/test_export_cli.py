"""``reelgate export`` and ``reelgate cashup`` end to end on a SQLite file: a heat played
with manual scores (T23) exported, verified by ``export verify`` and by the stand-alone
verifier written from docs/records.md (``tools/verify_export.py``, run as a separate
process), and refused by both once a single byte of the record is changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.app.cli import main
from gateway.records.keys import KeyPaths, create_keys

from ..tournament.test_cli import _seed_floor
from ..training_db import PASSWORD, add_accounts, cheap_hashes, make_training, type_passwords

ROOT = Path(__file__).resolve().parents[3]
VERIFIER = ROOT / "tools" / "verify_export.py"
ANN, BEN = "8001015009087", "8101015009086"


@pytest.fixture
def keys(tmp_path: Path) -> KeyPaths:
    paths = KeyPaths.in_directory(tmp_path / "keys")
    create_keys(paths)
    return paths


def _standalone(*argv: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(VERIFIER), *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT / "tools",  # nothing of Reelgate importable from here
        env={"PATH": "/usr/bin:/bin"},
    )


def test_heat_export_verified_by_reelgate_and_by_the_standalone_verifier(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    keys: KeyPaths,
) -> None:
    monkeypatch.setenv("REELGATE_VENUE", "Ridge Casino")
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    _seed_floor(url)
    make_training(url)  # a season keyed on past days
    cheap_hashes(monkeypatch)
    add_accounts(url, ("dana", "director"), ("sam", "supervisor"))  # the scores' two people
    db = ["--database", url]

    def ok(*argv: str, json_out: bool = True) -> Any:
        capsys.readouterr()
        assert main([*argv, *db, *(["--json"] if json_out else [])]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        return json.loads(out) if json_out else out

    ok("tournament", "create", "Ridge")
    for id_number, name in ((ANN, "Ann"), (BEN, "Ben")):
        ok("players", "add", "--id-number", id_number, "--name", name, "--dob", "1980-01-01")
        ok("entries", "sell", id_number, "-t", "Ridge", "--now", "2026-11-02 12:00")
    ok("heat", "schedule", "-t", "Ridge", "--start", "2026-11-02 18:00", "--bank", "A",
       "--now", "2026-11-01 09:00")  # fmt: skip
    for id_number in (ANN, BEN):
        ok("heat", "register", "1", id_number, "--now", "2026-11-02 17:00")
    ok("heat", "begin", "1", "--present", "1,2", "--now", "2026-11-02 18:00")
    seats = [s["seat_id"] for s in ok("heat", "show", "1")["seats"]]
    for seat, credits in zip(seats, ("1500", "1200"), strict=True):
        type_passwords(monkeypatch, PASSWORD, PASSWORD)
        ok("heat", "score", str(seat), "--credits", credits, "--reason", "link lost",
           "--now", "2026-11-02 18:11", "--as", "sam", "--second", "dana")  # fmt: skip
    ok("heat", "finish", "1", "--now", "2026-11-02 18:12")

    out_dir = tmp_path / "out"
    capsys.readouterr()
    # No option, no $REELGATE_SIGNING_KEY_FILE: the database's own signing key, the one
    # beside its audit key that signs its checkpoints (issue 24 no. 6).
    monkeypatch.delenv("REELGATE_SIGNING_KEY_FILE", raising=False)
    own = Path(os.environ["REELGATE_AUDIT_KEY_FILE"]).with_name("signing.pub")
    assert main(["export", "heat", "1", "--out", str(tmp_path / "own"), *db]) == 0
    assert main(["export", "verify", str(tmp_path / "own" / "heat-1.json"),
                 "--public-key", str(own)]) == 0  # fmt: skip
    # --signing-key overrides it.
    assert main(["export", "heat", "1", "--out", str(out_dir), *db,
                 "--signing-key", str(keys.signing_key)]) == 0  # fmt: skip
    record = out_dir / "heat-1.json"
    assert {p.name for p in out_dir.iterdir()} == {"heat-1.json", "heat-1.json.sig", "heat-1.html"}

    document = json.loads(record.read_bytes())
    assert document["format"] == "reelgate-export/1"
    assert document["training"] is True  # a training database says so on every export
    assert document["venue"] == "Ridge Casino"
    body = document["body"]
    assert body["heat"]["result"] == "official"
    assert body["heat"]["scheduled_start"] == "2026-11-02T18:00:00+02:00"
    by_seat = {s["seat_number"]: s for s in body["seats"]}
    assert by_seat[1]["player"]["name"] == "Ann"
    assert by_seat[1]["machine"] == "A-1"
    assert by_seat[1]["score"]["final_credits"] == 1500
    assert by_seat[1]["score"]["source"] == "manual"
    assert [(m["by"], m["reason"], m["credits"]) for m in by_seat[2]["manual_scores"]] == [
        ("sam", "link lost", 1200)  # the account that keyed it (--as, dual control)
    ]
    html = (out_dir / "heat-1.html").read_text("utf-8")
    sig = json.loads((out_dir / "heat-1.json.sig").read_text("utf-8"))
    assert sig["sha256"] in html
    assert "<script" not in html
    assert "http" not in html.replace("http-equiv", "")  # no external assets

    capsys.readouterr()
    verify = ["export", "verify", str(record), "--public-key", str(keys.public_key)]
    assert main(verify) == 0
    assert capsys.readouterr().out.startswith(f"{record}: valid heat 1 of Ridge Casino")
    good = _standalone(record, keys.public_key)
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.startswith("VALID TRAINING: heat 1 of Ridge Casino")

    # One altered score: both verifiers refuse it, with one line.
    tampered = out_dir / "tampered.json"
    tampered.write_bytes(
        record.read_bytes().replace(b'"final_credits":1200', b'"final_credits":9999')
    )
    assert tampered.read_bytes() != record.read_bytes()
    sig_file = out_dir / "heat-1.json.sig"
    capsys.readouterr()
    assert main([*verify[:2], str(tampered), "--public-key", str(keys.public_key),
                 "--signature", str(sig_file)]) == 1  # fmt: skip
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "NOT VALID: signature does not match the file" in err
    bad = _standalone(tampered, keys.public_key, sig_file)
    assert bad.returncode == 1
    assert bad.stdout.startswith("INVALID: sha256 of the file is")

    # Another venue's key: refused by both.
    other = KeyPaths.in_directory(tmp_path / "other")
    create_keys(other)
    assert main([*verify[:3], "--public-key", str(other.public_key)]) == 1
    assert _standalone(record, other.public_key).returncode == 1

    # An export is never overwritten.
    capsys.readouterr()
    assert main(["export", "heat", "1", "--out", str(out_dir), *db]) == 2
    assert "already exists" in capsys.readouterr().err


def test_export_signs_with_the_sqlite_files_key_folder_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite file with no key configured keeps its keys in ``<file>.keys/``, made by
    ``db upgrade``; its exports are signed with that folder's key (docs/records.md)."""
    monkeypatch.delenv("REELGATE_AUDIT_KEY_FILE")
    monkeypatch.delenv("REELGATE_SIGNING_KEY_FILE")
    url = f"sqlite+aiosqlite:///{tmp_path / 'venue.db'}"
    assert main(["db", "upgrade", "--database", url]) == 0
    folder = tmp_path / "venue.db.keys"
    out = tmp_path / "out"
    capsys.readouterr()
    assert main(["export", "cashup", "2026-11-02", "--out", str(out), "--database", url]) == 0
    record = out / "cashup-2026-11-02.json"
    assert main(["export", "verify", str(record), "--public-key", str(folder / "signing.pub")]) == 0
    other = KeyPaths.in_directory(tmp_path / "other")
    create_keys(other)
    assert main(["export", "verify", str(record), "--public-key", str(other.public_key)]) == 1

    # No key anywhere: one line naming the option, nothing written.
    (folder / "signing.key").unlink()
    capsys.readouterr()
    again = tmp_path / "again"
    assert main(["export", "cashup", "2026-11-02", "--out", str(again), "--database", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--signing-key: no signing key given" in err
    assert not again.exists()
