"""Audit verify benchmark: ``audit verify`` over 10^6 keyed audit rows on PostgreSQL.

    python bench/audit_verify.py                         # 10^6 rows, PostgreSQL, 3 runs
    python bench/audit_verify.py --rows 100000 --repeat 5
    python bench/audit_verify.py --backends postgresql,sqlite

PostgreSQL comes from ``--database`` / ``REELGATE_DATABASE_URL`` (default: the local
``postgresql+asyncpg://postgres@127.0.0.1:5432/test``); the benchmark works in its own
scratch schema, dropped afterwards.  SQLite uses a temporary file.

A keyed chain is generated with fresh keys (the genesis row, then person rows with
small details, a ``records.seal`` row every 50 rows and a signed checkpoint every
100 000 rows), loaded with COPY (PostgreSQL) or executemany (SQLite) into the real
schema, and then verified the way ``reelgate audit verify`` does (every MAC, the head,
the checkpoints' signatures, the sealed tables, the cross-checks, the standings at each
cut).  Also timed: one ``audit.record`` in its own transaction (the write path's cost).

Prints one table of medians.  Goal: verify of 10^6 rows under 10 s on PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import storage.models  # noqa: F401  (every table)
from gateway.records import chain
from gateway.records.keys import KeyPaths, create_keys
from gateway.records.verify import verify as records_verify
from storage import audit
from storage.audit import ChainKeys, canonical_json, checkpoint_payload, row_body, row_mac
from storage.db import Base, make_engine, make_sessionmaker

DEFAULT_PG = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
GOAL_S = 10.0
T0 = datetime(2026, 10, 1, 8, 0, tzinfo=UTC)
SEAL_EVERY = 50
CHECKPOINT_EVERY = 100_000
WRITES = 200
COLUMNS = ["id", "at", "actor", "action", "subject", "reason", "details", "prev_hash", "hash",
           "keyed"]  # fmt: skip
POINT_COLUMNS = ["id", "position", "mac", "at", "reason", "signature", "key_fingerprint"]


@dataclass(frozen=True)
class Result:
    backend: str
    rows: int
    load_s: float
    verify_s: list[float]
    cpu_s: list[float]
    write_ms: float
    ok: bool


@dataclass
class Chain:
    rows: list[tuple[Any, ...]]
    points: list[tuple[Any, ...]]
    head: tuple[int, str]


def _content(i: int) -> tuple[str, str, str, str | None, str]:
    """One row's actor, action, subject, reason and details (varied, realistic sizes)."""
    if i % SEAL_EVERY == 0:
        return ("system:records", "records.seal", "seal:audit_bench", None,
                canonical_json({"rows": []}))  # fmt: skip
    kind = i % 4
    if kind == 0:
        sale = {"amount_cents": 5000, "seats": 1, "reference": f"T{i}"}
        return ("cashier:thandi", "entry.sell", f"player:{i % 9000}", None, canonical_json(sale))
    if kind == 1:
        return ("director:anna", "score.correct", f"seat:{i}", "rule 23: meter misread",
                canonical_json({"old": 1000 + i % 777, "new": 1100 + i % 777}))  # fmt: skip
    if kind == 2:
        return ("gateway", "seat.present", f"seat:{i}", None, canonical_json({"heat": i % 500}))
    return ("tech:sipho", "bank.enable", f"bank:bank-{i % 20}", "back from service", "{}")


def generate_chain(n: int, keys: ChainKeys) -> Chain:
    """The chain, with each checkpoint chained by an ``audit.checkpoint`` row after it."""
    sign = keys.sign
    assert sign is not None
    assert keys.fingerprint is not None
    rows: list[tuple[Any, ...]] = []
    points: list[tuple[Any, ...]] = []
    prev = audit.GENESIS_HASH
    pending: str | None = None
    for i in range(1, n + 1):
        at = T0 + timedelta(milliseconds=i * 40)
        if i == 1:
            actor, action, subject, reason = audit.SYSTEM_ACTOR, audit.GENESIS_ACTION, "audit", None
            details = canonical_json({"legacy_rows": 0, "legacy_head": prev, "key_id": keys.key_id})
        elif pending is not None:
            actor, action = audit.SYSTEM_ACTOR, audit.CHECKPOINT_ACTION
            subject, reason, details = f"checkpoint:{len(points)}", "bench", pending
            pending = None
        else:
            actor, action, subject, reason, details = _content(i)
        mac = row_mac(keys.mac_key, prev, row_body(i, at, actor, action, subject, reason, details))
        rows.append((i, at, actor, action, subject, reason, details, prev, mac, True))
        prev = mac
        if i % CHECKPOINT_EVERY == 0 and i < n:
            signature = sign(checkpoint_payload(i, mac, at)).hex()
            points.append((len(points) + 1, i, mac, at, "bench", signature, keys.fingerprint))
            chained = {"checkpoint": len(points), "position": i, "mac": mac, "at": at,
                       "signature": signature, "key": keys.fingerprint}  # fmt: skip
            pending = canonical_json(chained)
    return Chain(rows, points, (n, prev))


async def load_postgres(engine: AsyncEngine, schema: str, made: Chain) -> None:
    async with engine.connect() as conn:
        raw = await conn.get_raw_connection()
        apg: Any = raw.driver_connection
        async with apg.transaction():
            await apg.copy_records_to_table(
                "audit_log", records=made.rows, columns=COLUMNS, schema_name=schema
            )
            if made.points:
                await apg.copy_records_to_table(
                    "audit_checkpoint", records=made.points, columns=POINT_COLUMNS,
                    schema_name=schema,
                )  # fmt: skip
            await apg.execute(
                "INSERT INTO audit_chain_head (id, last_id, last_hash, keyed_from) "
                "VALUES (1, $1, $2, 1)",
                *made.head,
            )
        await apg.execute("ANALYZE")


