"""``reelgate tournament prizes ...`` end to end on a SQLite file (T15): the schedule, the
surplus split by weights, the signed payout, and the prizes in the standings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gateway.app.cli import main

from ..training_db import PASSWORD, add_accounts, cheap_hashes, type_passwords
from .test_cli import _seed_floor

ANN, BEN = "8001015009087", "8101015009086"


def test_t15_prizes_commands_and_the_standings_show_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    _seed_floor(url)
    cheap_hashes(monkeypatch)
    add_accounts(url, ("dana", "director"), ("sam", "supervisor"), ("cleo", "cashier"))
    type_passwords(monkeypatch, *[PASSWORD] * 30)
    db = ["--database", url]

    def ok(*argv: str, json_out: bool = True) -> Any:
        import json

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
    for id_number, name in ((ANN, "Ann"), (BEN, "Ben")):
        ok("players", "add", "--id-number", id_number, "--name", name, "--dob", "1980-01-01")
        ok("entries", "sell", id_number, "-t", "Ridge", "--now", "2026-11-02 12:00")
    ok("heat", "schedule", "-t", "Ridge", "--start", "2026-11-02 18:00", "--bank", "A",
       "--now", "2026-11-01 09:00")  # fmt: skip
    prizes = ("tournament", "prizes")
    q = ("Ridge", "--stage", "qualifying")
    ok(*prizes, "schedule", *q, "1=100000", "2=50000", "--now", "2026-11-02 09:00")
    for id_number in (ANN, BEN):
        ok("heat", "register", "1", id_number, "--now", "2026-11-02 17:00")
    ok("heat", "begin", "1", "--present", "1,2", "--now", "2026-11-02 18:00")
    seats = [s["seat_id"] for s in ok("heat", "show", "1")["seats"]]
    for seat, credits in zip(seats, ("1500", "1200"), strict=True):
        ok("heat", "score", str(seat), "--credits", credits, "--reason", "link lost",
           "--as", "sam", "--second", "dana", "--now", "2026-11-02 18:11")  # fmt: skip
    ok("heat", "finish", "1", "--now", "2026-11-02 18:12")

    assert fails(*prizes, "apportion", *q, "--surplus-cents", "10001", "--share", "1=5000",
                 "--share", "2=5000",
                 "--reason", "larger field") == (
        "reelgate: error: rule 15: the shares add up to 10000 c but the surplus is 10001 c: "
        "every cent of the surplus must be apportioned"
    )  # fmt: skip
    split = ok(*prizes, "apportion", *q, "--surplus-cents", "10001", "--weights", "2,1",
               "--reason", "larger field")  # fmt: skip
    assert [(x["place"], x["surplus_cents"]) for x in split["prizes"]] == [(1, 6667), (2, 3334)]
    pay = (*prizes, "pay", *q, "--place", "1", "--signature", "slip 9", "--as", "cleo")
    # The witness is an authenticated second account (dual control), not free text.
    assert fails(*pay, "--signer", ANN) == (
        "reelgate: error: --witness: name the second person's account (dual control, "
        "tournament.prize-receipt); its password is asked"
    )
    assert "--witness" in fails(*pay, "--signer", ANN, "--witness", "Floor Lee")
    assert "must be director, supervisor, not cashier" in fails(
        *pay, "--signer", ANN, "--witness", "cleo"
    )
    assert "rule 15: prizes are not transferable" in fails(
        *pay, "--signer", BEN, "--witness", "sam"
    )
    paid = ok(*pay, "--signer", ANN, "--witness", "sam", "--now", "2026-11-02 19:00")
    assert (paid["amount_cents"], paid["signer"], paid["witness"]) == (106667, ANN, "sam")
    [row] = [
        r for r in ok("audit", "show", "--limit", "5") if r["action"] == "tournament.prizes.paid"
    ]
    assert row["details"]["second_person"] == {
        "account": "sam", "role": "supervisor", "for": "tournament.prize-receipt"
    }  # fmt: skip

    standings = ok("tournament", "standings", *q)
    assert [
        (x["place"], x["minimum_cents"], x["surplus_cents"], x["player_name"], x["paid"])
        for x in standings["prizes"]
    ] == [(1, 100000, 6667, "Ann", True), (2, 50000, 3334, "Ben", False)]
    table = ok("tournament", "standings", *q, json_out=False)
    assert "R1066.67" in table  # the prize paid, in the people's table
    listed = ok(*prizes, "list", *q)
    assert listed["prizes"] == standings["prizes"]

    ok(*prizes, "schedule", "Ridge", "1=500000", "2=200000", "3=100000")  # the final
    final = ok("tournament", "standings", "Ridge", "--stage", "final")
    assert [(x["place"], x["total_cents"], x["entry_id"], x["paid"]) for x in final["prizes"]] == [
        (1, 500000, None, False),
        (2, 200000, None, False),
        (3, 100000, None, False),
    ]
    assert "rule 19: 4 prize places but only 3" in fails(
        *prizes, "schedule", "Ridge", "1=4", "2=3", "3=2", "4=1", "--reason", "more"
    )
