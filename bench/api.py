"""HTTP API benchmark: 20 desks at once selling entries, registering players for heats
and reading the standings, for a bounded time.

    python bench/api.py                 # SQLite file, 60 s
    python bench/api.py --seconds 20 --desks 20
    REELGATE_DATABASE_URL=postgresql+asyncpg://... python bench/api.py   # PostgreSQL too

Each desk loops: add a player (desk), sell one entry (cashier), register it for the next
heat with a free machine (desk), read the qualifying standings (top 50).  A desk is a
person at a till: between two requests it waits ``--think-ms`` (jittered ±50 %, seeded;
default 500 ms, i.e. 20 desks send about 40 requests a second, far more than a casino's
desks do).  ``--think-ms 0`` is the saturation run: every desk fires its next request the
moment the last one answers, so latency is then queueing behind the other 19 and the
figure that matters is the throughput (requests per second, printed too).  Requests go
through the whole FastAPI app in process (httpx ASGI transport: routing, bearer-token
authentication, pydantic validation, the services, the database), so the figures are
the API's own cost without a network.  Prints p50/p99 latency per operation and the
error count per backend.

``--heats one`` (the default) registers every desk for the same heat until it is full;
``--heats separate`` gives each desk heats of its own (desk k: heats k+1, k+1+desks, ...),
so no two desks queue on one heat's row.  ``--logins N`` adds a burst of N sign-ins every
``--burst-every`` seconds (N accounts, each from an address of its own, argon2 at its
real cost), and a probe that reads the standings every 20 ms while a burst is under way:
its row, ``read during logins``, is what a sign-in costs the other desks (goal p99 under
50 ms).  Goals: p99 under 50 ms for reads, 100 ms for writes (250 ms with
``--think-ms 0``, where the figure to watch is ``writes`` per second: goal 100).
``--writers K`` sets the API's write requests at once on PostgreSQL (0: no limit, the
code before issue 31), ``--pool N`` the engine's connections (default: the engine's own,
as served), ``--profile FILE`` writes pyinstrument's report of the desks' phase.

``--trace`` also counts, per operation, the SQL statements, the database round trips
(PostgreSQL: BEGIN, each statement, each prepare the statement cache missed, COMMIT, the
pool's ping) and how long the transactions held the chain head and a heat row (from the
grant of the ``SELECT ... FOR UPDATE`` to the end of COMMIT); the counts do not depend
on the machine's load, unlike the latencies.  It also prints how long each lock's
``SELECT ... FOR UPDATE`` took to come back (the queue, and the loop's turn), and the
registrations' latency split into the seated and the refused (a full heat), and the
garbage collector's passes by generation (the loop stops for each).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import gc
import importlib.util
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from sqlalchemy import text  # noqa: E402

from gateway.accounts import service  # noqa: E402
from gateway.records import chain, witness  # noqa: E402
from gateway.tournament import services as svc  # noqa: E402
from gateway.tournament.rules.enums import EntryValidity, Stage  # noqa: E402
from gateway.tournament.settings import TournamentSettings  # noqa: E402
from gateway.web.api import create_app  # noqa: E402
from storage.db import Base, make_engine, make_sessionmaker  # noqa: E402
from storage.floor import FloorBank, FloorMachine  # noqa: E402

GOAL_MS = 50.0  # reads (issue 31, item 4); writes 100 ms, or 250 ms with --think-ms 0
GOALS_MS: dict[str, float] = {
    "player add": 100.0,
    "entry sell": 100.0,
    "heat register": 100.0,
    "standings read": GOAL_MS,
    "read during logins": GOAL_MS,
}
BANKS = ["A", "B", "C", "D"]
MACHINES = 10
OPS = ("player add", "entry sell", "heat register", "standings read")
BURST_OPS = ("login", "read during logins")
WRITES = ("player add", "entry sell", "heat register")
OP: contextvars.ContextVar[str] = contextvars.ContextVar("bench_op", default="seed")


class Trace:
    """Statements, round trips and lock holds per operation (``--trace``).

    Counted on SQLAlchemy's side of the driver: every statement, and on asyncpg every
    call that waits for the server (BEGIN, a prepare the cache missed, an execute, an
    executemany, COMMIT / ROLLBACK, the pool's ping)."""

    def __init__(self) -> None:
        self.requests: dict[str, int] = defaultdict(int)
        self.statements: dict[str, int] = defaultdict(int)
        self.trips: dict[str, int] = defaultdict(int)
        self.holds: dict[str, list[float]] = defaultdict(list)
        self.cpu: dict[str, list[float]] = defaultdict(list)  # the loop thread's, 1 desk
        self.locked: dict[int, list[tuple[str, float]]] = {}  # id(connection) -> holds
        # the lock's wait: its SELECT ... FOR UPDATE sent to its rows back (loop included)
        self.asked: dict[int, float] = {}
        self.waits: dict[str, list[float]] = defaultdict(list)
        self.outcomes: dict[str, list[float]] = defaultdict(list)  # registrations' ms
        self.collections: dict[str, list[float]] = defaultdict(list)  # the collector's passes
        self._collecting = 0.0
        self._watching: Callable[[str, dict[str, int]], None] | None = None

    def watch_collector(self) -> None:
        """Time the garbage collector's passes (every request on the loop waits for one)."""

        def timed(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                self._collecting = time.perf_counter()
            else:
                ms = (time.perf_counter() - self._collecting) * 1000
                self.collections[f"collector, generation {info['generation']}"].append(ms)

        gc.callbacks.append(timed)
        self._watching = timed

    def stop_watching(self) -> None:
        if self._watching is not None:
            gc.callbacks.remove(self._watching)

    def install(self, engine: object) -> None:
        from sqlalchemy import event
        from sqlalchemy.ext.asyncio import AsyncEngine

        assert isinstance(engine, AsyncEngine)

        @event.listens_for(engine.sync_engine, "before_cursor_execute")
        def _statement(conn: Any, cursor: Any, sql: str, *_: Any) -> None:
            self.statements[OP.get()] += 1
            if "FOR UPDATE" in sql:
                self.asked[id(conn.connection.dbapi_connection)] = time.perf_counter()

        @event.listens_for(engine.sync_engine, "after_cursor_execute")
        def _granted(conn: Any, cursor: Any, sql: str, *_: Any) -> None:
            if "FOR UPDATE" in sql:
                what = "chain head" if "audit_chain_head" in sql else "heat row"
                now = time.perf_counter()
                asked = self.asked.pop(id(conn.connection.dbapi_connection), now)
                self.waits[what].append((now - asked) * 1000)
                holds = self.locked.setdefault(id(conn.connection.dbapi_connection), [])
                holds.append((what, now))

        if engine.dialect.name == "postgresql":
            self._wrap_asyncpg()

    def _end_holds(self, adapted: object) -> None:
        now = time.perf_counter()
        for what, since in self.locked.pop(id(adapted), []):
            self.holds[what].append((now - since) * 1000)

    def _wrap_asyncpg(self) -> None:
        from sqlalchemy.dialects.postgresql import asyncpg as pg

        trace = self
        conn_cls, cursor_cls = pg.AsyncAdapt_asyncpg_connection, pg.AsyncAdapt_asyncpg_cursor
        if getattr(conn_cls, "_bench_traced", False):
            return
        conn_cls._bench_traced = True  # type: ignore[attr-defined]

        def counted(
            cls: Any, name: str, miss: Callable[..., bool] | None = None, trips: int = 1
        ) -> None:
            original = getattr(cls, name)

            async def wrapper(self: Any, *args: Any, **kw: Any) -> Any:
                if miss is None or miss(self, *args):
                    trace.trips[OP.get()] += trips
                return await original(self, *args, **kw)

            setattr(cls, name, wrapper)

        def cache_miss(self: Any, operation: str, *_: Any) -> bool:
            cache = self._prepared_statement_cache
            return cache is None or operation not in cache

        counted(conn_cls, "_start_transaction")
        counted(conn_cls, "_prepare", cache_miss)
        counted(conn_cls, "_async_ping", trips=3)  # BEGIN, ";", ROLLBACK
        counted(cursor_cls, "_prepare_and_execute")
        counted(cursor_cls, "_executemany")
        for name in ("commit", "rollback"):
            original = getattr(conn_cls, name)

            def ended(self: Any, _original: Any = original) -> None:
                if self._transaction is not None:
                    trace.trips[OP.get()] += 1
                try:
                    _original(self)
                finally:
                    trace._end_holds(self)

            setattr(conn_cls, name, ended)

    def rows(self) -> list[list[str]]:
        out = []
        for op in OPS:
            n = self.requests[op] or 1
            trips = f"{self.trips[op] / n:.1f}" if self.trips else "-"
            cpu = f"{statistics.median(self.cpu[op]):.1f}" if self.cpu[op] else "-"
            out.append([op, f"{self.statements[op] / n:.1f}", trips, cpu])
        timed = [
            *(f"{what} held" for what in self.holds),
            *(f"{what} wait" for what in self.waits),
            *self.outcomes,
            *self.collections,
        ]
        series = {
            **{f"{w} held": v for w, v in self.holds.items()},
            **{f"{w} wait": v for w, v in self.waits.items()},
            **self.outcomes,
            **self.collections,
        }
        for name in sorted(timed):
            t = sorted(series[name])
            p99 = t[min(len(t) - 1, int(len(t) * 0.99))]
            out.append(
                [
                    name,
                    f"p50 {statistics.median(t):.1f} ms",
                    f"p99 {p99:.1f} ms",
                    f"max {t[-1]:.1f} ms",
                    f"n {len(t)}",
                ]
            )
        return out


def sa_id(n: int) -> str:
    """A 13-digit South African ID number with a valid Luhn check digit."""
    body = f"800101{n % 10000:04d}08"
    digits = [int(c) for c in body]
    total = 0
    for i, d in enumerate(reversed(digits)):
        total += sum(divmod(d * 2, 10)) if i % 2 == 0 else d
    return body + str((10 - total % 10) % 10)


LOGIN_PASSWORD = "bench password"


async def seed(sessions: object, now: datetime, logins: int = 0) -> dict[str, str]:
    tokens: dict[str, str] = {}
    async with svc.unit_of_work(sessions) as s:  # type: ignore[arg-type]
        if logins:  # accounts that sign in with argon2's real cost (RFC 9106, 64 MiB)
            from argon2 import PasswordHasher
            from sqlalchemy import update

            from storage.accounts import User

            real = PasswordHasher().hash(LOGIN_PASSWORD)
            for i in range(logins):
                await service.add_user(
                    s, f"login{i:02d}", "desk", LOGIN_PASSWORD, actor="bench", now=now
                )
            await s.execute(update(User).where(User.name.like("login%")).values(password_hash=real))
        for name, role in (("cashier", "cashier"), ("desk", "desk")):
            await service.add_user(s, name, role, LOGIN_PASSWORD, actor="bench", now=now)
            _, tokens[name] = await service.create_token(
                s,
                name,
                role=None,
                expires_at=now + timedelta(days=1),
                label="bench",
                actor="bench",
                now=now,
            )
        for bank in BANKS:
            s.add(FloorBank(name=bank, enabled=True))
            await s.flush()
            for i in range(1, MACHINES + 1):
                s.add(
                    FloorMachine(
                        machine_id=f"{bank}{i:02d}",
                        bank_name=bank,
                        position=i,
                        endpoint=f"tcp://127.0.0.1:{9000 + i}",
                        updated_at=now,
                    )
                )
        settings = TournamentSettings(validity=EntryValidity.HOURS_48)
        t = await svc.create_tournament(s, "Bench", settings, actor="bench")
        start = now + timedelta(hours=2)
        for slot in range(200):  # every 10 minutes for 33 hours, on each bank
            for bank in BANKS:
                await svc.schedule_heat(
                    s,
                    t.id,
                    stage=Stage.QUALIFYING,
                    starts_at=start + timedelta(minutes=10 * slot),
                    bank_name=bank,
                    duration_seconds=300,
                    starting_credits=1000,
                    actor="bench",
                    now=now,
                )
    return tokens


class Desks:
    def __init__(
        self,
        client: httpx.AsyncClient,
        tokens: dict[str, str],
        seconds: float,
        think_ms: float,
        trace: Trace | None = None,
        *,
        desks: int = 20,
        one_heat: bool = True,
    ) -> None:
        self.client = client
        self.trace = trace
        self.think_s = think_ms / 1000
        self.rng = random.Random(20261201)
        self.cashier = {"Authorization": f"Bearer {tokens['cashier']}"}
        self.desk = {"Authorization": f"Bearer {tokens['desk']}"}
        self.deadline = time.perf_counter() + seconds
        self.times: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        # The next heat each desk registers for: all desks on one heat (one shared
        # cursor), or each desk on heats of its own (desk k: heats k+1, k+1+desks, ...).
        self.one_heat = one_heat
        self.step = 1 if one_heat else desks
        self.heats = [1] if one_heat else [k + 1 for k in range(desks)]
        self.players = 0

    async def _timed(self, op: str, method: str, url: str, **kw: object) -> httpx.Response:
        if self.think_s:
            await asyncio.sleep(self.think_s * self.rng.uniform(0.5, 1.5))
        token = OP.set(op)
        if self.trace is not None:
            self.trace.requests[op] += 1
        cpu, t0 = time.thread_time(), time.perf_counter()
        try:
            r = await self.client.request(method, url, **kw)  # type: ignore[arg-type]
        finally:
            OP.reset(token)
        self.times[op].append((time.perf_counter() - t0) * 1000)
        if self.trace is not None:
            self.trace.cpu[op].append((time.thread_time() - cpu) * 1000)
        if r.status_code >= 300:
            self.errors[op] += 1
        return r

    async def one_desk(self, k: int = 0) -> None:
        cursor = 0 if self.one_heat else k
        while time.perf_counter() < self.deadline:
            self.players += 1
            idn = sa_id(self.players)
            body = {
                "id_number": idn,
                "name": f"Player {self.players}",
                "date_of_birth": "1980-01-01",
            }
            await self._timed("player add", "POST", "/api/v1/players", json=body, headers=self.desk)
            sale = await self._timed(
                "entry sell",
                "POST",
                "/api/v1/tournaments/Bench/entries",
                json={"player": idn},
                headers=self.cashier,
            )
            if sale.status_code == 201:
                await self._register(idn, cursor)
            await self._timed(
                "standings read",
                "GET",
                "/api/v1/tournaments/Bench/standings",
                params={"limit": 50},
                headers=self.desk,
            )

    async def _register(self, idn: str, cursor: int) -> None:
        for _ in range(3):  # a heat filled by another desk: try the next one
            heat = self.heats[cursor]
            r = await self._timed(
                "heat register",
                "POST",
                f"/api/v1/heats/{heat}/seats",
                json={"player": idn},
                headers=self.desk,
            )
            if self.trace is not None:
                seated = "seated" if r.status_code == 201 else "refused"
                self.trace.outcomes[f"heat register, {seated}"].append(
                    self.times["heat register"][-1]
                )
            if r.status_code == 201 or ("free" not in r.text and "full" not in r.text):
                return
            self.errors["heat register"] -= 1  # a full heat is the desk's cue, not an error
            self.heats[cursor] = max(self.heats[cursor], heat + self.step)


async def login_bursts(app: Any, bench: Desks, logins: int, every_s: float) -> None:
    """Every ``every_s`` seconds, ``logins`` accounts sign in at once (each from an
    address of its own, with argon2's real parameters), while a probe reads the
    standings every 20 ms until the last login has answered: the probe's latency is
    what a sign-in costs the other desks."""
    clients = [
        httpx.AsyncClient(
            transport=httpx.ASGITransport(
                app=app, client=(f"10.31.{i // 200}.{i % 200 + 1}", 4000)
            ),
            base_url="http://127.0.0.1",
        )
        for i in range(logins)
    ]

    async def one(i: int) -> None:
        body = {"name": f"login{i:02d}", "password": LOGIN_PASSWORD}
        t0 = time.perf_counter()
        r = await clients[i].post("/api/v1/login", json=body)
        bench.times["login"].append((time.perf_counter() - t0) * 1000)
        if r.status_code != 200:
            bench.errors["login"] += 1

    async def probe(done: asyncio.Event) -> None:
        while not done.is_set():
            t0 = time.perf_counter()
            r = await bench.client.get(
                "/api/v1/tournaments/Bench/standings", params={"limit": 50}, headers=bench.desk
            )
            bench.times["read during logins"].append((time.perf_counter() - t0) * 1000)
            if r.status_code != 200:
                bench.errors["read during logins"] += 1
            await asyncio.sleep(0.02)

    try:
        while time.perf_counter() + every_s + 2 < bench.deadline:
            await asyncio.sleep(every_s)
            done = asyncio.Event()
            watching = asyncio.create_task(probe(done))
            await asyncio.gather(*(one(i) for i in range(logins)))
            done.set()
            await watching
    finally:
        for c in clients:
            await c.aclose()


def quiet_trio_probe() -> None:
    """httpx's ASGI transport asks on every request whether it runs under trio by
    importing sniffio; where sniffio is not installed each ask is a failed import that
    searches the whole of ``sys.path`` (about a millisecond a request on a busy machine:
    the test client's cost, not the API's).  Say once that it is absent."""
    if importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]  # import fails at once


PROFILE = ""  # --profile FILE: pyinstrument's text report of the desks' phase
WRITERS = -1  # --writers: the API's write requests at once on PostgreSQL (-1: its default)
POOL: dict[str, Any] = {}  # --pool N: the engine's pool (default: production's)
WITNESSED = True  # --no-witness: the API without the head's witness, to compare


async def run_backend(
    url: str,
    schema: str | None,
    desks: int,
    seconds: float,
    think_ms: float,
    trace: Trace | None,
    *,
    one_heat: bool = True,
    logins: int = 0,
    burst_every: float = 3.0,
) -> list[list[str]]:
    engine = make_engine(url, schema=schema, **POOL) if schema else make_engine(url, **POOL)
    if trace is not None:
        trace.install(engine)
    chain.throwaway_keys()
    chain.bind(engine, url)
    found = witness.bind(engine, url) if WITNESSED else None  # each head out, batched
    import storage.models  # noqa: F401

    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    now = datetime.now(UTC)
    sessions = make_sessionmaker(engine)
    tokens = await seed(sessions, now, logins)
    app = create_app(sessions)
    if WRITERS >= 0:
        app.state.api.pg_writers = WRITERS
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        bench = Desks(client, tokens, seconds, think_ms, trace, desks=desks, one_heat=one_heat)
        if trace is not None:
            trace.watch_collector()
        profiler = None
        if PROFILE:
            from pyinstrument import Profiler  # pip install pyinstrument

            profiler = Profiler(interval=0.0005, async_mode="disabled")
            profiler.start()
        began = time.perf_counter()
        bursts = [login_bursts(app, bench, logins, burst_every)] if logins else []
        await asyncio.gather(*(bench.one_desk(k) for k in range(desks)), *bursts)
        elapsed = time.perf_counter() - began
        if profiler is not None:
            profiler.stop()
            Path(PROFILE).write_text(  # noqa: ASYNC240 - the run is over
                profiler.output_text(show_all=False, color=False)
            )
        if trace is not None:
            trace.stop_watching()
    if found is not None:
        print(f"witness: {found.batches} writes (fdatasync at most once a second)", file=sys.stderr)
        await found.close()
    await engine.dispose()
    rows = []
    for op in (*OPS, *BURST_OPS):
        t = sorted(bench.times[op])
        if not t:
            continue
        p99 = t[min(len(t) - 1, int(len(t) * 0.99))]
        goal = GOALS_MS.get(op)
        rows.append(
            [
                op,
                str(len(t)),
                f"{len(t) / elapsed:.1f}",
                f"{statistics.median(t):.1f}",
                f"{p99:.1f}",
                str(bench.errors[op]),
                "-" if goal is None else "ok" if p99 < goal else "MISSED",
            ]
        )
    writes = sum(len(bench.times[op]) for op in WRITES)
    rows.append(["writes", str(writes), f"{writes / elapsed:.1f}", "", "", "", ""])
    return rows


def report(
    args: argparse.Namespace,
    results: list[tuple[str, list[list[str]]]],
    traces: list[tuple[str, Trace]],
) -> None:
    logins = (
        f", a burst of {args.logins} logins every {args.burst_every:g} s" if args.logins else ""
    )
    heats = "one heat" if args.heats == "one" else "separate heats"
    print(
        f"{args.desks} desks on {heats}, think {args.think_ms:g} ms, "
        f"{args.seconds:g} s each backend{logins}; goal p99 < {GOAL_MS:g} ms for reads, "
        f"{GOALS_MS['entry sell']:g} ms for writes"
    )
    head = ["backend", "operation", "requests", "req/s", "p50 ms", "p99 ms", "errors", "goal"]
    print(" | ".join(head))
    for backend, rows in results:
        for row in rows:
            print(" | ".join([backend, *row]))
    if traces:
        print(
            "backend | operation | statements / request | round trips / request | "
            "loop CPU ms, median (alone only with --desks 1)"
        )
        for backend, trace in traces:
            for row in trace.rows():
                print(" | ".join([backend, *row]))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--desks", type=int, default=20)
    parser.add_argument("--think-ms", type=float, default=500.0)
    parser.add_argument("--backend", choices=("both", "sqlite", "postgresql"), default="both")
    parser.add_argument(
        "--heats",
        choices=("one", "separate"),
        default="one",
        help="all desks register for one heat at a time, or each desk for heats of its own",
    )
    parser.add_argument(
        "--logins", type=int, default=0, help="a burst of this many sign-ins every --burst-every s"
    )
    parser.add_argument("--burst-every", type=float, default=3.0)
    parser.add_argument("--profile", default="", help="pyinstrument's report of the desks to FILE")
    parser.add_argument(
        "--writers",
        type=int,
        default=-1,
        help="PostgreSQL write requests at once (-1: the API's default, 0: no limit)",
    )
    parser.add_argument(
        "--pool", type=int, default=0, help="PostgreSQL connections (0: the engine's default)"
    )
    parser.add_argument(
        "--trace", action="store_true", help="statements, round trips, lock holds per request"
    )
    parser.add_argument(
        "--no-witness", action="store_true", help="without the chain head's witness (compare)"
    )
    args = parser.parse_args()
    global WITNESSED, WRITERS, PROFILE
    WRITERS = args.writers
    PROFILE = args.profile
    if args.pool:
        POOL.update(pool_size=args.pool, max_overflow=0)
    WITNESSED = not args.no_witness
    if WITNESSED and not os.environ.get(witness.WITNESS_ENV):  # a file of this run's own
        os.environ[witness.WITNESS_ENV] = str(Path(tempfile.mkdtemp()) / "bench.witness")
    if not 1 <= args.seconds <= 600 or not 1 <= args.desks <= 200:
        raise SystemExit("--seconds 1-600, --desks 1-200")
    if not 0 <= args.think_ms <= 60_000:
        raise SystemExit("--think-ms 0-60000")
    if not 0 <= args.logins <= 100 or not 0.5 <= args.burst_every <= 60:
        raise SystemExit("--logins 0-100, --burst-every 0.5-60")
    if args.think_ms == 0:  # the saturation run: the writes' goal is 250 ms
        GOALS_MS.update({op: 250.0 for op in WRITES})
    more = {"one_heat": args.heats == "one", "logins": args.logins, "burst_every": args.burst_every}
    from argon2 import PasswordHasher

    import storage.accounts

    storage.accounts.HASHER = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    quiet_trio_probe()
    results: list[tuple[str, list[list[str]]]] = []
    traces: list[tuple[str, Trace]] = []
    if args.backend != "postgresql":
        with tempfile.TemporaryDirectory() as tmp:
            sqlite = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
            trace = Trace() if args.trace else None
            rows = await run_backend(
                sqlite, None, args.desks, args.seconds, args.think_ms, trace, **more
            )
            results.append(("sqlite", rows))
            if trace is not None:
                traces.append(("sqlite", trace))
    pg = os.environ.get("REELGATE_DATABASE_URL", "")
    if args.backend == "postgresql" and not pg.startswith("postgresql"):
        raise SystemExit("--backend postgresql: set REELGATE_DATABASE_URL=postgresql+asyncpg://...")
    if pg.startswith("postgresql") and args.backend != "sqlite":
        schema = f"bench_{uuid.uuid4().hex[:10]}"
        admin = make_engine(pg)
        async with admin.begin() as conn:
            await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        try:
            trace = Trace() if args.trace else None
            rows = await run_backend(
                pg, schema, args.desks, args.seconds, args.think_ms, trace, **more
            )
            results.append(("postgresql", rows))
            if trace is not None:
                traces.append(("postgresql", trace))
        finally:
            async with admin.begin() as conn:
                await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            await admin.dispose()
    report(args, results, traces)


if __name__ == "__main__":
    asyncio.run(main())
