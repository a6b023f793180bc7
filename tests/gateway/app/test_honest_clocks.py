"""Honest clocks at the command line, on a production database: ``--now`` on a write is
judged against the real time (the host clock, placed here by ``keyed.REAL_CLOCK``).

Post-dated writes are refused; a back-dated one needs a director's account (password
typed) and a reason, keeps T11b (no late entries) at the real time, and records both
times in its audit rows; a training database takes any keyed time.  Every refusal is
one line and saves nothing."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from gateway.app import keyed
from gateway.app.cli import main
from gateway.app.identity import host_actor, host_login
from storage import audit
from storage.db import make_engine, make_sessionmaker
from storage.floor import FloorBank, FloorMachine
from storage.tournament import EntryPurchase
from tests.keyed_engine import make_engine as keyed_engine

from ..training_db import (
    PASSWORD,
    add_accounts,
    cheap_hashes,
    type_passwords,
)

SAST = ZoneInfo("Africa/Johannesburg")
DAY = datetime(2026, 11, 2, tzinfo=SAST)
ANN, BEN = "8001015009087", "8101015009086"


def at(hour: int, minute: int = 0) -> datetime:
    return DAY.replace(hour=hour, minute=minute)


def local(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")


class Desk:
    """The CLI on one database file, with the real time under the test's hand."""

    def __init__(self, url: str, capsys: pytest.CaptureFixture[str], mp: pytest.MonkeyPatch):
        self.url, self.capsys, self.mp = url, capsys, mp
        self.clock(at(9))

    def clock(self, moment: datetime) -> None:
        self.mp.setattr(keyed, "REAL_CLOCK", lambda: moment)

    def ok(self, *argv: str) -> Any:
        self.capsys.readouterr()
        code = main([*argv, "--database", self.url, "--json"])
        out, err = self.capsys.readouterr()
        assert code == 0, err
        return json.loads(out)

    def fails(self, *argv: str) -> str:
        self.capsys.readouterr()
        assert main([*argv, "--database", self.url]) == 2
        err = self.capsys.readouterr().err
        assert err.count("\n") == 1  # one line, no banner
        return err.strip()

    def rows(self, action: str) -> list[audit.AuditEntry]:
        async def go() -> list[audit.AuditEntry]:
            engine = make_engine(self.url)
            try:
                async with make_sessionmaker(engine)() as s:
                    query = select(audit.AuditEntry).where(audit.AuditEntry.action == action)
                    return list((await s.scalars(query)).all())
            finally:
                await engine.dispose()

        return asyncio.run(go())

    def purchases(self) -> list[EntryPurchase]:
        async def go() -> list[EntryPurchase]:
            engine = make_engine(self.url)
            try:
                async with make_sessionmaker(engine)() as s:
                    return list((await s.scalars(select(EntryPurchase))).all())
            finally:
                await engine.dispose()

        return asyncio.run(go())


def _floor(url: str) -> None:
    async def go() -> None:
        engine = keyed_engine(url)
        async with make_sessionmaker(engine)() as session, session.begin():
            session.add(FloorBank(name="A", enabled=True))
            await session.flush()
            for i in range(1, 4):
                session.add(
                    FloorMachine(machine_id=f"A-{i}", bank_name="A", position=i,
                                 endpoint=f"tcp://127.0.0.1:{7000 + i}", updated_at=at(8))
                )  # fmt: skip
        await engine.dispose()

    asyncio.run(go())


def _desk(tmp_path: Path, capsys: pytest.CaptureFixture[str], mp: pytest.MonkeyPatch,
          *, training: bool) -> Desk:  # fmt: skip
    url = f"sqlite+aiosqlite:///{tmp_path / 'desk.db'}"
    init = ["db", "init", "--database", url, *(["--training"] if training else [])]
    assert main(init) == 0
    _floor(url)
    cheap_hashes(mp)
    add_accounts(url, ("dana", "director"), ("sam", "supervisor"), ("cash", "cashier"))
    type_passwords(mp, *[PASSWORD] * 20)
    desk = Desk(url, capsys, mp)
    desk.ok("tournament", "create", "Ridge")
    desk.ok("heat", "schedule", "-t", "Ridge", "--start", local(at(18)), "--bank", "A")
    for ref, name in ((ANN, "Ann"), (BEN, "Ben")):
        desk.ok("players", "add", "--id-number", ref, "--name", name, "--dob", "1980-01-01")
        desk.ok("entries", "sell", ref, "-t", "Ridge")
    return desk


