"""``reelgate signage --port P [--host H] [--mqtt URL] [--site S]``: the leaderboard page.

Serves the signage page (``gateway/web``) fed by a subscription to one site's live feed
on an MQTT broker, so a sign can run on any machine that reaches the broker.  The broker
need not be up yet: the page shows "waiting for the gateway feed" until it is, and the
session reconnects by itself.  Stops on SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from typing import TYPE_CHECKING, Any

from gateway.app.configfile import add_config, fill_unset, settings_of
from gateway.errors import OperatorError

if TYPE_CHECKING:  # the web stack loads slowly: imported by the handlers that use it
    from gateway.web.fanout import FanoutFeed
    from gateway.web.mqtt_source import MqttFeedSource

DEFAULT_BROKER = "mqtt://127.0.0.1:1883"
DEFAULT_PORT = 8080
LOOPBACK = "127.0.0.1"  # = gateway.web.server.LOOPBACK, whose import would load aiohttp


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "signage", help="serve the leaderboard / Super 9 signage page from the MQTT feed"
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
        "--mqtt",
        help=f"broker URL (default $REELGATE_MQTT_URL / [mqtt] url, else {DEFAULT_BROKER})",
    )
    parser.add_argument("--site", help="site name, the topic level (default [venue] name)")
    add_config(parser)
    parser.add_argument(
        "--wait", action="store_true", help="fail at once if the broker is not reachable"
    )
    parser.set_defaults(handler=_signage)


def _signage(args: argparse.Namespace) -> int:
    from gateway.app.logs import configure_logging
    from gateway.web.fanout import FanoutFeed
    from gateway.web.mqtt_source import MqttFeedSource
    from protocols.mqtt.topics import TopicError

    s = settings_of(args)
    fill_unset(args, {
        "port": DEFAULT_PORT if s.signage.port is None else s.signage.port,
        "host": s.signage.host, "mqtt": s.mqtt.url or DEFAULT_BROKER, "site": s.venue.name,
    })  # fmt: skip
    configure_logging(s)
    if not 0 <= args.port <= 65535:
        raise OperatorError(f"--port {args.port}: must be 0..65535")
    feed = FanoutFeed()
    try:
        source = MqttFeedSource(feed, args.mqtt, args.site)
    except TopicError as exc:
        raise OperatorError(f"--site: {exc}") from None
    except ValueError as exc:
        raise OperatorError(f"--mqtt: {exc}") from None
    return asyncio.run(run_signage(feed, source, args.host, args.port, wait=args.wait))


async def run_signage(
    feed: FanoutFeed,
    source: MqttFeedSource,
    host: str,
    port: int,
    *,
    wait: bool = False,
    stop: asyncio.Event | None = None,
) -> int:
    from gateway.web.server import start_signage

    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await source.start(wait=wait)
    except ConnectionError as exc:  # MqttUnavailable with --wait
        await source.close()
        raise OperatorError(f"--mqtt {args_url(source)}: {exc}") from None
    try:
        try:
            server = await start_signage(feed, host, port)
        except OSError as exc:
            raise OperatorError(f"--host/--port {host}:{port}: {exc.strerror or exc}") from None
        async with server:
            print(f"signage on {server.url} (feed {source.topic_filter})", flush=True)
            await stop.wait()
    finally:
        await source.close()
    return 0


def args_url(source: MqttFeedSource) -> str:
    s = source.settings
    return f"{'mqtts' if s.tls else 'mqtt'}://{s.host}:{s.port}"
