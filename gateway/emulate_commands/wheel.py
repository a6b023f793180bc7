"""``reelgate emulate wheel --port P [--seed S]``: an emulated roulette wheel on loopback."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from emulators.wheel import WheelModel, WheelServer


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
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    server = WheelServer(
        WheelModel(seed=args.seed),
        host=args.host,
        port=args.port,
        line_interval=args.interval,
        games=args.games,
        game_pause=args.pause,
    )
    await server.start()
    print(f"wheel emulator listening on wheel+tcp://{args.host}:{server.port}", flush=True)
    try:
        await server.done.wait()
    finally:
        await server.close()
    return 0
