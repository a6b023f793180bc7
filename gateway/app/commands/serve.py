"""``reelgate serve --floor F``: the long-running gateway.

On start it recovers every bank from the journal (heats under way are resumed or
restarted, rule 20; machines left in tournament mode are released), then supervises
every bank (general polls at the SAS cadence, events, link health) and lets the
scheduler start due heats on enabled banks and stop them by the heat clock.  SIGTERM or
SIGINT stops it; a heat under way at that moment is picked up by the next start from
the journal, exactly as after a crash.

The live tournament (heat state and countdown, provisional scores per seat, standings
after each heat; ``docs/mqtt.md``) goes to the MQTT feed tree with ``--mqtt URL --site S``
and to the signage page with ``--signage-port P`` (0: a free port; the URL is printed).
Machines whose boards have an SNMP agent on the floor are watched (``gateway.machines.health``):
their traps arrive on ``--snmp-traps HOST:PORT`` and a door opened, power lost or link
down mid-heat is a malfunction of that seat (rules 20/21) while the heat goes on.  Their
SNMP secrets come from ``--snmp-secrets PATH`` (or ``$REELGATE_SNMP_SECRETS``) and the
floor file's inline ones, never from the database; a missing one stops the start.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gateway.app.context import add_common_arguments
from gateway.errors import OperatorError

if TYPE_CHECKING:
    from gateway.app.context import GatewayContext
    from gateway.floor.model import MachineSpec
    from gateway.floor.snmp import SnmpSecrets
    from gateway.heats.hooks import ProgressSink
    from gateway.heats.scheduler import Scheduler
    from gateway.heats.supervisor import BankSupervisor
    from gateway.machines.health import HealthMonitor
    from gateway.machines.links import MachineLink
    from gateway.tournament.bridge import ServiceHooks
    from gateway.web import FanoutFeed, SignageServer
    from protocols.mqtt.feed import MqttFeed

log = logging.getLogger("reelgate.serve")


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "serve", help="run the gateway: recovery, bank supervision, scheduled heats"
    )
    add_common_arguments(parser, floor_required=True)
    parser.add_argument(
        "--poll-interval", type=float, default=0.2, help="general poll cadence per machine (s)"
    )
    parser.add_argument("--tick", type=float, default=0.5, help="scheduler tick (s)")
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument(
        "--mqtt", default="", metavar="URL", help="publish the live feed to this broker"
    )
    parser.add_argument("--site", default="venue", help="site name in the MQTT feed tree")
    parser.add_argument(
        "--signage-port",
        type=int,
        default=None,
        metavar="P",
        help="serve the signage page on this port (0: a free port, printed); default off",
    )
    parser.add_argument(
        "--signage-host", default="127.0.0.1", help="address the signage page listens on"
    )
    parser.add_argument(
        "--snmp-traps",
        default="127.0.0.1:0",
        metavar="HOST:PORT",
        help="where boards send SNMP traps (port 0: a free port, printed)",
    )
    add_snmp_secrets_argument(parser)
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=getattr(logging, str(args.log_level).upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    check_arguments(args)
    return asyncio.run(serve(args))


def check_arguments(args: argparse.Namespace) -> None:
    """Operator mistakes, found before anything is opened (one line, names the option)."""
    if args.poll_interval < 0.2:
        raise OperatorError("--poll-interval: SAS allows one poll per machine every 0.2 s at most")
    if args.signage_port is not None and not 0 <= args.signage_port <= 65535:
        raise OperatorError("--signage-port must be 0-65535")
    if args.mqtt:
        from protocols.mqtt.client import MqttSettings
        from protocols.mqtt.topics import TopicError, check_segment

        try:
            MqttSettings.from_url(args.mqtt)
        except ValueError as exc:
            raise OperatorError(f"--mqtt: {exc}") from None
        try:
            check_segment("site", args.site)
        except TopicError as exc:
            raise OperatorError(f"--site: {exc}") from None
    trap_host(args.snmp_traps)


def add_snmp_secrets_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--snmp-secrets",
        default=None,
        metavar="PATH",
        help="TOML file of SNMPv3 passphrases and v2c communities "
        "(default: $REELGATE_SNMP_SECRETS); never stored in the database",
    )


def snmp_secrets(args: argparse.Namespace, machines: Iterable[MachineSpec]) -> SnmpSecrets:
    """The run's SNMP secrets, checked at start-up: every machine with an SNMP agent must
    have its own (one-line OperatorError naming the machine and the key otherwise)."""
    from gateway.floor.model import resolve_snmp
    from gateway.floor.snmp import load_snmp_secrets

    secrets = load_snmp_secrets(
        getattr(args, "snmp_secrets", None), floor_path=getattr(args, "floor", None)
    )
    resolve_snmp(machines, secrets)
    return secrets


def trap_host(spec: str) -> tuple[str, int]:
    host, _, port = spec.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise OperatorError("--snmp-traps must be HOST:PORT (port 0: a free one)")
    return host, int(port)


@dataclass
class Serving:
    """What a running gateway offers (tests and the log)."""

    scheduler: Scheduler
    feed: FanoutFeed | None = None
    signage: SignageServer | None = None
    mqtt: MqttFeed | None = None
    health: HealthMonitor | None = None

    @property
    def trap_port(self) -> int | None:
        return None if self.health is None else self.health.receiver.port


async def serve(
    args: argparse.Namespace,
    stop: asyncio.Event | None = None,
    *,
    on_ready: Callable[[Serving], None] | None = None,
) -> int:
    # Imported here: the CLI loads every command module just to build its parser.
    from gateway.app.context import GatewayContext, bank_links, close_links
    from gateway.heats.live_feed import HeatFeeds, scheduler_heat_of_run
    from gateway.heats.scheduler import Scheduler
    from gateway.heats.supervisor import BankSupervisor
    from gateway.tournament.bridge import ServiceHooks

    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    links: dict[str, dict[str, MachineLink]] = {}
    supervisors: dict[str, BankSupervisor] = {}
    recoveries: list[asyncio.Task[Any]] = []
    serving: Serving | None = None
    feeds: HeatFeeds | None = None
    routing: asyncio.Task[None] | None = None
    try:
        secrets = snmp_secrets(args, (m for b in ctx.floor.banks.values() for m in b.machines))
        fanout, mqtt, signage = await _open_feed(args)
        hooks = ServiceHooks(ctx.sessions)
        for bank in ctx.floor.banks.values():
            bank_link, failed = await bank_links(bank, include_excluded=True)
            links[bank.name] = bank_link
            for machine_id, why in failed.items():
                log.warning("bank %s: %s not answering yet (%s)", bank.name, machine_id, why)
            supervisor = BankSupervisor(bank_link, interval_s=args.poll_interval, feed=fanout)
            supervisor.claim(bank_link)  # recovery first; supervision once it is done
            supervisors[bank.name] = supervisor
            supervisor.start()
        scheduler = Scheduler(ctx, links, hooks=hooks, supervisors=supervisors, tick_s=args.tick)
        serving = Serving(scheduler, fanout, signage, mqtt)
        if fanout is not None:
            feeds = HeatFeeds(fanout, ctx.sessions, scheduler_heat_of_run(scheduler))
            scheduler.progress = feeds
        serving.health, routing = await _watch_health(ctx, args, scheduler, secrets)
        for name, bank_link in links.items():
            task = asyncio.create_task(
                _recover(ctx, bank_link, name, hooks, supervisors[name], feeds)
            )
            scheduler.busy[name] = task
            recoveries.append(task)
        log.info("serving %d bank(s): %s", len(links), ", ".join(sorted(links)))
        if on_ready is not None:
            on_ready(serving)
        await scheduler.run(stop)
    finally:
        for task in recoveries:
            task.cancel()
        await asyncio.gather(*recoveries, return_exceptions=True)
        if routing is not None:
            routing.cancel()
            await asyncio.gather(routing, return_exceptions=True)
        for supervisor in supervisors.values():
            await supervisor.stop()
        for bank_link in links.values():
            await close_links(bank_link)
        if feeds is not None:
            await feeds.close()
        if serving is not None:
            await _close_feed(serving)
        await ctx.close()
    return 0


async def _open_feed(
    args: argparse.Namespace,
) -> tuple[FanoutFeed | None, MqttFeed | None, SignageServer | None]:
    """The live feed: MQTT (``--mqtt``), the signage page (``--signage-port``), or none."""
    port = getattr(args, "signage_port", None)
    url = getattr(args, "mqtt", "")
    if not url and port is None:
        return None, None, None
    from gateway.web import FanoutFeed, start_signage
    from protocols.mqtt.feed import MqttFeed

    mqtt = None
    if url:
        # Not waiting for the broker: the floor must not depend on the signs; the feed
        # queues (bounded) and republishes retained values once the broker is there.
        mqtt = await MqttFeed.connect(url, args.site, wait=False)
        log.info("live feed to %s under reelgate/v1/%s/feed/", url, args.site)
    fanout = FanoutFeed(mqtt)
    signage = None
    if port is not None:
        try:
            signage = await start_signage(fanout, args.signage_host, port)
        except OSError as exc:
            if mqtt is not None:
                await mqtt.close()
            raise OperatorError(f"--signage-port {port}: {exc.strerror or exc}") from None
        print(f"signage on {signage.url}", flush=True)
    return fanout, mqtt, signage


async def _close_feed(serving: Serving) -> None:
    if serving.signage is not None:
        await serving.signage.close()
    if serving.mqtt is not None:
        with contextlib.suppress(TimeoutError):
            await serving.mqtt.flush(2.0)  # the standings of a heat that just closed
        await serving.mqtt.close()
    if serving.health is not None:
        serving.health.close()


async def _watch_health(
    ctx: GatewayContext, args: argparse.Namespace, scheduler: Scheduler, secrets: SnmpSecrets
) -> tuple[HealthMonitor | None, asyncio.Task[None] | None]:
    """Watch every board with an SNMP agent; its traps go to the heat under way."""
    machines = [m for bank in ctx.floor.banks.values() for m in bank.machines if m.snmp]
    if not machines:
        return None, None
    from gateway.machines.health import (
        HealthMonitor,
        TrapMarks,
        rewatch,
        route_events,
        watch_boards,
    )
    from protocols.snmp.manager import HealthPoller, TrapReceiver
    from storage.marks import MarkStore

    host, port = trap_host(getattr(args, "snmp_traps", "127.0.0.1:0"))
    marks = await TrapMarks.load(MarkStore(ctx.sessions))  # the marks left before a restart
    monitor = HealthMonitor(TrapReceiver(host=host, port=port), HealthPoller(), marks=marks)
    try:
        await monitor.start()
    except OSError as exc:
        raise OperatorError(f"--snmp-traps {host}:{port}: {exc.strerror or exc}") from None
    print(f"SNMP traps on udp://{host}:{monitor.receiver.port}", flush=True)
    for machine_id, why in (await watch_boards(monitor, machines, secrets)).items():
        log.warning("SNMP: %s not reachable yet (%s)", machine_id, why)

    def deliver(event: Any) -> None:
        # Rules 20/21: the heat under way on the machine's bank decides (playing seats).
        for live in list(scheduler.live.values()):
            live.runner.report_event(event)

    async def watch() -> None:
        async with asyncio.TaskGroup() as group:  # both run until cancelled at shutdown
            group.create_task(route_events(monitor, deliver))
            group.create_task(rewatch(monitor, machines, secrets))

    return monitor, asyncio.create_task(watch(), name="snmp-health")


async def _recover(
    ctx: GatewayContext,
    links: dict[str, MachineLink],
    bank: str,
    hooks: ServiceHooks,
    supervisor: BankSupervisor,
    progress: ProgressSink | None = None,
) -> None:
    from gateway.heats.recovery import recover_bank

    try:
        # A resumed heat publishes its live feed as a fresh one does (progress=).
        for r in await recover_bank(ctx.writer, links, bank, hooks=hooks, progress=progress):
            log.info(
                "bank %s: heat run %s found %s -> %s%s",
                bank, r.run_id, r.found_state.value, r.decision,
                f" (silent: {', '.join(r.silent)})" if r.silent else "",
            )  # fmt: skip
    finally:
        supervisor.release(links)
