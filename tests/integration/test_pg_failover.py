"""The database host dies mid-heat and its streaming replica is promoted: nothing is lost
(issue 29 no. 2 and 3).

Each test starts its own PostgreSQL primary and synchronous streaming replica on
loopback (``bench/pg_cluster.py``: ``initdb``, ``pg_basebackup -R``, ``pg_ctl``), reaches
them through one Reelgate URL naming both hosts (writes go to the primary,
``storage/pg_hosts.py``), kills the primary — SIGKILL to every one of its processes, as a
host dying — at a chosen moment, and promotes the replica (``pg_ctl promote``) while the
heat goes on.  The engine is never rebuilt: it finds the new primary by itself.

* mid-heat (the RUNNING step just journaled) and during score collection (COLLECTING
  just journaled): the heat ends on the floor through the spool; afterwards every
  machine's score is stored once and equals the credits it left tournament mode with
  (T12), every machine is back in normal play, the run is settled, ``audit verify``
  finds the chain intact, and the bank lease held at the kill is still the bank's on the
  new primary, fenced (its holder renews it, a rival is refused);
* a desk sale in flight: killed before its commit (the desk never learns) or just after
  it (the answer is lost), the desk's retry under the same Idempotency-Key on the new
  primary makes exactly one sale, one entry, one audit row.

The waits are on states, with generous bounds; nothing is timed.  Skipped, saying why,
only when PostgreSQL's server tools are not installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.machine import EmulatedMachine, MachineRefusal
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.runner import HeatRunner
from gateway.heats.spool import JournalWriter, is_outage
from gateway.machines.links import MachineLink
from gateway.records import chain
from gateway.tournament import services as svc
from storage import audit_verify, lease
from storage.audit import AuditEntry
from storage.db import Base, make_engine, make_sessionmaker
from storage.journal import Journal, MachineState, RunState
from storage.tournament import Entry, EntryPurchase

from ..gateway.direct_driver import DirectDriver
from ..gateway.tournament.conftest import Desk

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("pg_cluster", ROOT / "bench" / "pg_cluster.py")
assert _spec is not None
assert _spec.loader is not None
pg_cluster = importlib.util.module_from_spec(_spec)
sys.modules["pg_cluster"] = pg_cluster
_spec.loader.exec_module(pg_cluster)

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::ResourceWarning")]

T = TypeVar("T")
SAST = ZoneInfo("Africa/Johannesburg")
BOUND_S = 120.0  # generous: a loaded 2-core CI host


class Witnessed(EmulatedMachine):
    """An emulated machine that remembers the credits it left tournament mode with."""

    left_with: int | None = None

    def exit_tournament(self) -> None:
        if self.tournament is not None and not self.game_in_progress:
            self.left_with = self.credits
        super().exit_tournament()


@pytest.fixture
async def cluster() -> AsyncIterator[Any]:
    reason = pg_cluster.missing_reason()
    if reason is not None:
        pytest.skip(reason)
    made = pg_cluster.PgCluster()
    try:
        await asyncio.to_thread(made.start)
        yield made
    finally:
        await asyncio.to_thread(made.close)


@pytest.fixture
async def engine(cluster: Any) -> AsyncIterator[AsyncEngine]:
    import storage.models  # noqa: F401

    url = cluster.url()
    eng = make_engine(url, connect_args={"timeout": 10})
    chain.bind(eng, url)  # the session's test keys (tests/conftest.py)
    async with eng.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    try:
        yield eng
    finally:
        await eng.dispose()


async def _server_port(engine: AsyncEngine) -> tuple[int, bool]:
    async with engine.connect() as conn:
        port = await conn.scalar(text("SELECT inet_server_port()"))
        standby = await conn.scalar(text("SELECT pg_is_in_recovery()"))
    return int(port), bool(standby)


async def _until_done(what: Callable[[], Awaitable[T]]) -> T:
    """What a desk or a gateway does after a lost answer: try again until the database
    answers (bounded)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND_S
    while True:
        try:
            return await what()
        except Exception as exc:
            if not is_outage(exc) or loop.time() > deadline:
                raise
        await asyncio.sleep(0.1)


