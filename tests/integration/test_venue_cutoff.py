"""Two venues on one central PostgreSQL; one venue is cut off from the centre mid-heat.

Ridge's gateway reaches the central database through a loopback TCP proxy the test cuts
(every connection dropped, new ones refused) while Ridge's heat is running, and restores
once that heat has ended on the floor; Coast's gateway reaches the centre directly and
plays its heat meanwhile.  Ridge's heat runs to its end on the outage spool; when the link
returns every score of both venues is in the central standings exactly once, as read on
the floor, and the audit chain verifies.  PostgreSQL only (the central database).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from emulators.bank import Bank
from emulators.wan_link import WanLink
from gateway.app.context import GatewayContext
from gateway.app.gateway import GatewaySettings, RunningGateway
from gateway.floor.store import set_bank_enabled
from gateway.heats.heat_core import HeatOutcome
from gateway.records import chain
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.services import add_player, register_for_heat, sell_entries, unit_of_work
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.services.standings import stage_standings
from gateway.tournament.settings import TournamentSettings
from storage import audit_verify, effects
from storage.db import make_engine, make_sessionmaker
from storage.floor import venues_of_entries
from storage.journal import HeatResult, HeatRun, RunState
from storage.tournament import Score, Seat

# Entries are sold on the wall clock moments before the heat: T5's 48 h entries, so a run at
# the venue's midnight still reaches its heat (a T7 same-day entry would not).
SETTINGS = TournamentSettings(validity=EntryValidity.HOURS_48)

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

PG_URL = os.environ.get("REELGATE_DATABASE_URL", "")
SEATS = 3  # per venue


async def _until(cond: Callable[[], bool], within: float, what: str) -> None:
    for _ in range(int(within / 0.05)):  # bounded
        if cond():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what}: not reached in {within} s")


@pytest.fixture
async def central() -> AsyncIterator[str]:
    """A fresh central database on the PostgreSQL server ``REELGATE_DATABASE_URL`` names."""
    if not PG_URL.startswith("postgresql"):
        pytest.skip("the central database is PostgreSQL (REELGATE_DATABASE_URL)")
    url = make_url(PG_URL)
    if url.host not in ("127.0.0.1", "localhost", "::1"):
        pytest.skip("the venue's link proxy only fronts a loopback database")
    name = f"venues_{uuid.uuid4().hex[:10]}"
    admin = make_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
    except OSError:
        await admin.dispose()
        pytest.skip("PostgreSQL not reachable")
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()


@dataclass
class Venue:
    name: str
    bank: Bank
    floor: Path
    spool: Path
    heat_id: int = 0

    @property
    def bank_name(self) -> str:
        return self.name[0].upper()

    def floor_text(self) -> str:
        rows = ",\n".join(
            f'  {{ id = "{b.machine.machine_id}", endpoint = "{b.endpoint}" }}'
            for b in self.bank.machines
        )
        return f'[[bank]]\nname = "{self.bank_name}"\nmachines = [\n{rows},\n]\n'


async def _seed(db: str, venues: list[Venue]) -> int:
    """Each venue's floor under its venue; one tournament, a heat per venue due shortly,
    three players seated in each."""
    for v in venues:
        ctx = await GatewayContext.open(
            database=db, floor_path=str(v.floor), spool=v.spool, upgrade=True, venue=v.name
        )
        try:
            await set_bank_enabled(ctx.sessions, v.bank_name, enabled=True, actor="tech")
        finally:
            await ctx.close()
    ctx = await GatewayContext.open(database=db, floor_path=None, spool=venues[0].spool)
    try:
        now = datetime.now(UTC)
        async with unit_of_work(ctx.sessions) as s:
            t = await create_tournament(s, "Two Coasts", SETTINGS, actor="test")
            for number, v in enumerate(venues, start=1):
                heat = await schedule_heat(
                    s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(seconds=3),
                    bank_name=v.bank_name, duration_seconds=3, starting_credits=500,
                    actor="test", now=now, number=number,
                )  # fmt: skip
                v.heat_id = heat.id
            for i in range(SEATS * len(venues)):
                p = await add_player(
                    s, id_number=f"8502{i:02d}5800087", name=f"Player {i + 1}",
                    date_of_birth=date(1985, 2, 1 + i), actor="test", now=now,
                )  # fmt: skip
                await sell_entries(s, t.id, p.id, cashier="test", now=now)
        for i in range(SEATS * len(venues)):
            async with unit_of_work(ctx.sessions) as s:
                heat_id = venues[i // SEATS].heat_id
                await register_for_heat(s, heat_id, f"8502{i:02d}5800087", actor="test", now=now)
        return t.id
    finally:
        await ctx.close()


async def _serve(
    v: Venue, db: str, stop: asyncio.Event, finished: list[HeatOutcome]
) -> RunningGateway:
    settings = GatewaySettings(
        database=db, floor=str(v.floor), spool=v.spool, tick_s=0.2, venue=v.name,
        holder=f"serve {v.name}",
    )  # fmt: skip
    gateway = RunningGateway(settings)
    await gateway.__aenter__()
    gateway.running.on_finished.append(lambda _bank, out: finished.append(out))
    return gateway


async def test_a_venue_cut_off_mid_heat_forwards_its_scores_once(
    central: str, tmp_path: Path
) -> None:
    venues: list[Venue] = []
    for name in ("ridge", "coast"):
        bank = Bank(SEATS, name_prefix=name[0].upper())
        await bank.start()
        bank.start_players(seed=len(venues) + 3, pace=0.2)
        v = Venue(name, bank, tmp_path / f"{name}.toml", tmp_path / f"{name}.spool")
        v.floor.write_text(v.floor_text())
        venues.append(v)
    ridge, coast = venues
    proxy = WanLink(make_url(central).port or 5432)
    await proxy.start()
    via_link = make_url(central).set(port=proxy.port).render_as_string(hide_password=False)
    stop = asyncio.Event()
    done: dict[str, list[HeatOutcome]] = {"ridge": [], "coast": []}
    gateways: list[RunningGateway] = []
    runs: list[asyncio.Task[None]] = []
    try:
        tournament = await _seed(central, venues)
        gateways = [
            await _serve(ridge, via_link, stop, done["ridge"]),
            await _serve(coast, central, stop, done["coast"]),
        ]
        assert list(gateways[0].context.floor.banks) == ["R"]  # each venue its own banks
        assert list(gateways[1].context.floor.banks) == ["C"]
        runs = [asyncio.create_task(g.run(stop)) for g in gateways]
        live = gateways[0].running.live

        def ridge_running() -> bool:
            runner = live["R"].runner if "R" in live else None
            out = getattr(runner, "out", None)
            return out is not None and out.state is RunState.RUNNING

        await _until(ridge_running, 20, "Ridge's heat running")
        await proxy.cut()  # the wide-area link goes down mid-heat
        await _until(lambda: bool(done["ridge"]), 30, "Ridge's heat over, cut off")
        assert gateways[0].context.writer.spooled_total > 0
        assert gateways[0].context.writer.pending  # its results wait in the spool
        await _until(lambda: bool(done["coast"]), 30, "Coast's heat over")
        await asyncio.sleep(1.0)  # the link stays down a moment after the heat
        await proxy.restore()

        engine = make_engine(central)
        chain.bind(engine, central)  # the session's test keys (tests/conftest.py)
        sessions = make_sessionmaker(engine)
        try:
            outcomes = {v.name: done[v.name][0] for v in venues}
            for out in outcomes.values():
                assert out.state is RunState.CLOSED
                assert all(s.score is not None for s in out.seats.values())

            async def forwarded() -> bool:
                async with sessions() as s:
                    scores = await s.scalar(select(func.count()).select_from(Score))
                    left = await effects.pending(s)
                    unsettled = await s.scalar(
                        select(func.count()).select_from(HeatRun).where(~HeatRun.settled)
                    )
                return scores == SEATS * 2 and not left and unsettled == 0

            for _ in range(200):  # bounded: 20 s for the spool and the bridge
                if await forwarded():
                    break
                await asyncio.sleep(0.1)
            assert not gateways[0].context.writer.pending
            await _check_central(sessions, tournament, venues, outcomes)
        finally:
            await engine.dispose()
    finally:
        stop.set()
        await asyncio.gather(*runs, return_exceptions=True)
        for g in gateways:
            await g.close()
        with contextlib.suppress(Exception):
            await proxy.close()
        for v in venues:
            await v.bank.close()


async def _check_central(
    sessions: async_sessionmaker[AsyncSession],
    tournament: int,
    venues: list[Venue],
    outcomes: dict[str, HeatOutcome],
) -> None:
    async with sessions() as s:
        standings = await stage_standings(s, tournament, Stage.QUALIFYING)
        seats = {
            (x.heat_id, x.machine_id): x.entry_id for x in (await s.scalars(select(Seat))).all()
        }
        entries = [x.entry_id for x in standings.lines]
        venue_of = await venues_of_entries(s, tournament, Stage.QUALIFYING, entries)
        expected: dict[int, int] = {}
        for v in venues:
            for machine, seat in outcomes[v.name].seats.items():
                assert seat.score is not None
                expected[seats[(v.heat_id, machine)]] = seat.score
        # Every venue's entries ranked in the one central standings, once each (T14),
        # with the credits read on the floor (T12): none lost, none doubled.
        assert sorted(entries) == sorted(expected)
        assert {x.entry_id: x.credits for x in standings.lines} == expected
        assert {e: venue_of[e] for e in entries} == {
            seats[(v.heat_id, m)]: v.name for v in venues for m in outcomes[v.name].seats
        }
        results = (await s.execute(select(HeatResult.run_id, HeatResult.machine_id))).all()
        assert len(results) == len(set(results)) == SEATS * 2
        assert len(await effects.pending(s)) == 0
        verified = await audit_verify.verify(s)
        assert verified.ok, verified.problem
