"""``tools/verify_export.py`` recomputes hot-seat draws and wild cards from a signed export
(house clauses HS3–HS6, docs/rules.md), run as a separate process with nothing of Reelgate
importable; a re-signed export whose draw was altered is refused, naming the draw."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gateway.records.canonical import canonical_bytes
from gateway.records.document import ExportContext, build_document
from gateway.records.keys import public_pem
from gateway.records.signing import signature_for
from gateway.tournament.rules.hotseat import (
    commitment,
    draw_moments,
    draw_winner,
    export_entry,
    heat_subject,
    wildcard_subject,
)

ROOT = Path(__file__).resolve().parents[2]
VERIFIER = ROOT / "tools" / "verify_export.py"
SEED = bytes(range(32))
ZONE = ZoneInfo("Africa/Johannesburg")
START = datetime(2026, 12, 7, 18, 0, tzinfo=UTC)
SEATS = ["B1-01", "B1-02", "B1-03", "B1-04", "B1-05", "B1-06"]


def _heat_entry(seed: bytes | None = SEED) -> dict[str, object]:
    subject = heat_subject(7)
    end = START + timedelta(minutes=15)
    moments = draw_moments(SEED, subject, START, end, 3)
    ineligible = [[], ["B1-03", "B1-05"], SEATS]  # a redraw (HS3), then a void draw
    taken = [
        (m, draw_winner(SEED, subject, i, SEATS, bad), bad)
        for i, (m, bad) in enumerate(zip(moments, ineligible, strict=True))
    ]
    return export_entry(
        subject=subject,
        committed=commitment(SEED, subject),
        seed=seed,
        start=START,
        end=end,
        draws=3,
        prize_cents=50000,
        taken=taken if seed is not None else [],
    )


def _wildcard_entry() -> dict[str, object]:
    subject = wildcard_subject(3, "qualifying")
    outcome = draw_winner(SEED, subject, 0, ["11", "12", "13", "14"], [])
    return export_entry(
        subject=subject,
        committed=commitment(SEED, subject),
        seed=SEED,
        start=None,
        end=None,
        draws=1,
        prize_cents=0,
        taken=[(None, outcome, [])],
    )


def _signed(tmp_path: Path, hotseat: list[dict[str, object]], alter: Any = None) -> list[Path]:
    ctx = ExportContext("Ridge Casino", ZONE, START + timedelta(hours=1))
    document = build_document("heat", "7", {"hotseat": hotseat}, ctx, training=False)
    if alter is not None:
        alter(document["body"]["hotseat"])
    key = Ed25519PrivateKey.generate()
    data = canonical_bytes(document)
    export = tmp_path / "heat-7.json"
    export.write_bytes(data)
    (tmp_path / "heat-7.json.sig").write_text(json.dumps(signature_for(data, export.name, key)))
    (tmp_path / "venue.pem").write_bytes(public_pem(key.public_key()))
    return [export, tmp_path / "venue.pem"]


def _standalone(argv: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(VERIFIER), *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT / "tools",  # nothing of Reelgate importable from here
        env={"PATH": "/usr/bin:/bin"},
    )


def test_hs5_hs6_revealed_draws_recompute(tmp_path: Path) -> None:
    done = _standalone(_signed(tmp_path, [_heat_entry(), _wildcard_entry()]))
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("VALID: heat 7 of Ridge Casino")
    assert "4 hot-seat draws recomputed" in done.stdout  # 3 draws of heat 7, 1 wild card


def test_hs5_committed_not_revealed_is_valid_with_nothing_to_recompute(tmp_path: Path) -> None:
    done = _standalone(_signed(tmp_path, [_heat_entry(seed=None)]))
    assert done.returncode == 0, done.stdout
    assert "hot-seat" not in done.stdout


def _set_winner(items: list[dict[str, Any]]) -> None:
    items[0]["draws_taken"][1]["winner"] = "B1-02"


def _shift_moment(items: list[dict[str, Any]]) -> None:
    items[0]["draws_taken"][0]["moment"] = "2026-12-07T20:00:00+02:00"


def _other_seed(items: list[dict[str, Any]]) -> None:
    items[0]["seed"] = "00" * 32


def _hide_seed(items: list[dict[str, Any]]) -> None:
    items[0]["seed"] = None


def test_hs3_altered_winner_refused(tmp_path: Path) -> None:
    done = _standalone(_signed(tmp_path, [_heat_entry()], _set_winner))
    assert done.returncode == 1
    assert done.stdout.strip() == (
        "INVALID: signed, but hot-seat heat:7: draw 1 recomputes to 'B1-06', not 'B1-02'"
    )


def test_hs2_moment_not_from_seed_refused(tmp_path: Path) -> None:
    done = _standalone(_signed(tmp_path, [_heat_entry()], _shift_moment))
    assert done.returncode == 1
    assert "heat:7: draw 0 was not taken at its moment" in done.stdout


def test_hs4_seed_not_committed_refused(tmp_path: Path) -> None:
    done = _standalone(_signed(tmp_path, [_heat_entry()], _other_seed))
    assert done.returncode == 1
    assert "heat:7: the revealed seed does not match the commitment" in done.stdout


def test_hs5_draws_without_reveal_refused(tmp_path: Path) -> None:
    done = _standalone(_signed(tmp_path, [_heat_entry()], _hide_seed))
    assert done.returncode == 1
    assert "heat:7: draws recorded but the seed is not revealed" in done.stdout
