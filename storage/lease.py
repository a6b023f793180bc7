"""One owner per bank: a lease in the database with a fencing token and a heartbeat.

Theory of operation
-------------------
Every process that drives a bank's machines (``serve``, a test heat, a recovery, a bank
enable or disable) first takes the bank's lease: one ``bank_lease`` row per bank naming
the holder (what, host, pid), a *fencing token* and an expiry.  The holder renews the
expiry by heartbeat; a holder that stops renewing (killed, cut off, frozen) loses the
bank once the expiry passes, and the next taker gets it with a *higher* token.

Taking and renewing are compare-and-set updates on the row (``WHERE token = :seen``), so
two takers racing for an expired lease cannot both win: one update matches, the other
finds the token moved on.  Every journal write of the holder carries its token and
begins by locking the lease row and checking that the token is still the bank's
(:func:`check_token`, called inside the writer's own transaction).  A stale owner — one
that was frozen past its expiry while a standby took over — therefore has its next write
rejected (:class:`StaleOwner`) instead of interleaving with the new owner's.  The lock
is what makes the check hold until commit: on PostgreSQL ``SELECT … FOR UPDATE`` blocks a
concurrent take-over until the write commits; SQLite transactions here begin
``IMMEDIATE`` (:mod:`storage.db`), so writers are serial anyway.

Time is passed in (``now``): tests drive expiry with an injected clock, and gateways
sharing one database are expected to keep their clocks in step (NTP), as the lease
periods (seconds) are far longer than any sane clock skew.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import BigInteger, Integer, String, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.types import UTCDateTime

DEFAULT_PERIOD = timedelta(seconds=3)


class BankLease(Base):
    __tablename__ = "bank_lease"

    bank_name: Mapped[str] = mapped_column(String(32), primary_key=True)
    holder: Mapped[str] = mapped_column(String(32), nullable=False)  # serve, heat run, ...
    host: Mapped[str] = mapped_column(String(255), nullable=False)
    pid: Mapped[int] = mapped_column(Integer, nullable=False)
    # Grows by one at every change of owner; a journal write must carry the current one.
    token: Mapped[int] = mapped_column(BigInteger, nullable=False)
    acquired_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    renewed_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    released: Mapped[bool] = mapped_column(nullable=False, default=False)


@dataclass(frozen=True, slots=True)
class Owner:
    """Who asks for a bank."""

    holder: str
    host: str
    pid: int

    def same_process(self, row: BankLease) -> bool:
        return (row.holder, row.host, row.pid) == (self.holder, self.host, self.pid)


@dataclass(frozen=True, slots=True)
class Lease:
    """A held lease: the bank, the fencing token, when it runs out unless renewed."""

    bank_name: str
    owner: Owner
    token: int
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class LeaseView:
    bank_name: str
    holder: str
    host: str
    pid: int
    token: int
    acquired_at: datetime
    renewed_at: datetime
    expires_at: datetime
    released: bool

    def live(self, now: datetime) -> bool:
        return not self.released and self.expires_at > now


class LeaseError(Exception):
    """Base of the lease refusals."""


class LeaseHeld(LeaseError):
    """Another live owner holds the bank."""

    def __init__(self, view: LeaseView) -> None:
        self.view = view
        super().__init__(
            f"bank {view.bank_name} is held by {view.holder} on {view.host} pid {view.pid} "
            f"since {view.acquired_at:%H:%M:%S} UTC"
        )


class StaleOwner(LeaseError):
    """A write or renewal with a token that is no longer the bank's: another owner took
    over (or the lease was released).  The writer must stop driving the bank."""


def _view(row: BankLease) -> LeaseView:
    return LeaseView(
        row.bank_name,
        row.holder,
        row.host,
        row.pid,
        row.token,
        row.acquired_at,
        row.renewed_at,
        row.expires_at,
        row.released,
    )


async def acquire(
    sessions: async_sessionmaker[AsyncSession],
    bank_name: str,
    owner: Owner,
    *,
    now: datetime,
    period: timedelta = DEFAULT_PERIOD,
    dead_token: int | None = None,
) -> Lease:
    """Take the bank, or raise :class:`LeaseHeld` naming the live owner.

    A lease that expired or was released is taken over with the next token.  The same
    process asking again (a restarted ``serve`` reuses no pid, so this is only a re-entry
    within one process) gets a fresh token too: tokens never repeat.

    ``dead_token``: the caller has seen that the holder of this token is gone (a process
    on its own host that no longer exists), so its unexpired lease is taken at once; a
    lease that changed hands since (another token) is still refused.
    """
    expires = now + period
    async with sessions.begin() as session:
        row = await session.get(BankLease, bank_name, with_for_update=True)
        if row is None:
            session.add(
                BankLease(
                    bank_name=bank_name,
                    holder=owner.holder,
                    host=owner.host,
                    pid=owner.pid,
                    token=1,
                    acquired_at=now,
                    renewed_at=now,
                    expires_at=expires,
                    released=False,
                )
            )
            try:
                await session.flush()
            except IntegrityError:  # a concurrent first taker won the insert
                raise LeaseHeld(await _current(sessions, bank_name)) from None
            return Lease(bank_name, owner, 1, expires)
        live = not row.released and row.expires_at > now
        if live and not owner.same_process(row) and row.token != dead_token:
            raise LeaseHeld(_view(row))
        seen = row.token
        done = await session.execute(
            update(BankLease)
            .where(BankLease.bank_name == bank_name, BankLease.token == seen)
            .values(
                holder=owner.holder,
                host=owner.host,
                pid=owner.pid,
                token=seen + 1,
                acquired_at=now,
                renewed_at=now,
                expires_at=expires,
                released=False,
            )
            .execution_options(synchronize_session=False)
        )
        if done.rowcount != 1:  # type: ignore[attr-defined]
            raise LeaseHeld(await _current(sessions, bank_name))
        return Lease(bank_name, owner, seen + 1, expires)


async def _current(sessions: async_sessionmaker[AsyncSession], bank_name: str) -> LeaseView:
    async with sessions() as session:
        row = await session.get(BankLease, bank_name)
        if row is None:  # pragma: no cover - a row once inserted is never deleted
            raise LeaseError(f"bank {bank_name}: lease vanished")
        return _view(row)


async def renew(
    sessions: async_sessionmaker[AsyncSession],
    lease: Lease,
    *,
    now: datetime,
    period: timedelta = DEFAULT_PERIOD,
) -> Lease:
    """The heartbeat: push the expiry on, or raise :class:`StaleOwner` if the bank has
    another owner now (or this lease ran out and was released)."""
    expires = now + period
    async with sessions.begin() as session:
        done = await session.execute(
            update(BankLease)
            .where(
                BankLease.bank_name == lease.bank_name,
                BankLease.token == lease.token,
                BankLease.released.is_(False),
            )
            .values(renewed_at=now, expires_at=expires)
            .execution_options(synchronize_session=False)
        )
        if done.rowcount != 1:  # type: ignore[attr-defined]
            raise StaleOwner(f"bank {lease.bank_name}: lease token {lease.token} is stale")
    return Lease(lease.bank_name, lease.owner, lease.token, expires)


async def release(
    sessions: async_sessionmaker[AsyncSession], lease: Lease, *, now: datetime
) -> bool:
    """Give the bank up at once (an orderly stop).  False if it was no longer ours."""
    async with sessions.begin() as session:
        done = await session.execute(
            update(BankLease)
            .where(BankLease.bank_name == lease.bank_name, BankLease.token == lease.token)
            .values(released=True, renewed_at=now, expires_at=now)
            .execution_options(synchronize_session=False)
        )
        return bool(done.rowcount == 1)  # type: ignore[attr-defined]


async def check_token(
    session: AsyncSession, bank_name: str, token: int | None, *, now: datetime
) -> None:
    """Inside a writer's transaction: lock the bank's lease row and refuse the write
    unless ``token`` is still the bank's.  Call it before the write's first change.

    A writer holding no lease (``token`` None: a tool or test that drives no machine)
    may write only while nobody holds the bank."""
    row = await session.scalar(
        select(BankLease).where(BankLease.bank_name == bank_name).with_for_update()
    )
    if token is None:
        if row is not None and not row.released and row.expires_at > now:
            raise StaleOwner(
                f"bank {bank_name}: write refused, the bank is held by {row.holder} on "
                f"{row.host} pid {row.pid} (token {row.token})"
            )
        return
    if row is None or row.token != token or row.released:
        current = "none" if row is None else str(row.token)
        released = ", released" if row is not None and row.released else ""
        raise StaleOwner(
            f"bank {bank_name}: write with lease token {token} refused "
            f"(the bank's token is {current}{released})"
        )


async def leases(sessions: async_sessionmaker[AsyncSession]) -> list[LeaseView]:
    async with sessions() as session:
        rows = await session.scalars(select(BankLease).order_by(BankLease.bank_name))
        return [_view(r) for r in rows]


async def lease_of(sessions: async_sessionmaker[AsyncSession], bank_name: str) -> LeaseView | None:
    async with sessions() as session:
        row = await session.get(BankLease, bank_name)
        return None if row is None else _view(row)
