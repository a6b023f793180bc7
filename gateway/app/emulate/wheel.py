"""``reelgate emulate wheel --port P [--seed S]``: an emulated roulette wheel on loopback."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
from typing import Any

from emulators.wheel import WheelModel, WheelServer
from gateway.errors import OperatorError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "wheel", help="emulated roulette wheel feed (Super 9) over TCP"
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (loopback)")
    parser.add_argument("--seed", type=int, default=0, help="random seed: same seed, same games")
    parser.add_argument("--games", type=int, default=None, help="stop after N games")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between lines")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between games")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    _check(args)
    return asyncio.run(_serve(args))


def _check(args: argparse.Namespace) -> None:
    """Bad options are one line and start nothing."""
    if not 0 <= args.port <= 65535:
        raise OperatorError(f"--port {args.port}: must be 0..65535 (0: any free port)")
    try:
        loopback = args.host == "localhost" or ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise OperatorError(f"--host {args.host}: the emulated wheel serves loopback only")
    if args.games is not None and args.games < 1:
        raise OperatorError(f"--games {args.games}: must be at least 1 (omit it to run on)")
    if args.interval < 0 or args.pause < 0:
        raise OperatorError("--interval and --pause are seconds, 0 or more")


async def _serve(args: argparse.Namespace) -> int:
    server = WheelServer(
        WheelModel(seed=args.seed),
        host=args.host,
        port=args.port,
        line_interval=args.interval,
        games=args.games,
        game_pause=args.pause,
    )
    try:
        await server.start()
    except OSError as exc:
        raise OperatorError(f"cannot serve the wheel: {exc.strerror or exc}") from None
    print(f"wheel emulator listening on wheel+tcp://{args.host}:{server.port}", flush=True)
    try:
        await server.done.wait()
    finally:
        await server.close()
    return 0
