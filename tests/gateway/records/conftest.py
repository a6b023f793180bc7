"""A day at the venue on each backend, for the export and cash-up tests.

Wednesday 2 December 2026 (Super 9 sessions at 19:00 and 21:00, S9-4), venue time:

* tournament "Ridge": the cashier sells Ann a single (R50, cash) and Cat a
  complimentary entry (T5); Bob sells Ben the R200 package (4 seats, T6) and later
  refunds one of them (T23, R50).  Qualifying heat 1 at 18:00: Ann 1500, Cat 900.  The
  advertised prize for 1st is R1,000 (T15), paid by Bob to Ann at 19:00.
* Super 9: the cashier sells tickets A (P1) and B (P2) at 10:00; both handed in at
  18:00; the 19:00 session draws 1..9 then 10, with spin 5 voided and re-spun; B
  claims a valid SUPER 9 after 10 distinct numbers: the jackpot (R5,000, S9-14) and the
  consolation (25% of R100 = R25, S9-16).  The cashier pays the consolation at 20:00
  (S9-26); the jackpot stays unpaid.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.super9.desk import Super9Desk
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.prizes import pay_prize, set_schedule
from storage.db import make_sessionmaker
from storage.tournament import Player

from ..super9.conftest import key_in
from ..tournament.conftest import Desk

SAST = ZoneInfo("Africa/Johannesburg")
WED = date(2026, 12, 2)
ANN, BEN, CAT = "8001015009087", "8101015009086", "8201015009085"
P1, P2 = "9002026009088", "7503035009089"


def at(hh: int, mm: int = 0, day: date = WED) -> datetime:
    return datetime(day.year, day.month, day.day, hh, mm, tzinfo=SAST)


@dataclass
class Venue:
    engine: AsyncEngine
    desk: Desk
    super9: Super9Desk
    tournament_id: int
    heat_id: int
    session_id: int
    refunded_entry: int


async def _super9_players(engine: AsyncEngine) -> None:
    async with make_sessionmaker(engine).begin() as db:
        for i, idn in enumerate((P1, P2)):
            db.add(Player(id_number=idn, card_number=f"S{i + 1}", name=f"Punter {i + 1}",
                          date_of_birth=date(1985, 1, 1)))  # fmt: skip


async def _tournament_day(desk: Desk) -> tuple[int, int, int]:
    tid = await desk.tournament()
    heat = await desk.heat(at(18))
    ann = await desk.player(ANN, "Ann")
    ben = await desk.player(BEN, "Ben")
    cat = await desk.player(CAT, "Cat")
    await desk.sell(ann, at(10))
    await desk.sell(cat, at(10, 5), complimentary=True)
    sale = await desk.run(svc.sell_entries, tid, ben, package_code="R200", cashier="bob",
                          now=at(11))  # fmt: skip
    refunded = sale.entry_ids[-1]
    await desk.run(svc.refund_entry, refunded, rule=23, reason="bought one too many",
                   actor="bob", now=at(12))  # fmt: skip
    await desk.run(set_schedule, tid, Stage.QUALIFYING, {1: 100_000}, actor="director",
                   now=at(9))  # fmt: skip
    for player in (ann, cat):
        await desk.register(heat, player, at(17))
    await desk.play(heat, {1: 1500, 2: 900}, at(18))
    await desk.run(pay_prize, tid, Stage.QUALIFYING, 1, signer=ANN, signature="slip 7",
                   witness="Floor Lee", actor="bob", now=at(19))  # fmt: skip
    return tid, heat, refunded


async def _super9_day(s9: Super9Desk) -> int:
    for serial, player in (("A", P1), ("B", P2)):
        await s9.sell(serial, player, actor="cashier", now=at(10))
    sid = await key_in(s9, "A", "20 21 22 23 24 25 26 27 28", actor="grd", now=at(18))
    await key_in(s9, "B", "1 2 3 4 5 6 7 8 10", actor="grd", now=at(18))
    await s9.open_session(at(19), actor="director", now=at(19))
    for game, number in enumerate((1, 2, 3, 4, 5), start=100):
        await s9.record_result(sid, game, number, now=at(19, 5))
    await s9.void_spin(sid, game_no=104, actor="supervisor", reason="ball left the wheel",
                       now=at(19, 6))  # fmt: skip
    for game, number in enumerate((5, 6, 7, 8, 9, 10), start=105):
        await s9.record_result(sid, game, number, now=at(19, 10))
    await s9.claim(sid, "B", "10 8 7 6 5 4 3 2 1", actor="grd", now=at(19, 30))
    await s9.close_session(sid, actor="director", now=at(19, 45))
    await s9.sign_prize(sid, "B", "consolation", signature="receipt 12", witness="Floor Lee",
                        signer=P2, actor="cashier", now=at(20))  # fmt: skip
    return sid


@pytest.fixture
async def desk(engine: AsyncEngine) -> Desk:
    """The tournament tests' desk on a floor of one bank (the checkpoint tests)."""
    d = Desk(make_sessionmaker(engine))
    await d.floor("A", 6)
    return d


@pytest.fixture
async def venue(engine: AsyncEngine) -> Venue:
    desk = Desk(make_sessionmaker(engine))
    await desk.floor("A", 6)
    await _super9_players(engine)
    s9 = Super9Desk(make_sessionmaker(engine))
    tid, heat, refunded = await _tournament_day(desk)
    sid = await _super9_day(s9)
    return Venue(engine, desk, s9, tid, heat, sid, refunded)
