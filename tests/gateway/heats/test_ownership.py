"""Owning banks (gateway.heats.ownership): all or none, the heartbeat, losing a bank,
the outage trade-off, a dead local holder.  Time is an injected clock; renewals are
driven by calling the heartbeat's body, never by waiting."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.errors import OperatorError
from gateway.floor.store import load_floor
from gateway.heats import ownership as own
from gateway.heats.ownership import BankOwnership, hold_banks
from gateway.heats.scheduler import Scheduler
from storage import lease
from storage.db import make_sessionmaker
from storage.journal import TERMINAL_STATES, DirectorCommand, Journal, RunState
from storage.lease import Lease, Owner, StaleOwner

from ..conftest import Floor

T0 = datetime(2026, 12, 1, 9, 44, tzinfo=UTC)
PERIOD = timedelta(seconds=3)
OTHER = Owner("serve", "floor-gw-2", 777)


class Clock:
    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> datetime:
        return self.at


def _ownership(
    engine: AsyncEngine, clock: Clock, lost: list[tuple[str, str]], **kw: object
) -> BankOwnership:
    sessions = make_sessionmaker(engine)
    return BankOwnership(
        sessions, Journal(sessions), Owner("serve", "floor-gw-1", 4242), period=PERIOD,
        on_lost=lambda bank, why: lost.append((bank, why)), now=clock, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


class Lost(list[tuple[str, str]]):
    """The banks a process lost, and why."""


async def test_all_banks_or_none(engine: AsyncEngine) -> None:
    clock, lost = Clock(), Lost()
    mine = _ownership(engine, clock, lost)
    await lease.acquire(mine.sessions, "B", OTHER, now=T0, period=PERIOD)
    with pytest.raises(OperatorError) as refused:
        await mine.acquire(["A", "B"])
    assert str(refused.value) == "bank B is held by serve on floor-gw-2 pid 777 since 09:44:00 UTC"
    a = await lease.lease_of(mine.sessions, "A")
    assert a is not None
    assert a.released
    assert not mine.drives("A")
    assert mine.journal.token("A") is None


async def test_a_bank_taken_over_is_lost_once_and_the_journal_unfenced(
    engine: AsyncEngine,
) -> None:
    clock, lost = Clock(), Lost()
    mine = _ownership(engine, clock, lost)
    await mine.acquire(["A"])
    held = mine.leases["A"]
    assert mine.journal.token("A") == held.token
    clock.at = T0 + timedelta(seconds=1)
    await mine.renew_all()  # the heartbeat pushes the expiry on
    assert mine.leases["A"].expires_at == clock.at + PERIOD
    # Frozen past the expiry: a standby takes the bank.
    taken = await lease.acquire(mine.sessions, "A", OTHER, now=T0 + timedelta(seconds=5))
    clock.at = T0 + timedelta(seconds=6)
    await mine.renew_all()
    await mine.renew_all()
    assert [bank for bank, _why in lost] == ["A"]
    assert "is stale" in lost[0][1]
    assert not mine.drives("A")
    assert mine.journal.token("A") is None
    await mine.close()  # releases nothing of the new owner's
    view = await lease.lease_of(mine.sessions, "A")
    assert view is not None
    assert view.token == taken.token
    assert not view.released


@pytest.mark.parametrize("standby", [False, True])
async def test_an_outage_keeps_the_bank_until_expiry_then_by_the_standby_trade_off(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch, standby: bool
) -> None:
    clock, lost = Clock(), Lost()
    mine = _ownership(engine, clock, lost, standby_configured=standby)
    await mine.acquire(["A"])

    async def unreachable(*_a: object, **_k: object) -> Lease:
        raise OperationalError("renew", {}, ConnectionRefusedError())

    monkeypatch.setattr("storage.lease.renew", unreachable)
    clock.at = T0 + timedelta(seconds=2)  # the lease still runs
    await mine.renew_all()
    assert mine.drives("A")
    assert lost == []
    clock.at = T0 + timedelta(seconds=4)  # run out, the database still away
    await mine.renew_all()
    if standby:  # the standby may have it: floor actions stop
        assert not mine.drives("A")
        assert lost == [("A", "its lease ran out during a database outage (a standby may have it)")]
    else:  # nobody else waits for the bank: the heat goes on
        assert mine.drives("A")
        assert lost == []


def _a_dead_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()  # reaped: the pid names no process now
    return gone.pid


async def test_a_dead_holder_on_this_host_is_taken_over_but_not_by_a_standby(
    engine: AsyncEngine,
) -> None:
    dead_pid = _a_dead_pid()
    sessions = make_sessionmaker(engine)
    crashed = Owner("heat run", socket.gethostname(), dead_pid)
    now = datetime.now(UTC)
    await lease.acquire(sessions, "A", crashed, now=now, period=timedelta(minutes=5))
    standby = BankOwnership(sessions, Journal(sessions), own.this_process("serve"),
                            takeover_dead=False)  # fmt: skip
    assert not await standby.try_acquire("A")
    restarted = BankOwnership(sessions, Journal(sessions), own.this_process("serve"))
    assert await restarted.try_acquire("A")
    view = await lease.lease_of(sessions, "A")
    assert view is not None
    assert view.pid == own.this_process("serve").pid
    await restarted.close()


async def test_a_command_losing_its_bank_stops_with_one_line(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)

    async def command() -> None:
        async with hold_banks(sessions, Journal(sessions), ["A"], holder="heat run") as held:
            held.lose("A", "bank A: lease token 1 is stale")
            await asyncio.Event().wait()  # cancelled at once by the loss

    with pytest.raises(OperatorError) as stopped:
        await command()
    assert str(stopped.value) == "bank A: lease lost (bank A: lease token 1 is stale); stopped"


@dataclass
class _Context:
    """What the scheduler needs of a running gateway (gateway.heats.scheduler.HeatContext)."""

    sessions: Any
    writer: Any
    floor: Any

    async def reload_floor(self) -> Any:
        self.floor = await load_floor(self.sessions)
        return self.floor


async def test_a_serving_gateway_that_loses_its_bank_stops_its_heat_at_once(
    floor: Floor,
) -> None:
    """Frozen past its expiry while another owner took bank A: the next heartbeat finds
    the lease stale, the heat under way is cancelled where it was (the journal says where,
    for the new owner), no new heat starts there and A's director orders are left to A's
    owner; a write with the old token would be refused anyway."""
    t0 = datetime.now(UTC)
    clock = Clock()
    clock.at = t0
    ctx = _Context(floor.sessions, floor.writer, await load_floor(floor.sessions))
    mine = BankOwnership(floor.sessions, floor.journal, Owner("serve", "floor-gw-1", 4242),
                         period=PERIOD, now=clock)  # fmt: skip
    scheduler = Scheduler(ctx, {"A": floor.links()}, ownership=mine)
    stopped: list[Any] = []
    mine.on_lost = lambda bank, _why: stopped.extend(scheduler.stop_bank(bank))
    await mine.acquire(["A"])
    await scheduler.tick()
    live = scheduler.live["A"]
    for _ in range(500):  # bounded: until the run is journaled under way
        run = await floor.journal.latest_run("A")
        if run is not None and run.state is not RunState.SCHEDULED:
            break
        await asyncio.sleep(0.01)
    assert run is not None
    assert not live.task.done()

    await lease.acquire(floor.sessions, "A", OTHER, now=t0 + timedelta(seconds=4))
    clock.at = t0 + timedelta(seconds=4)
    await mine.renew_all()
    assert stopped == [live.task]
    await asyncio.gather(*stopped, return_exceptions=True)
    # Cancelled by the loss, or stopped a moment before by its own first write under the
    # old token (the fence): either way it drives the bank no more.
    assert live.task.cancelled() or isinstance(live.task.exception(), StaleOwner)
    left = await floor.journal.run(run.id)
    assert left.state not in TERMINAL_STATES
    assert not left.settled
    with pytest.raises(StaleOwner):
        await floor.journal.step(run.id, RunState.ABORTED, note="the old owner, too late")

    async with floor.sessions.begin() as s:
        s.add(DirectorCommand(bank_name="A", heat_id=floor.heat_id, command="abort",
                              reason="test", actor="director", created_at=t0))  # fmt: skip
    await scheduler.tick()
    assert "A" not in scheduler.live
    async with floor.sessions() as s:
        pending = list(await s.scalars(select(DirectorCommand)))
    assert [c.done_at for c in pending] == [None]  # A's owner carries it out