@pytest.fixture
def desk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Desk:
    return _desk(tmp_path, capsys, monkeypatch, training=False)


def test_a_post_dated_write_is_refused_and_saves_nothing(desk: Desk) -> None:
    week = local(at(9) + timedelta(days=7))
    err = desk.fails("entries", "sell", ANN, "-t", "Ridge", "--now", week)
    assert "post-dated writes are refused" in err
    # Even a director cannot post-date.
    err = desk.fails("entries", "sell", ANN, "-t", "Ridge", "--now", week,
                     "--director", "dana", "--reason", "pre-sale")  # fmt: skip
    assert "post-dated" in err
    assert len(desk.purchases()) == 2
    # Within the two minutes of clock skew it is the same moment: no director needed.
    desk.ok("entries", "sell", ANN, "-t", "Ridge", "--now", local(at(9, 1)))
    assert len(desk.purchases()) == 3


def test_a_back_dated_write_needs_a_director_and_a_reason(desk: Desk) -> None:
    desk.clock(at(12))
    keyed_at = at(10, 30)
    sell = ("entries", "sell", BEN, "-t", "Ridge", "--now", local(keyed_at))
    assert "needs a director" in desk.fails(*sell)
    assert "needs --reason" in desk.fails(*sell, "--director", "dana")
    not_director = desk.fails(*sell, "--director", "sam", "--reason", "x")
    assert "must be director, not supervisor" in not_director
    assert len(desk.purchases()) == 2
    sale = desk.ok(*sell, "--director", "dana", "--reason", "till slip keyed after the outage")
    # The written row carries the keyed time; its audit row both times and who allowed it.
    [purchase] = [p for p in desk.purchases() if p.id == sale["purchase"]]
    assert purchase.purchased_at == keyed_at
    sold = desk.rows("purchase.sell")
    [row] = [r for r in sold if r.details_dict()["purchase_id"] == sale["purchase"]]
    assert row.actor == host_actor()
    assert row.details_dict()["clock"] == {
        "keyed_at": keyed_at.isoformat(),
        "real_at": at(12).isoformat(),
        "kind": "back-dated",
        "reason": "till slip keyed after the outage",
        "authorised_by": "dana",
    }


def test_t11b_a_back_dated_registration_after_the_start_is_refused(desk: Desk) -> None:
    """Rule 11: "Late entries shall not be accepted" — a registration keyed a minute
    before the heat, at 18:05, is a late entry."""
    desk.clock(at(18, 5))
    late = ("heat", "register", "1", ANN, "--now", local(at(17, 59)),
            "--director", "dana", "--reason", "was in the queue")  # fmt: skip
    err = desk.fails(*late)
    assert err.startswith("reelgate: error: rule 11: back-dated to")
    assert "late entries are not accepted" in err
    assert desk.rows("seat.register") == []
    # Before the start the same back-dated registration may stand.
    desk.clock(at(17, 50))
    seat = desk.ok("heat", "register", "1", ANN, "--now", local(at(17, 40)),
                   "--director", "dana", "--reason", "was in the queue")  # fmt: skip
    assert seat["seat"] == 1


def test_a_command_that_takes_no_keyed_time_refuses_now(desk: Desk) -> None:
    err = desk.fails("tournament", "decision", "Ridge", "--about", "heat 1", "--decision", "ok",
                     "--reason", "x", "--now", local(at(9)))  # fmt: skip
    assert "takes no keyed time" in err
    assert desk.rows("director.decision") == []


