"""Owning banks: take their leases, keep them by heartbeat, fence the journal, let go.

Theory of operation
-------------------
Whatever drives a bank's machines (``serve``, ``heat run``, ``heat recover``, ``bank
enable`` / ``disable``, the demo) first takes the bank's lease (:mod:`storage.lease`),
all of its banks or none: a second process is refused with one line naming the holder
(:class:`~gateway.errors.OperatorError`, exit 2) before it touches a machine or writes
a row.  The lease's fencing token is handed to the journal (``Journal.hold``), so every
journal write for the bank carries it and a stale owner's write is refused.

A heartbeat renews every held lease each ``period / 3``.  Losing a bank — a renewal
refused because another owner has it (``StaleOwner``), or the same refusal met by a
journal write (reported through :meth:`BankOwnership.lose`) — stops this process
driving it at once: the ``on_lost`` callback cancels what runs there (the scheduler's
heat, a recovery); the journal says where it was and the new owner recovers it.

During a database outage renewals fail with an outage error (``spool.is_outage``).
While the lease has not run out by the local clock nothing changes: no other owner can
have it yet.  Once it has run out and renewals still fail, the trade-off is:

* no standby configured (the default): keep the heat going.  Nobody else is waiting for
  the bank, and stopping would cost the players their heat for a database blip; the
  journal spool keeps the writes, and when the database returns the renewal succeeds
  (the token is still ours) or is refused (someone took the bank: stop then).
* a standby configured (``serve --standby``, or a primary told ``--expect-standby``):
  stop floor actions on the bank as soon as the lease has run out, because the standby
  may have taken it and two owners must never drive the same machines.

A holder on this very host whose process no longer exists (a crashed ``heat run``, a
``serve`` killed and restarted) is dead for certain: its lease is taken at once rather
than waited out (``takeover_dead``).  A standby does not do this: it stands for another
host, and waits for the expiry like one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.errors import OperatorError
from gateway.heats.spool import is_outage
from storage import lease as leases
from storage.journal import Journal
from storage.lease import DEFAULT_PERIOD, Lease, LeaseHeld, LeaseView, Owner, StaleOwner

log = logging.getLogger("reelgate.ownership")

LostHandler = Callable[[str, str], None]  # (bank, why)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def this_process(holder: str) -> Owner:
    """The owner this process is: what it is doing, on which host, which pid."""
    return Owner(holder, socket.gethostname(), os.getpid())


def process_gone(pid: int) -> bool:
    """True if no process ``pid`` runs on this host (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] == ["Z"]


