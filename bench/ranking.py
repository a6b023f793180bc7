"""Ranking benchmark: live top-100 (with ties) and the qualifier cut at 10^4..10^6 results.

    python bench/ranking.py                       # 10^4, 10^5, 10^6 on PostgreSQL and SQLite
    python bench/ranking.py --sizes 10000,100000  # a quicker run
    python bench/ranking.py --backends postgresql --repeat 31

PostgreSQL comes from ``--database`` / ``REELGATE_DATABASE_URL`` (default: the local
``postgresql+asyncpg://postgres@127.0.0.1:5432/test``); the benchmark works in its own
scratch schema, dropped afterwards.  SQLite uses a temporary file.  Each size is one
tournament holding N single-entry qualifying results with many ties (credits drawn from
N/5 values), a few disqualified entries, disqualified and self-excluded players, and
card draws recorded for the tie groups near the top, loaded with COPY (PostgreSQL) or
executemany (SQLite) into the real schema (every constraint and index on).

Prints one table of medians.  Goal: top-100 and cut within 50 ms at 10^6 on PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import storage.models  # noqa: F401  (every table)
from gateway.tournament.services.live_standings import qualifier_cut, standings
from storage.db import Base, make_engine, make_sessionmaker

DEFAULT_PG = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
GOAL_MS = 50.0
T0 = datetime(2026, 10, 1, 8, 0, tzinfo=UTC)
ENTRIES_PER_PLAYER = 4
SEATS_PER_HEAT = 50

# Column lists of the bulk load, in table order (parents first).
COLUMNS: dict[str, list[str]] = {
    "tournaments": ["id", "name", "venue_tz", "entry_price_cents", "entry_validity",
                    "semi_final_size", "direct_final_places", "minimum_age", "created_at"],
    "players": ["id", "id_number", "name", "date_of_birth", "created_at"],
    "entry_purchases": ["id", "tournament_id", "player_id", "kind", "seats", "amount_cents",
                        "package_credit_cents", "purchased_at", "valid_until", "cashier"],
    "entries": ["id", "purchase_id", "tournament_id", "player_id", "status",
                "status_changed_at"],
    "heats": ["id", "tournament_id", "stage", "number", "scheduled_start", "duration_seconds",
              "starting_credits", "bank_name", "status", "restarts"],
    "seats": ["id", "heat_id", "stage", "seat_number", "machine_id", "entry_id",
              "holder_player_id", "status", "assigned_at"],
    "scores": ["id", "tournament_id", "stage", "heat_id", "seat_id", "entry_id", "player_id",
               "games_played", "games_won", "credits_wagered", "credits_won", "final_credits",
               "source", "recorded_at"],
    "disqualifications": ["id", "tournament_id", "player_id", "rule", "reason", "decided_by",
                          "decided_at"],
    "exclusions": ["id", "kind", "id_number", "valid_from", "source", "created_by",
                   "created_at"],
    "card_draws": ["id", "tournament_id", "stage", "tie_credits", "round", "entry_id",
                   "player_id", "drawn_by", "card_rank", "card_suit", "method", "context",
                   "recorded_by", "recorded_at"],
}  # fmt: skip


@dataclass
class Ids:
    """Global id counters so several tournaments share the tables."""

    next: dict[str, int] = field(default_factory=lambda: defaultdict(lambda: 1))

    def take(self, table: str, n: int) -> int:
        first = self.next[table]
        self.next[table] = first + n
        return first


def generate(n: int, ids: Ids, rng: random.Random) -> dict[str, list[tuple[Any, ...]]]:
    """Rows of one tournament with ``n`` single-entry qualifying results."""
    rows: dict[str, list[tuple[Any, ...]]] = {t: [] for t in COLUMNS}
    t_id = ids.take("tournaments", 1)
    rows["tournaments"].append(
        (t_id, f"bench-{n}-{t_id}", "Africa/Johannesburg", 5000, "same-day", 49, 1, 18, T0)
    )
    n_players = -(-n // ENTRIES_PER_PLAYER)
    n_heats = max(ENTRIES_PER_PLAYER, -(-n // SEATS_PER_HEAT))
    p0, pu0, e0 = ids.take("players", n_players), ids.take("entry_purchases", n_players), 0
    e0 = ids.take("entries", n)
    h0, s0, sc0 = ids.take("heats", n_heats), ids.take("seats", n), ids.take("scores", n)
    for p in range(n_players):
        seats = min(ENTRIES_PER_PLAYER, n - p * ENTRIES_PER_PLAYER)
        rows["players"].append(
            (p0 + p, f"B{t_id:03d}{p:010d}", f"Player {p}", date(1970 + p % 30, 1, 1), T0)
        )
        rows["entry_purchases"].append(
            (pu0 + p, t_id, p0 + p, "cash", seats, seats * 5000, 0, T0,
             T0 + timedelta(hours=48), "cashier:bench")
        )  # fmt: skip
    for h in range(n_heats):
        rows["heats"].append(
            (h0 + h, t_id, "qualifying", h + 1, T0 + timedelta(minutes=20 * h), 600, 1000,
             "bank-a", "closed", 0)
        )  # fmt: skip
    distinct = max(10, n // 5)  # about five results per credit value: ties everywhere
    credits_of: list[int] = []
    for i in range(n):
        player = p0 + i // ENTRIES_PER_PLAYER
        # Entry i sits in heat i % H at seat i // H + 1: a player's entries land in
        # different heats (T16) and (heat, seat) never repeats.
        heat, seat_no = h0 + i % n_heats, i // n_heats + 1
        disqualified = rng.random() < 0.001
        credits = rng.randrange(distinct)
        credits_of.append(credits)
        rows["entries"].append(
            (e0 + i, pu0 + i // ENTRIES_PER_PLAYER, t_id, player,
             "disqualified" if disqualified else "played", T0)
        )  # fmt: skip
        rows["seats"].append(
            (s0 + i, heat, "qualifying", seat_no, f"EGM-{seat_no:03d}", e0 + i, player,
             "played", T0)
        )  # fmt: skip
        rows["scores"].append(
            (sc0 + i, t_id, "qualifying", heat, s0 + i, e0 + i, player, 200, 40, 2000,
             credits, credits, "machine", T0 + timedelta(hours=1))
        )  # fmt: skip
    # A few player-wide disqualifications (T3) and register exclusions (T2).
    for p in rng.sample(range(n_players), k=max(1, n_players // 2000)):
        d = ids.take("disqualifications", 1)
        rows["disqualifications"].append(
            (d, t_id, p0 + p, "3", "staff member", "director:bench", T0)
        )
    for p in rng.sample(range(n_players), k=max(1, n_players // 2000)):
        x = ids.take("exclusions", 1)
        rows["exclusions"].append(
            (x, "self-exclusion", f"B{t_id:03d}{p:010d}", T0 - timedelta(days=30),
             "csv:bench", "compliance:bench", T0)
        )  # fmt: skip
    # Round-1 cards for every tie among the 30 best credit values (T19).
    by_value: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(credits_of):
        by_value[c].append(i)
    for value in sorted(by_value, reverse=True)[:30]:
        members = by_value[value]
        if len(members) < 2:
            continue
        for i in members:
            player = p0 + i // ENTRIES_PER_PLAYER
            rows["card_draws"].append(
                (ids.take("card_draws", 1), t_id, "qualifying", value, 1, e0 + i, player,
                 "player", rng.randint(1, 13), "hearts", "physical", f"tie at {value}",
                 "director:bench", T0 + timedelta(days=1))
            )  # fmt: skip
    return rows


async def load_postgres(
    engine: AsyncEngine, schema: str, rows: dict[str, list[tuple[Any, ...]]]
) -> None:
    async with engine.connect() as conn:
        raw = await conn.get_raw_connection()
        apg: Any = raw.driver_connection
        async with apg.transaction():
            for table, columns in COLUMNS.items():
                if rows[table]:
                    await apg.copy_records_to_table(
                        table, records=rows[table], columns=columns, schema_name=schema
                    )
        await apg.execute("ANALYZE")


def load_sqlite(path: Path, rows: dict[str, list[tuple[Any, ...]]]) -> None:
    def adapt(value: Any) -> Any:
        if isinstance(value, datetime):  # the UTCDateTime storage format (naive UTC text)
            return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")
        if isinstance(value, date):
            return value.isoformat()
        return value

    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA foreign_keys=ON")
        with db:
            for table, columns in COLUMNS.items():
                marks = ", ".join("?" for _ in columns)
                db.executemany(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
                    ([adapt(v) for v in row] for row in rows[table]),
                )
        db.execute("ANALYZE")
    finally:
        db.close()


async def timed(fn: Callable[[], Awaitable[Any]], repeat: int) -> tuple[float, Any]:
    """Median wall time in ms over ``repeat`` runs after two warm-ups; last result."""
    result = None
    for _ in range(2):
        result = await fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = await fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), result


@dataclass
class Row:
    backend: str
    size: int
    load_s: float
    top_ms: float
    top_rows: int
    cut_ms: float
    pending: int


async def measure(engine: AsyncEngine, backend: str, size: int, load_s: float,
                  tournament_id: int, repeat: int) -> Row:  # fmt: skip
    as_of = T0 + timedelta(days=2)
    async with make_sessionmaker(engine)() as session:
        top_ms, table = await timed(
            lambda: standings(session, tournament_id, limit=100, as_of=as_of), repeat
        )
        cut_ms, cut = await timed(
            lambda: qualifier_cut(session, tournament_id, as_of=as_of), repeat
        )
    return Row(backend, size, load_s, top_ms, len(table.rows), cut_ms, len(cut.pending))


async def run_postgres(url: str, sizes: list[int], repeat: int, seed: int) -> Iterator[Row]:
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = make_engine(url)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = make_engine(url, schema=schema)
    out: list[Row] = []
    try:
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
        ids, rng = Ids(), random.Random(seed)
        for size in sizes:
            rows = generate(size, ids, rng)
            start = time.perf_counter()
            await load_postgres(engine, schema, rows)
            load_s = time.perf_counter() - start
            out.append(
                await measure(engine, "postgresql", size, load_s, rows["tournaments"][0][0], repeat)
            )
            print(f"  postgresql {size:>9,}: done", file=sys.stderr)
    finally:
        await engine.dispose()
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()
    return iter(out)


async def run_sqlite(sizes: list[int], repeat: int, seed: int) -> Iterator[Row]:
    out: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="reelgate-bench-") as tmp:
        path = Path(tmp) / "bench.db"
        engine = make_engine(f"sqlite+aiosqlite:///{path}")
        try:
            async with engine.begin() as conn:
                await conn.run_sync(Base.metadata.create_all)
            ids, rng = Ids(), random.Random(seed)
            for size in sizes:
                rows = generate(size, ids, rng)
                start = time.perf_counter()
                await asyncio.to_thread(load_sqlite, path, rows)
                load_s = time.perf_counter() - start
                out.append(
                    await measure(engine, "sqlite", size, load_s, rows["tournaments"][0][0], repeat)
                )
                print(f"  sqlite     {size:>9,}: done", file=sys.stderr)
        finally:
            await engine.dispose()
    return iter(out)


def print_table(rows: list[Row], repeat: int) -> None:
    head = ("backend", "results", "load s", "top-100 ms", "rows", "cut ms", "pending ties")
    lines = [head] + [
        (r.backend, f"{r.size:,}", f"{r.load_s:.1f}", f"{r.top_ms:.2f}", str(r.top_rows),
         f"{r.cut_ms:.2f}", str(r.pending))
        for r in rows
    ]  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    print(f"\nRanking benchmark: medians of {repeat} runs (after 2 warm-ups)")
    for n, line in enumerate(lines):
        print("  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    big = [r for r in rows if r.backend == "postgresql" and r.size >= 1_000_000]
    for r in big:
        ok = max(r.top_ms, r.cut_ms) <= GOAL_MS
        verdict = "met" if ok else "MISSED"
        goal = f"top-100 and cut within {GOAL_MS:.0f} ms at {r.size:,} on PostgreSQL"
        print(f"\ngoal: {goal}: {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default="10000,100000,1000000",
        help="comma-separated result counts (default 10000,100000,1000000)",
    )
    parser.add_argument("--backends", default="postgresql,sqlite")
    parser.add_argument("--database", help="PostgreSQL URL (default: REELGATE_DATABASE_URL)")
    parser.add_argument("--repeat", type=int, default=21, help="timed runs per query (21)")
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args(argv)  # fmt: skip
    try:
        sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes: not a list of numbers: {args.sizes!r}")
    if not sizes or any(s < 1 or s > 5_000_000 for s in sizes):
        parser.error("--sizes: each size must be between 1 and 5,000,000")
    if args.repeat < 1 or args.repeat > 1000:
        parser.error("--repeat must be between 1 and 1000")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(backends) - {"postgresql", "sqlite"}
    if unknown:
        parser.error(f"--backends: unknown {sorted(unknown)}")
    url = args.database or os.environ.get("REELGATE_DATABASE_URL") or DEFAULT_PG
    if "postgresql" in backends and not url.startswith("postgresql"):
        parser.error(f"--database must be a PostgreSQL URL, got {url!r}")

    async def go() -> list[Row]:
        rows: list[Row] = []
        if "postgresql" in backends:
            rows.extend(await run_postgres(url, sizes, args.repeat, args.seed))
        if "sqlite" in backends:
            rows.extend(await run_sqlite(sizes, args.repeat, args.seed))
        return rows

    print_table(asyncio.run(go()), args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
