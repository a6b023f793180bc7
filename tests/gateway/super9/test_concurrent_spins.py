"""Two writers recording spins of one session at the same moment (S9-12, S9-13, S9-18).

The wheel follower and a desk terminal are separate desks (separate connections, as
separate processes would be).  Spins are serialised per session, so every spin gets its
own sequence number, a repeated wheel line is a no-op rather than a constraint error,
and the ticket completed by a spin is reported by that spin's recording.

Clauses: docs/rules.md#s9-12, #s9-13, #s9-18.
"""

from __future__ import annotations

import asyncio

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.feed import MemoryFeed
from gateway.super9.desk import Super9Desk
from storage.audit import AuditEntry
from storage.db import make_sessionmaker
from storage.super9 import SpinSource, Super9Spin

from .conftest import WED, at, key_in


async def test_concurrent_spins_are_serialised_per_session(
    engine: AsyncEngine, desk: Super9Desk, feed: MemoryFeed
) -> None:
    await desk.sell("A", "C1", actor="cashier", now=at(WED, 10))
    sid = await key_in(desk, "A", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 18))
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    other = Super9Desk(make_sessionmaker(engine), feed=feed)  # a second terminal
    now = at(WED, 19, 5)
    calls = []
    for game in range(1, 10):
        # Each wheel result reaches both desks at once: the second is a repeat.
        calls.append(desk.record_result(sid, game, game, now=now))
        calls.append(other.record_result(sid, game, game, now=now))
    calls.append(
        other.manual_spin(
            sid,
            20,
            confirm_number=20,
            keyed_by="dealer",
            confirmed_by="inspector",
            reason="wheel feed down",
            now=now,
        )
    )
    results = await asyncio.gather(*calls)

    recorded = [r for r in results if r is not None]
    assert len(recorded) == 10
    assert results.count(None) == 9  # one per game, repeats no-op
    assert sorted(r.seq for r in recorded) == list(range(1, 11))
    async with make_sessionmaker(engine)() as db:
        rows = (await db.execute(select(Super9Spin).order_by(Super9Spin.seq))).scalars().all()
    assert [r.seq for r in rows] == list(range(1, 11))
    assert sorted(r.game_no for r in rows if r.source is SpinSource.WHEEL) == list(range(1, 10))
    # S9-13: exactly the spin that called A's last number reports A complete.
    last_of_a = max(r.seq for r in rows if r.number is not None and 1 <= r.number <= 9)
    assert [(r.seq, r.completed) for r in recorded if r.completed] == [(last_of_a, ("A",))]
    live = feed.retained[f"super9/{sid}/draw"]
    assert live["spins"] == 10
    assert sorted(live["called"]) == [*range(1, 10), 20]
    assert [c["ticket"] for c in live["completed"]] == ["A"]


async def test_repeated_game_keeps_the_first_result(engine: AsyncEngine, desk: Super9Desk) -> None:
    await desk.sell("A", "C1", actor="cashier", now=at(WED, 10))
    sid = await key_in(desk, "A", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 18))
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    first = await desk.record_result(sid, 7, 4, now=at(WED, 19, 5))
    assert first is not None
    assert first.seq == 1
    assert await desk.record_result(sid, 7, 4, now=at(WED, 19, 5)) is None  # identical
    assert await desk.record_result(sid, 7, 5, now=at(WED, 19, 6)) is None  # conflicting
    async with make_sessionmaker(engine)() as db:
        spins = (await db.execute(select(Super9Spin.number))).scalars().all()
        actions = (await db.execute(select(AuditEntry.action))).scalars().all()
    assert spins == [4]  # the first result stands (S9-12)
    assert actions.count("super9.spin.conflicting-result") == 1