def test_a_training_database_takes_free_keyed_times(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    desk = _desk(tmp_path, capsys, monkeypatch, training=True)
    desk.clock(at(18, 5))
    # Late by the real time, no director, no reason: a rehearsal keys what it likes.
    assert desk.ok("heat", "register", "1", ANN, "--now", local(at(17, 59)))["seat"] == 1
    desk.ok("entries", "sell", BEN, "-t", "Ridge", "--now", local(at(18, 5) + timedelta(days=7)))
    clock = desk.rows("seat.register")[0].details_dict()["clock"]
    assert clock["training"] is True
    assert clock["keyed_at"] == at(17, 59).isoformat()
    # Every successful command says TRAINING (on standard error, after its output).
    desk.capsys.readouterr()
    assert main(["players", "list", "--database", desk.url]) == 0
    assert "TRAINING database" in desk.capsys.readouterr().err


def test_the_cli_records_the_host_account_never_a_typed_name(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import pwd
    import socket

    monkeypatch.setenv("REELGATE_ACTOR", "somebody-else")  # ignored
    monkeypatch.setenv("LOGNAME", "somebody-else")
    desk.ok("players", "add", "--id-number", "8201015009085", "--name", "Cy", "--dob", "1982-01-01")
    expected = f"os:{pwd.getpwuid(os.geteuid()).pw_name}@{socket.gethostname()}"
    assert {r.actor for r in desk.rows("player.add")} == {expected}
    desk.capsys.readouterr()
    with pytest.raises(SystemExit, match="2"):
        main(["players", "add", "--database", desk.url, "--id-number", "1", "--name", "x",
              "--dob", "1980-01-01", "--actor", "dana"])  # fmt: skip
    assert "unrecognized arguments: --actor dana" in desk.capsys.readouterr().err


def test_dual_control_at_the_cli_needs_a_second_account_with_its_password(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    desk.clock(at(17, 50))
    desk.ok("heat", "register", "1", ANN)
    desk.clock(at(18))
    desk.ok("heat", "begin", "1", "--present", "1")
    seat = desk.ok("heat", "show", "1")["seats"][0]["seat_id"]
    alone = ("heat", "score", str(seat), "--credits", "1500", "--reason", "link lost")
    score = (*alone, "--as", "dana")
    assert "--second: name the second person's account" in desk.fails(*score)
    # The first person is an account too, not the host login (audit 25.5).
    assert "--as: name your own account" in desk.fails(*alone, "--second", "sam")
    assert "must be director, supervisor, not cashier" in desk.fails(*score, "--second", "cash")
    assert "--as cash: must be director, supervisor, not cashier" in desk.fails(
        *alone, "--as", "cash", "--second", "sam"
    )
    assert "not the --as account" in desk.fails(*score, "--second", "DANA")
    type_passwords(monkeypatch, PASSWORD, "not the password")
    assert "unknown account or wrong password" in desk.fails(*score, "--second", "sam")
    type_passwords(monkeypatch, "not the password", PASSWORD)
    assert "--as dana: unknown account or wrong password" in desk.fails(*score, "--second", "sam")
    type_passwords(monkeypatch, PASSWORD, PASSWORD)
    desk.ok(*score, "--second", "sam")
    [row] = desk.rows("score.manual")
    assert row.actor == "dana"  # the signed-in first person, the host login beside it
    assert row.details_dict()["first_person"] == {
        "account": "dana", "role": "director", "host": host_login()
    }  # fmt: skip
    assert row.details_dict()["second_person"] == {
        "account": "sam", "role": "supervisor", "for": "heat.manual-score"
    }  # fmt: skip


def test_t10b_a_notice_dated_before_it_was_keyed_is_a_back_dated_record(desk: Desk) -> None:
    """T10b's notice is judged by when it was announced: an ``--announced-at`` earlier than
    the real time is held to the same rules as a back-dated ``--now``."""
    move = ("heat", "reschedule", "1", "--start", local(at(20)), "--announced-via", "MC",
            "--announced-at", local(at(7)), "--reason", "told at the briefing")  # fmt: skip
    assert "--announced-at 2026-11-02T07:00:00+02:00 is 2 h before" in desk.fails(*move)
    desk.ok(*move, "--director", "dana")
    [row] = desk.rows("heat.reschedule")
    clock = row.details_dict()["clock --announced-at"]
    assert (clock["keyed_at"], clock["authorised_by"]) == (at(7).isoformat(), "dana")
    post = ("heat", "reschedule", "1", "--start", local(at(21)), "--announced-via", "MC",
            "--announced-at", local(at(10)), "--reason", "x")  # fmt: skip
    assert "post-dated writes are refused" in desk.fails(*post)