async def _players(machines: list[Witnessed], stop: asyncio.Event) -> None:
    while not stop.is_set():
        for m in machines:
            with contextlib.suppress(MachineRefusal):
                if m.play_enabled() and m.credits > 0:
                    m.spin(1)
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("kill_at", ["running", "collecting"])
async def test_a_heat_survives_the_primary_dying_and_the_replica_promoted(
    cluster: Any, engine: AsyncEngine, tmp_path: Path, kill_at: str
) -> None:
    """T12 (score = end credits, stored once), T20 (the heat stands: the floor kept
    playing), rule of one truth: the journal replayed from the spool onto the new
    primary."""
    assert await _server_port(engine) == (cluster.primary.port, False)
    sessions = make_sessionmaker(engine)
    journal = Journal(sessions)
    # This gateway owns bank A (a long period: the lease must not run out in the test).
    held = await lease.acquire(
        sessions, "A", lease.Owner("serve", "gw-1", 101), now=datetime.now(UTC),
        period=timedelta(hours=1),
    )  # fmt: skip
    journal.hold("A", held.token)
    machines = [Witnessed(f"A{i:02d}", seed=i) for i in range(1, 7)]
    links = {
        m.machine_id: MachineLink(m.machine_id, DirectDriver(m), attempts=2, budget_s=0.3)
        for m in machines
    }
    writer = JournalWriter(journal, tmp_path / "spool", retry_interval=0.1)
    killed = asyncio.Event()

    def progress(note: ProgressNote) -> None:
        if note.kind is Progress.STATE and note.state == kill_at and not killed.is_set():
            # The chosen moment: the step is journaled; the primary is dead before the
            # runner takes its next step (this blocks the loop for the kill only).
            cluster.kill_primary()
            killed.set()

    stop = asyncio.Event()
    players = asyncio.create_task(_players(machines, stop))
    runner = HeatRunner(writer, links, poll_interval_s=0.05, progress=progress)
    heat = asyncio.create_task(runner.run_new("A", list(links), credits=300, seconds=3))
    await asyncio.wait_for(killed.wait(), BOUND_S)
    # Promote only once a write has met the dead primary: on a loaded host the heat's next
    # write could otherwise come after the promotion, and the gap would test nothing.
    for _ in range(int(BOUND_S / 0.02)):
        if writer.spooled_total or heat.done():
            break
        await asyncio.sleep(0.02)
    await asyncio.to_thread(cluster.promote)  # the heat goes on meanwhile, on the spool
    out = await asyncio.wait_for(heat, BOUND_S)
    stop.set()
    await players
    assert await writer.drain(BOUND_S)
    await writer.close()
    assert writer.spooled_total > 0  # the gap was real: writes waited in the spool

    # The same engine now writes to the promoted replica.
    assert await _server_port(engine) == (cluster.replica.port, False)
    assert out.state is RunState.CLOSED
    results = await journal.results(out.run_id)
    assert sorted(r.machine_id for r in results) == sorted(links)  # 0 lost, 0 doubled
    want = {m.machine_id: m.left_with for m in machines}
    assert None not in want.values()
    assert {r.machine_id: r.score for r in results} == want  # 0 wrong
    assert {m: s.score for m, s in out.seats.items()} == want
    # Every machine released, on the floor and in the journal; the run settled.
    assert all(not m.in_tournament and m.play_enabled() for m in machines)
    view = await journal.run(out.run_id)
    assert set(view.machines.values()) == {MachineState.RELEASED}
    assert view.settled
    steps = [s for s, _, _ in await journal.steps(out.run_id)]
    assert steps.count(RunState.CLOSED) == 1
    assert steps[-3:] == [RunState.ENDING, RunState.COLLECTING, RunState.CLOSED]
    async with make_sessionmaker(engine)() as session:
        verified = await audit_verify.verify(session)
    assert verified.ok, verified.problem
    assert verified.sealed_rows >= len(links)  # the scores are sealed into the chain

    # The lease held at the failover is still the bank's, on the new primary, fenced:
    # its holder renews it with the same token, a rival is refused, a write without the
    # token is refused.
    renewed = await lease.renew(sessions, held, now=datetime.now(UTC), period=timedelta(hours=1))
    assert renewed.token == held.token
    with pytest.raises(lease.LeaseHeld, match="held by serve on gw-1 pid 101"):
        await lease.acquire(sessions, "A", lease.Owner("serve", "gw-2", 202), now=datetime.now(UTC))
    with pytest.raises(lease.StaleOwner):
        await Journal(sessions).step(out.run_id, RunState.CLOSED, note="a rival's write")


