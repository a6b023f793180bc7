"""Heats start and stop by themselves, from the schedule.

Every tick the scheduler looks, for each *enabled* bank with no heat under way, for the
earliest tournament heat that is due (scheduled, or restarted under T20, with its
advertised start passed) and runs it on the machines its players are seated at (T11).
The heat runner stops it by the heat clock.  A director's commands (``reelgate heat
direct``: start now, pause, resume, abort, restart) arrive through the database and are
carried out on the next tick, so they work against a gateway running as a service.

Walk-up sessions (docs/rules.md#w6) are heats too: a one-seat heat that the card desk
created, due at once, on one machine of a walk-up bank.  They run beside each other, one
per machine (:attr:`Scheduler.walkups`), with the same runner, journal and recovery; a
bank's scheduled heat waits until its walk-up sessions are over (W3), and no walk-up
session starts while a scheduled heat is under way on the bank.

The scheduler drives only the banks this process owns (``ownership``, see
:mod:`gateway.heats.ownership`): others' banks get no heat, and their director orders
are left for their owner.  A bank lost mid-heat is stopped at once (:meth:`stop_bank`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.feed import FeedPublisher
from gateway.floor.aft import configure_driver
from gateway.floor.model import Floor
from gateway.heats.hooks import ProgressSink
from gateway.heats.recovery import recover_bank
from gateway.heats.runner import Command, HeatOutcome, HeatRunner
from gateway.heats.spool import JournalWriter, is_outage
from gateway.heats.supervisor import BankSupervisor
from gateway.heats.sync_start import SyncPolicy, SyncStart
from gateway.machines.driver import MachineDriver
from gateway.machines.links import MachineLink
from gateway.tournament.bridge import TournamentBridge
from storage.journal import DirectorCommand, RunState
from storage.lease import StaleOwner
from storage.tournament import Heat, HeatStatus, SitAndGoHeat
from storage.walkup import WalkupSession

log = logging.getLogger(__name__)

DUE = (HeatStatus.SCHEDULED, HeatStatus.RESTARTED)
_WALKUP_HEATS = select(WalkupSession.heat_id).where(WalkupSession.heat_id.is_not(None))


class HeatContext(Protocol):
    """What the scheduler needs of the running gateway (assembled by ``gateway.app``)."""

    sessions: async_sessionmaker[AsyncSession]
    writer: JournalWriter
    floor: Floor

    async def reload_floor(self) -> Floor: ...


class BankOwner(Protocol):
    """Which banks this process may drive (their leases), and the report of one lost."""

    def drives(self, bank: str) -> bool: ...

    def lose(self, bank: str, why: str) -> None: ...


DriverFactory = Callable[[str, str], MachineDriver]  # (machine id, endpoint URI)


def _registry_driver(machine_id: str, endpoint: str) -> MachineDriver:
    from gateway.machines.registry import open_driver  # drivers load their protocol stacks

    return open_driver(machine_id, endpoint)


FINISHED_KEPT = 64  # heat outcomes kept in memory


@dataclass(slots=True)
class LiveHeat:
    heat_id: int
    runner: HeatRunner
    task: asyncio.Task[HeatOutcome]


class Scheduler:
    def __init__(
        self,
        ctx: HeatContext,
        links: Mapping[str, Mapping[str, MachineLink]],  # bank -> machine -> link
        *,
        tournament: TournamentBridge | None = None,
        supervisors: Mapping[str, BankSupervisor] | None = None,
        feed: FeedPublisher | None = None,
        progress: ProgressSink | None = None,
        tick_s: float = 0.5,
        restart_pause_s: float = 10.0,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        open_driver: DriverFactory = _registry_driver,
        ownership: BankOwner | None = None,
        synchronised: SyncPolicy | None = None,
    ) -> None:
        self.ctx = ctx
        self.synchronised = synchronised
        self._clock_blocked: set[int] = set()  # heats held back by this host's clock
        self.open_driver = open_driver
        self.links = links
        self.tournament = tournament or TournamentBridge(ctx.sessions)
        self.supervisors = supervisors if supervisors is not None else {}
        self.ownership = ownership
        self.feed = feed
        self.progress = progress
        self.tick_s = tick_s
        self.restart_pause_s = restart_pause_s
        self.now = now
        self.live: dict[str, LiveHeat] = {}
        # Walk-up sessions under way (W6): machine -> its one-seat heat, and its bank.
        self.walkups: dict[str, LiveHeat] = {}
        self._walkup_banks: dict[str, str] = {}
        # Banks busy with something else (recovery at start): no new heat until done.
        self.busy: dict[str, asyncio.Task[None]] = {}
        # The latest outcomes, for the process that drives this scheduler (demo, tests):
        # bounded, since a serve runs for months; the storage keeps every result.
        self.finished: deque[HeatOutcome] = deque(maxlen=FINISHED_KEPT)
        # Told of each heat reaped, with its bank (metrics); must not raise or block.
        self.on_finished: list[Callable[[str, HeatOutcome], None]] = []
        self._not_before: dict[int, datetime] = {}  # heat -> earliest retry after a restart
        self._early: set[int] = set()  # F7: sit-and-go heats starting before their latest
        # Runs left unsettled (a release pending, effects pending, a runner that failed):
        # recovered in the background, with a doubling pause per bank.
        self._settling: dict[str, asyncio.Task[None]] = {}
        self._settle_at: dict[str, datetime] = {}
        self._settle_pause: dict[str, float] = {}
        # bank -> machine -> the endpoint its link was opened for
        self._endpoints: dict[str, dict[str, str]] = {
            bank: {m.id: m.endpoint for m in ctx.floor.bank(bank).machines if m.id in linked}
            for bank, linked in links.items()
            if bank in ctx.floor.banks
        }

    async def run(self, stop: asyncio.Event) -> None:
        away = False  # the database unreachable at the last tick
        while not stop.is_set():
            try:
                await self.tick()
                away = False
            except Exception as exc:  # one bad tick must not stop the floor; it is logged
                if not is_outage(exc):
                    log.exception("scheduler tick failed")
                elif not away:  # a venue cut off from the centre: said once, not per tick
                    log.warning("scheduler: database unreachable (%s); heats under way go on", exc)
                away = is_outage(exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.tick_s)
        for live in list(self.all_live()):
            live.task.cancel()  # the journal says where it was; the next start recovers
        for task in self._settling.values():
            task.cancel()
        await asyncio.gather(*(x.task for x in self.all_live()), return_exceptions=True)
        await asyncio.gather(*self._settling.values(), return_exceptions=True)

    def all_live(self) -> Iterator[LiveHeat]:
        """Every heat under way: the banks' scheduled heats and the walk-up sessions."""
        yield from self.live.values()
        yield from self.walkups.values()

    def walkups_on(self, bank: str) -> list[str]:
        """The machines of ``bank`` with a walk-up session under way (W3)."""
        return sorted(m for m, b in self._walkup_banks.items() if b == bank and m in self.walkups)

    def drives(self, bank: str) -> bool:
        """True for a bank this process has links to and (with ownership) the lease of."""
        if bank not in self.links:
            return False
        return self.ownership is None or self.ownership.drives(bank)

    def add_bank(self, bank: str) -> None:
        """A bank whose links were opened after the start (a standby taking over)."""
        self._endpoints[bank] = {
            m.id: m.endpoint for m in self.ctx.floor.bank(bank).machines if m.id in self.links[bank]
        }

    def stop_bank(self, bank: str) -> list[asyncio.Task[None] | asyncio.Task[HeatOutcome]]:
        """Stop driving ``bank`` now (its lease was lost): its heat, recovery and settling
        are cancelled and forgotten; the journal says where they were, for the new owner.
        Returns the cancelled tasks for the caller to await."""
        tasks: list[asyncio.Task[None] | asyncio.Task[HeatOutcome]] = []
        live = self.live.pop(bank, None)
        if live is not None:
            tasks.append(live.task)
        for machine in self.walkups_on(bank):
            tasks.append(self.walkups.pop(machine).task)
            self._walkup_banks.pop(machine, None)
        for pending in (self.busy.pop(bank, None), self._settling.pop(bank, None)):
            if pending is not None:
                tasks.append(pending)
        self._endpoints.pop(bank, None)
        for task in tasks:
            task.cancel()
        return tasks

    async def tick(self) -> None:
        self._reap()
        await self._director_commands()
        # Effects a failed drain left pending; banks being driven drain their own.
        await self.tournament.drain(skip_banks=self._driven_banks())
        floor = await self.ctx.reload_floor()
        now = self.now()
        for bank in floor.banks.values():
            if bank.name in self.live or not self.drives(bank.name):
                continue
            if bank.name in self.busy and not self.busy[bank.name].done():
                continue
            if await self._settle_leftovers(bank.name, now) or not bank.enabled:
                continue
            await self._start_walkups(bank.name, now)  # W6
            if self.walkups_on(bank.name):
                continue  # W3: a scheduled heat waits for the bank's walk-up sessions
            lead = timedelta(seconds=self.synchronised.lead_s if self.synchronised else 0)
            heat = await self._due(bank.name, now + lead)
            if heat is None:
                heat = await self._sit_and_go(bank.name, now)  # F7: its seats are filled
            if heat is not None:
                await self.start(heat)

    def _driven_banks(self) -> set[str]:
        """Banks a runner of this process is driving: a heat, a recovery, a settling."""
        busy = {b for b, t in self.busy.items() if not t.done()}
        settling = {b for b, t in self._settling.items() if not t.done()}
        return set(self.live) | busy | settling | set(self._walkup_banks.values())

    async def _settle_leftovers(self, bank: str, now: datetime) -> bool:
        """Recover the bank's unsettled runs in the background (a release that failed is
        tried again, pending effects applied), backing off while they stay unsettled.
        True while such a recovery is under way (no new heat meanwhile)."""
        task = self._settling.get(bank)
        if task is not None and not task.done():
            return True
        if self._settle_at.get(bank, now) > now:
            return False
        live_walkups = self._walkup_heats(bank)
        runs = [
            run
            for run in await self.ctx.writer.journal.unsettled_runs(bank)
            if run.heat_id not in live_walkups
        ]
        if not runs:
            self._settle_pause.pop(bank, None)
            return False
        pause = self._settle_pause.get(bank, 1.0)
        self._settle_at[bank] = now + timedelta(seconds=pause)
        self._settle_pause[bank] = min(pause * 2, 60.0)
        machines = sorted({m for run in runs for m in run.machines})
        links = await self._ensure_links(bank, machines)
        self._settling[bank] = asyncio.create_task(
            self._recover(bank, links, skip_heats=live_walkups), name=f"settle-{bank}"
        )
        return True

    def _walkup_heats(self, bank: str) -> frozenset[int]:
        """The heats of the walk-up sessions under way on ``bank`` (their runners drive them)."""
        return frozenset(self.walkups[m].heat_id for m in self.walkups_on(bank))

    async def _recover(
        self,
        bank: str,
        links: Mapping[str, MachineLink],
        *,
        skip_heats: frozenset[int] = frozenset(),
    ) -> None:
        try:
            for report in await recover_bank(
                self.ctx.writer, links, bank, tournament=self.tournament,
                feed=self.feed, progress=self.progress, skip_heats=skip_heats,
            ):  # fmt: skip
                log.info("bank %s: run %s %s", bank, report.run_id, report.decision)
                if report.decision == "paused":
                    await self.adopt_paused(bank, report.run_id, links)
        except StaleOwner as exc:
            if self.ownership is None:
                log.exception("bank %s: settling refused", bank)
            else:
                self.ownership.lose(bank, str(exc))
        except Exception:  # logged; tried again after the pause
            log.exception("bank %s: settling failed", bank)

    async def _due(self, bank: str, now: datetime) -> Heat | None:
        async with self.ctx.sessions() as session:
            heats = (
                await session.scalars(
                    select(Heat)
                    .where(
                        Heat.bank_name == bank,
                        Heat.status.in_(DUE),
                        Heat.scheduled_start <= now,
                        Heat.id.not_in(_WALKUP_HEATS),  # started by _start_walkups
                    )
                    .order_by(Heat.scheduled_start, Heat.id)
                )
            ).all()
        for heat in heats:
            if self._not_before.get(heat.id, now) <= now:
                return heat
        return None

    async def _sit_and_go(self, bank: str, now: datetime) -> Heat | None:
        """F7: a sit-and-go heat of ``bank`` starts before its latest start once its
        seats are filled (that many would play if it started now: T22's roll call), and
        only if no other heat of the bank falls due before it would end (T10).  At its
        latest start it is due as any heat (:meth:`_due`), with whoever is seated."""
        async with self.ctx.sessions() as session:
            waiting = (
                await session.execute(
                    select(Heat, SitAndGoHeat.seats)
                    .join(SitAndGoHeat, SitAndGoHeat.heat_id == Heat.id)
                    .where(
                        Heat.bank_name == bank,
                        Heat.status == HeatStatus.SCHEDULED,
                        Heat.scheduled_start > now,
                    )
                    .order_by(Heat.scheduled_start, Heat.id)
                )
            ).all()
            if not waiting:
                return None
            others = (
                await session.execute(
                    select(Heat.id, Heat.scheduled_start).where(
                        Heat.bank_name == bank, Heat.status.in_(DUE)
                    )
                )
            ).all()
        for heat, seats in waiting:
            if self._not_before.get(heat.id, now) > now:
                continue
            ends = now + timedelta(seconds=heat.duration_seconds)
            if any(start < ends for other, start in others if other != heat.id):
                continue  # another heat falls due first: never into its time
            if len(await self.tournament.seated_machines(heat.id)) >= seats:
                self._early.add(heat.id)
                log.info("sit-and-go heat %s: %d seats filled, starting (rule F7)", heat.id, seats)
                return heat
        return None

    async def _start_walkups(self, bank: str, now: datetime) -> None:
        """W6: start every due walk-up session of ``bank`` whose machine is free."""
        if bank in self.live:
            return
        async with self.ctx.sessions() as session:
            due = (
                await session.execute(
                    select(Heat, WalkupSession.machine_id)
                    .join(WalkupSession, WalkupSession.heat_id == Heat.id)
                    .where(
                        Heat.bank_name == bank,
                        Heat.status.in_(DUE),
                        Heat.scheduled_start <= now,
                    )
                    .order_by(Heat.scheduled_start, Heat.id)
                )
            ).all()
        for heat, machine in due:
            if machine in self.walkups or self._not_before.get(heat.id, now) > now:
                continue
            live = await self.start(heat, walkup=machine)
            if live is not None:
                self.walkups[machine] = live
                self._walkup_banks[machine] = bank

    async def adopt_paused(
        self, bank: str, run_id: int, links: Mapping[str, MachineLink]
    ) -> LiveHeat | None:
        """A run that recovery left paused (the gateway restarted during a director's
        pause) is driven again, still paused, so the director's resume, abort or restart
        reaches it -- else it could never be resumed."""
        if bank in self.live:
            return None
        view = await self.ctx.writer.journal.run(run_id)
        if view.state is not RunState.PAUSED or view.settled:
            return None
        runner = HeatRunner(
            self.ctx.writer, links, tournament=self.tournament, feed=self.feed,
            progress=self.progress,
        )  # fmt: skip
        supervisor = self.supervisors.get(bank)
        if supervisor is not None:
            supervisor.claim(list(view.machines))
        task = asyncio.create_task(runner.drive(view, resumed=True), name=f"heat-run-{run_id}")
        live = LiveHeat(view.heat_id if view.heat_id is not None else 0, runner, task)
        self.live[bank] = live
        log.info(
            "bank %s: paused heat run %s waits for the director", bank, run_id,
            extra={"bank": bank, "run": run_id},
        )  # fmt: skip
        return live

    async def start(self, heat: Heat, *, walkup: str | None = None) -> LiveHeat | None:
        """Start a heat now on its bank's seated, active machines.  With ``walkup`` (its
        machine) the heat is a walk-up session: the caller keeps it in :attr:`walkups`."""
        bank = self.ctx.floor.bank(heat.bank_name)
        active = {m.id for m in bank.active}
        called = await self.tournament.seated_machines(heat.id)
        if not called:  # noqa: SIM102
            # Nobody would play (all absent, or nobody registered): T22 forfeits and
            # the heat is closed rather than retried for ever.
            if await self.tournament.close_if_nobody_plays(heat.id, self.now()):
                log.info("heat %s closed at its start: no seat in play (rule 22)", heat.id)
                return None
        seated = [m for m in called if m in active and (walkup is None or m == walkup)]
        if not seated:
            log.warning("heat %s due on bank %s but nobody is seated", heat.id, bank.name)
            self._not_before[heat.id] = self.now() + timedelta(seconds=self.restart_pause_s)
            return None
        synced = await self._synchronised_start(heat)
        if synced is False:
            return None
        heat_format = await self.tournament.heat_format(heat.id)  # F1, journaled by the run (F5)
        links = await self._ensure_links(bank.name, seated)
        if walkup is not None:  # the session's one machine: the bank's others are not its
            links = {walkup: links[walkup]}
        runner = HeatRunner(
            self.ctx.writer,
            links,
            tournament=self.tournament,
            feed=self.feed,
            progress=self.progress,
            start_at=synced if isinstance(synced, SyncStart) else None,
        )
        supervisor = self.supervisors.get(bank.name)
        if supervisor is not None:
            supervisor.claim(seated)
        task = asyncio.create_task(
            runner.run_new(
                bank.name,
                seated,
                credits=int(heat.starting_credits),
                seconds=heat.duration_seconds,
                heat_id=heat.id,
                attempt=heat.restarts + 1,
                heat_format=heat_format,
            ),
            name=f"heat-{heat.id}",
        )
        live = LiveHeat(heat.id, runner, task)
        if walkup is None:
            self.live[bank.name] = live
        log.info(
            "%s %s started on bank %s (%d machines)",
            "walk-up heat" if walkup else "heat", heat.id, bank.name, len(seated),
            extra={"bank": bank.name, "heat": heat.id, "machines": seated},
        )  # fmt: skip
        return live

    async def _synchronised_start(self, heat: Heat) -> SyncStart | bool:
        """A heat picked up ahead of its start fires at its scheduled instant (the one
        every gateway reads from the centre); False: this host's clock is a blocker, the
        heat waits here until it is back in limit (one line each time it is found)."""
        policy, now = self.synchronised, self.now()
        if heat.id in self._early:  # F7: a sit-and-go heat starts now, not at an instant
            self._early.discard(heat.id)
            return True
        if policy is None or (heat.scheduled_start <= now and heat.id not in self._clock_blocked):
            return True
        offset = await policy.measure()
        blockers = offset.blockers(policy.limit_ms)
        if blockers:
            self._clock_blocked.add(heat.id)
            self._not_before[heat.id] = now + timedelta(seconds=1)
            log.warning(
                "heat %s not started on bank %s: %s", heat.id, heat.bank_name, blockers[0],
                extra={"bank": heat.bank_name, "heat": heat.id},
            )  # fmt: skip
            return False
        self._clock_blocked.discard(heat.id)
        if heat.scheduled_start <= now:
            return True  # back in limit after its instant: started at once
        return SyncStart(heat.scheduled_start, offset)

    async def _ensure_links(self, bank: str, machines: list[str]) -> Mapping[str, MachineLink]:
        """Links for the heat's machines, opening any a technician added or re-pointed since
        the gateway started (the floor in the database is the truth)."""
        links = self.links[bank]
        if not isinstance(links, dict):
            return links
        for machine_id in machines:
            spec = self.ctx.floor.machine(machine_id)
            endpoint = spec.endpoint
            known = self._endpoints.setdefault(bank, {})
            if machine_id in links and known.get(machine_id) == endpoint:
                continue
            if machine_id in links:
                await links[machine_id].close()
            driver = configure_driver(self.open_driver(machine_id, endpoint), spec)
            links[machine_id] = MachineLink(machine_id, driver)
            known[machine_id] = endpoint
            log.info("bank %s: link to %s at %s", bank, machine_id, endpoint)
        return links

    def _reap(self) -> None:
        done: list[tuple[str, LiveHeat, list[str]]] = []
        for bank, live in list(self.live.items()):
            if live.task.done():
                del self.live[bank]
                done.append((bank, live, list(self.links.get(bank, {}))))
        for machine, live in list(self.walkups.items()):
            if live.task.done():
                del self.walkups[machine]
                done.append((self._walkup_banks.pop(machine), live, [machine]))
        for bank, live, machines in done:
            supervisor = self.supervisors.get(bank)
            if supervisor is not None and bank in self.links:
                supervisor.release(machines)
            if live.task.cancelled():
                continue
            exc = live.task.exception()
            if isinstance(exc, StaleOwner) and self.ownership is not None:
                self.ownership.lose(bank, str(exc))  # another owner has the bank: hands off
                continue
            if exc is not None:
                log.error("heat %s on bank %s failed: %r", live.heat_id, bank, exc)
                self._not_before[live.heat_id] = self.now() + timedelta(
                    seconds=self.restart_pause_s
                )
                continue
            outcome = live.task.result()
            self.finished.append(outcome)
            for listener in self.on_finished:
                listener(bank, outcome)
            if outcome.state is RunState.RESTARTED:
                self._not_before[live.heat_id] = self.now() + timedelta(
                    seconds=self.restart_pause_s
                )

    async def _director_commands(self) -> None:
        # Read, act, then stamp: no transaction is held open while acting (SQLite writers
        # are serialised, and acting opens sessions of its own).
        async with self.ctx.sessions() as session:
            pending = (
                await session.scalars(
                    select(DirectorCommand)
                    .where(DirectorCommand.done_at.is_(None))
                    .order_by(DirectorCommand.id)
                )
            ).all()
        for cmd in pending:
            if not self.drives(cmd.bank_name) and self.ownership is not None:
                continue  # the bank's owner carries it out (a standby waits for it)
            outcome = await self._carry_out(cmd)
            async with self.ctx.sessions.begin() as session:
                row = await session.get(DirectorCommand, cmd.id)
                if row is not None:
                    row.outcome, row.done_at = outcome, self.now()
            log.info(
                "director order %s (%s): %s", cmd.id, cmd.command, outcome,
                extra={"bank": cmd.bank_name, "account": cmd.actor, "order": cmd.command},
            )  # fmt: skip

    async def _carry_out(self, cmd: DirectorCommand) -> str:
        live = self.live.get(cmd.bank_name)
        if cmd.command == "start":
            if live is not None:
                return f"refused: heat {live.heat_id} is under way on bank {cmd.bank_name}"
            if self.walkups_on(cmd.bank_name):
                return f"refused: walk-up sessions are under way on bank {cmd.bank_name} (W3)"
            if cmd.heat_id is None:
                return "refused: start needs a heat"
            async with self.ctx.sessions() as session:
                heat = await session.get(Heat, cmd.heat_id)
            if heat is None or heat.status not in DUE:
                return f"refused: heat {cmd.heat_id} is not waiting to start"
            if heat.scheduled_start > self.now() and heat.status is HeatStatus.SCHEDULED:
                return (
                    f"refused: heat {cmd.heat_id} is advertised for "
                    f"{heat.scheduled_start.isoformat()} (rule 22); reschedule it first (rule 10)"
                )
            started = await self.start(heat)
            return "started" if started is not None else "refused: nobody seated"
        if live is None:
            return f"refused: no heat under way on bank {cmd.bank_name}"
        live.runner.direct(Command(cmd.command), cmd.reason)
        return f"sent to heat {live.heat_id}"
