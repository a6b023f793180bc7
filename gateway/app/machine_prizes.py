"""Prizes credited to the winner's machine: the sender (house clauses P3–P5, docs/rules.md#p4).

A transfer is journaled by the desk (``machine_prize_transfers``, status ``journaled``,
its SAS AFT transaction ID fixed).  :class:`MachinePrizes` delivers it:

1. **Never sent** (``sends`` 0): the machine's facts (LP 74 through the driver, the
   floor and the heats from the database) are judged (P3); a refusal closes the
   transfer in one line and nothing is sent.
2. **Journaled before sent** (P4): ``sends`` is counted and committed, then the LP 74
   lock and LP 72 transfer go out with the journaled transaction ID.
3. **Outcome stored** (P5): done is the payout (tender ``machine (AFT)``) in the same
   transaction as the journal row; refused closes it (the prize stays unpaid); a lost
   link leaves it journaled.
4. **Recovery** (``sends`` > 0 and no outcome: a crash or a lost reply between the send
   and the store): the machine's last transfer is read back (LP 72 FF) first.  Ours and
   done is paid, ours and refused is refused, pending is asked again later, not seen is
   sent again **with the same transaction ID** (a machine that took it answers with its
   first outcome and never credits twice), and a duplicate or an odd amount is left for
   a person (``unknown``).

``reelgate serve`` runs it for the machines of its banks (:meth:`MachinePrizes.run`);
the host's ``reelgate prizes pay --to-machine`` delivers its own transfer at once and
``reelgate prizes machine-deliver`` delivers (or recovers) every open one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.floor.aft import configure_driver
from gateway.floor.model import MachineSpec
from gateway.floor.store import load_floor
from gateway.machines.capabilities import PrizeTransfers
from gateway.machines.driver import DriverError, MachineDriver, MachineRefused
from gateway.machines.registry import open_driver
from gateway.tournament.rules.machine_prizes import (
    MachineFacts,
    Reading,
    Verdict,
    refusal,
    verdict,
)
from gateway.tournament.services import machine_prizes as mp
from storage.machine_prizes import JOURNALED, MachinePrizeTransfer

log = logging.getLogger("reelgate.machine_prizes")

DriverFor = Callable[[str], Awaitable[object | None]]
"""The driver this process holds for a machine (opened), or None if it holds none."""


class MachinePrizes:
    """Delivers journaled prize transfers to the machines this process can reach."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        driver_for: DriverFor,
        *,
        actor: str = "gateway",
        interval_s: float = 1.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.sessions = sessions
        self.driver_for = driver_for
        self.actor = actor
        self.interval_s = interval_s
        self.clock = clock

    async def _settle(
        self, transfer_id: int, v: Verdict, detail: str, egm_status: int | None = None
    ) -> MachinePrizeTransfer:
        async with self.sessions.begin() as session:
            row = await mp.settle(
                session,
                transfer_id,
                v,
                detail=detail,
                egm_status=egm_status,
                actor=self.actor,
                now=self.clock(),
            )
        log.info("prize transfer %s: %s (%s)", transfer_id, row.status, detail)
        return row

    async def deliver(self, transfer_id: int) -> MachinePrizeTransfer | None:
        """Send or recover one transfer; the row as it stands after (None: not ours)."""
        async with self.sessions() as session:
            row = await session.get(MachinePrizeTransfer, transfer_id)
            if row is None or row.status != JOURNALED:
                return row
            machine, tx, cents = row.machine_id, row.transaction_id, row.amount_cents
            days, sends = row.expiration_days, row.sends
            floor = await mp.floor_facts(session, machine)
        driver = await self.driver_for(machine)
        if driver is None:
            return None  # another gateway's machine
        if not isinstance(driver, PrizeTransfers):
            why = f"rule P3: machine {machine} cannot take AFT credits (no AFT driver)"
            return await self._settle(transfer_id, Verdict.REFUSED, why)
        if sends:  # sent before, outcome never stored: the machine says (P5)
            read = await driver.read_prize_transfer(tx, cents)
            v = verdict(Reading(read.reading), sends=sends)
            if v is not Verdict.SEND:
                return await self._settle(transfer_id, v, read.detail, read.egm_status)
        else:
            state = await driver.prize_state()
            refused = refusal(
                MachineFacts(
                    machine,
                    aft=state.aft,
                    in_tournament=state.in_tournament or floor.in_heat is not None,
                    locked=state.locked or floor.excluded is not None,
                    busy=state.busy,
                    limit_cents=state.limit_cents,
                    why_not_aft=state.why_not_aft,
                ),
                cents,
            )
            if refused is not None:
                return await self._settle(transfer_id, Verdict.REFUSED, refused)
        async with self.sessions.begin() as session:  # journaled before sent (P4)
            await mp.mark_sent(session, transfer_id)
        try:
            result = await driver.credit_prize(tx, cents, days)
        except MachineRefused as exc:  # refused before the LP 72 went out (lock, registration)
            return await self._settle(transfer_id, Verdict.REFUSED, f"rule P3: {exc}")
        v = verdict(Reading(result.reading), sends=sends + 1)
        return await self._settle(transfer_id, v, result.detail, result.egm_status)

    async def step(self) -> int:
        """Deliver every open transfer this process can reach; how many were settled."""
        async with self.sessions() as session:
            ids = [row.id for row in await mp.open_transfers(session)]
        settled = 0
        for transfer_id in ids:
            try:
                row = await self.deliver(transfer_id)
            except DriverError as exc:  # the link away: journaled still, tried again
                log.warning("prize transfer %s: %s", transfer_id, exc)
                continue
            if row is not None and row.status != JOURNALED:
                settled += 1
        return settled

    async def run(self, stop: asyncio.Event) -> None:
        """Step every ``interval_s`` until ``stop`` is set."""
        while not stop.is_set():
            try:
                await self.step()
            except Exception as exc:  # the database away: the next step tries again
                log.warning("prize transfers: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.interval_s)


class FloorDrivers:
    """Opens, on first use, a driver for each machine of the stored floor (with its AFT
    identity), for a one-shot delivery from the host's command line; closes them all."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions
        self._specs: dict[str, MachineSpec] | None = None
        self._open: dict[str, MachineDriver] = {}

    async def __call__(self, machine_id: str) -> object | None:
        if machine_id in self._open:
            return self._open[machine_id]
        if self._specs is None:
            floor = await load_floor(self.sessions)
            self._specs = {m.id: m for bank in floor.banks.values() for m in bank.machines}
        spec = self._specs.get(machine_id)
        if spec is None:
            return None
        driver = configure_driver(open_driver(machine_id, spec.endpoint), spec)
        await driver.open()
        self._open[machine_id] = driver
        return driver

    async def close(self) -> None:
        for driver in self._open.values():
            with contextlib.suppress(Exception):
                await driver.close()
        self._open.clear()


async def deliver_from_host(
    sessions: async_sessionmaker[AsyncSession], *, actor: str, clock: Callable[[], datetime]
) -> list[MachinePrizeTransfer]:
    """Deliver (or recover) every open transfer to the floor's machines; each transfer
    as it stands after."""
    drivers = FloorDrivers(sessions)
    sender = MachinePrizes(sessions, drivers, actor=actor, clock=clock)
    try:
        await sender.step()
    finally:
        await drivers.close()
    async with sessions() as session:
        return await mp.transfers(session)
