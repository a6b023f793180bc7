"""``reelgate demo``: a whole qualifying heat on an emulated bank, with nothing to set up.

The run itself lives in :mod:`gateway.app.demo`, imported only when the demo runs (the
CLI imports every command module just to build its parser).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from gateway.errors import OperatorError

EMBEDDED = "embedded"  # --mqtt embedded: a broker of the demo's own, on loopback


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo", help="run a whole qualifying heat on an emulated bank, no set-up needed"
    )
    parser.add_argument("--seconds", type=int, default=25, help="heat length (default 25)")
    parser.add_argument("--machines", type=int, default=8, help="machines in the bank (2-40)")
    parser.add_argument("--credits", type=int, default=1000, help="tournament credits per seat")
    parser.add_argument("--keep", action="store_true", help="keep the demo folder afterwards")
    parser.add_argument(
        "--mqtt",
        default="",
        metavar="URL",
        help="also publish the live feed to this broker ('embedded': start one on loopback, "
        "needs pip install 'reelgate[embedded]')",
    )
    parser.add_argument("--site", default="demo", help="site name in the MQTT feed tree")
    parser.add_argument(
        "--linger",
        type=float,
        default=0.0,
        metavar="S",
        help="keep the signage page up S seconds after the standings (0-600)",
    )
    parser.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    if not 3 <= args.seconds <= 600:
        raise OperatorError("--seconds must be between 3 and 600")
    if not 2 <= args.machines <= 40:
        raise OperatorError("--machines must be between 2 and 40")
    if not 1 <= args.credits <= 99_999_999:
        raise OperatorError("--credits must be between 1 and 99999999")
    if not 0 <= args.linger <= 600:
        raise OperatorError("--linger must be between 0 and 600 seconds")
    if args.mqtt == EMBEDDED:
        from gateway.app.embedded import embedded_broker

        embedded_broker("--mqtt embedded")  # one line now if amqtt is not installed
    elif args.mqtt:
        from protocols.mqtt.client import MqttSettings
        from protocols.mqtt.topics import TopicError, check_segment

        try:
            MqttSettings.from_url(args.mqtt)
            check_segment("site", args.site)
        except (ValueError, TopicError) as exc:
            raise OperatorError(f"--mqtt/--site: {exc}") from None
    logging.basicConfig(level=logging.ERROR)
    folder = Path(tempfile.mkdtemp(prefix="reelgate-demo-"))
    try:
        from gateway.app.demo import run

        return asyncio.run(run(args, folder))
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