def load_sqlite(path: Path, made: Chain) -> None:
    def adapt(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(
            v.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")
            if isinstance(v, datetime)
            else v
            for v in row
        )

    db = sqlite3.connect(path)
    try:
        with db:
            marks = ", ".join("?" for _ in COLUMNS)
            db.executemany(
                f"INSERT INTO audit_log ({', '.join(COLUMNS)}) VALUES ({marks})",
                (adapt(r) for r in made.rows),
            )
            marks = ", ".join("?" for _ in POINT_COLUMNS)
            db.executemany(
                f"INSERT INTO audit_checkpoint ({', '.join(POINT_COLUMNS)}) VALUES ({marks})",
                (adapt(p) for p in made.points),
            )
            db.execute(
                "INSERT INTO audit_chain_head (id, last_id, last_hash, keyed_from) "
                "VALUES (1, ?, ?, 1)",
                made.head,
            )
    finally:
        db.close()


async def measure(
    engine: AsyncEngine, backend: str, rows: int, load_s: float, checker: Any, repeat: int
) -> Result:
    times: list[float] = []
    cpu: list[float] = []
    ok = True
    for _ in range(repeat):
        async with make_sessionmaker(engine)() as session:
            start, start_cpu = time.perf_counter(), time.process_time()
            result = await records_verify(session, check_signature=checker)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        ok = ok and result.ok and result.rows_checked == rows
        if not result.ok:
            print(f"  {backend}: {result.problem}", file=sys.stderr)
    writes: list[float] = []
    for i in range(WRITES):
        start = time.perf_counter()
        async with make_sessionmaker(engine).begin() as session:
            await audit.record(session, actor="cashier:bench", action="entry.sell",
                               subject=f"player:{i}", details={"amount_cents": 5000})  # fmt: skip
        writes.append((time.perf_counter() - start) * 1000)
    return Result(backend, rows, load_s, times, cpu, statistics.median(writes), ok)


async def run_postgres(url: str, n: int, repeat: int, keys: ChainKeys, checker: Any) -> Result:
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = make_engine(url)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = make_engine(url, schema=schema)
    audit.bind_keys(engine, keys)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
        made = generate_chain(n, keys)
        start = time.perf_counter()
        await load_postgres(engine, schema, made)
        load_s = time.perf_counter() - start
        return await measure(engine, "postgresql", n, load_s, checker, repeat)
    finally:
        await engine.dispose()
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


async def run_sqlite(n: int, repeat: int, keys: ChainKeys, checker: Any) -> Result:
    with tempfile.TemporaryDirectory(prefix="reelgate-bench-") as tmp:
        path = Path(tmp) / "bench.db"
        engine = make_engine(f"sqlite+aiosqlite:///{path}")
        audit.bind_keys(engine, keys)
        try:
            async with engine.begin() as conn:
                await conn.run_sync(Base.metadata.create_all)
            made = generate_chain(n, keys)
            start = time.perf_counter()
            await asyncio.to_thread(load_sqlite, path, made)
            load_s = time.perf_counter() - start
            return await measure(engine, "sqlite", n, load_s, checker, repeat)
        finally:
            await engine.dispose()


def print_table(results: list[Result], repeat: int) -> None:
    head = ("backend", "audit rows", "load s", "verify median s", "min s", "max s",
            "client CPU s", "rows/s", "record() ms", "ok")  # fmt: skip
    lines = [head] + [
        (r.backend, f"{r.rows:,}", f"{r.load_s:.1f}", f"{statistics.median(r.verify_s):.2f}",
         f"{min(r.verify_s):.2f}", f"{max(r.verify_s):.2f}", f"{statistics.median(r.cpu_s):.2f}",
         f"{r.rows / statistics.median(r.verify_s):,.0f}", f"{r.write_ms:.2f}",
         "yes" if r.ok else "NO")
        for r in results
    ]  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for n, line in enumerate(lines):
        print("  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print(f"median of {repeat} verify runs; record() = one audit row in its own transaction, "
          f"median of {WRITES}; client CPU = this process's CPU time during verify (the rest is "
          f"the server, and waiting for a CPU on a loaded machine); goal: verify of 10^6 rows "
          f"under {GOAL_S:.0f} s on PostgreSQL; load average now {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", default="postgresql")
    parser.add_argument("--database", default=os.environ.get("REELGATE_DATABASE_URL", DEFAULT_PG))
    args = parser.parse_args()
    if not 2 <= args.rows <= 10_000_000 or not 1 <= args.repeat <= 50:
        parser.error("--rows between 2 and 10^7, --repeat between 1 and 50")
    backends = args.backends.split(",")
    with tempfile.TemporaryDirectory(prefix="reelgate-bench-keys-") as tmp:
        paths = KeyPaths.in_directory(Path(tmp))
        create_keys(paths)
        keys = chain.load(paths)
        checker = chain.SignatureChecker(paths.public_key)
        results: list[Result] = []
        if "postgresql" in backends:
            results.append(asyncio.run(run_postgres(args.database, args.rows, args.repeat, keys,
                                                    checker)))  # fmt: skip
        if "sqlite" in backends:
            results.append(asyncio.run(run_sqlite(args.rows, args.repeat, keys, checker)))
    print_table(results, args.repeat)
    failed = [r for r in results if not r.ok]
    slow = [r for r in results if r.backend == "postgresql" and r.rows >= 1_000_000
            and statistics.median(r.verify_s) >= GOAL_S]  # fmt: skip
    return 1 if failed or slow else 0


if __name__ == "__main__":
    sys.exit(main())
