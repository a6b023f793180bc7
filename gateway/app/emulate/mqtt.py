"""``reelgate emulate mqtt --machines N [--broker URL] --site S [--seed S] [--play]``.

Emulated MQTT interface boards, one per emulated machine.  Without ``--broker`` an
embedded broker is started on loopback (zero setup) and its URL printed.  Each board
prints its endpoint, ready for a floor plan: ``M001 mqtt://127.0.0.1:PORT/SITE/M001``.
With ``--snmp`` every board also runs an SNMP agent (UDP, loopback, port 0; v2c
``public`` unless ``--snmp-v3 USER:AUTH:PRIV``) and prints its port; ``--snmp-traps
HOST:PORT`` sends the boards' traps to a gateway.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING, Any

from emulators.machine import EmulatedMachine
from emulators.mqtt_board import MqttBoard, card_control
from emulators.player import Players
from gateway.app.embedded import embedded_broker
from gateway.errors import OperatorError
from protocols.mqtt.client import MqttSettings, MqttUnavailable
from protocols.mqtt.topics import TopicError, check_segment
from protocols.snmp.security import Security, V2cCommunity, V3User

if TYPE_CHECKING:
    from protocols.mqtt.broker import EmbeddedBroker

MAX_MACHINES = 2000


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "mqtt", help="emulated MQTT interface boards (optionally with SNMP agents)"
    )
    parser.add_argument("--machines", type=int, default=1, help="number of boards (1-2000)")
    parser.add_argument(
        "--broker", default="", help="broker URL, e.g. mqtt://127.0.0.1:1883 (default: embedded)"
    )
    parser.add_argument("--site", default="site1", help="site name (topic level)")
    parser.add_argument("--prefix", default="M", help="machine id prefix (M -> M001, M002 ...)")
    parser.add_argument("--seed", type=int, default=0, help="random seed: same seed, same reels")
    parser.add_argument("--play", action="store_true", help="simulated players spin when allowed")
    parser.add_argument("--pace", type=float, default=2.5, help="seconds between a player's spins")
    parser.add_argument("--snmp", action="store_true", help="run an SNMP agent in every board")
    parser.add_argument(
        "--snmp-v3",
        default="",
        metavar="USER:AUTH:PRIV",
        help="SNMPv3 authPriv user (SHA-256/AES-128) for the agents, instead of v2c 'public'",
    )
    parser.add_argument(
        "--snmp-traps", default="", metavar="HOST:PORT", help="send the boards' traps there"
    )
    parser.add_argument("--duration", type=float, default=None, help="stop after N seconds")
    parser.add_argument(
        "--control",
        choices=("none", "stdin"),
        default="none",
        help="stdin: read 'card-in MACHINE CARD' / 'card-out MACHINE' lines (players' cards)",
    )
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    if not 1 <= args.machines <= MAX_MACHINES:
        raise OperatorError(f"--machines must be 1-{MAX_MACHINES}")
    try:
        check_segment("site", args.site)
        check_segment("machine", f"{args.prefix}001")
    except TopicError as exc:
        raise OperatorError(f"--site/--prefix: {exc}") from None
    if args.broker:
        try:
            MqttSettings.from_url(args.broker)
        except ValueError as exc:
            raise OperatorError(f"--broker: {exc}") from None
    args.snmp_users = _snmp_users(args.snmp_v3)
    args.trap_targets = _trap_targets(args.snmp_traps)
    return asyncio.run(_serve(args))


def _background(
    args: argparse.Namespace, machines: list[EmulatedMachine], boards: list[MqttBoard]
) -> list[asyncio.Task[None]]:
    """Simulated players (``--play``) and the control channel (``--control stdin``)."""
    tasks = []
    if args.play:
        players = Players(machines, seed=args.seed, pace=args.pace)
        tasks.append(asyncio.create_task(players.run()))
    if getattr(args, "control", "none") == "stdin":
        tasks.append(asyncio.create_task(_control(boards)))
    return tasks


async def _control(boards: list[MqttBoard]) -> None:
    """Players' cards from stdin, one command a line (``card_control``); EOF ends it."""
    by_id = {b.machine_id: b for b in boards}
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            return
        if not line.strip():
            continue
        try:
            print(card_control(by_id, line), flush=True)
        except ValueError as exc:
            print(f"control: {exc}", flush=True)


def _snmp_users(spec: str) -> list[Security]:
    if not spec:
        return [V2cCommunity("public")]
    parts = spec.split(":")
    if len(parts) != 3:
        raise OperatorError("--snmp-v3 must be USER:AUTHKEY:PRIVKEY")
    try:
        return [V3User(parts[0], parts[1], parts[2])]
    except ValueError as exc:
        raise OperatorError(f"--snmp-v3: {exc}") from None


def _trap_targets(spec: str) -> list[tuple[str, int]]:
    if not spec:
        return []
    host, _, port = spec.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise OperatorError("--snmp-traps must be HOST:PORT")
    if host not in ("127.0.0.1", "localhost"):
        raise OperatorError("--snmp-traps: emulated boards send traps on loopback only")
    return [(host, int(port))]


async def _serve(args: argparse.Namespace) -> int:
    broker: EmbeddedBroker | None = None
    url = args.broker
    if not url:
        broker = embedded_broker("--broker")()
        await broker.start()
        url = broker.url
        print(f"embedded MQTT broker at {url}", flush=True)
    settings = MqttSettings.from_url(url)
    machines = [
        EmulatedMachine(f"{args.prefix}{i:03d}", seed=args.seed * 100_003 + i)
        for i in range(1, args.machines + 1)
    ]
    boards = [MqttBoard(m, settings, args.site) for m in machines]
    agents: list[Any] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        for board in boards:
            try:
                await board.start()
            except MqttUnavailable as exc:
                raise OperatorError(f"--broker {url}: {exc}") from None
            print(
                f"{board.machine.machine_id} {url}/{args.site}/{board.machine.machine_id}",
                flush=True,
            )
        if args.snmp:
            from emulators.snmp_agent import SnmpAgent

            for board in boards:
                agent = SnmpAgent.for_board(
                    board, users=args.snmp_users, trap_targets=args.trap_targets
                )
                await agent.start()
                agents.append(agent)
                print(f"{board.machine.machine_id} snmp udp 127.0.0.1:{agent.port}", flush=True)
        tasks += _background(args, machines, boards)
        if args.duration is not None:
            await asyncio.sleep(args.duration)
        else:
            await asyncio.Event().wait()  # until Ctrl-C
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for agent in agents:
            agent.close()
        for board in boards:
            await board.stop()
        if broker is not None:
            await broker.stop()
    return 0
