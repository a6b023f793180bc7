"""Tournament rules engine benchmark: pure ranking, and the desk's operations end to end.

    python bench/tournament_rules.py                  # SQLite temp file
    python bench/tournament_rules.py --postgres       # also PostgreSQL (REELGATE_DATABASE_URL
                                                      #  or the local test database), own schema
    python bench/tournament_rules.py --sizes 10000 --ops 40

* ``rank`` — :func:`gateway.tournament.rules.ranking.rank` over N single-entry scores with
  many ties (credits from N/5 values) and card draws for a tenth of the tie groups.
* ``sell`` / ``register`` / ``score`` / ``standings`` — one service call in its own
  transaction with its audit row, as a CLI or the heat runner makes it.

Prints one table of medians.  Goals: rank 10^5 entries within 1 s (a full standings
refresh); each desk operation within 50 ms on SQLite.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import text

from gateway.records import chain
from gateway.scores import HeatScore, TournamentMeters
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.ranking import ScoreLine, TieDraw, rank
from gateway.tournament.settings import TournamentSettings
from storage.db import Base, make_engine, make_sessionmaker
from storage.floor import FloorBank, FloorMachine

SAST = ZoneInfo("Africa/Johannesburg")
PG_DEFAULT = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


def bench_rank(n: int, repeat: int, rng: random.Random) -> float:
    lines = [
        ScoreLine(i, rng.randrange(n // 3 + 1), rng.randrange(max(1, n // 5)))
        for i in range(1, n + 1)
    ]
    by_credits: dict[int, list[int]] = {}
    for line in lines:
        by_credits.setdefault(line.credits, []).append(line.entry_id)
    draws = [
        TieDraw(e, c, 1, rng.randrange(1, 14))
        for c, group in list(by_credits.items())[::10]
        if len(group) > 1
        for e in group
    ]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        rank(lines, draws, disqualified_players={1, 2, 3})
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


async def bench_desk(url: str, ops: int, schema: str | None) -> dict[str, float]:
    import storage.models  # noqa: F401

    engine = make_engine(url, schema=schema)
    chain.throwaway_keys()
    chain.bind(engine, url)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    maker = make_sessionmaker(engine)
    day = date(2026, 11, 2)
    start = datetime(day.year, day.month, day.day, 18, tzinfo=SAST)
    async with svc.unit_of_work(maker) as s:
        s.add(FloorBank(name="A", enabled=True))
        await s.flush()
        for i in range(1, 11):
            s.add(
                FloorMachine(
                    machine_id=f"A-{i}",
                    bank_name="A",
                    position=i,
                    endpoint="tcp://127.0.0.1:1",
                    updated_at=datetime.now(UTC),
                )
            )
    async with svc.unit_of_work(maker) as s:
        t = await svc.create_tournament(s, "bench", TournamentSettings(), actor="bench")
        heats = [
            await svc.schedule_heat(
                s,
                t.id,
                stage=Stage.QUALIFYING,
                starts_at=start + timedelta(minutes=15 * k),
                bank_name="A",
                duration_seconds=600,
                starting_credits=1000,
                actor="bench",
                now=start - timedelta(days=1),
            )
            for k in range(ops // 10 + 1)
        ]
        players = [
            await svc.add_player(
                s,
                id_number=f"80010150{i:05d}",
                name=f"P{i}",
                date_of_birth=date(1980, 1, 1),
                actor="bench",
                now=start - timedelta(days=1),
            )
            for i in range(ops)
        ]
    timings: dict[str, list[float]] = {"sell": [], "register": [], "score": [], "standings": []}

    async def timed(name: str, fn: Callable[..., Awaitable[Any]], *a: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        async with svc.unit_of_work(maker) as s:
            result = await fn(s, *a, **kw)
        timings[name].append(time.perf_counter() - t0)
        return result

    seats = []
    for i, p in enumerate(players):
        await timed(
            "sell", svc.sell_entries, t.id, p.id, cashier="bench", now=start - timedelta(hours=2)
        )
        seats.append(
            await timed(
                "register",
                svc.register_for_heat,
                heats[i // 10].id,
                p.id,
                actor="bench",
                now=start - timedelta(hours=1),
            )
        )
    for heat in heats:
        async with svc.unit_of_work(maker) as s:
            here = await svc.heat_seats(s, heat.id)
            if here:
                await svc.begin_heat(
                    s,
                    heat.id,
                    present_seats=[x.seat_number for x in here],
                    at=heat.scheduled_start,
                    actor="bench",
                )
    for i, seat in enumerate(seats):
        await timed(
            "score",
            svc.record_machine_score,
            seat.id,
            HeatScore(1000 + (i * 37) % 500, TournamentMeters(50, 10, 500, 400)),
            at=start + timedelta(hours=5),
        )
    for _ in range(9):
        await timed("standings", svc.stage_standings, t.id, Stage.QUALIFYING)
    await engine.dispose()
    return {k: statistics.median(v) * 1000 for k, v in timings.items()}


async def pg_schema(url: str, create: bool, name: str) -> None:
    admin = make_engine(url)
    async with admin.begin() as conn:
        sql = f'CREATE SCHEMA "{name}"' if create else f'DROP SCHEMA "{name}" CASCADE'
        await conn.execute(text(sql))
    await admin.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ops", type=int, default=60, help="players / desk operations")
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(19)
    rows: list[tuple[str, str, str, float]] = []
    for n in (int(s) for s in args.sizes.split(",")):
        rows.append(("rank (pure)", "-", f"{n:,} entries", bench_rank(n, args.repeat, rng)))
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        for op, ms in asyncio.run(bench_desk(url, args.ops, None)).items():
            rows.append((op, "sqlite", f"{args.ops} ops", ms))
    if args.postgres:
        url = os.environ.get("REELGATE_DATABASE_URL", "") or PG_DEFAULT
        schema = f"bench_{uuid.uuid4().hex[:10]}"
        asyncio.run(pg_schema(url, True, schema))
        try:
            for op, ms in asyncio.run(bench_desk(url, args.ops, schema)).items():
                rows.append((op, "postgresql", f"{args.ops} ops", ms))
        finally:
            asyncio.run(pg_schema(url, False, schema))
    print(f"\nTournament rules engine: medians (rank over {args.repeat} runs)")
    print(f"{'operation':<14}{'backend':<12}{'size':>16}{'median ms':>12}")
    for op, backend, size, ms in rows:
        print(f"{op:<14}{backend:<12}{size:>16}{ms:>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
