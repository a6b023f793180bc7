"""Hypothesis through the services and SQLite: whatever order registrations, malfunctions
(re-seat or refund, T20) and scores come in, no seat is ever double-booked (T11,
T16) and no credit moves between entries (T12).

Clauses: docs/rules.md#t20, #t11, #t16, #t12.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.records import chain
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import SeatStatus, Stage
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import TournamentSettings
from storage.db import Base, make_engine, make_sessionmaker
from storage.floor import FloorBank, FloorMachine
from storage.tournament import Entry, Score, Seat

from .conftest import at, score

DAY = date(2026, 11, 2)
HEATS = 3  # 18:00, 19:00, 20:00, three machines each
PLAYERS = 5

registrations = st.lists(
    st.tuples(st.integers(0, PLAYERS - 1), st.integers(0, HEATS - 1)), max_size=14
)
malfunctions = st.lists(st.integers(1, 3), max_size=3)  # seat numbers, per heat
credits = st.lists(st.integers(0, 5000), min_size=9, max_size=9)


@given(registrations, st.lists(malfunctions, min_size=HEATS, max_size=HEATS), credits)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_rules_11_12_16_20_seats_and_credits_stay_consistent(
    regs: list[tuple[int, int]], broken: list[list[int]], points: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(_season(Path(tmp) / "p.db", regs, broken, points))


Run = Callable[..., Awaitable[Any]]


async def _season(
    path: Path, regs: list[tuple[int, int]], broken: list[list[int]], points: list[int]
) -> None:
    import storage.models  # noqa: F401

    url = f"sqlite+aiosqlite:///{path}"
    engine = make_engine(url)
    chain.bind(engine, url)  # the session's test keys (tests/conftest.py)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    maker = make_sessionmaker(engine)

    async def run(fn: Any, *a: Any, **kw: Any) -> Any:
        async with svc.unit_of_work(maker) as session:
            return await fn(session, *a, **kw)

    await _floor_bank(maker)
    heats, players = await _open_day(run)
    await _register(run, heats, players, regs)
    given_credits: dict[int, int] = {}
    point = iter(points * 3)
    for k, heat in enumerate(heats):
        given_credits.update(await _play_heat(run, heat.id, at(DAY, 18 + k), broken[k], point))

    async with svc.unit_of_work(maker) as s:
        seats_rows = (await s.execute(select(Seat))).scalars().all()
        entries = {e.id: e for e in (await s.execute(select(Entry))).scalars()}
        scores = (await s.execute(select(Score))).scalars().all()
    await engine.dispose()
    _check_seats_and_scores(seats_rows, entries, scores, given_credits)


async def _floor_bank(maker: async_sessionmaker[AsyncSession]) -> None:
    """Bank A with three machines."""
    async with svc.unit_of_work(maker) as s:
        s.add(FloorBank(name="A", enabled=True))
        await s.flush()
        for i in range(1, 4):
            s.add(
                FloorMachine(
                    machine_id=f"A-{i}",
                    bank_name="A",
                    position=i,
                    endpoint="tcp://127.0.0.1:1",
                    updated_at=datetime.now(UTC),
                )
            )


async def _open_day(run: Run) -> tuple[list[Any], list[Any]]:
    """A tournament with HEATS qualifying heats and PLAYERS players, each with an entry
    per heat."""
    t = await run(
        svc.create_tournament,
        "prop",
        TournamentSettings(),
        actor="t",
    )
    heats = [
        await run(
            svc.schedule_heat,
            t.id,
            stage=Stage.QUALIFYING,
            starts_at=at(DAY, 18 + k),
            bank_name="A",
            duration_seconds=600,
            starting_credits=1000,
            actor="t",
            now=at(DAY, 9),
        )
        for k in range(HEATS)
    ]
    players = [
        await run(
            svc.add_player,
            id_number=f"800101500{i}087",
            name=f"P{i}",
            date_of_birth=date(1980, 1, 1),
            actor="t",
            now=at(DAY, 9),
        )
        for i in range(PLAYERS)
    ]
    for p in players:
        await run(
            svc.sell_entries,
            t.id,
            p.id,
            quantity=HEATS,
            cashier="t",
            now=at(DAY, 10),
        )
    return heats, players


async def _register(
    run: Run, heats: list[Any], players: list[Any], regs: list[tuple[int, int]]
) -> None:
    """Registrations in the drawn order; a refusal is a full heat or a player already
    seated in it."""
    for p, h in regs:
        try:
            await run(svc.register_for_heat, heats[h].id, players[p].id, actor="t", now=at(DAY, 12))
        except RuleViolation as exc:
            assert exc.rule in (9, 16)  # noqa: PT017


async def _play_heat(
    run: Run, heat_id: int, start: datetime, broken: list[int], point: Iterator[int]
) -> dict[int, int]:
    """Begin with every seat present, break the drawn seats (rule 20), score the rest
    and finish; returns the credits given to each entry."""
    given_credits: dict[int, int] = {}
    seats = await run(svc.heat_seats, heat_id)
    await run(
        svc.begin_heat,
        heat_id,
        present_seats=[s.seat_number for s in seats],
        at=start,
        actor="t",
    )
    for number in broken:
        live = {s.seat_number: s for s in await run(svc.heat_seats, heat_id)}
        if number in live and live[number].status is SeatStatus.PRESENT:
            await run(
                svc.mark_seat_malfunctioned,
                live[number].seat_id,
                at=start + timedelta(minutes=1),
                actor="t",
                reason="fault",
            )
    for s in await run(svc.heat_seats, heat_id):
        if s.status is SeatStatus.PRESENT:
            c = next(point)
            await run(
                svc.record_machine_score, s.seat_id, score(c), at=start + timedelta(minutes=10)
            )
            given_credits[s.entry_id] = c
    await run(svc.finish_heat, heat_id, at=start + timedelta(minutes=11), actor="t")
    return given_credits


def _check_seats_and_scores(
    seats_rows: Sequence[Seat],
    entries: dict[int, Entry],
    scores: Sequence[Score],
    given_credits: dict[int, int],
) -> None:
    active = [x for x in seats_rows if x.status not in (SeatStatus.MOVED, SeatStatus.CANCELLED)]
    per_heat: dict[int, list[Seat]] = defaultdict(list)
    for x in active:
        per_heat[x.heat_id].append(x)
    for rows in per_heat.values():
        assert len({x.seat_number for x in rows}) == len(rows)  # one entry per seat
        assert len({x.machine_id for x in rows}) == len(rows)
        assert len({x.holder_player_id for x in rows}) == len(rows)  # T16
    assert len({x.entry_id for x in active}) == len(active)  # an entry sits once per stage
    # T12: every score is its own entry's, as reported for that entry's seat
    assert {sc.entry_id: sc.final_credits for sc in scores} == given_credits
    seat_by_id = {x.id: x for x in seats_rows}
    for sc in scores:
        assert seat_by_id[sc.seat_id].entry_id == sc.entry_id
        assert (
            entries[sc.entry_id].player_id
            == sc.player_id
            == seat_by_id[sc.seat_id].holder_player_id
        )
