"""``reelgate hotseat ...`` end to end on a SQLite file (house clauses HS1–HS7,
docs/rules.md): the commitment before the heat, the draw at its close with the seed
revealed, refusals in one line naming the clause or the field, and the prize paid to the
winner with an authenticated witness (dual control)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.app.cli import main
from gateway.tournament.rules.hotseat import commitment

from ..training_db import PASSWORD, add_accounts, cheap_hashes, type_passwords
from .test_cli import _seed_floor

ANN, BEN = "8001015009087", "8101015009086"


def test_hs_commands_commit_draw_show_and_pay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    _seed_floor(url)
    cheap_hashes(monkeypatch)
    add_accounts(url, ("dana", "director"), ("sam", "supervisor"), ("cleo", "cashier"))
    type_passwords(monkeypatch, *[PASSWORD] * 30)
    db = ["--database", url]

    def ok(*argv: str) -> Any:
        capsys.readouterr()
        assert main([*argv, *db, "--json"]) == 0, capsys.readouterr().err
        return json.loads(capsys.readouterr().out)

    def fails(*argv: str) -> str:
        capsys.readouterr()
        assert main([*argv, *db]) == 2
        return capsys.readouterr().err.strip()

    ok("tournament", "create", "Ridge")
    for id_number, name in ((ANN, "Ann"), (BEN, "Ben")):
        ok("players", "add", "--id-number", id_number, "--name", name, "--dob", "1980-01-01")
        ok("entries", "sell", id_number, "-t", "Ridge", "--now", "2026-11-02 12:00")
    ok("heat", "schedule", "-t", "Ridge", "--start", "2026-11-02 18:00", "--bank", "A",
       "--now", "2026-11-01 09:00")  # fmt: skip
    assert fails("hotseat", "commit", "1", "--draws", "0", "--prize-cents", "20000") == (
        "reelgate: error: HS2: draws must be 1 to 20, not 0"
    )
    with pytest.raises(SystemExit):  # argparse: one line naming the missing option
        main(["hotseat", "commit", "1", "--draws", "1", *db])
    assert "required: --prize-cents" in capsys.readouterr().err
    shown = ok("hotseat", "commit", "1", "--draws", "1", "--prize-cents", "20000",
               "--now", "2026-11-02 17:00")  # fmt: skip
    assert shown["seed"] is None
    assert ok("hotseat", "show", "1") == shown
    for id_number in (ANN, BEN):
        ok("heat", "register", "1", id_number, "--now", "2026-11-02 17:00")
    ok("heat", "begin", "1", "--present", "1,2", "--now", "2026-11-02 18:00")
    assert fails("hotseat", "draw", "1", "--now", "2026-11-02 18:05") == (
        "reelgate: error: HS5: heat 1 is running: draws are revealed at close"
    )
    seats = [s["seat_id"] for s in ok("heat", "show", "1")["seats"]]
    for seat, credits in zip(seats, ("1500", "1200"), strict=True):
        ok("heat", "score", str(seat), "--credits", credits, "--reason", "link lost",
           "--as", "sam", "--second", "dana", "--now", "2026-11-02 18:11")  # fmt: skip
    ok("heat", "finish", "1", "--now", "2026-11-02 18:12")

    drawn = ok("hotseat", "draw", "1", "--now", "2026-11-02 18:20")
    assert commitment(bytes.fromhex(drawn["seed"]), "heat:1") == shown["commitment"]
    (draw,) = drawn["draws"]
    assert draw["winner"] in {"001", "002"}
    winner, other = (ANN, BEN) if draw["winner"] == "001" else (BEN, ANN)
    pay = ("hotseat", "pay", str(draw["id"]), "--signature", "slip 3", "--as", "cleo")
    assert "must be director, supervisor, not cashier" in fails(
        *pay, "--signer", winner, "--witness", "cleo"
    )
    assert "rule 15: prizes are not transferable" in fails(
        *pay, "--signer", other, "--witness", "sam"
    )
    paid = ok(*pay, "--signer", winner, "--witness", "sam", "--now", "2026-11-02 19:00")
    assert (paid["amount_cents"], paid["witness"]) == (20000, "sam")
    assert ok("hotseat", "show", "1")["seed"] == drawn["seed"]
