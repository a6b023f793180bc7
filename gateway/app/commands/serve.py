"""``reelgate serve --floor F``: the long-running gateway.

On start it recovers every bank from the journal (heats under way are resumed or
restarted, T20; machines left in tournament mode are released), then supervises
every bank (general polls at the SAS cadence, events, link health) and lets the
scheduler start due heats on enabled banks and stop them by the heat clock.  SIGTERM or
SIGINT stops it; a heat under way at that moment is picked up by the next start from
the journal, exactly as after a crash.

It holds every bank's lease while it runs (:mod:`gateway.heats.ownership`): a second
``serve`` on the same database is refused in one line, exit 2.  ``--standby`` makes it a
hot standby instead (on a second host): it waits, takes each bank when the serving
gateway stops renewing its lease (``--lease-period``), recovers it and serves it.

The live tournament (heat state and countdown, provisional scores per seat, standings
after each heat; ``docs/mqtt.md``) goes to the MQTT feed tree with ``--mqtt URL --site S``
and to the signage page with ``--signage-port P`` (0: a free port; the URL is printed).
Machines whose boards have an SNMP agent on the floor are watched (``gateway.machines.health``):
their traps arrive on ``--snmp-traps HOST:PORT`` and a door opened, power lost or link
down mid-heat is a malfunction of that seat (T20/T21) while the heat goes on.  Their
SNMP secrets come from ``--snmp-secrets PATH`` (or ``$REELGATE_SNMP_SECRETS``) and the
floor file's inline ones, never from the database; a missing one stops the start.

Every option left off the command line comes from the configuration (``[serve]``,
``[mqtt] url``, ``[venue] name``, ``[http]``, ``[signage]``, ``[log]``; the environment
over the file: :mod:`gateway.app.settings`), so a unit runs ``reelgate serve --config
/etc/reelgate/reelgate.toml`` and nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gateway.app.commands.signage import add_branding
from gateway.app.configfile import fill_unset, settings_of
from gateway.app.options import add_gateway, trap_host
from gateway.app.sas_capture import capture_options, check_capture, port_captures
from gateway.clocks.central import DEFAULT_LIMIT_MS
from gateway.errors import OperatorError
from storage.lease import DEFAULT_PERIOD

if TYPE_CHECKING:
    from gateway.app.commands.api import HttpApi
    from gateway.app.monitoring.ops import GatewayOps
    from gateway.cards import CardDesk
    from gateway.floor.model import MachineSpec
    from gateway.floor.snmp import SnmpSecrets
    from gateway.heats.scheduler import Scheduler
    from gateway.machines.health import HealthMonitor
    from gateway.web import FanoutFeed, SignageServer
    from protocols.mqtt.feed import MqttFeed

log = logging.getLogger("reelgate.serve")


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "serve", help="run the gateway: recovery, bank supervision, scheduled heats"
    )
    add_gateway(parser, floor_required=False)
    parser.add_argument(
        "--poll-interval", type=float, help="general poll cadence per machine (s; default 0.2)"
    )
    parser.add_argument("--tick", type=float, help="scheduler tick (s; default 0.5)")
    parser.add_argument("--log-level", help="DEBUG, INFO, WARNING or ERROR (default [log] level)")
    parser.add_argument(
        "--mqtt",
        metavar="URL",
        help="publish the live feed to this broker (default [mqtt] url / $REELGATE_MQTT_URL; "
        "'' for none)",
    )
    parser.add_argument("--site", help="site name in the MQTT feed tree (default [venue] name)")
    parser.add_argument(
        "--venue",
        metavar="NAME",
        help="multi-venue tournament on a central database: serve only this venue's banks "
        "(the floor file's banks are stamped with it); the feed's site too unless --site",
    )
    parser.add_argument(
        "--start-lead",
        type=float,
        metavar="S",
        help="synchronised starts (one heat across gateways): pick each heat up S seconds "
        "ahead and fire at its scheduled instant by the central database's clock (default 0: off)",
    )
    parser.add_argument(
        "--max-clock-offset",
        type=float,
        metavar="MS",
        help="with --start-lead: a host clock further than MS from the central database's "
        "is a blocker, its heats are not started (default 50)",
    )
    parser.add_argument(
        "--signage-port",
        type=int,
        default=None,
        metavar="P",
        help="serve the signage page on this port (0: a free port, printed); default off",
    )
    parser.add_argument("--signage-host", help="address the signage page listens on (loopback)")
    add_branding(parser)
    parser.add_argument(
        "--snmp-traps",
        metavar="HOST:PORT",
        help="where boards send SNMP traps (port 0: a free port, printed; default 127.0.0.1:0)",
    )
    add_snmp_secrets_argument(parser)
    from gateway.app.commands.api import add_http_argument

    add_http_argument(parser)
    parser.add_argument(
        "--standby",
        action="store_true",
        default=None,
        help="hot standby: wait for each bank's lease and take the bank over (recovering its "
        "heat) when the serving gateway stops renewing it",
    )
    parser.add_argument(
        "--expect-standby",
        action="store_true",
        default=None,
        help="a standby shares this database: stop a bank's floor actions once its lease "
        "has run out during a database outage (default: keep the heat going)",
    )
    parser.add_argument(
        "--lease-period",
        type=float,
        metavar="S",
        help="bank lease period (s): renewed every S/3; a standby takes over after S "
        f"(default {DEFAULT_PERIOD.total_seconds():g})",
    )
    capture_options(parser, required=False)  # one file per port: FILE.<host>_<port>
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    check_arguments(args)
    from gateway.app.logs import configure_logging

    configure_logging(settings_of(args), level=args.log_level)
    return asyncio.run(serve(args))


def configured(args: argparse.Namespace) -> argparse.Namespace:
    """The command line with every option it left unset taken from the configuration
    (file, then environment over it; :mod:`gateway.app.settings`).  Idempotent."""
    s = settings_of(args)
    fill_unset(args, {
        "database": s.database.url, "floor": s.serve.floor, "spool": s.serve.spool,
        "poll_interval": s.serve.poll_interval, "tick": s.serve.tick, "log_level": s.log.level,
        "mqtt": s.mqtt.url or "", "signage_port": s.signage.port,
        "signage_host": s.signage.host, "snmp_traps": s.serve.snmp_traps,
        "snmp_secrets": s.serve.snmp_secrets, "lease_period": s.serve.lease_period,
        "standby": s.serve.standby, "expect_standby": s.serve.expect_standby,
        "venue": s.serve.venue, "start_lead": s.serve.start_lead,
        "max_clock_offset": s.serve.max_clock_offset,
    })  # fmt: skip
    if getattr(args, "site", None) is None:
        args.site = args.venue or s.venue.name
    from gateway.app.commands.api import configured_http

    configured_http(args)
    return args


def check_arguments(args: argparse.Namespace) -> None:
    """Operator mistakes, found before anything is opened (one line, names the option);
    fills what the command line left unset from the configuration first."""
    configured(args)
    if not args.floor:
        raise OperatorError("--floor: name the floor file (or set [serve] floor)")
    check_capture(args)
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
    if args.venue is not None:
        from protocols.mqtt.topics import TopicError, check_segment

        try:
            check_segment("venue", args.venue)
        except TopicError as exc:
            raise OperatorError(f"--venue: {exc}") from None
    if not 0 <= args.start_lead <= 60:
        raise OperatorError("--start-lead must be between 0 (off) and 60 seconds")
    if not 0 < args.max_clock_offset <= 10_000:
        raise OperatorError("--max-clock-offset must be between 0 and 10000 ms")
    trap_host(args.snmp_traps)
    period = getattr(args, "lease_period", DEFAULT_PERIOD.total_seconds())
    if not 0.3 <= period <= 600:
        raise OperatorError("--lease-period must be between 0.3 and 600 seconds")
    from gateway.app.commands.api import check_http

    check_http(args)  # TLS or loopback, before any machine is touched


def add_snmp_secrets_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--snmp-secrets",
        default=None,
        metavar="PATH",
        help="TOML file of SNMPv3 passphrases and v2c communities "
        "(default: $REELGATE_SNMP_SECRETS); never stored in the database",
    )


def snmp_secrets(args: argparse.Namespace, machines: Iterable[MachineSpec]) -> SnmpSecrets:
    """The run's SNMP secrets from ``--snmp-secrets`` and ``--floor`` (see
    :func:`gateway.app.gateway.snmp_secrets_for`)."""
    from gateway.app.context import snmp_secrets_for

    return snmp_secrets_for(
        getattr(args, "snmp_secrets", None), getattr(args, "floor", None), machines
    )


@dataclass
class Serving:
    """What a running gateway offers (tests and the log)."""

    scheduler: Scheduler
    feed: FanoutFeed | None = None
    signage: SignageServer | None = None
    mqtt: MqttFeed | None = None
    health: HealthMonitor | None = None
    http: HttpApi | None = None  # the API, /metrics, /healthz, /readyz (--http)
    ops: GatewayOps | None = None
    http_url: str | None = None  # the API (its console: the same host, /console/)
    cards: CardDesk | None = None  # players' cards at the boards (--mqtt)

    @property
    def trap_port(self) -> int | None:
        return None if self.health is None else self.health.receiver.port


async def serve(
    args: argparse.Namespace,
    stop: asyncio.Event | None = None,
    *,
    on_ready: Callable[[Serving], None] | None = None,
) -> int:
    # Imported here: bank and the parser import this module for its options only.
    from gateway.app.gateway import GatewaySettings, RunningGateway

    configured(args)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    settings = GatewaySettings(
        database=args.database,
        floor=args.floor,
        spool=args.spool,
        poll_interval_s=args.poll_interval,
        tick_s=args.tick,
        snmp_secrets=getattr(args, "snmp_secrets", None),
        snmp_traps=getattr(args, "snmp_traps", "127.0.0.1:0"),
        lease_period_s=getattr(args, "lease_period", DEFAULT_PERIOD.total_seconds()),
        standby=getattr(args, "standby", False),
        expect_standby=getattr(args, "expect_standby", False),
        venue=getattr(args, "venue", None),
        start_lead_s=getattr(args, "start_lead", 0.0),
        max_clock_offset_ms=getattr(args, "max_clock_offset", DEFAULT_LIMIT_MS),
    )
    if settings.floor:  # the whole file, endpoints included, before any feed or socket
        from gateway.app.context import load_floor_seed

        load_floor_seed(settings.floor)
    from gateway.app.commands.api import start_http
    from gateway.app.monitoring.ops import GatewayOps
    from gateway.app.monitoring.serving import monitored

    ops = GatewayOps()
    ops.start()
    fanout, mqtt, signage = await _open_feed(args)
    http = changes = None
    try:
        if fanout is not None:  # every stored change a screen shows, whoever wrote it
            from gateway.app.changes import start_changes

            changes = await start_changes(args.database, fanout)
        # The desks' API beside the gateway (--http), with the boards and the feed stream.
        http = await start_http(args, ops, feed=fanout, settings=_branding(args))
        async with (
            _captured(args),  # --capture: every SAS port the gateway opens, recorded
            RunningGateway(settings, fanout) as gateway,
            monitored(gateway, ops, mqtt.session if mqtt is not None else None),
            _card_desk(args, gateway) as cards,
        ):
            if http is not None:  # the console drives this gateway's banks
                from gateway.app.console_floor import GatewayFloor
                from gateway.web import console

                console.attach(http.app, control=GatewayFloor(gateway), feed=fanout)
            serving = Serving(
                gateway.running, fanout, signage, mqtt, gateway.health, http, ops,
                http.url if http is not None else None,
            )  # fmt: skip
            serving.cards = cards
            if on_ready is not None:
                on_ready(serving)
            # What was built to serve (modules, the ORM's mappings, the app, the links)
            # lives as long as the process: keep it out of the collector's full passes,
            # which at 200 machines took 100-650 ms and stalled every machine's polls.
            gc.collect()
            gc.freeze()
            await gateway.run(stop)
    finally:
        if http is not None:
            await http.close()
        if changes is not None:
            await changes.close()
        await _close_feed(signage, mqtt)
        await ops.close()
    return 0


@contextlib.asynccontextmanager
async def _card_desk(args: argparse.Namespace, gateway: Any) -> AsyncIterator[CardDesk | None]:
    """With ``--mqtt``, the card desk: players' cards at the boards of ``--site``, T1-T3
    at card-in (``docs/mqtt.md``, "Player cards").  The broker need not be up."""
    url = getattr(args, "mqtt", "")
    if not url or gateway.ctx is None:
        yield None
        return
    from gateway.cards import CardDesk
    from protocols.mqtt.client import MqttSettings

    desk = CardDesk(
        gateway.ctx.sessions,
        MqttSettings.from_url(url),
        args.site,
        venue_zone=settings_of(args).venue.time_zone,
    )
    await desk.start(wait=False)
    log.info("card desk on reelgate/v1/%s/board/+/card", args.site)
    try:
        yield desk
    finally:
        await desk.close()


@contextlib.asynccontextmanager
async def _captured(args: argparse.Namespace) -> AsyncIterator[None]:
    with port_captures(args):
        yield


async def _open_feed(
    args: argparse.Namespace,
) -> tuple[FanoutFeed | None, MqttFeed | None, SignageServer | None]:
    """The live feed: MQTT (``--mqtt``), the signage page (``--signage-port``), or none."""
    port = getattr(args, "signage_port", None)
    url = getattr(args, "mqtt", "")
    if not url and port is None and not getattr(args, "http", None):
        return None, None, None  # the console (--http) shows the live feed too
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
            signage = await start_signage(fanout, args.signage_host, port, settings=_branding(args))
        except OSError as exc:
            if mqtt is not None:
                await mqtt.close()
            raise OperatorError(f"--signage-port {port}: {exc.strerror or exc}") from None
        print(f"signage on {signage.url}", flush=True)
    return fanout, mqtt, signage


def _branding(args: argparse.Namespace) -> Any:
    """The boards' settings (``SignageSettings``); defaults when the caller's namespace
    has no branding options (a test's or the demo's)."""
    if not hasattr(args, "title"):
        return None
    from gateway.app.commands.signage import branding

    return branding(args)


async def _close_feed(signage: SignageServer | None, mqtt: MqttFeed | None) -> None:
    if signage is not None:
        await signage.close()
    if mqtt is not None:
        with contextlib.suppress(TimeoutError):
            await mqtt.flush(2.0)  # the standings of a heat that just closed
        await mqtt.close()
