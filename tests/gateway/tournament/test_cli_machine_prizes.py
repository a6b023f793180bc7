"""``reelgate tournament prizes pay --to-machine`` end to end on a SQLite file against an
emulated SAS machine over TCP (house clauses P1, P2, P4, P6): refused until the venue
allows it, then journaled with the witness's password, credited to the machine, listed,
and shown in the day's cash-up under the tender ``machine (AFT)``, out of the drawer."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from emulators.bank import Bank
from gateway.app.cli import main
from storage.db import make_sessionmaker
from tests.keyed_engine import make_engine as keyed_engine

from ..training_db import PASSWORD, add_accounts, cheap_hashes, type_passwords
from .test_cli import _seed_floor

ANN, BEN = "8001015009087", "8101015009086"
KEY = bytes(range(1, 21)).hex()


@pytest.fixture
def emulated() -> Iterator[Bank]:
    """One emulated SAS machine on its own event loop (the CLI runs its own)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    bank = Bank(1, seed=11)
    asyncio.run_coroutine_threadsafe(bank.__aenter__(), loop).result(10)
    try:
        yield bank
    finally:
        asyncio.run_coroutine_threadsafe(bank.__aexit__(None, None, None), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def _point_a1_at(url: str, endpoint: str) -> None:
    async def go() -> None:
        engine = keyed_engine(url)
        async with make_sessionmaker(engine)() as session, session.begin():
            await session.execute(
                sa.text(
                    "UPDATE floor_machine SET endpoint = :e, aft_registration_key = :k,"
                    " aft_pos_id = 7001 WHERE machine_id = 'A-1'"
                ),
                {"e": endpoint, "k": KEY},
            )
        await engine.dispose()

    asyncio.run(go())


def test_p1_p2_p6_pay_to_the_machine_from_the_host(
    tmp_path: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    emulated: Bank,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    _seed_floor(url)
    _point_a1_at(url, emulated.machines[0].endpoint)
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
    prizes = ("tournament", "prizes")
    q = ("Ridge", "--stage", "qualifying")
    ok(*prizes, "schedule", *q, "1=40000", "--now", "2026-11-02 09:00")
    ok("hotseat", "commit", "1", "--draws", "1", "--prize-cents", "20000",
       "--now", "2026-11-02 17:00")  # fmt: skip
    for id_number in (ANN, BEN):
        ok("heat", "register", "1", id_number, "--now", "2026-11-02 17:00")
    ok("heat", "begin", "1", "--present", "1,2", "--now", "2026-11-02 18:00")
    seats = [s["seat_id"] for s in ok("heat", "show", "1")["seats"]]
    for seat, credits in zip(seats, ("1500", "1200"), strict=True):
        ok("heat", "score", str(seat), "--credits", credits, "--reason", "link lost",
           "--as", "sam", "--second", "dana", "--now", "2026-11-02 18:11")  # fmt: skip
    ok("heat", "finish", "1", "--now", "2026-11-02 18:12")

    pay = (*prizes, "pay", *q, "--place", "1", "--signature", "slip 9", "--as", "cleo")
    to_a1 = ("--to-machine", "A-1", "--signer", ANN, "--witness", "sam")
    assert fails(*pay, *to_a1, "--now", "2026-11-02 19:00").startswith(
        "reelgate: error: rule P1: prizes to the machine are not allowed at this venue"
    )
    ok(*prizes, "machine-setting", "--allow", "--reason", "board letter 2026/114",
       "--now", "2026-11-02 18:30")  # fmt: skip
    out = ok(*pay, *to_a1, "--now", "2026-11-02 19:00")
    (transfer,) = out["transfers"]
    assert (transfer["status"], transfer["machine"], transfer["amount_cents"]) == (
        "done",
        "A-1",
        40000,
    )
    assert emulated.machines[0].machine.restricted_credits == 40000  # 1 c a credit
    assert fails(*pay, *to_a1, "--now", "2026-11-02 19:05").startswith(
        "reelgate: error: rule 15: place 1 was paid"
    )
    assert (
        ok(*prizes, "machine-list")["transfers"][0]["transaction_id"]
        == (transfer["transaction_id"])
    )
    assert ok(*prizes, "machine-deliver")["transfers"][0]["status"] == "done"  # nothing resent
    assert emulated.machines[0].machine.restricted_credits == 40000

    # HS7: the hot-seat draw's prize to the same machine, through `hotseat pay`
    (draw,) = ok("hotseat", "draw", "1", "--now", "2026-11-02 18:20")["draws"]
    winner = ANN if draw["winner"] == "001" else BEN
    out = ok("hotseat", "pay", str(draw["id"]), "--signature", "slip 3", "--as", "cleo",
             "--signer", winner, "--witness", "sam", "--to-machine", "A-1",
             "--now", "2026-11-02 19:10")  # fmt: skip
    assert [(t["ref"], t["status"]) for t in out["transfers"]] == [
        (f"hotseat-draw:{draw['id']}", "done")
    ]
    assert emulated.machines[0].machine.restricted_credits == 60000

    cashup = ok("cashup", "--date", "2026-11-02")
    assert cashup["reconciliation"]["ok"], cashup["reconciliation"]
    tenders = {t["tender"]: t for t in cashup["totals"]["by_tender"]}
    assert tenders["machine (AFT)"]["out_cents"] == 60000
    assert cashup["totals"]["cash_out_cents"] == 0  # nothing left the drawer
