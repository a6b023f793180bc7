"""One owner per bank: leases, fencing tokens, and the journal's fenced writes."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from storage import lease
from storage.db import make_sessionmaker
from storage.journal import Journal, RunState
from storage.lease import LeaseHeld, Owner, StaleOwner

T0 = datetime(2026, 12, 1, 9, 44, tzinfo=UTC)
SERVE = Owner("serve", "floor-gw-1", 4242)
STANDBY = Owner("serve", "floor-gw-2", 777)
HEAT_RUN = Owner("heat run", "floor-gw-1", 5151)


async def test_a_second_owner_is_refused_with_who_holds_the_bank(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    first = await lease.acquire(sessions, "A", SERVE, now=T0)
    assert first.token == 1
    with pytest.raises(LeaseHeld) as refused:
        await lease.acquire(sessions, "A", HEAT_RUN, now=T0 + timedelta(seconds=1))
    assert str(refused.value) == "bank A is held by serve on floor-gw-1 pid 4242 since 09:44:00 UTC"
    # Another bank is free.
    other = await lease.acquire(sessions, "B", HEAT_RUN, now=T0)
    assert other.token == 1


async def test_an_expired_lease_is_taken_over_with_a_higher_token(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    first = await lease.acquire(sessions, "A", SERVE, now=T0, period=timedelta(seconds=3))
    # Renewed: still held past the first period.
    first = await lease.renew(sessions, first, now=T0 + timedelta(seconds=2))
    with pytest.raises(LeaseHeld):
        await lease.acquire(sessions, "A", STANDBY, now=T0 + timedelta(seconds=4))
    # Not renewed any more: the standby takes over once it runs out.
    taken = await lease.acquire(sessions, "A", STANDBY, now=T0 + timedelta(seconds=6))
    assert taken.token == first.token + 1
    with pytest.raises(StaleOwner):
        await lease.renew(sessions, first, now=T0 + timedelta(seconds=7))
    view = await lease.lease_of(sessions, "A")
    assert view is not None
    assert (view.host, view.pid, view.token) == ("floor-gw-2", 777, taken.token)


async def test_a_released_lease_is_free_at_once(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    held = await lease.acquire(sessions, "A", HEAT_RUN, now=T0)
    assert await lease.release(sessions, held, now=T0 + timedelta(seconds=1))
    again = await lease.acquire(sessions, "A", SERVE, now=T0 + timedelta(seconds=1))
    assert again.token == 2
    # Releasing a lease that is no longer ours changes nothing.
    assert not await lease.release(sessions, held, now=T0 + timedelta(seconds=2))
    view = await lease.lease_of(sessions, "A")
    assert view is not None
    assert view.live(T0 + timedelta(seconds=2))


async def test_a_dead_holders_lease_is_taken_only_for_its_own_token(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    crashed = await lease.acquire(sessions, "A", HEAT_RUN, now=T0)
    # Its process is gone (seen by the taker on the same host): no waiting out the expiry.
    taken = await lease.acquire(
        sessions, "A", SERVE, now=T0 + timedelta(seconds=1), dead_token=crashed.token
    )
    assert taken.token == crashed.token + 1
    # A token seen dead earlier does not take the bank from its new, live owner.
    with pytest.raises(LeaseHeld):
        await lease.acquire(
            sessions, "A", STANDBY, now=T0 + timedelta(seconds=1), dead_token=crashed.token
        )


async def test_racing_takers_get_one_winner(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    owners = [Owner("serve", f"gw-{i}", 100 + i) for i in range(6)]
    outcomes = await asyncio.gather(
        *(lease.acquire(sessions, "A", o, now=T0) for o in owners), return_exceptions=True
    )
    won = [o for o in outcomes if isinstance(o, lease.Lease)]
    assert len(won) == 1
    assert all(isinstance(o, LeaseHeld) for o in outcomes if o not in won)


async def test_a_stale_owner_cannot_write_the_journal(engine: AsyncEngine) -> None:
    """The fencing token: the old owner's next write after a take-over is refused and
    leaves the journal as the new owner wrote it."""
    sessions = make_sessionmaker(engine)
    old_owner, new_owner = Journal(sessions), Journal(sessions)
    first = await lease.acquire(sessions, "A", SERVE, now=datetime.now(UTC))
    old_owner.hold("A", first.token)
    run_id = await old_owner.create_run("A", ["A01", "A02"], credits=1000, seconds=60)
    await old_owner.step(run_id, RunState.ARMED)

    # The old owner freezes; its lease is released by an operator (or runs out).
    await lease.release(sessions, first, now=datetime.now(UTC))
    second = await lease.acquire(sessions, "A", STANDBY, now=datetime.now(UTC))
    new_owner.hold("A", second.token)
    await new_owner.step(run_id, RunState.RUNNING)

    with pytest.raises(StaleOwner):
        await old_owner.step(run_id, RunState.ENDING)
    with pytest.raises(StaleOwner):
        await old_owner.create_run("A", ["A01"], credits=1000, seconds=60)
    view = await new_owner.run(run_id)
    assert view.state is RunState.RUNNING
    steps = [s for s, _, _ in await new_owner.steps(run_id)]
    assert steps == [RunState.SCHEDULED, RunState.ARMED, RunState.RUNNING]


async def test_a_writer_without_a_lease_is_refused_while_the_bank_is_held(
    engine: AsyncEngine,
) -> None:
    sessions = make_sessionmaker(engine)
    tool = Journal(sessions)  # holds no lease
    run_id = await tool.create_run("A", ["A01"], credits=1000, seconds=60)  # nobody holds A
    held = await lease.acquire(sessions, "A", SERVE, now=datetime.now(UTC))
    with pytest.raises(StaleOwner, match="held by serve on floor-gw-1 pid 4242"):
        await tool.step(run_id, RunState.ARMED)
    await lease.release(sessions, held, now=datetime.now(UTC))
    await tool.step(run_id, RunState.ARMED)
    assert (await tool.run(run_id)).state is RunState.ARMED