class BankOwnership:
    """The leases one process holds, their heartbeat, and what losing one does."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        journal: Journal,
        owner: Owner,
        *,
        period: timedelta = DEFAULT_PERIOD,
        standby_configured: bool = False,
        takeover_dead: bool = True,
        on_lost: LostHandler | None = None,
        now: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.sessions = sessions
        self.journal = journal
        self.owner = owner
        self.period = period
        self.standby_configured = standby_configured
        self.takeover_dead = takeover_dead
        self.on_lost = on_lost
        self.now = now
        self.leases: dict[str, Lease] = {}
        self.lost: dict[str, str] = {}  # bank -> why, for the last loss
        self._warned: set[tuple[str, str]] = set()  # (bank, what): outage lines said once
        self._heartbeat: asyncio.Task[None] | None = None

    # -- taking ----------------------------------------------------------------------
    def drives(self, bank: str) -> bool:
        return bank in self.leases

    async def _take(self, bank: str) -> Lease:
        try:
            got = await leases.acquire(
                self.sessions, bank, self.owner, now=self.now(), period=self.period
            )
        except LeaseHeld as held:
            if not self._dead(held.view):
                raise
            got = await leases.acquire(
                self.sessions, bank, self.owner, now=self.now(), period=self.period,
                dead_token=held.view.token,
            )  # fmt: skip
            log.info(
                "bank %s: its holder (pid %d) is gone; taken over", bank, held.view.pid,
                extra={"bank": bank},
            )  # fmt: skip
        self.leases[bank] = got
        log.info(
            "bank %s: lease taken (token %d, %s)", bank, got.token, self.owner.holder,
            extra={"bank": bank, "token": got.token, "holder": self.owner.holder},
        )  # fmt: skip
        self.lost.pop(bank, None)
        self.journal.hold(bank, got.token)
        return got

    def _dead(self, view: LeaseView) -> bool:
        return self.takeover_dead and view.host == self.owner.host and process_gone(view.pid)

    async def acquire(self, banks: Iterable[str]) -> None:
        """Take every bank or none: on a refusal the ones taken are given back and the
        refusal is one line for the operator."""
        try:
            for bank in banks:
                await self._take(bank)
        except LeaseHeld as held:
            await self.release_all()
            raise OperatorError(str(held)) from None

    async def try_acquire(self, bank: str) -> bool:
        """One standby poll: the bank if it is free (expired or released), else False."""
        return await self._poll(bank) is None

    async def _poll(self, bank: str) -> LeaseView | None:
        """None once the bank is ours, else the live lease that holds it."""
        try:
            await self._take(bank)
        except LeaseHeld as held:
            return held.view
        return None

    async def wait_for(self, bank: str) -> Lease:
        """Stand by for the bank: poll every ``period / 2`` until it is ours, and once
        more right when the holder's lease runs out if that comes sooner (the take-over
        then waits for the expiry only, not for the next poll as well)."""
        poll = self.period.total_seconds() / 2
        while True:
            pause = poll
            try:
                view = await self._poll(bank)
            except Exception as exc:  # the database away: keep waiting
                if not is_outage(exc):
                    raise
            else:
                if view is None:
                    return self.leases[bank]
                left = (view.expires_at - self.now()).total_seconds()
                pause = min(poll, max(left + 0.02, 0.02))
            await asyncio.sleep(pause)

    # -- keeping ---------------------------------------------------------------------
    def start(self) -> None:
        if self._heartbeat is None:
            self._heartbeat = asyncio.create_task(self._beat(), name="lease-heartbeat")

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.period.total_seconds() / 3)
            await self.renew_all()

    async def renew_all(self) -> None:
        """One heartbeat: renew each held lease; a refusal loses the bank."""
        for bank, held in list(self.leases.items()):
            try:
                async with asyncio.timeout(self.period.total_seconds() / 2):
                    renewed = await leases.renew(
                        self.sessions, held, now=self.now(), period=self.period
                    )
            except StaleOwner as exc:
                self.lose(bank, str(exc))
            except Exception as exc:
                if not is_outage(exc):
                    log.exception("bank %s: lease renewal failed", bank)
                self._unrenewed(bank, held)
            else:
                if self.leases.get(bank) is held:  # not lost meanwhile
                    self.leases[bank] = renewed
                    self._warned = {w for w in self._warned if w[0] != bank}

    def _unrenewed(self, bank: str, held: Lease) -> None:
        """A renewal that did not reach the database: see the module's trade-off."""
        if self.now() < held.expires_at:
            self._warn_once(bank, "outage", "database unreachable; the lease still runs")
        elif self.standby_configured:
            self.lose(bank, "its lease ran out during a database outage (a standby may have it)")
        else:
            self._warn_once(
                bank, "expired", "lease ran out during a database outage; no standby "
                "is configured, so the bank is kept going",
            )  # fmt: skip

    def _warn_once(self, bank: str, what: str, text: str) -> None:
        if (bank, what) not in self._warned:
            self._warned.add((bank, what))
            log.warning("bank %s: %s", bank, text, extra={"bank": bank})

    # -- letting go ------------------------------------------------------------------
    def lose(self, bank: str, why: str) -> None:
        """The bank is not ours any more: stop driving it now (one log line)."""
        if self.leases.pop(bank, None) is None:
            return
        self.journal.drop(bank)
        self.lost[bank] = why
        log.warning(
            "bank %s: lease lost (%s); no longer driving it", bank, why, extra={"bank": bank}
        )
        if self.on_lost is not None:
            self.on_lost(bank, why)

    async def release(self, bank: str) -> None:
        held = self.leases.pop(bank, None)
        if held is None:
            return
        self.journal.drop(bank)
        with contextlib.suppress(Exception):  # the database away: it runs out by itself
            async with asyncio.timeout(self.period.total_seconds()):
                await leases.release(self.sessions, held, now=self.now())
        log.info(
            "bank %s: lease released (token %d)", bank, held.token,
            extra={"bank": bank, "token": held.token},
        )  # fmt: skip

    async def release_all(self) -> None:
        for bank in list(self.leases):
            await self.release(bank)

    async def close(self) -> None:
        beat, self._heartbeat = self._heartbeat, None
        if beat is not None:
            beat.cancel()
            await asyncio.gather(beat, return_exceptions=True)
        await self.release_all()


@contextlib.asynccontextmanager
async def hold_banks(
    sessions: async_sessionmaker[AsyncSession],
    journal: Journal,
    banks: Iterable[str],
    *,
    holder: str,
    period: timedelta = DEFAULT_PERIOD,
    now: Callable[[], datetime] = _utc_now,
) -> AsyncIterator[BankOwnership]:
    """A one-shot command's hold on its banks: all or none, heartbeat, released on exit.

    Losing a bank cancels the command's task; it then ends with one line saying why
    (as does a journal write refused as stale), instead of driving a bank it lost."""
    task = asyncio.current_task()
    assert task is not None

    def stop(bank: str, why: str) -> None:
        task.cancel()

    ownership = BankOwnership(
        sessions, journal, this_process(holder), period=period, on_lost=stop, now=now
    )
    await ownership.acquire(banks)
    ownership.start()
    try:
        yield ownership
    except asyncio.CancelledError:
        if not ownership.lost or task.uncancel() > 0:
            raise
        bank, why = next(iter(ownership.lost.items()))
        raise OperatorError(f"bank {bank}: lease lost ({why}); stopped") from None
    except StaleOwner as exc:
        raise OperatorError(f"{exc}; stopped") from None
    finally:
        await ownership.close()
