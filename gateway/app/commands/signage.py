"""``reelgate signage``: the signage boards on their own machine.

Fed by a subscription to one site's live feed on an MQTT broker (``--source mqtt``, the
default) or by the gateway's API (``--source api --api URL --token-file F``), so a sign
need not run in the gateway's process: while its source is away (a gateway restart, a
broker down) it keeps the last state and every screen shows a "reconnecting" mark.  The
source need not be up yet (``--wait`` fails at once instead).  Stops on SIGINT/SIGTERM.

The venue's branding (``--title``, ``--logo``, ``--colour NAME=#rrggbb``, ``--venue-tz``,
``--page-seconds``) is shared with ``reelgate serve``, which serves the same boards.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from typing import TYPE_CHECKING, Any, Protocol

from gateway.app.configfile import add_config, fill_unset, settings_of
from gateway.errors import OperatorError

if TYPE_CHECKING:  # the web stack loads slowly: imported by the handlers that use it
    from gateway.web.fanout import FanoutFeed
    from gateway.web.signage.settings import SignageSettings

DEFAULT_BROKER = "mqtt://127.0.0.1:1883"
DEFAULT_PORT = 8080
LOOPBACK = "127.0.0.1"  # = gateway.web.signage.server.LOOPBACK, whose import loads uvicorn


class FeedSource(Protocol):
    """What feeds a standalone sign: ``MqttFeedSource`` or ``ApiFeedSource``."""

    @property
    def topic_filter(self) -> str: ...

    async def start(self, *, wait: bool = False) -> None: ...

    async def close(self) -> None: ...


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "signage", help="serve the signage boards from the MQTT feed or the gateway's API"
    )
    parser.add_argument(
        "--port", type=int, help="HTTP port (0: any free port; default [signage] port, else 8080)"
    )
    parser.add_argument(
        "--host",
        help="address to listen on (default [signage] host, else loopback; a sign on another "
        "machine needs the LAN address of this one)",
    )
    parser.add_argument(
        "--source", choices=("mqtt", "api"), default="mqtt", help="where the feed comes from"
    )
    parser.add_argument(
        "--mqtt",
        help=f"broker URL (default $REELGATE_MQTT_URL / [mqtt] url, else {DEFAULT_BROKER})",
    )
    parser.add_argument("--site", help="site name, the topic level (default [venue] name)")
    add_config(parser)
    parser.add_argument(
        "--api", metavar="URL", help="the gateway's API, as `serve --http` prints it (…/api/v1)"
    )
    parser.add_argument("--token-file", metavar="F", help="file holding an API token (any role)")
    parser.add_argument(
        "--wait", action="store_true", help="fail at once if the source is not reachable"
    )
    add_branding(parser)
    parser.set_defaults(handler=_signage)


def add_branding(parser: argparse.ArgumentParser) -> None:
    """The venue's look of the boards (``gateway.web.signage.settings``)."""
    group = parser.add_argument_group("signage branding")
    group.add_argument("--title", default="Reelgate", help="venue title on every board")
    group.add_argument("--logo", metavar="FILE", help="venue logo (png, svg, jpg, webp)")
    group.add_argument(
        "--colour",
        action="append",
        default=[],
        metavar="NAME=#RRGGBB",
        help="a board colour: background, panel, text, muted, accent, gold or fault (repeat)",
    )
    group.add_argument(
        "--venue-tz", default="Africa/Johannesburg", help="the venue's time zone for clocks"
    )
    group.add_argument(
        "--page-seconds", type=float, default=8.0, help="seconds per page of a long bank"
    )


def branding(args: argparse.Namespace) -> SignageSettings:
    from pathlib import Path

    from gateway.web.signage.settings import SignageSettings, parse_colours

    try:
        return SignageSettings(
            title=args.title,
            logo=Path(args.logo) if args.logo else None,
            colours=parse_colours(args.colour),
            venue_tz=args.venue_tz,
            page_seconds=args.page_seconds,
        )
    except ValueError as exc:
        raise OperatorError(f"signage: {exc}") from None


def _signage(args: argparse.Namespace) -> int:
    from gateway.app.logs import configure_logging
    from gateway.web.fanout import FanoutFeed

    s = settings_of(args)
    fill_unset(args, {
        "port": DEFAULT_PORT if s.signage.port is None else s.signage.port,
        "host": s.signage.host, "mqtt": s.mqtt.url or DEFAULT_BROKER, "site": s.venue.name,
    })  # fmt: skip
    configure_logging(s)
    if not 0 <= args.port <= 65535:
        raise OperatorError(f"--port {args.port}: must be 0..65535")
    settings = branding(args)
    feed = FanoutFeed()
    source = _api_source(feed, args) if args.source == "api" else _mqtt_source(feed, args)
    return asyncio.run(
        run_signage(feed, source, args.host, args.port, wait=args.wait, settings=settings)
    )


def _mqtt_source(feed: FanoutFeed, args: argparse.Namespace) -> FeedSource:
    from gateway.web.mqtt_source import MqttFeedSource
    from protocols.mqtt.topics import TopicError

    try:
        return MqttFeedSource(feed, args.mqtt, args.site)
    except TopicError as exc:
        raise OperatorError(f"--site: {exc}") from None
    except ValueError as exc:
        raise OperatorError(f"--mqtt: {exc}") from None


def _api_source(feed: FanoutFeed, args: argparse.Namespace) -> FeedSource:
    from gateway.web.signage.api_source import ApiFeedSource, read_token

    if not args.api:
        raise OperatorError("--source api needs --api URL (as `reelgate serve --http` prints it)")
    if not args.token_file:
        raise OperatorError("--source api needs --token-file F (`reelgate tokens create`)")
    try:
        token = read_token(args.token_file)
    except (OSError, ValueError) as exc:
        raise OperatorError(f"--token-file: {exc}") from None
    try:
        return ApiFeedSource(feed, args.api, token)
    except ValueError as exc:
        raise OperatorError(f"--api: {exc}") from None


async def run_signage(
    feed: FanoutFeed,
    source: FeedSource,
    host: str,
    port: int,
    *,
    wait: bool = False,
    stop: asyncio.Event | None = None,
    settings: SignageSettings | None = None,
) -> int:
    from gateway.web.signage.server import start_signage

    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await source.start(wait=wait)
    except ConnectionError as exc:  # MqttUnavailable / ApiUnavailable with --wait
        await source.close()
        raise OperatorError(f"--wait: {source.topic_filter}: {exc}") from None
    try:
        try:
            server = await start_signage(feed, host, port, settings=settings)
        except OSError as exc:
            raise OperatorError(f"--host/--port {host}:{port}: {exc.strerror or exc}") from None
        async with server:
            print(f"signage on {server.url} (feed {source.topic_filter})", flush=True)
            await stop.wait()
    finally:
        await source.close()
    return 0
