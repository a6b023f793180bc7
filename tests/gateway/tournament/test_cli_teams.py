"""``reelgate teams ...`` end to end on a SQLite file (H1-H12): the director's settings
and team cut, a team registered at the desk, the team standings after a heat, the team
prize schedule and the captain paid with an authenticated witness, and the refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.app.cli import main

from ..training_db import PASSWORD, add_accounts, cheap_hashes, type_passwords
from .test_cli import _seed_floor

ANN, BEN, CAS = "8001015009087", "8101015009086", "8201015009085"


def test_h1_to_h9_teams_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    _seed_floor(url)
    cheap_hashes(monkeypatch)
    add_accounts(url, ("dana", "director"), ("sam", "supervisor"), ("cleo", "cashier"))
    type_passwords(monkeypatch, *[PASSWORD] * 30)
    db = ["--database", url]

    def ok(*argv: str, json_out: bool = True) -> Any:
        capsys.readouterr()
        tail = ["--json"] if json_out else []
        assert main([*argv, *db, *tail]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        return json.loads(out) if json_out else out

    def fails(*argv: str) -> str:
        capsys.readouterr()
        assert main([*argv, *db]) == 2
        return capsys.readouterr().err.strip()

    ok("tournament", "create", "Ridge")
    for id_number, name in ((ANN, "Ann"), (BEN, "Ben"), (CAS, "Cas")):
        ok("players", "add", "--id-number", id_number, "--name", name, "--dob", "1980-01-01")
        ok("entries", "sell", id_number, "-t", "Ridge", "--now", "2026-11-02 12:00")
    team = ("teams", "add", "Ridge", "Aces", "--member", ANN, "--member", BEN, "--captain", BEN)
    assert fails(*team) == (
        "reelgate: error: rule H1: teams: the director has not set this tournament up for teams"
    )
    assert fails("teams", "set", "Ridge", "--scoring", "best-n", "--reason", "x") == (
        "reelgate: error: rule H6: best-n: give n, at least 1"
    )
    ok("teams", "set", "Ridge", "--scoring", "best-n", "--best", "1", "--max-size", "2",
       "--advance", "1", "--reason", "house format")  # fmt: skip
    added = ok(*team)["teams"][0]
    assert (added["name"], [m["name"] for m in added["members"]]) == ("Aces", ["Ben", "Ann"])
    assert "rule H4: members: a team has 2 to 2 players, got 1" in fails(
        "teams", "add", "Ridge", "Kings", "--member", CAS, "--captain", CAS
    )
    assert "rule H2: members: player 1 is already in team 'Aces'" in fails(
        "teams", "add", "Ridge", "Kings", "--member", CAS, "--member", ANN, "--captain", CAS
    )
    assert [t["name"] for t in ok("teams", "list", "Ridge")["teams"]] == ["Aces"]
    assert ok("teams", "show", "Ridge", "Aces")["teams"][0]["captain"] == 2

    ok("heat", "schedule", "-t", "Ridge", "--start", "2026-11-02 18:00", "--bank", "A",
       "--now", "2026-11-01 09:00")  # fmt: skip
    for id_number in (ANN, BEN):
        ok("heat", "register", "1", id_number, "--now", "2026-11-02 17:00")
    ok("heat", "begin", "1", "--present", "1,2", "--now", "2026-11-02 18:00")
    seats = [s["seat_id"] for s in ok("heat", "show", "1")["seats"]]
    for seat, credits in zip(seats, ("1500", "1200"), strict=True):
        ok("heat", "score", str(seat), "--credits", credits, "--reason", "link lost",
           "--as", "sam", "--second", "dana", "--now", "2026-11-02 18:11")  # fmt: skip
    ok("heat", "finish", "1", "--now", "2026-11-02 18:12")

    table = ok("teams", "standings", "Ridge")
    [line] = table["lines"]
    assert (line["place"], line["total"], table["best_n"]) == (1, 1500, 1)  # best 1 (H6)
    assert sorted((m["score"], m["counts"]) for m in line["members"]) == [
        (1200, False), (1500, True),
    ]  # fmt: skip
    assert "Aces" in ok("teams", "standings", "Ridge", json_out=False)
    assert "rule H9: withdraw: player 1 has already played" in fails(
        "teams", "withdraw", "Ridge", "Aces"
    )
    assert (table["advance"], line["goes_on"]) == (1, True)  # H10: top 1 goes on
    assert "top 1 go on, H10" in ok("teams", "standings", "Ridge", json_out=False)

    assert fails("teams", "prizes", "Ridge", "--prize", "1=abc") == (
        "reelgate: error: --prize: '1=abc' is not PLACE=CENTS"
    )
    shown = ok("teams", "prizes", "Ridge", "--prize", "1=20000", "--now", "2026-11-02 18:30")
    assert [(x["place"], x["cents"], x["team"]) for x in shown["prizes"]] == [(1, 20000, "Aces")]
    pay = ("teams", "pay", "Ridge", "1", "--signature", "slip 5", "--as", "cleo",
           "--now", "2026-11-02 19:00")  # fmt: skip
    assert "rule H12: prizes are not transferable" in fails(
        *pay, "--signer", ANN, "--witness", "sam"
    )  # Ann is a member, Ben the captain (H3)
    paid = ok(*pay, "--signer", BEN, "--witness", "sam")
    assert (paid["amount_cents"], paid["witness"]) == (20000, "sam")
    assert "rule H12: team place 1 was paid" in fails(*pay, "--signer", BEN, "--witness", "sam")
    audit = [r["action"] for r in ok("audit", "show", "--limit", "60")]
    assert {"team.settings", "team.register", "team.prizes.schedule", "team.prizes.paid"} <= set(
        audit
    )
