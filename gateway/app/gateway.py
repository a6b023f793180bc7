"""The running gateway, assembled in one place for ``reelgate serve`` and the demo.

:class:`RunningGateway` is an async context manager.  Entering opens, in order: the
context (database at this Reelgate's revision, floor, journal writer), the lease of
every bank (all or none, kept by heartbeat: :mod:`gateway.heats.ownership`; another
live holder refuses the start in one line), the scheduler, the live heat feed (when a
feed is given), the SNMP health watch (when a board on the floor has an agent), and per
bank: its machine links, one supervisor (started, but holding off the machines until
their recovery is done) and one recovery task (heats under way are resumed or
restarted, T20).

A hot standby (``standby``) takes no bank at the start: it polls each bank's lease and,
when the primary stops renewing it, takes the bank, opens its links and recovers it from
the journal (a heat under way resumes), then serves it like a primary.  A bank whose
lease is lost is let go at once: its heat and recovery cancelled, its supervisor stopped
and its links closed (the new owner talks to the machines now); a standby then waits for
it again.  :meth:`run` drives the
scheduler until ``stop`` is set.  Leaving closes the same pieces in reverse order; a
failure part-way through entering closes what was opened.  The feed itself (MQTT,
signage page) belongs to the caller: it may outlive the gateway (the demo's lingers).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from gateway.app.context import GatewayContext, bank_links, close_links, snmp_secrets_for
from gateway.app.database import require_audit_key, watch_chain
from gateway.app.defaults import DEFAULT_SPOOL
from gateway.app.live_draws import LiveDraws
from gateway.app.machine_prizes import MachinePrizes
from gateway.app.options import trap_host
from gateway.clocks.central import DEFAULT_LIMIT_MS, central_offset
from gateway.errors import OperatorError
from gateway.heats.live_feed import HeatFeeds, scheduler_heat_of_run
from gateway.heats.ownership import BankOwnership, this_process
from gateway.heats.scheduler import Scheduler
from gateway.heats.supervisor import BankSupervisor
from gateway.heats.sync_start import SyncPolicy
from gateway.tournament.bridge import TournamentBridge
from storage.lease import DEFAULT_PERIOD, StaleOwner

if TYPE_CHECKING:
    from gateway.floor.model import MachineSpec
    from gateway.floor.snmp import SnmpSecrets
    from gateway.machines.health import HealthMonitor
    from gateway.machines.links import MachineLink
    from gateway.web import FanoutFeed

log = logging.getLogger("reelgate.serve")


@dataclass(frozen=True)
class GatewaySettings:
    database: str | None
    floor: str | None
    spool: str | Path = DEFAULT_SPOOL
    poll_interval_s: float = 0.2
    tick_s: float = 0.5
    actor: str = "gateway"  # who the scheduler's tournament writes are by (audit log)
    snmp_secrets: str | None = None  # path; else $REELGATE_SNMP_SECRETS and the floor file
    snmp_traps: str = "127.0.0.1:0"
    upgrade: bool = False  # migrate first: only for a database the caller just made
    active_only: bool = False  # links to the bank's active machines only (the demo)
    holder: str = "serve"  # who holds the bank leases (shown to a refused second process)
    lease_period_s: float = DEFAULT_PERIOD.total_seconds()
    standby: bool = False  # wait for each bank's lease instead of refusing to start
    expect_standby: bool = False  # a standby shares the database (ownership trade-off)
    venue: str | None = None  # multi-venue: serve this venue's banks of a central database
    start_lead_s: float = 0.0  # > 0: synchronised starts, heats picked up this far ahead
    max_clock_offset_ms: float = DEFAULT_LIMIT_MS  # host clock vs the central database's


class RunningGateway:
    def __init__(self, settings: GatewaySettings, feed: FanoutFeed | None = None) -> None:
        self.settings = settings
        self.feed = feed
        self.ctx: GatewayContext | None = None
        self.links: dict[str, dict[str, MachineLink]] = {}
        self.supervisors: dict[str, BankSupervisor] = {}
        self.scheduler: Scheduler | None = None
        self.heat_feeds: HeatFeeds | None = None
        self.health: HealthMonitor | None = None
        self.ownership: BankOwnership | None = None
        self._tournament: TournamentBridge | None = None
        self._routing: asyncio.Task[None] | None = None
        self._recoveries: list[asyncio.Task[None]] = []
        self._waiting: dict[str, asyncio.Task[None]] = {}  # standby: bank -> its wait
        self._letting_go: list[asyncio.Task[None]] = []

    @property
    def context(self) -> GatewayContext:
        assert self.ctx is not None, "enter the RunningGateway first"
        return self.ctx

    @property
    def running(self) -> Scheduler:
        assert self.scheduler is not None, "enter the RunningGateway first"
        return self.scheduler

    async def __aenter__(self) -> RunningGateway:
        try:
            await self._open()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        await self.close()

    def _sync_policy(self, ctx: GatewayContext) -> SyncPolicy | None:
        """Synchronised starts (a heat across gateways), measured against the centre."""
        s = self.settings
        if s.start_lead_s <= 0:
            return None
        return SyncPolicy(s.start_lead_s, s.max_clock_offset_ms, lambda: central_offset(ctx.engine))

    async def _publish_about(self, ctx: GatewayContext) -> None:
        """Retained ``about``: whether this is a training database, for every screen."""
        from storage.database_mark import is_training

        assert self.feed is not None
        async with ctx.sessions() as session:
            training = await is_training(session)
        self.feed.publish_nowait("about", {"training": training}, retain=True)

    async def _open(self) -> None:
        s = self.settings
        self.ctx = ctx = await GatewayContext.open(
            database=s.database, floor_path=s.floor, spool=s.spool, upgrade=s.upgrade,
            venue=s.venue,
        )  # fmt: skip
        try:
            require_audit_key(ctx.engine, "the gateway")
        except OperatorError:
            await ctx.close()
            raise
        watch_chain(ctx.engine)  # a checkpoint within a minute of any write, and at shutdown
        machines = [m for bank in ctx.floor.banks.values() for m in bank.machines]
        secrets = snmp_secrets_for(s.snmp_secrets, s.floor, machines)  # before any link
        self.ownership = ownership = BankOwnership(
            ctx.sessions, ctx.journal, this_process(s.holder),
            period=timedelta(seconds=s.lease_period_s),
            standby_configured=s.standby or s.expect_standby,
            takeover_dead=not s.standby, on_lost=self._lost,
        )  # fmt: skip
        if not s.standby:
            await ownership.acquire(ctx.floor.banks)  # all or none, before any machine
        ownership.start()
        self._tournament = tournament = TournamentBridge(ctx.sessions, actor=s.actor)
        self.scheduler = Scheduler(
            ctx, self.links, tournament=tournament, supervisors=self.supervisors,
            tick_s=s.tick_s, ownership=ownership, synchronised=self._sync_policy(ctx),
        )  # fmt: skip
        if self.feed is not None:
            await self._publish_about(ctx)
            self.heat_feeds = HeatFeeds(
                self.feed, ctx.sessions, scheduler_heat_of_run(self.scheduler)
            )
            self.scheduler.progress = self.heat_feeds
            await self.heat_feeds.publish_schedule(sorted(ctx.floor.banks))
        await self._watch_health(machines, secrets)
        banks = sorted(ctx.floor.banks)
        if s.standby:
            for name in banks:
                self._stand_by(name)
            log.info("standing by for %d bank(s): %s", len(banks), ", ".join(banks))
            return
        for name in banks:
            await self._take_bank(name)
        log.info("serving %d bank(s): %s", len(self.links), ", ".join(sorted(self.links)))

    def _stand_by(self, name: str) -> None:
        async def wait() -> None:
            assert self.ownership is not None
            held = await self.ownership.wait_for(name)
            log.info("bank %s: taken over (lease token %d); recovering it", name, held.token)
            await self._take_bank(name)

        self._waiting[name] = asyncio.create_task(wait(), name=f"standby-{name}")

    async def _take_bank(self, name: str) -> None:
        """Drive a bank whose lease is ours: links, supervisor, then its recovery."""
        bank = self.context.floor.bank(name)
        links, failed = await bank_links(bank, include_excluded=not self.settings.active_only)
        self.links[name] = links
        for machine_id, why in failed.items():
            log.warning("bank %s: %s not answering yet (%s)", name, machine_id, why)
        supervisor = BankSupervisor(links, interval_s=self.settings.poll_interval_s, feed=self.feed)
        supervisor.claim(links)  # recovery first; supervision once it is done
        self.supervisors[name] = supervisor
        supervisor.start()
        self.running.add_bank(name)
        assert self._tournament is not None
        task = asyncio.create_task(
            self._recover(links, name, self._tournament), name=f"recover-{name}"
        )
        self.running.busy[name] = task
        self._recoveries.append(task)

    def _lost(self, name: str, why: str) -> None:
        """The bank's lease is gone: stop driving it now, hand the machines back."""
        tasks = self.running.stop_bank(name) if self.scheduler is not None else []
        self._letting_go.append(
            asyncio.create_task(self._let_go(name, tasks), name=f"let-go-{name}")
        )

    async def _let_go(self, name: str, tasks: list[Any]) -> None:
        await asyncio.gather(*tasks, return_exceptions=True)
        supervisor = self.supervisors.pop(name, None)
        if supervisor is not None:
            await supervisor.stop()
        links = self.links.pop(name, None)
        if links is not None:
            await close_links(links)
        if self.settings.standby and self.ctx is not None:
            self._stand_by(name)  # a standby waits for the bank again

    async def _watch_health(self, machines: list[MachineSpec], secrets: SnmpSecrets) -> None:
        """Watch every board with an SNMP agent; its traps go to the heat under way."""
        watched = [m for m in machines if m.snmp]
        if not watched:
            return
        from gateway.floor.model import resolve_snmp
        from gateway.machines.health import (
            HealthMonitor,
            TrapMarks,
            rewatch,
            route_events,
            watch_boards,
        )
        from protocols.snmp.manager import HealthPoller, TrapReceiver
        from storage.marks import MarkStore

        boards = resolve_snmp(watched, secrets)  # a missing secret: refused before any board

        host, port = trap_host(self.settings.snmp_traps)
        marks = await TrapMarks.load(MarkStore(self.context.sessions))  # left before a restart
        monitor = HealthMonitor(TrapReceiver(host=host, port=port), HealthPoller(), marks=marks)
        try:
            await monitor.start()
        except OSError as exc:
            raise OperatorError(f"--snmp-traps {host}:{port}: {exc.strerror or exc}") from None
        self.health = monitor
        print(f"SNMP traps on udp://{host}:{monitor.receiver.port}", flush=True)
        for machine_id, why in (await watch_boards(monitor, boards)).items():
            log.warning("SNMP: %s not reachable yet (%s)", machine_id, why)
        scheduler = self.running

        def deliver(event: Any) -> None:
            # T20/T21: the heat under way on the machine's bank decides (playing seats).
            for live in list(scheduler.all_live()):
                live.runner.report_event(event)

        async def watch() -> None:
            async with asyncio.TaskGroup() as group:  # both run until cancelled at close
                group.create_task(route_events(monitor, deliver))
                group.create_task(rewatch(monitor, boards))

        self._routing = asyncio.create_task(watch(), name="snmp-health")

    async def _recover(
        self, links: dict[str, MachineLink], bank: str, tournament: TournamentBridge
    ) -> None:
        from gateway.heats.recovery import recover_bank

        def in_control(r: Any) -> None:
            log.info("bank %s: heat run %s in control (%s)", bank, r.run_id, r.decision)

        paused: list[int] = []
        try:
            # A resumed heat publishes its live feed as a fresh one does (progress=).
            for r in await recover_bank(
                self.context.writer,
                links,
                bank,
                tournament=tournament,
                on_control=in_control,
                progress=self.heat_feeds,
            ):
                log.info(
                    "bank %s: heat run %s found %s -> %s%s",
                    bank, r.run_id, r.found_state.value, r.decision,
                    f" (silent: {', '.join(r.silent)})" if r.silent else "",
                    extra={"bank": bank, "run": r.run_id, "decision": r.decision},
                )  # fmt: skip
                if r.decision == "paused":
                    paused.append(r.run_id)
        except StaleOwner as exc:
            assert self.ownership is not None
            self.ownership.lose(bank, str(exc))
        finally:
            supervisor = self.supervisors.get(bank)
            if supervisor is not None:
                supervisor.release(links)
        if self.scheduler is not None:
            for run_id in paused:  # the director's resume must reach it (claims the machines)
                await self.scheduler.adopt_paused(bank, run_id, links)

    async def _driver_of(self, machine_id: str) -> object | None:
        """The driver of a machine on one of this gateway's banks (None: not ours)."""
        for links in self.links.values():
            link = links.get(machine_id)
            if link is not None:
                return link.driver
        return None

    async def run(self, stop: asyncio.Event) -> None:
        """Start due heats and stop them by the heat clock until ``stop`` is set; take
        the hot-seat draws of the heats playing as their moments fall (HS3); credit the
        prizes journaled for its machines (P4, P5: recovered first after a restart)."""
        draws = LiveDraws(self.context.sessions, actor=self.settings.actor,
                          interval_s=self.settings.tick_s)  # fmt: skip
        prizes = MachinePrizes(
            self.context.sessions,
            self._driver_of,
            actor=self.settings.actor,
            interval_s=self.settings.tick_s,
        )
        async with asyncio.TaskGroup() as group:
            group.create_task(draws.run(stop), name="hotseat-live-draws")
            group.create_task(prizes.run(stop), name="machine-prizes")
            await self.running.run(stop)

    async def close(self) -> None:
        """Close what was opened, newest first; safe to call twice."""
        waiting = list(self._waiting.values())
        self._waiting.clear()
        recoveries, self._recoveries = self._recoveries, []
        for task in (*waiting, *recoveries):
            task.cancel()
        await asyncio.gather(*waiting, *recoveries, return_exceptions=True)
        letting_go, self._letting_go = self._letting_go, []
        await asyncio.gather(*letting_go, return_exceptions=True)
        routing, self._routing = self._routing, None
        if routing is not None:
            routing.cancel()
            await asyncio.gather(routing, return_exceptions=True)
        supervisors, self.supervisors = self.supervisors, {}
        for supervisor in supervisors.values():
            await supervisor.stop()
        links, self.links = self.links, {}
        for bank_links_ in links.values():
            await close_links(bank_links_)
        heat_feeds, self.heat_feeds = self.heat_feeds, None
        if heat_feeds is not None:
            await heat_feeds.close()
        health, self.health = self.health, None
        if health is not None:
            health.close()
        ownership, self.ownership = self.ownership, None
        if ownership is not None:
            await ownership.close()  # the machines are let go: the next owner may start
        ctx, self.ctx = self.ctx, None
        if ctx is not None:
            await ctx.close()