async def _counts(desk: Desk) -> tuple[int, int, int]:
    async def work(session: Any) -> tuple[int, int, int]:
        purchases = await session.scalar(select(func.count()).select_from(EntryPurchase))
        entries = await session.scalar(select(func.count()).select_from(Entry))
        sold = await session.scalar(
            select(func.count()).where(AuditEntry.action == "purchase.sell")
        )
        return int(purchases), int(entries), int(sold)

    found: tuple[int, int, int] = await desk.run(work)
    return found


@pytest.mark.parametrize("killed", ["before-commit", "after-commit"])
async def test_a_sale_in_flight_is_made_once_across_the_promotion(
    cluster: Any, engine: AsyncEngine, killed: str
) -> None:
    """T5: one paid sale per key; a retry after the failover answers the first sale or
    makes it, never a second."""
    desk = Desk(make_sessionmaker(engine))
    await desk.tournament()
    ann = await desk.player("8001015009087", "Ann")
    now = datetime(2026, 12, 2, 19, 0, tzinfo=SAST)
    asked: dict[str, Any] = {
        "cashier": "thandi", "now": now, "idempotency_key": "desk-2-sale-0042",
    }  # fmt: skip

    if killed == "before-commit":

        async def sale_cut_before_commit() -> None:
            async with svc.unit_of_work(desk.maker) as session:
                await svc.sell_entries(session, desk.tournament_id, ann, **asked)
                await asyncio.to_thread(cluster.kill_primary)  # the commit never arrives

        with pytest.raises(Exception) as lost:  # noqa: PT011 - whatever the driver says
            await sale_cut_before_commit()
        assert is_outage(lost.value), lost.value
    else:
        first = await desk.run(svc.sell_entries, desk.tournament_id, ann, **asked)
        await asyncio.to_thread(cluster.kill_primary)  # and the answer never reached the desk
    await asyncio.to_thread(cluster.promote)

    async def retry() -> Any:
        return await desk.run(svc.sell_entries, desk.tournament_id, ann, **asked)

    sale = await _until_done(retry)
    assert await _server_port(engine) == (cluster.replica.port, False)
    if killed == "before-commit":
        assert not sale.replayed  # the first never committed: this is the sale
    else:
        assert sale.replayed  # the first committed on the replica too (synchronous)
        assert sale.purchase.id == first.purchase.id
        assert sale.entry_ids == first.entry_ids
    again = await desk.run(svc.sell_entries, desk.tournament_id, ann, **asked)
    assert again.replayed
    assert await _counts(desk) == (1, 1, 1)  # one purchase, one entry, one audit row
    async with desk.maker() as session:
        verified = await audit_verify.verify(session)
    assert verified.ok, verified.problem


async def test_a_silent_host_ahead_of_the_primary_costs_one_timeout_not_every_connect(
    cluster: Any,
) -> None:
    """A powered-off host answers nothing: asyncpg alone would spend its whole connect
    timeout on it and never try the next host; Reelgate tries each host with its own
    timeout and the primary that last answered first (storage/pg_hosts.py)."""
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # the kernel completes the handshake; nobody ever answers
        port = silent.getsockname()[1]
        url = cluster.url().replace("@", f"@127.0.0.1:{port},", 1)
        eng = make_engine(url, connect_args={"timeout": 2})
        try:
            assert await _server_port(eng) == (cluster.primary.port, False)
            await eng.dispose()  # a fresh connect: the remembered primary is tried first
            assert await _server_port(eng) == (cluster.primary.port, False)
        finally:
            await eng.dispose()
        # The silent host and a replica: no primary, said as an outage (the spool's).
        bare = make_engine(
            f"postgresql+asyncpg://postgres@127.0.0.1:{port},{cluster.replica.host}/reelgate",
            connect_args={"timeout": 1},
        )
        try:
            with pytest.raises(ConnectionError, match="no host is read-write") as none:
                await _server_port(bare)
            assert is_outage(none.value)
        finally:
            await bare.dispose()
