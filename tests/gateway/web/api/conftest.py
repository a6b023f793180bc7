"""An API over a seeded desk: bank A (three machines, a door-opened trap mark on A02),
tournament "Spring", players,
entries, a scheduled heat with a seat, a closed heat with a present seat (for manual
scores), a disqualification, and one account with a token per role (plus a second
director and supervisor for dual control).  The clock is fixed; argon2 is made cheap.

Super 9 (:func:`_super9`): a session closed on Sunday 15 November with a prize to sign
for, Wednesday 18 November 19:00 drawing (ticket ``D1`` in play), Wednesday 21:00 never
opened, and an extra session today (Friday) at 19:00 on sale, with ticket ``S1`` sold
and ``S2`` handed in."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest
from argon2 import PasswordHasher
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

import storage.accounts
from gateway.accounts import service
from gateway.accounts.roles import Role
from gateway.super9.desk import Super9Desk
from gateway.super9.rules.verification import Verification
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import EntryValidity, HeatStatus, SeatStatus, Stage
from gateway.tournament.settings import TournamentSettings
from gateway.web.api import create_app
from storage.db import make_sessionmaker
from storage.floor import FloorBank, FloorMachine
from storage.marks import MachineTrapMark
from storage.tournament import Heat, Seat

ZONE = ZoneInfo("Africa/Johannesburg")
NOW = datetime(2026, 11, 20, 10, 0, tzinfo=ZONE)
PASSWORD = "correct horse battery"


@dataclass
class Desk:
    sessions: async_sessionmaker[AsyncSession]
    client: httpx.AsyncClient
    tokens: dict[str, str] = field(default_factory=dict)  # account name -> secret
    ids: dict[str, int] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)

    def auth(self, account: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[account]}"}


@pytest.fixture(autouse=True)
def cheap_argon2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        storage.accounts, "HASHER", PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    )


async def _accounts(s: AsyncSession, desk: Desk) -> None:
    names = [r.value for r in Role] + ["director2", "supervisor2"]
    for name in names:
        role = name.rstrip("2")
        user = await service.add_user(s, name, role, PASSWORD, actor="setup", now=NOW)
        _, secret = await service.create_token(
            s,
            user.name,
            role=None,
            expires_at=NOW + timedelta(days=30),
            label="t",
            actor="setup",
            now=NOW,
        )
        desk.tokens[name] = secret


async def _floor(s: AsyncSession) -> None:
    s.add(FloorBank(name="A", enabled=True))
    await s.flush()
    for i, machine in enumerate(["A01", "A02", "A03"], start=1):
        s.add(
            FloorMachine(
                machine_id=machine,
                bank_name="A",
                position=i,
                endpoint=f"tcp://127.0.0.1:{9400 + i}",
                updated_at=NOW,
            )
        )
    # A door opened overnight: the technician clears it once the machine is checked.
    s.add(MachineTrapMark(machine_id="A02", kind="door-opened", at=NOW - timedelta(hours=9)))


async def _tournament(s: AsyncSession, desk: Desk) -> None:
    settings = TournamentSettings(validity=EntryValidity.HOURS_48, venue_zone="Africa/Johannesburg")
    t = await svc.create_tournament(s, "Spring", settings, actor="director")
    desk.ids["tournament"] = t.id
    for key, idn, name in [
        ("p1", "8001015009087", "Thandi Mokoena"),
        ("p2", "7505055123080", "Pieter Botha"),
        ("p3", "9202020456081", "Lerato Dlamini"),
    ]:
        p = await svc.add_player(
            s, id_number=idn, name=name, date_of_birth=date(1980, 1, 1), actor="desk", now=NOW
        )
        desk.ids[key] = p.id
    done = await svc.schedule_heat(
        s,
        t.id,
        stage=Stage.QUALIFYING,
        starts_at=NOW - timedelta(hours=2),
        bank_name="A",
        duration_seconds=600,
        starting_credits=1000,
        actor="director",
        now=NOW - timedelta(days=1),
    )
    heat = await svc.schedule_heat(
        s,
        t.id,
        stage=Stage.QUALIFYING,
        starts_at=NOW + timedelta(days=1),
        bank_name="A",
        duration_seconds=600,
        starting_credits=1000,
        actor="director",
        now=NOW,
    )
    desk.ids["heat"] = heat.id
    desk.ids["done_heat"] = done.id


async def _entries(s: AsyncSession, desk: Desk) -> None:
    tid = desk.ids["tournament"]
    before = NOW - timedelta(hours=3)
    sold = await svc.sell_entries(s, tid, desk.ids["p1"], quantity=1, cashier="c", now=before)
    seat = await svc.register_for_heat(
        s,
        desk.ids["done_heat"],
        desk.ids["p1"],
        actor="desk",
        now=before,
        entry_id=sold.entry_ids[0],
    )
    heat = await s.get(Heat, desk.ids["done_heat"])
    assert heat is not None
    heat.status = HeatStatus.CLOSED  # the heat was played; its machine lost the link
    row = await s.get(Seat, seat.id)
    assert row is not None
    row.status = SeatStatus.PRESENT
    desk.ids["scored_seat"] = seat.id
    spare = await svc.sell_entries(s, tid, desk.ids["p2"], quantity=1, cashier="c", now=NOW)
    desk.ids["spare_entry"] = spare.entry_ids[0]
    dq = await svc.disqualify(
        s, tid, desk.ids["p3"], rule=23, reason="abusive", actor="director", now=NOW
    )
    desk.ids["disqualification"] = dq.id


def _day(day: int, hh: int, mm: int = 0) -> datetime:
    return datetime(2026, 11, day, hh, mm, tzinfo=ZONE)


NINE = "1 2 3 4 5 6 7 8 9"


async def _super9(d: Desk) -> None:
    s9 = Super9Desk(d.sessions)
    p1 = "8001015009087"  # Thandi Mokoena
    section = Verification("Thandi Mokoena", p1, "082 555 0100", True)
    # Sunday 15 November 15:00, played and closed: ticket C1 won with nine spins.
    await s9.sell("C1", p1, actor="cashier", now=_day(15, 9))
    await s9.hand_in("C1", NINE, actor="desk", now=_day(15, 10), verification=section)
    closed = await s9.open_session(_day(15, 15), actor="pd", now=_day(15, 14, 50))
    for n in range(1, 10):
        await s9.record_result(closed, n, n, now=_day(15, 15, n))
    await s9.claim(closed, "C1", NINE, actor="dealer", now=_day(15, 15, 10))
    result = await s9.close_session(closed, actor="pd", now=_day(15, 15, 30))
    d.ids["s9_closed"] = closed
    d.texts["s9_prize"] = result.payouts[0].kind.value
    # Wednesday 18 November 19:00, drawing, D1 in play.
    await s9.sell("D1", p1, actor="cashier", now=_day(18, 10))
    await s9.hand_in(
        "D1", "10 11 12 13 14 15 16 17 18", actor="desk", now=_day(18, 11), verification=section
    )
    d.ids["s9_drawing"] = await s9.open_session(_day(18, 19), actor="pd", now=_day(18, 18, 50))
    # Today, Friday 20 November: an extra session at 19:00, on sale.
    await s9.change_calendar(
        _day(20, 19), cancel=False, actor="pd", reason="festival", now=_day(1, 9)
    )
    await s9.sell("S1", "7505055123080", actor="cashier", now=_day(20, 9))
    await s9.sell("S2", p1, actor="cashier", now=_day(20, 9))
    await s9.hand_in("S2", NINE, actor="desk", now=_day(20, 9, 30), verification=section)


@pytest.fixture
async def desk(engine: AsyncEngine) -> AsyncIterator[Desk]:
    sessions = make_sessionmaker(engine)
    app = create_app(sessions, clock=lambda: NOW)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        d = Desk(sessions, client)
        async with svc.unit_of_work(sessions) as s:
            await _accounts(s, d)
            await _floor(s)
            await _tournament(s, d)
            await _entries(s, d)
        await _super9(d)
        yield d
