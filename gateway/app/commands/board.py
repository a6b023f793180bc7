"""``reelgate board``: the interface-board agent for one EGM (``docs/mqtt.md``).

Runs on a small Linux board at the machine: SAS to the EGM (serial, or TCP through a
SAS-over-IP adapter), the v1 MQTT schema to the gateway.  It runs until SIGTERM or
SIGINT; the broker need not be up at start (events queue until it is), but a broker
that refuses our credentials ends it with one line and exit status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
from typing import Any

from gateway.app.sas_capture import capture_options, check_capture, port_captures
from gateway.board.agent import MAX_BACKOFF, POLL_INTERVAL, BoardAgent
from gateway.board.cards import ReaderSpec, evdev_available
from gateway.errors import OperatorError
from gateway.machines.sas import SasDriver
from protocols.mqtt.board import EVENT_QUEUE
from protocols.mqtt.client import MqttSettings
from protocols.mqtt.topics import Channel, TopicError, board_topic, check_segment


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "board", help="the interface-board agent: one EGM over SAS, exposed over MQTT"
    )
    # Each may come from the environment instead (the systemd unit's EnvironmentFile):
    # a broker password in REELGATE_BOARD_MQTT stays out of the process list.
    for flag, env, text in (
        (
            "--sas",
            "REELGATE_BOARD_SAS",
            "the EGM: sas+serial:///dev/ttyUSB0?address=1, sas+tcp://…",
        ),
        ("--mqtt", "REELGATE_BOARD_MQTT", "the broker: mqtt://[user:pass@]HOST[:PORT], mqtts://…"),
        ("--site", "REELGATE_BOARD_SITE", "site name, the topic level"),
    ):
        default = os.environ.get(env)
        parser.add_argument(
            flag, default=default, required=default is None, help=f"{text} (or ${env})"
        )
    parser.add_argument(
        "--board-id", required=True, help="the machine's id on the floor (its topic level)"
    )
    # A host-timed EGM's credits move by AFT: the board registers as its AFT host (LP 73)
    # with the floor's key and POS ID for this machine (the same values as the floor file).
    parser.add_argument(
        "--aft-registration-key",
        default=os.environ.get("REELGATE_BOARD_AFT_KEY"),
        help="40 hex digits, the machine's AFT registration key (or $REELGATE_BOARD_AFT_KEY)",
    )
    parser.add_argument(
        "--aft-pos-id",
        type=int,
        help="1..4294967295, the AFT POS ID (or $REELGATE_BOARD_AFT_POS_ID)",
    )
    parser.add_argument(
        "--poll-interval",
        type=float,
        default=POLL_INTERVAL,
        help=f"seconds between exception drains (default {POLL_INTERVAL:g}, the SAS cadence)",
    )
    parser.add_argument(
        "--event-queue",
        type=int,
        default=EVENT_QUEUE,
        help=f"events kept while the broker is away (default {EVENT_QUEUE}; oldest dropped)",
    )
    parser.add_argument(
        "--card-reader",
        default=os.environ.get("REELGATE_BOARD_CARD_READER", "none"),
        help="players' card reader: serial:/dev/ttyX[?rfid|magstripe][&baud=N], "
        "evdev:/dev/input/eventN[?rfid|magstripe] (needs the evdev package) or none "
        "(default; or $REELGATE_BOARD_CARD_READER)",
    )
    capture_options(parser, required=False)  # the EGM's port: FILE.<host>_<port>
    parser.set_defaults(handler=_handle)


def card_reader(text: str) -> ReaderSpec:
    try:
        spec = ReaderSpec.parse(text)
    except ValueError as exc:
        raise OperatorError(f"--card-reader: {exc}") from None
    if spec.kind == "evdev" and not evdev_available():
        raise OperatorError("--card-reader evdev:…: the evdev package is not installed")
    return spec


def build_agent(args: argparse.Namespace) -> BoardAgent:
    """The agent for the parsed flags; every mistake is one :class:`OperatorError` line."""
    try:
        board_id = check_segment("board id", args.board_id)
        board_topic(args.site, board_id, Channel.STATUS)
    except TopicError as exc:
        raise OperatorError(f"--site/--board-id: {exc}") from None
    try:
        settings = MqttSettings.from_url(args.mqtt)
    except ValueError as exc:
        raise OperatorError(f"--mqtt: {exc}") from None
    try:
        driver = SasDriver.from_uri(board_id, args.sas)
    except ValueError as exc:  # EndpointError
        raise OperatorError(f"--sas: {exc}") from None
    pos_id = args.aft_pos_id
    if pos_id is None:
        pos_id = _env_int("REELGATE_BOARD_AFT_POS_ID")
    _use_aft_host(driver, args.aft_registration_key, pos_id)
    if not 0.04 <= args.poll_interval <= 10:
        raise OperatorError("--poll-interval: must be 0.04..10 seconds (SAS: 0.2)")
    if not 2 <= args.event_queue <= 100_000:
        raise OperatorError("--event-queue: must be 2..100000 events")
    return BoardAgent(
        board_id,
        driver,
        settings,
        args.site,
        poll_interval=args.poll_interval,
        max_backoff=MAX_BACKOFF,
        event_queue=args.event_queue,
        card_reader=card_reader(getattr(args, "card_reader", "none")),
    )


def _use_aft_host(driver: SasDriver, key: str | None, pos_id: int | None) -> None:
    if key is None and pos_id is None:
        return  # a native-only machine needs no AFT host (a host-timed one will refuse)
    if key is None or pos_id is None:
        raise OperatorError("--aft-registration-key and --aft-pos-id go together")
    try:
        driver.use_aft_host(key, pos_id)
    except ValueError as exc:
        raise OperatorError(f"--aft-registration-key/--aft-pos-id: {exc}") from None


def _env_int(name: str) -> int | None:
    text = os.environ.get(name)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise OperatorError(f"${name}: not a number: {text!r}") from None


def _handle(args: argparse.Namespace) -> int:
    check_capture(args)
    agent = build_agent(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    return asyncio.run(_run_captured(agent, args))


async def _run_captured(agent: BoardAgent, args: argparse.Namespace) -> int:
    with port_captures(args):  # --capture: every byte to and from the EGM, recorded
        return await run_board(agent, args.sas)


async def run_board(agent: BoardAgent, sas_uri: str, stop: asyncio.Event | None = None) -> int:
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    session = agent.core.session
    s = session.settings
    broker = f"{'mqtts' if s.tls else 'mqtt'}://{s.host}:{s.port}"  # never the password
    await agent.start(wait_for_broker=False)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(session.wait_settled(), s.connect_timeout)
        if session.refused:
            raise OperatorError(f"--mqtt {broker}: the broker refused us: {session.last_error}")
        topic = board_topic(agent.core.site, agent.egm.machine_id, Channel.STATUS)
        print(
            f"board {agent.egm.machine_id}: {sas_uri} <-> {broker} "
            f"({topic.rsplit('/', 1)[0]}/…)"
            + ("" if agent.core.link_up else "; broker not reachable yet, events queue"),
            flush=True,
        )
        await stop.wait()
    finally:
        await agent.stop()
    return 0
